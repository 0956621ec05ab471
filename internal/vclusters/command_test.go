package vclusters

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

func TestCommandRefusesBadInputBeforeAnyNetworkCall(t *testing.T) {
	// A listener that records any connection: Rancher and the main API must not be contacted.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	contacted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			contacted <- struct{}{}
			c.Close()
		}
	}()
	kc := writeFile(t, "kubeconfig", "apiVersion: v1\nkind: Config\nclusters: [{name: m, cluster: {server: 'https://"+ln.Addr().String()+"'}}]\n")
	for _, tc := range []struct {
		args []string
		env  []string
		code int
		says string
	}{
		{[]string{"--rancher-url", "https://" + ln.Addr().String(), "--kubeconfig", kc}, nil, 2, "rancher.token"},
		{[]string{"--rancher-url", "https://" + ln.Addr().String()}, []string{"SITE_AGENT_VC_RANCHER_TOKEN=a:b"}, 2, "main_api"},
		{[]string{"--rancher-url", "https://" + ln.Addr().String(), "--kubeconfig", kc, "--listen", "0.0.0.0:9090"},
			[]string{"SITE_AGENT_VC_RANCHER_TOKEN=a:b"}, 2, "listen"},
		{[]string{"--log-level", "chatty", "--kubeconfig", kc, "--rancher-url", "https://x.example"}, []string{"SITE_AGENT_VC_RANCHER_TOKEN=a:b"}, 2, "log_level"},
		{[]string{"-c", "/no/such/file.yaml"}, nil, 2, "no such file"},
		{[]string{"--no-such-flag"}, nil, 2, "flag provided but not defined"},
		{[]string{"extra"}, nil, 2, "unexpected argument"},
		{[]string{"-h"}, nil, 0, "Usage: site-agent-vclusters"},
	} {
		var out, errOut bytes.Buffer
		code := Command(context.Background(), tc.args, &out, &errOut, tc.env)
		if code != tc.code || !strings.Contains(errOut.String(), tc.says) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut.String(), tc.code, tc.says)
		}
	}
	select {
	case <-contacted:
		t.Error("a network call was made for an invalid configuration")
	case <-time.After(50 * time.Millisecond):
	}
}

func TestPprofOnlyWhenAsked(t *testing.T) {
	sim, srv := rancherSim(t)
	for _, on := range []bool{false, true} {
		cfg := testConfig(t, srv.URL, sim.Token())
		cfg.Pprof = on
		m, err := NewManager(cfg, unreachableDeps(t))
		if err != nil {
			t.Fatal(err)
		}
		want := 404
		if on {
			want = 200
		}
		if a := call(t, m.Handler(), "GET", "/debug/pprof/", ""); a.code != want {
			t.Errorf("pprof %v: %d", on, a.code)
		}
	}
}
