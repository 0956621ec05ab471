package vclusters

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// rancherClient is the part of Rancher's v3 API that importing needs: clusters and cluster
// registration tokens, with the operator's API key, retried by internal/upstream (creates only
// when they cannot have been applied; the callers look before they create).
type rancherClient struct {
	base  string // without a trailing slash
	token secret.Secret
	http  *http.Client
	plain *http.Client // for the manifest, whose URL holds the registration token: no attempt logs
	tls   *tls.Config  // also used for the tunnels' websockets
}

func newRancherClient(c RancherConfig, log *zap.Logger) (*rancherClient, error) {
	var pool *x509.CertPool
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, &ConfigError{Key: "rancher.ca_file", Problem: err.Error()}
		}
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &ConfigError{Key: "rancher.ca_file", Problem: "no PEM certificate in it"}
		}
	}
	tr := upstream.Transport(upstream.TransportOptions{VerifyTLS: !c.Insecure, RootCAs: pool})
	hc := upstream.NewClient(upstream.ClientOptions{Base: tr, Timeout: c.Timeout, Retry: upstream.RetryOptions{
		Policy: upstream.RetryPolicy{Max: 4, WaitMin: 200 * time.Millisecond, WaitMax: 5 * time.Second},
		Unsafe: upstream.NotIdempotent, Name: "rancher", Logger: log}})
	return &rancherClient{base: strings.TrimRight(c.URL, "/"), token: c.Token, http: hc, tls: tr.TLSClientConfig.Clone(),
		plain: upstream.Attempt(tr, c.Timeout)}, nil
}

type v3Cluster struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	State string `json:"state"`
}

type v3Token struct {
	ID          string `json:"id"`
	ClusterID   string `json:"clusterId"`
	Token       string `json:"token"`
	ManifestURL string `json:"manifestUrl"`
}

// ensureCluster returns the id of the cluster named name, creating it when there is none.
func (r *rancherClient) ensureCluster(ctx context.Context, name string) (string, error) {
	if id, err := r.clusterByName(ctx, name); err != nil || id != "" {
		return id, err
	}
	var c v3Cluster
	err := r.do(ctx, http.MethodPost, "/v3/clusters", map[string]any{"type": "cluster", "name": name,
		"description": "virtual cluster (site-agent virtual-clusters)"}, &c)
	if failure.HasStatus(err, http.StatusUnprocessableEntity) { // NotUnique: made meanwhile
		return r.clusterByName(ctx, name)
	}
	return c.ID, err
}

func (r *rancherClient) clusterByName(ctx context.Context, name string) (string, error) {
	var list struct{ Data []v3Cluster }
	if err := r.do(ctx, http.MethodGet, "/v3/clusters?name="+url.QueryEscape(name), nil, &list); err != nil {
		return "", err
	}
	for _, c := range list.Data {
		if c.Name == name {
			return c.ID, nil
		}
	}
	return "", nil
}

// clusters returns the ids of every cluster Rancher knows.
func (r *rancherClient) clusters(ctx context.Context) (map[string]bool, error) {
	var list struct{ Data []v3Cluster }
	if err := r.do(ctx, http.MethodGet, "/v3/clusters?limit=-1", nil, &list); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(list.Data))
	for _, c := range list.Data {
		out[c.ID] = true
	}
	return out, nil
}

// deleteCluster removes a cluster (a missing one is fine).
func (r *rancherClient) deleteCluster(ctx context.Context, id string) error {
	err := r.do(ctx, http.MethodDelete, "/v3/clusters/"+url.PathEscape(id), nil, nil)
	if failure.HasStatus(err, http.StatusNotFound) {
		return nil
	}
	return err
}

// registrationToken returns the cluster's registration token, creating one when it has none.
func (r *rancherClient) registrationToken(ctx context.Context, clusterID string) (v3Token, error) {
	var list struct{ Data []v3Token }
	if err := r.do(ctx, http.MethodGet, "/v3/clusterregistrationtokens?clusterId="+url.QueryEscape(clusterID), nil, &list); err != nil {
		return v3Token{}, err
	}
	for _, t := range list.Data {
		if t.Token != "" && t.ManifestURL != "" {
			return t, nil
		}
	}
	var t v3Token
	err := r.do(ctx, http.MethodPost, "/v3/clusterregistrationtokens",
		map[string]any{"type": "clusterRegistrationToken", "clusterId": clusterID}, &t)
	if err == nil && (t.Token == "" || t.ManifestURL == "") {
		err = fmt.Errorf("rancher returned a registration token for %s without token or manifestUrl", clusterID)
	}
	return t, err
}

// manifest downloads an import manifest. No API key is sent: the URL itself is the secret, so
// it never appears in errors or logs (a failed setup is retried as a whole).
func (r *rancherClient) manifest(ctx context.Context, manifestURL string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, manifestURL, nil)
	if err != nil {
		return nil, errors.New("rancher returned a manifest URL that does not parse")
	}
	resp, err := r.plain.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, failure.Transient(fmt.Errorf("rancher import manifest: %w", err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, failure.Transient(err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, failure.StatusErr("rancher", http.MethodGet, "/v3/import/…", resp.StatusCode, body)
	}
	return body, nil
}

// do sends a v3 request with the API key and decodes a JSON answer into out (if not nil).
func (r *rancherClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+r.token.Reveal())
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return failure.Transient(fmt.Errorf("rancher %s %s: %w", method, stripQuery(path), err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return failure.Transient(err)
	}
	if resp.StatusCode/100 != 2 {
		return failure.StatusErr("rancher", method, stripQuery(path), resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("rancher %s %s: unexpected answer: %w", method, stripQuery(path), err)
	}
	return nil
}

func stripQuery(p string) string {
	path, _, _ := strings.Cut(p, "?")
	return path
}
