package apiproxy_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/waldur/site-agent/internal/vclusters/apiproxy"
	"github.com/waldur/site-agent/internal/vclusters/pki"
)

// upstream stands in for the main API server: it echoes what reached it.
func upstream(t *testing.T) (*httptest.Server, *http.Transport) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_ = json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Path, "query": r.URL.RawQuery,
			"authorization": r.Header.Get("Authorization"), "accept-encoding": r.Header.Get("Accept-Encoding"),
			"host": r.Host, "body": string(body)})
	}))
	t.Cleanup(srv.Close)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.DisableCompression = true
	return srv, tr
}

type fixture struct {
	up       *httptest.Server
	proxy    *apiproxy.Proxy
	ca       *pki.CA
	moves    chan string
	observed chan int64 // bytes out of each request, as OnRequest saw it
}

func start(t *testing.T, ports *apiproxy.Ports, preferred int) *fixture {
	t.Helper()
	up, tr := upstream(t)
	ca, err := pki.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.IssueServing("proxy")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(up.URL)
	f := &fixture{up: up, ca: ca, moves: make(chan string, 4), observed: make(chan int64, 1024)}
	f.proxy, err = apiproxy.Start(apiproxy.Options{Cluster: "vc", Upstream: u, Transport: tr, Cert: srv.TLS, Ports: ports,
		Preferred: preferred, Selectors: map[string]string{"/api/v1/nodes": "logical-cluster=vc", "/api/v1/namespaces": "!logical-cluster"},
		OnRequest: func(code int, in, out int64) { f.observed <- out },
		OnMove:    func(addr string) { f.moves <- addr }, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.proxy.Close)
	return f
}

// client trusts only the proxy CA, as Rancher does with the caCert the agent reports.
func (f *fixture) client() *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.ca.PEM)
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
}

func (f *fixture) get(t *testing.T, path string, hdr http.Header) map[string]string {
	t.Helper()
	req, _ := http.NewRequest("GET", "https://"+f.proxy.Addr()+path, nil)
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := f.client().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	var out map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	return out
}

func TestPassesThroughWithTheCallersCredentials(t *testing.T) {
	f := start(t, apiproxy.NewPorts(0, 0), 0)
	got := f.get(t, "/api/v1/namespaces/x/pods?limit=3", http.Header{"Authorization": {"Bearer sa-token"}, "Accept-Encoding": {"gzip"}})
	want := map[string]string{"path": "/api/v1/namespaces/x/pods", "query": "limit=3", "authorization": "Bearer sa-token",
		"accept-encoding": "", "host": strings.TrimPrefix(f.up.URL, "https://")}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if got := f.get(t, "/healthz", nil); got["authorization"] != "" || got["path"] != "/healthz" {
		t.Errorf("health check gained credentials or lost its path: %v", got)
	}
	// OnRequest runs when the proxy's handler returns, which can be after the client has read
	// the whole answer (the proxy flushes as it copies): wait for the observations, do not
	// assume they came first.
	if seen := f.waitObserved(t, 2); seen[0] == 0 {
		t.Errorf("observed requests %v", seen)
	}
	select {
	case extra := <-f.observed:
		t.Errorf("a third request observed (%d bytes)", extra)
	default:
	}
}

// waitObserved returns the next n requests' bytes out as OnRequest reported them.
func (f *fixture) waitObserved(t *testing.T, n int) []int64 {
	t.Helper()
	var seen []int64
	timeout := time.After(5 * time.Second)
	for len(seen) < n {
		select {
		case out := <-f.observed:
			seen = append(seen, out)
		case <-timeout:
			t.Fatalf("observed %v, want %d requests", seen, n)
		}
	}
	return seen
}

func TestNodeAndNamespaceListsAreScoped(t *testing.T) {
	f := start(t, apiproxy.NewPorts(0, 0), 0)
	for _, tc := range []struct{ path, query string }{
		{"/api/v1/nodes", "labelSelector=logical-cluster%3Dvc"},
		{"/api/v1/nodes?labelSelector=type%3Dkwok&watch=1", "labelSelector=type%3Dkwok%2Clogical-cluster%3Dvc&watch=1"},
		{"/api/v1/nodes/vc-node1", ""},
		{"/api/v1/namespaces?watch=1", "labelSelector=%21logical-cluster&watch=1"},
		{"/api/v1/namespaces/cluster-vc", ""},
		{"/api/v1/namespaces/cluster-vc/pods", ""},
		{"/api/v1/pods", ""},
	} {
		if got := f.get(t, tc.path, nil); got["query"] != tc.query {
			t.Errorf("%s reached the API server with query %q, want %q", tc.path, got["query"], tc.query)
		}
	}
}

func TestRestartsOnANewPortWhenTheListenerFails(t *testing.T) {
	ports := apiproxy.NewPorts(0, 0)
	f := start(t, ports, 0)
	old := f.proxy.Addr()
	f.proxy.BreakListener()
	var moved string
	select {
	case moved = <-f.moves:
	case <-time.After(5 * time.Second):
		t.Fatal("the proxy did not report a move")
	}
	if moved == old || moved != f.proxy.Addr() {
		t.Fatalf("moved from %s to %s (Addr %s)", old, moved, f.proxy.Addr())
	}
	if got := f.get(t, "/version", nil); got["path"] != "/version" {
		t.Errorf("after the move: %v", got)
	}
	if c, err := net.DialTimeout("tcp", old, time.Second); err == nil {
		c.Close()
		t.Errorf("the old address %s still accepts connections", old)
	}
}

func TestPortsFromARangeAndThePreferredPort(t *testing.T) {
	base := freeRange(t, 2)
	ports := apiproxy.NewPorts(base, 2)
	a := start(t, ports, 0)
	b := start(t, ports, 0)
	if a.proxy.Port() != base || b.proxy.Port() != base+1 {
		t.Fatalf("ports %d, %d from range %d+2", a.proxy.Port(), b.proxy.Port(), base)
	}
	if _, err := ports.Listen(0); err == nil || !strings.Contains(err.Error(), "no free port") {
		t.Errorf("a third port from a range of two: %v", err)
	}
	// A restarted tool asks for the port a cluster had: it gets it when it is free.
	a.proxy.Close()
	c := start(t, apiproxy.NewPorts(0, 0), base)
	if c.proxy.Port() != base {
		t.Errorf("preferred port %d not reused: got %d", base, c.proxy.Port())
	}
}

// freeRange finds n consecutive free loopback ports below the kernel's ephemeral range
// (32768 and up), where the test's own connections cannot take one between probe and use.
func freeRange(t *testing.T, n int) int {
	t.Helper()
	for base := 20000 + rand.IntN(10000); base < 32768-n; base += n {
		var ls []net.Listener
		for p := base; p < base+n; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				break
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if len(ls) == n {
			return base
		}
	}
	t.Fatal("no free port range below 32768")
	return 0
}

func TestPipeServesPlainHTTPForTheSteveSession(t *testing.T) {
	f := start(t, apiproxy.NewPorts(0, 0), 0)
	conn, err := f.proxy.DialPipe(context.Background(), "tcp", "127.0.0.1:6080")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "GET /v1/nodes HTTP/1.1\r\nHost: 127.0.0.1:6080\r\nAuthorization: Bearer x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&got)
	if got["path"] != "/v1/nodes" || got["authorization"] != "Bearer x" {
		t.Errorf("through the pipe: %v", got)
	}
	f.proxy.Close()
	if _, err := f.proxy.DialPipe(context.Background(), "tcp", ""); err == nil {
		t.Error("pipe of a closed proxy accepted a connection")
	}
}

// Rancher checks the agent with GET http://not-used/ping through the steve session; the steve
// target answers it itself (the main API server has no /ping).
func TestPipeAnswersRanchersConnectedCheck(t *testing.T) {
	f := start(t, apiproxy.NewPorts(0, 0), 0)
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != "not-used:80" {
			t.Errorf("dialled %s", addr)
		}
		return f.proxy.DialPipe(ctx, network, addr)
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://not-used/ping")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "pong" {
		t.Errorf("ping: %d %q", resp.StatusCode, body)
	}
	select {
	case n := <-f.observed:
		t.Errorf("the ping reached the main API server (%d bytes)", n)
	default:
	}
	// Everything else on the pipe still reaches the main API server.
	resp, err = (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://not-used/api/v1/nodes")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen := f.waitObserved(t, 1); len(seen) != 1 || resp.StatusCode != 200 {
		t.Errorf("pass-through after the ping: %d %v", resp.StatusCode, seen)
	}
}
