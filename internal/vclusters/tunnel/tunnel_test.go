package tunnel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/sim/ranchersim"
	"github.com/waldur/site-agent/internal/vclusters/tunnel"
)

// world is a Rancher simulator with one imported cluster, and a TLS server standing in for the
// cluster's API proxy: it echoes what reached it.
type world struct {
	t      *testing.T
	sim    *ranchersim.Server
	srv    *httptest.Server
	addr   string
	id     string
	token  string
	target *httptest.Server
	caPEM  []byte
	events *recorder
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, sim: ranchersim.New(ranchersim.Options{ConnectedCheckInterval: 200 * time.Millisecond, CleanupRetryInterval: 50 * time.Millisecond}), events: &recorder{}}
	w.srv = httptest.NewTLSServer(w.sim)
	w.addr = w.srv.Listener.Addr().String()
	t.Cleanup(func() { w.srv.Close(); w.sim.CloseTunnels() })
	w.target = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(rw).Encode(map[string]string{"path": r.URL.Path, "query": r.URL.RawQuery,
			"authorization": r.Header.Get("Authorization")})
	}))
	t.Cleanup(w.target.Close)
	w.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.target.Certificate().Raw})
	var c map[string]any
	w.api("POST", "/v3/clusters", `{"type":"cluster","name":"vc-tunnel"}`, &c)
	w.id = c["id"].(string)
	var tok map[string]any
	for start := time.Now(); w.api("POST", "/v3/clusterregistrationtokens", `{"type":"clusterRegistrationToken","clusterId":"`+w.id+`"}`, &tok) == http.StatusNotFound; {
		if time.Since(start) > 5*time.Second { // Rancher makes the cluster's namespace a moment after the cluster
			t.Fatal("the registration token stays 404")
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.token = tok["token"].(string)
	return w
}

// api calls the simulator's v3 API with its API key.
func (w *world) api(method, path, body string, out any) int {
	w.t.Helper()
	req, _ := http.NewRequest(method, "https://"+w.addr+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+w.sim.Token())
	resp, err := w.srv.Client().Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		_ = json.Unmarshal(data, out) // error answers may not be JSON; callers check the code
	}
	return resp.StatusCode
}

func (w *world) config(steve remotedialerDialer) tunnel.Config {
	return tunnel.Config{
		Cluster: "vc-tunnel", Server: "https://" + w.addr, Token: secret.New(w.token),
		Params: func() (tunnel.ClusterParams, error) {
			return tunnel.ClusterParams{Address: w.target.Listener.Addr().String(), Token: "sa-token", CAPEM: w.caPEM}, nil
		},
		ProxyAddr: func() string { return w.target.Listener.Addr().String() },
		SteveDial: steve,
		TLS:       w.srv.Client().Transport.(*http.Transport).TLSClientConfig,
		Backoff:   tunnel.Backoff{Min: 50 * time.Millisecond, Max: 400 * time.Millisecond},
		Events:    w.events.events(),
		Logger:    zaptest.NewLogger(w.t),
	}
}

type remotedialerDialer = func(ctx context.Context, network, address string) (net.Conn, error)

// kill stops the simulator's listener and drops its tunnels, as a Rancher restart does.
func (w *world) kill() {
	w.srv.Close()
	w.sim.CloseTunnels()
}

// restart serves the same simulator (same state) on the same address again.
func (w *world) restart() {
	w.t.Helper()
	ln, err := net.Listen("tcp", w.addr)
	if err != nil {
		w.t.Fatalf("re-listen on %s: %v", w.addr, err)
	}
	w.srv = httptest.NewUnstartedServer(w.sim)
	w.srv.Listener = ln
	w.srv.StartTLS()
}

// waitSessions waits until both ends agree on which sessions are up: Rancher registers a
// session as it upgrades the connection, before the client has read the answer and fired Up
// (and Registered), so the simulator's view alone says nothing about the client's events.
func (w *world) waitSessions(agent, steve bool) {
	w.t.Helper()
	waitFor(w.t, 10*time.Second, fmt.Sprintf("sessions agent=%v steve=%v", agent, steve), func() bool {
		a, s := w.sim.Sessions(w.id)
		return a == agent && s == steve && w.events.isUp(tunnel.Agent) == agent && w.events.isUp(tunnel.Steve) == steve
	})
}

// k8s sends a request to Rancher's /k8s/clusters/<id> proxy and decodes the echo.
func (w *world) k8s(path string) (int, map[string]string) {
	w.t.Helper()
	var out map[string]string
	code := w.api("GET", "/k8s/clusters/"+w.id+path, "", &out)
	return code, out
}

func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// recorder collects a client's events.
type recorder struct {
	mu         sync.Mutex
	up, down   map[tunnel.Kind]int
	current    map[tunnel.Kind]bool // between Up and Down
	failed     []error
	registered int
	dials      map[string]int
}

func (r *recorder) events() tunnel.Events {
	r.up, r.down, r.dials, r.current = map[tunnel.Kind]int{}, map[tunnel.Kind]int{}, map[string]int{}, map[tunnel.Kind]bool{}
	return tunnel.Events{
		Up:         func(k tunnel.Kind) { r.mu.Lock(); r.up[k]++; r.current[k] = true; r.mu.Unlock() },
		Down:       func(k tunnel.Kind, _ error) { r.mu.Lock(); r.down[k]++; r.current[k] = false; r.mu.Unlock() },
		Failed:     func(_ tunnel.Kind, err error) { r.mu.Lock(); r.failed = append(r.failed, err); r.mu.Unlock() },
		Registered: func() { r.mu.Lock(); r.registered++; r.mu.Unlock() },
		Dial: func(k tunnel.Kind, ok bool) {
			r.mu.Lock()
			r.dials[fmt.Sprintf("%s/%v", k, ok)]++
			r.mu.Unlock()
		},
	}
}

func (r *recorder) isUp(k tunnel.Kind) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current[k]
}

func (r *recorder) get(f func(r *recorder) int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return f(r)
}

func TestSessionsAreOpenedAsTheClusterAgentOpensThem(t *testing.T) {
	w := newWorld(t)
	c := tunnel.Start(context.Background(), w.config(steveServer(t)))
	defer c.Stop()
	w.waitSessions(true, true)

	connects := w.sim.TunnelConnects()
	if connects["agent.register"] != 1 || connects["agent"] != 0 || connects["steve"] != 1 {
		t.Errorf("handshakes %v: want one agent registration (/v3/connect/register) and one steve session", connects)
	}
	if n := w.events.get(func(r *recorder) int { return r.registered }); n != 1 {
		t.Errorf("Registered fired %d times", n)
	}
	// Rancher's /k8s/clusters/<id>/ proxy dials the agent's address through the tunnel, over TLS
	// trusting the agent's CA, with the agent's service-account token.
	code, echo := w.k8s("/api/v1/namespaces?limit=5")
	if code != 200 || echo["path"] != "/api/v1/namespaces" || echo["query"] != "limit=5" || echo["authorization"] != "Bearer sa-token" {
		t.Errorf("through the tunnel: %d %v", code, echo)
	}
	if info, _ := w.sim.ClusterByName("vc-tunnel"); info.APIEndpoint != "https://"+w.target.Listener.Addr().String() {
		t.Errorf("rancher's api endpoint %q", info.APIEndpoint)
	}
}

// steveServer answers plain HTTP on in-memory connections, as the steve session's target:
// "pong" on /ping (rancher pkg/api/steve/health), "steve saw <path>" elsewhere. Like an
// http.Server it keeps connections open between requests.
func steveServer(t *testing.T) remotedialerDialer {
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			br := bufio.NewReader(server)
			for {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				body := "steve saw " + req.URL.Path
				if req.URL.Path == "/ping" {
					body = "pong"
				}
				_, _ = io.Copy(io.Discard, req.Body)
				fmt.Fprintf(server, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			}
		}()
		return client, nil
	}
}

// Rancher's clusterconnected controller checks the agent with GET http://not-used/ping over the
// steve session; the cluster counts as connected only when that answers 200.
func TestRancherSeesTheAgentConnectedThroughTheSteveSession(t *testing.T) {
	w := newWorld(t)
	c := tunnel.Start(context.Background(), w.config(steveServer(t)))
	defer c.Stop()
	w.waitSessions(true, true)
	waitFor(t, 10*time.Second, "rancher's connected check", func() bool {
		info, _ := w.sim.ClusterByName("vc-tunnel")
		return info.Connected
	})
	if n := w.events.get(func(r *recorder) int { return r.dials["steve/true"] }); n < 1 {
		t.Errorf("the check's dial to not-used:80 was not allowed: %v", w.events.dials)
	}
	if n := w.events.get(func(r *recorder) int { return r.down[tunnel.Steve] }); n != 0 {
		t.Errorf("the steve session dropped %d times", n)
	}
}

func TestAllowFunctionPermitsOnlyTheClustersOwnTargets(t *testing.T) {
	w := newWorld(t)
	c := tunnel.Start(context.Background(), w.config(steveServer(t)))
	defer c.Stop()
	w.waitSessions(true, true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	// The steve session reaches the steve address (Rancher's steve proxy dials 127.0.0.1:6080).
	conn, err := w.sim.DialTunnel(ctx, w.id, true, tunnel.SteveAddress)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(conn, "GET /v1/namespaces HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("steve through the tunnel: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = conn.Close()
	if string(body) != "steve saw /v1/namespaces" {
		t.Errorf("steve answered %q", body)
	}

	// Any other target is refused: another local port (something that listens and would
	// answer), the main API server's port, a unix socket.
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := other.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	conn, err = w.sim.DialTunnel(ctx, w.id, false, other.Addr().String())
	if err == nil {
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		_ = conn.Close()
	}
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("dial to %s through the tunnel: %v, want a refusal", other.Addr(), err)
	}
	select {
	case <-accepted:
		t.Errorf("the refused target was connected to")
	case <-time.After(100 * time.Millisecond):
	}
	if n := w.events.get(func(r *recorder) int { return r.dials["agent/false"] }); n != 1 {
		t.Errorf("refused dials %d, want 1", n)
	}
	// remotedialer ends a session whose peer asks for a refused target; the agent reconnects
	// (now to /v3/connect, having registered) and keeps working.
	w.waitSessions(true, true)
	waitFor(t, 10*time.Second, "the agent's reconnect", func() bool { return w.sim.TunnelConnects()["agent"] >= 1 })
	if code, echo := w.k8s("/version"); code != 200 || echo["path"] != "/version" {
		t.Errorf("after the refusal: %d %v", code, echo)
	}
}

func TestReconnectsAfterRancherRestarts(t *testing.T) {
	w := newWorld(t)
	c := tunnel.Start(context.Background(), w.config(steveServer(t)))
	defer c.Stop()
	w.waitSessions(true, true)

	w.kill()
	waitFor(t, 5*time.Second, "both sessions to notice", func() bool {
		return w.events.get(func(r *recorder) int { return r.down[tunnel.Agent] + r.down[tunnel.Steve] }) == 2
	})
	waitFor(t, 5*time.Second, "failed handshakes while rancher is down", func() bool {
		return w.events.get(func(r *recorder) int { return len(r.failed) }) >= 2
	})
	w.restart()
	w.waitSessions(true, true)
	if code, echo := w.k8s("/healthz"); code != 200 || echo["path"] != "/healthz" {
		t.Errorf("after the restart: %d %v", code, echo)
	}
	connects := w.sim.TunnelConnects()
	if connects["agent.register"] != 1 || connects["agent"] != 1 || connects["steve"] != 2 {
		t.Errorf("handshakes %v: the reconnect must use /v3/connect", connects)
	}
}

func TestReconnectPicksUpNewParameters(t *testing.T) {
	w := newWorld(t)
	cfg := w.config(nil)
	var mu sync.Mutex
	// The proxy's old place answers too (a dial that fails while Rancher writes to the connection
	// is remotedialer v0.6.1's race on the server side, which the tool never causes: its proxy
	// stays up while its tunnels are).
	before := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(rw).Encode(map[string]string{"path": "old place"})
	}))
	defer before.Close()
	addr := before.Listener.Addr().String()
	cfg.Params = func() (tunnel.ClusterParams, error) {
		mu.Lock()
		defer mu.Unlock()
		return tunnel.ClusterParams{Address: addr, Token: "sa-token", CAPEM: w.caPEM}, nil
	}
	cfg.ProxyAddr = func() string { mu.Lock(); defer mu.Unlock(); return addr }
	c := tunnel.Start(context.Background(), cfg)
	defer c.Stop()
	w.waitSessions(true, false)
	if code, echo := w.k8s("/version"); code != 200 || echo["path"] != "old place" {
		t.Fatalf("before the move: %d %v", code, echo)
	}
	mu.Lock()
	addr = w.target.Listener.Addr().String() // the proxy moved
	mu.Unlock()
	c.Reconnect()
	waitFor(t, 10*time.Second, "rancher to use the new address", func() bool {
		info, _ := w.sim.ClusterByName("vc-tunnel")
		return info.APIEndpoint == "https://"+w.target.Listener.Addr().String()
	})
	w.waitSessions(true, false)
	if code, echo := w.k8s("/version"); code != 200 || echo["path"] != "/version" {
		t.Errorf("after the move: %d %v", code, echo)
	}
}
