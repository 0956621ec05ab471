package waldurclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

// OIDCConfig are client-credentials settings.
type OIDCConfig struct {
	TokenURL     string
	ClientID     string
	ClientSecret secret.Secret
}

type authorizer interface {
	header(ctx context.Context) (string, error)
	// invalidate drops a cached credential; it reports whether a retry could help.
	invalidate() bool
}

type tokenAuth struct{ token secret.Secret }

func (t tokenAuth) header(context.Context) (string, error) { return "Token " + t.token.Reveal(), nil }
func (t tokenAuth) invalidate() bool                       { return false }

// oidcAuth fetches and caches an access token with the client-credentials grant until 30 s
// before it expires (or 5 minutes when the IdP does not say).
type oidcAuth struct {
	cfg     OIDCConfig
	rc      *retryablehttp.Client
	mu      sync.Mutex
	token   secret.Secret
	expires time.Time
	now     func() time.Time
}

func newOIDCAuth(cfg OIDCConfig, rc *retryablehttp.Client) *oidcAuth {
	return &oidcAuth{cfg: cfg, rc: rc, now: time.Now}
}

func (o *oidcAuth) header(ctx context.Context) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.token.IsZero() || o.now().After(o.expires) {
		if err := o.fetch(ctx); err != nil {
			return "", err
		}
	}
	return "Bearer " + o.token.Reveal(), nil
}

func (o *oidcAuth) invalidate() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.token.Forget()
	o.token = secret.Secret{}
	return true
}

func (o *oidcAuth) fetch(ctx context.Context) error {
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {o.cfg.ClientID},
		"client_secret": {o.cfg.ClientSecret.Reveal()},
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, o.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("oidc token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := o.rc.Do(req)
	if err != nil {
		return failure.Transient(fmt.Errorf("oidc token request to %s: %w", redactURL(o.cfg.TokenURL), stripURL(err)))
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return failure.StatusErr("oidc", http.MethodPost, redactURL(o.cfg.TokenURL), resp.StatusCode, []byte(secret.Scrub(string(data))))
	}
	var body struct {
		AccessToken string  `json:"access_token"`
		ExpiresIn   float64 `json:"expires_in"`
	}
	if err := json.Unmarshal(data, &body); err != nil || body.AccessToken == "" {
		return fmt.Errorf("oidc token response from %s has no access_token", redactURL(o.cfg.TokenURL))
	}
	ttl := 5 * time.Minute
	if body.ExpiresIn > 0 {
		ttl = time.Duration(body.ExpiresIn)*time.Second - 30*time.Second
	}
	o.token = secret.Replace(o.token, body.AccessToken) // the expired token leaves the scrubber
	o.expires = o.now().Add(ttl)
	return nil
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}
