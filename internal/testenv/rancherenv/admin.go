package rancherenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Admin is the administrator's client of the real Rancher, for setting up a test's world and
// inspecting what the agent did: v3 and v1 requests with the admin token (Rancher's certificate
// is self-signed: not verified), and Rancher's own Kubernetes (the `local` cluster).
type Admin struct {
	env *Env
	hc  *http.Client
}

// Admin returns the administrator's client.
func (e *Env) Admin() *Admin {
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // loopback test server
	return &Admin{env: e, hc: &http.Client{Transport: tr, Timeout: time.Minute}}
}

// StatusError is an answer of 300 or more.
type StatusError struct {
	Method, Path string
	Code         int
	Body         string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("rancher %s %s: %d %s", e.Method, e.Path, e.Code, e.Body)
}

// Do sends a JSON request with the admin token and decodes the answer into out (nil: dropped).
func (a *Admin) Do(ctx context.Context, method, path string, in, out any) error {
	return a.do(ctx, a.env.AdminToken, method, path, in, out)
}

// DoAs sends a JSON request with another key (a restricted user's) and decodes the answer.
func (a *Admin) DoAs(ctx context.Context, k Key, method, path string, in, out any) error {
	return a.do(ctx, k.Bearer(), method, path, in, out)
}

func (a *Admin) do(ctx context.Context, token, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.env.URL+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return &StatusError{Method: method, Path: path, Code: resp.StatusCode, Body: string(data)}
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	return json.Unmarshal(data, out)
}

// List decodes every item of a v3 collection (path with its query; limit=-1 is added) into
// out, a pointer to a slice.
func (a *Admin) List(ctx context.Context, path string, out any) error {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	var page struct {
		Data json.RawMessage `json:"data"`
	}
	if err := a.Do(ctx, http.MethodGet, path+sep+"limit=-1", nil, &page); err != nil {
		return err
	}
	return json.Unmarshal(page.Data, out)
}

// Key is a Rancher API key.
type Key struct {
	Access, Secret string // token-xxxxx and the secret key
	UserID         string // the user it acts for
}

// Bearer is the key as a bearer token ("token-xxxxx:secret").
func (k Key) Bearer() string { return k.Access + ":" + k.Secret }

// APIKey creates an API key of the admin (POST /v3/tokens, valid for an hour), deleted when t
// ends.
func (a *Admin) APIKey(t testing.TB, description string) Key {
	t.Helper()
	return a.newKey(t, a.env.AdminToken, description)
}

func (a *Admin) newKey(t testing.TB, session, description string) Key {
	t.Helper()
	var tok struct {
		Name   string `json:"name"`
		Token  string `json:"token"`
		UserID string `json:"userId"`
	}
	err := a.do(t.Context(), session, http.MethodPost, "/v3/tokens", map[string]any{"type": "token", "description": description, "ttl": 3600000}, &tok)
	access, secret, ok := strings.Cut(tok.Token, ":")
	if err != nil || !ok {
		t.Fatalf("rancherenv: POST /v3/tokens: %v (token %t)", err, ok)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.Do(ctx, http.MethodDelete, "/v3/tokens/"+url.PathEscape(access), nil, nil); err != nil && !notFound(err) {
			t.Errorf("rancherenv: delete API key %s: %v", access, err)
		}
	})
	return Key{Access: access, Secret: secret, UserID: tok.UserID}
}

// RestrictedKey makes a local user with the given global roles (e.g. "user") and cluster role
// template bindings (cluster id → role template, e.g. "local" → "cluster-member"), logs in as it
// and returns an API key of it. The user, and with it its key and bindings, is deleted when t
// ends.
func (a *Admin) RestrictedKey(t testing.TB, name string, globalRoles []string, clusterRoles map[string]string) Key {
	t.Helper()
	ctx := t.Context()
	name += "-" + Suffix()
	pw := "pw-" + Suffix() + Suffix()
	var u struct {
		ID string `json:"id"`
	}
	if err := a.Do(ctx, http.MethodPost, "/v3/users", map[string]any{"type": "user", "username": name, "password": pw,
		"mustChangePassword": false, "enabled": true}, &u); err != nil {
		t.Fatalf("rancherenv: create user %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.Do(ctx, http.MethodDelete, "/v3/users/"+u.ID, nil, nil); err != nil && !notFound(err) {
			t.Errorf("rancherenv: delete user %s: %v", u.ID, err)
		}
	})
	for _, g := range globalRoles {
		if err := a.Do(ctx, http.MethodPost, "/v3/globalrolebindings", map[string]any{"type": "globalRoleBinding", "globalRoleId": g, "userId": u.ID}, nil); err != nil {
			t.Fatalf("rancherenv: global role %s for %s: %v", g, name, err)
		}
	}
	for cluster, role := range clusterRoles {
		if err := a.Do(ctx, http.MethodPost, "/v3/clusterroletemplatebindings", map[string]any{"type": "clusterRoleTemplateBinding",
			"clusterId": cluster, "userId": u.ID, "roleTemplateId": role}, nil); err != nil {
			t.Fatalf("rancherenv: %s on %s for %s: %v", role, cluster, name, err)
		}
	}
	var login struct {
		Token string `json:"token"`
	}
	if err := a.do(ctx, "", http.MethodPost, "/v3-public/localProviders/local?action=login",
		map[string]any{"username": name, "password": pw, "responseType": "json"}, &login); err != nil {
		t.Fatalf("rancherenv: login as %s: %v", name, err)
	}
	k := a.newKey(t, login.Token, "site-agent test "+name)
	k.UserID = u.ID
	return k
}

// Kube is a client of Rancher's own kube-apiserver (the `local` cluster) as its administrator.
func (e *Env) Kube(t testing.TB) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", e.Kubeconfig)
	if err != nil {
		t.Fatalf("rancherenv: %s: %v", e.Kubeconfig, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("rancherenv: %v", err)
	}
	return cs
}

// Suffix is 6 random lower-case hex digits: the Rancher server lives across test runs, so names
// a test makes carry one.
func Suffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func notFound(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusNotFound
}
