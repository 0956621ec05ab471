package telemetry

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

func TestHeartbeatFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hb")
	hb := NewHeartbeat(path)
	if err := CheckFile(path, time.Minute, time.Now()); err == nil {
		t.Fatal("missing file should be unhealthy")
	}
	hb.Touch()
	if err := CheckFile(path, time.Minute, time.Now()); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), ".") {
		t.Fatalf("content should be an epoch float like the incumbent's, got %q", data)
	}
	if err := CheckFile(path, time.Minute, time.Now().Add(2*time.Minute)); err == nil || !strings.Contains(err.Error(), "old") {
		t.Fatalf("stale heartbeat: %v", err)
	}
	NewHeartbeat("").Touch() // disabled: no file, no panic
	// Beat (the runner's ticker) writes every time; Touch at most once a second.
	clock := time.Unix(1_700_000_000, 0)
	hb.now = func() time.Time { return clock }
	hb.Beat()
	clock = clock.Add(300 * time.Millisecond)
	hb.Touch()
	if got := hb.Last(); !got.Equal(clock.Add(-300 * time.Millisecond)) {
		t.Fatalf("Touch within a second of the last write wrote: last %v", got)
	}
	hb.Beat()
	if got := hb.Last(); !got.Equal(clock) {
		t.Fatalf("Beat did not write: last %v", got)
	}
}

func TestServeProbesAndMetrics(t *testing.T) {
	m := NewMetrics()
	m.Orders.WithLabelValues(OfferingLabel("E2EF0000-0000-0000-0000-000000000001"), "Create", "done").Inc()
	ready := errors.New("no successful cycle yet")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := Serve(ctx, "127.0.0.1:0", m, Health{Live: func() error { return nil }, Ready: func() error { return ready }}, NewStatus("test"), zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr.String()
	check := func(path string, code int, body string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != code || !strings.Contains(string(b), body) {
			t.Fatalf("%s = %d %q", path, resp.StatusCode, b)
		}
	}
	check("/healthz", 200, "ok")
	check("/readyz", 503, "no successful cycle yet")
	ready = nil
	check("/readyz", 200, "ok")
	check("/metrics", 200, `site_agent_orders_total{offering_uuid="e2ef0000000000000000000000000001",result="done",type="Create"} 1`)
	check("/metrics", 200, `site_agent_config_reloads_total{result="failure"} 0`)
	check("/status", 200, "<title>site-agent status</title>")
	check("/status.json", 200, `"version": "test"`)
	check("/metrics", 200, "go_goroutines")
}

func TestLoggerWritesText(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLoggerFormat(&buf, "info", LogText)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("order finished", zap.String("order_uuid", "o1"))
	out := buf.String()
	if strings.HasPrefix(out, "{") || !strings.Contains(out, "\tINFO\torder finished\t") || !strings.Contains(out, `{"order_uuid": "o1"}`) {
		t.Fatalf("text log output %q", out)
	}
	if _, err := NewLoggerFormat(&buf, "info", "xml"); err == nil {
		t.Fatal("unknown format accepted")
	}
}

func TestLoggerWritesJSON(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger(&buf, "info")
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("hidden")
	log.Info("order finished", zap.String("order", "o1"))
	out := buf.String()
	if strings.Contains(out, "hidden") || !strings.Contains(out, `"event":"order finished"`) || !strings.Contains(out, `"order":"o1"`) {
		t.Fatalf("log output %q", out)
	}
	if _, err := NewLogger(&buf, "loud"); err == nil {
		t.Fatal("bad level accepted")
	}
}

// The heartbeat's default path is in /tmp, where any local user can plant a symlink. Links at
// the old fixed temporary name (<path>.tmp) or at the path itself must not make the agent write
// into the file they point to.
func TestHeartbeatDoesNotWriteThroughPlantedLinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "heartbeat")
	for _, link := range []string{path + ".tmp", path} {
		_ = os.Remove(link)
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
		NewHeartbeat(path).Beat()
		if data, _ := os.ReadFile(victim); string(data) != "precious" {
			t.Fatalf("a link planted at %s made the heartbeat overwrite its target: %q", filepath.Base(link), data)
		}
		st, err := os.Lstat(path)
		if err != nil || !st.Mode().IsRegular() {
			t.Fatalf("heartbeat file is not a regular file after a write: %v %v", st, err)
		}
		if st.Mode().Perm() != 0o644 {
			t.Fatalf("heartbeat file mode %v, want 0644 (readable by a healthcheck run as another user)", st.Mode().Perm())
		}
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 3 { // victim, heartbeat, and the planted heartbeat.tmp link left alone
		t.Fatalf("directory holds %v, want only victim, heartbeat and the planted link (no temporary files left)", names)
	}
}
