package rancher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// Registration is how nodes and clusters register with Rancher. Both values are credentials
// (the URL embeds the token); the caller Forgets them when done.
type Registration struct {
	Token       secret.Secret // the system agent's --token
	ManifestURL secret.Secret // <server-url>/v3/import/<token>_<cluster>.yaml, the import manifest
}

type registrationToken struct {
	Token       string `json:"token"`
	ManifestURL string `json:"manifestUrl"`
}

// Registration returns the cluster's registration token and its manifest URL, creating a token
// when the cluster has none; failure.ErrNotReady while Rancher has not issued them yet.
//
// Rancher makes the cluster's namespace (c-xxxxx), where registration tokens live, a moment
// after the cluster: a POST in between is answered 404 `namespaces "c-xxxxx" not found`
// (observed on v2.12.0). That answer says nothing was made, so the POST is sent again with the
// client's backoff. A token's manifest URL (and its commands) are filled by Rancher's status
// controller a moment after the token is made (v2.12.0 pkg/controllers/dashboard/
// clusterregistrationtoken/status.go): the create answer has none, so the tokens are read again,
// with the same backoff, until one has it. When either takes longer the error is ErrNotReady
// (transient).
func (c *Client) Registration(ctx context.Context, clusterID string) (Registration, error) {
	created := false
	for attempt := 0; ; attempt++ {
		tok, err := c.pickRegistration(ctx, clusterID)
		if err != nil {
			return Registration{}, fmt.Errorf("registration token of %s: %w", clusterID, err)
		}
		if tok.Token == "" && !created {
			if tok, err = c.createRegistration(ctx, clusterID); err != nil {
				return Registration{}, fmt.Errorf("registration token of %s: %w", clusterID, err)
			}
			created = true
		}
		if tok.Token != "" && tok.ManifestURL != "" {
			return Registration{Token: secret.New(tok.Token), ManifestURL: secret.New(tok.ManifestURL)}, nil
		}
		if attempt >= c.pol.Max {
			upstream.Log(ctx, c.log).Info("rancher has not filled the cluster's registration token yet; it waits", zap.String("cluster", clusterID))
			return Registration{}, fmt.Errorf("cluster %s has no registration token with a manifest URL yet: %w", clusterID, failure.ErrNotReady)
		}
		if err := c.sleep(ctx, attempt); err != nil {
			return Registration{}, err
		}
	}
}

// pickRegistration lists the cluster's tokens and picks the first with a token, preferably one
// with a manifest URL too.
func (c *Client) pickRegistration(ctx context.Context, clusterID string) (registrationToken, error) {
	list, err := listAll[registrationToken](ctx, c, "/v3/clusterregistrationtokens", query("clusterId", clusterID))
	var tok registrationToken
	for _, t := range list {
		if t.Token != "" && (tok.Token == "" || (tok.ManifestURL == "" && t.ManifestURL != "")) {
			tok = t
		}
	}
	return tok, err
}

// sleep waits the client's backoff for attempt.
func (c *Client) sleep(ctx context.Context, attempt int) error {
	select {
	case <-ctx.Done():
		return failure.Transient(ctx.Err())
	case <-time.After(upstream.Backoff(c.pol.WaitMin, c.pol.WaitMax, attempt, nil)):
		return nil
	}
}

// createRegistration posts a registration token, again while the cluster's namespace is missing.
func (c *Client) createRegistration(ctx context.Context, clusterID string) (registrationToken, error) {
	body := map[string]any{"type": "clusterRegistrationToken", "clusterId": clusterID}
	for attempt := 0; ; attempt++ {
		var tok registrationToken
		err := c.do(ctx, http.MethodPost, "/v3/clusterregistrationtokens", nil, body, &tok)
		if !namespacePending(err, clusterID) {
			return tok, err
		}
		if attempt >= c.pol.Max {
			upstream.Log(ctx, c.log).Info("rancher has not made the cluster's namespace yet; the registration token waits",
				zap.String("cluster", clusterID), zap.Int("attempts", attempt+1))
			return tok, fmt.Errorf("rancher has not made the namespace of cluster %s yet (%v): %w", clusterID, err, failure.ErrNotReady)
		}
		upstream.Log(ctx, c.log).Debug("rancher has not made the cluster's namespace yet; posting the registration token again",
			zap.String("cluster", clusterID), zap.Int("attempt", attempt+1))
		if err := c.sleep(ctx, attempt); err != nil {
			return tok, err
		}
	}
}

// namespacePending reports Rancher's 404 for a cluster whose namespace does not exist yet:
// {"type":"error","status":"404","code":"NotFound","message":"namespaces \"c-xxxxx\" not found"}.
func namespacePending(err error, clusterID string) bool {
	var se *failure.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusNotFound {
		return false
	}
	var doc struct {
		Message string `json:"message"`
	}
	want := `namespaces "` + clusterID + `" not found`
	if json.Unmarshal([]byte(se.Body), &doc) == nil {
		return doc.Message == want
	}
	return strings.Contains(se.Body, strings.ReplaceAll(want, `"`, `\"`)) // an excerpt cut short
}

// Manifest downloads an import manifest. Its URL is the credential: it is fetched without the
// API key, on the configured scheme, host and port (Rancher writes it with its server-url
// setting, which may name another address), and is never shown in errors or log lines.
func (c *Client) Manifest(ctx context.Context, manifestURL secret.Secret) ([]byte, error) {
	isImport := func(p string) bool {
		rest, ok := strings.CutPrefix(p, "/v3/import/")
		return ok && rest != "" && !strings.Contains(rest, "/")
	}
	path, q, err := c.pin(manifestURL.Reveal(), isImport, true)
	if err != nil {
		return nil, err
	}
	r, err := c.send(ctx, call{method: http.MethodGet, path: path, rawQuery: q, anonymous: true, label: "/v3/import/…"})
	if err != nil {
		return nil, err
	}
	return r.body, nil
}
