package keycloaksim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// harness is a simulator on loopback plus a raw HTTP client logged in as the admin.
type harness struct {
	t     *testing.T
	sim   *Server
	srv   *httptest.Server
	token string
}

func start(t *testing.T, opts Options) *harness {
	t.Helper()
	sim := New(opts)
	h := &harness{t: t, sim: sim, srv: httptestServer(t, sim)}
	h.token = h.login("admin", "admin")
	return h
}

func httptestServer(t *testing.T, sim *Server) *httptest.Server {
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return srv
}

// login runs the password grant and returns the access token.
func (h *harness) login(user, pass string) string {
	h.t.Helper()
	status, body, _ := h.form("/realms/master/protocol/openid-connect/token", url.Values{
		"grant_type": {"password"}, "client_id": {"admin-cli"}, "username": {user}, "password": {pass},
	})
	if status != http.StatusOK {
		h.t.Fatalf("login: HTTP %d %s", status, body)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	mustJSON(h.t, body, &tok)
	return tok.AccessToken
}

func (h *harness) form(path string, v url.Values) (int, []byte, http.Header) {
	h.t.Helper()
	resp, err := http.Post(h.srv.URL+path, "application/x-www-form-urlencoded", strings.NewReader(v.Encode()))
	if err != nil {
		h.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data, resp.Header
}

// do sends an admin request to /admin/realms/waldur<path> with the admin token.
func (h *harness) do(method, path, body string) (int, []byte, http.Header) {
	h.t.Helper()
	return h.raw(method, "/admin/realms/waldur"+path, body, h.token)
}

func (h *harness) raw(method, path, body, token string) (int, []byte, http.Header) {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data, resp.Header
}

// mkGroup creates a group through the API and returns its id.
func (h *harness) mkGroup(parentID, name string) string {
	h.t.Helper()
	path := "/groups"
	if parentID != "" {
		path = "/groups/" + parentID + "/children"
	}
	status, body, hdr := h.do(http.MethodPost, path, `{"name":`+quote(name)+`}`)
	if status != http.StatusCreated {
		h.t.Fatalf("create %q: HTTP %d %s", name, status, body)
	}
	loc := hdr.Get("Location")
	return loc[strings.LastIndex(loc, "/")+1:]
}

func mustJSON(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// groupOut decodes the group shape tests look at.
type groupOut struct {
	ID            string              `json:"id"`
	Name          string              `json:"name"`
	Path          string              `json:"path"`
	ParentID      string              `json:"parentId"`
	SubGroupCount *int                `json:"subGroupCount"`
	SubGroups     []groupOut          `json:"subGroups"`
	Attributes    map[string][]string `json:"attributes"`
}

func names(gs []groupOut) []string {
	out := []string{}
	for _, g := range gs {
		out = append(out, g.Name)
	}
	return out
}

// fakeClock is a settable clock for token expiry tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
