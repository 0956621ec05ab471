package tunnel_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/vclusters/tunnel"
)

func TestParamsAreWhatTheClusterAgentSends(t *testing.T) {
	enc, err := tunnel.EncodeParams(tunnel.ClusterParams{Address: "127.0.0.1:8440", Token: "tok", CAPEM: []byte("PEM")})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]string
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"address": "127.0.0.1:8440", "token": "tok", "caCert": base64.StdEncoding.EncodeToString([]byte("PEM"))}
	if len(got) != 1 || len(got["cluster"]) != 3 {
		t.Fatalf("params %s", raw)
	}
	for k, v := range want {
		if got["cluster"][k] != v {
			t.Errorf("cluster.%s = %q, want %q", k, got["cluster"][k], v)
		}
	}
	if _, err := tunnel.EncodeParams(tunnel.ClusterParams{Address: "a:1", Token: "t"}); err == nil {
		t.Error("params without a CA accepted")
	}
}

func TestConnectURL(t *testing.T) {
	for _, tc := range []struct {
		server     string
		kind       tunnel.Kind
		registered bool
		want       string
	}{
		{"https://rancher.example.com", tunnel.Agent, false, "wss://rancher.example.com/v3/connect/register"},
		{"https://rancher.example.com/", tunnel.Agent, true, "wss://rancher.example.com/v3/connect"},
		{"https://rancher.example.com:8443/some/path?x=1", tunnel.Steve, false, "wss://rancher.example.com:8443/v3/connect"},
		{"http://127.0.0.1:8080", tunnel.Agent, true, "ws://127.0.0.1:8080/v3/connect"},
	} {
		got, err := tunnel.ConnectURL(tc.server, tc.kind, tc.registered)
		if err != nil || got != tc.want {
			t.Errorf("ConnectURL(%s, %s, %v) = %q, %v; want %q", tc.server, tc.kind, tc.registered, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "rancher.example.com", "ftp://x/"} {
		if _, err := tunnel.ConnectURL(bad, tunnel.Agent, false); err == nil {
			t.Errorf("ConnectURL(%q) accepted", bad)
		}
	}
}

func TestBackoffIsJitteredAndBounded(t *testing.T) {
	b := tunnel.Backoff{Min: 100 * time.Millisecond, Max: time.Second}
	for n, full := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		full *= time.Millisecond
		seen := map[time.Duration]bool{}
		for range 50 {
			d := b.Delay(n)
			if d < full/2 || d > full {
				t.Fatalf("Delay(%d) = %s, want within [%s, %s]", n, d, full/2, full)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("Delay(%d) took only %d distinct values in 50 draws: not jittered", n, len(seen))
		}
	}
}

func TestThrottleBoundsHandshakes(t *testing.T) {
	th := tunnel.NewThrottle(2, 1000)
	ctx := context.Background()
	r1, _ := th.Acquire(ctx)
	r2, _ := th.Acquire(ctx)
	got := make(chan struct{})
	go func() {
		r3, err := th.Acquire(ctx)
		if err == nil {
			r3()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("a third handshake started while two were running")
	case <-time.After(50 * time.Millisecond):
	}
	r1()
	<-got
	r2()

	slow := tunnel.NewThrottle(1, 5) // 5 per second, burst 1
	began := time.Now()
	for range 3 {
		r, err := slow.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r()
	}
	if d := time.Since(began); d < 350*time.Millisecond {
		t.Errorf("3 handshakes at 5/s took %s", d)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := slow.Acquire(cctx); err == nil {
		t.Error("Acquire on a cancelled context succeeded")
	}
}

func TestAllowedTargets(t *testing.T) {
	for _, tc := range []struct {
		kind          tunnel.Kind
		proto, target string
		want          bool
	}{
		{tunnel.Agent, "tcp", "127.0.0.1:8443", true},
		{tunnel.Agent, "tcp", tunnel.SteveAddress, false},
		{tunnel.Steve, "tcp", tunnel.SteveAddress, true},
		{tunnel.Steve, "tcp", "127.0.0.1:8443", true},
		{tunnel.Steve, "tcp", "not-used:80", true}, // Rancher's connected check (answered in memory)
		{tunnel.Steve, "tcp", "10.0.0.1:8443", true},
		{tunnel.Agent, "tcp", "127.0.0.1:8444", false},
		{tunnel.Agent, "tcp", "10.0.0.1:8443", false},
		{tunnel.Agent, "unix", "/var/run/docker.sock", false},
		{tunnel.Steve, "npipe", "//./pipe/docker_engine", false},
		{tunnel.Steve, "unix", "/var/run/docker.sock", false},
	} {
		if got := tunnel.Allowed(tc.kind, tc.proto, tc.target, "127.0.0.1:8443"); got != tc.want {
			t.Errorf("Allowed(%s, %s, %s) = %v", tc.kind, tc.proto, tc.target, got)
		}
	}
}
