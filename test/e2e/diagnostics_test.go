package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// refusedURL is an http URL on loopback where nothing listens: connections are refused.
func refusedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// hangingURL is an http URL on loopback whose server accepts connections and never answers.
func hangingURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String()
}

const (
	diagRancherSecret  = "diag-rancher-secret-0123"
	diagKeycloakSecret = "diag-keycloak-secret-4567"
	diagWaldurToken    = "diag-waldur-token-89abcdef"
	diagOpenStackPass  = "diag-openstack-password-1"
)

// diagConfig writes a configuration of n Rancher offerings (with Keycloak) whose Waldur, Rancher
// and Keycloak are at the URLs given, plus an OpenStack offering that creates tenant users (its
// secret store is a Vault section), with retries that would take long if they applied to refused
// connections.
func diagConfig(t testing.TB, n int, waldur, rancher, keycloak string) string {
	t.Helper()
	return diagConfigVault(t, n, waldur, rancher, keycloak, refusedURL(t))
}

// diagConfigVault is diagConfig with the Vault section's address.
func diagConfigVault(t testing.TB, n int, waldur, rancher, keycloak, vault string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "upstreams:\n  waldur: {retries: 6, backoff_min: 2s}\n  rancher: {retries: 6, backoff_min: 2s}\n  keycloak: {retries: 6, backoff_min: 2s}\n")
	fmt.Fprintf(&b, "vault: {address: %q, auth: {method: token, token: hvs.diag-vault-token}}\nofferings:\n", vault)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `  - name: off-%d
    waldur_api_url: %s/api/
    waldur_api_token: %s
    waldur_offering_uuid: e2ef0000-0000-0000-0000-0000000000%02d
    backend_type: rancher
    order_processing_backend: rancher
    membership_sync_backend: rancher
    backend_settings:
      backend_url: %s
      username: token-diag%d
      password: %s
      cluster_id: c-m-diag0001
      keycloak_enabled: yes
      keycloak: {keycloak_url: %s/auth/, keycloak_realm: waldur, keycloak_username: admin, keycloak_password: %s}
    backend_components:
      cpu: {type: cpu, measured_unit: cores, accounting_type: limit, label: CPU}
`, i, waldur, diagWaldurToken, i, rancher, i, diagRancherSecret, keycloak, diagKeycloakSecret)
	}
	fmt.Fprintf(&b, `  - name: off-os
    waldur_api_url: %s/api/
    waldur_api_token: %s
    waldur_offering_uuid: e2ef0000-0000-0000-0000-0000000000ff
    backend_type: openstack
    order_processing_backend: openstack
    backend_settings:
      auth_url: %s/v3
      username: admin
      password: %s
      project_name: admin
      external_network: public
      create_tenant_user: true
      credentials_path: secret/tenants
    backend_components:
      cores: {measured_unit: cores, accounting_type: limit, label: Cores}
`, waldur, diagWaldurToken, rancher, diagOpenStackPass)
	path := filepath.Join(t.TempDir(), "diag.yaml")
	writeFile(t, path, b.String())
	return path
}

// runTimed runs the binary and measures its wall time.
func runTimed(t *testing.T, args ...string) (result, time.Duration) {
	t.Helper()
	e := &env{t: t}
	start := time.Now()
	r := e.run(args...)
	return r, time.Since(start)
}

// wantEveryUpstream checks that every offering's every upstream has a FAIL line naming both.
func wantEveryUpstream(t *testing.T, out string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		for _, up := range []string{"waldur", "rancher", "kubernetes", "keycloak"} {
			if !strings.Contains(out, fmt.Sprintf("[FAIL] off-%d · %s · ", i, up)) {
				t.Errorf("no FAIL line for off-%d · %s", i, up)
			}
		}
	}
	for _, up := range []string{"waldur", "openstack"} {
		if !strings.Contains(out, "[FAIL] off-os · "+up+" · ") {
			t.Errorf("no FAIL line for off-os · %s", up)
		}
	}
	for _, s := range []string{diagRancherSecret, diagKeycloakSecret, diagWaldurToken, diagOpenStackPass, "hvs.diag-vault-token"} {
		if strings.Contains(out, s) {
			t.Errorf("diagnostics print a secret (%d characters)", len(s))
		}
	}
}

// Everything refusing connections: every upstream of every offering is named at once, although
// the upstreams section asks for 6 retries 2 s apart (a retried refusal would take ≥ 12 s); the
// openstack offering's tenant users find the Vault secret store. The issue's ≤ 2 s is a figure
// of `make bench` (figures_diagnostics_test.go): a timed test must not fail on a loaded machine,
// so the bound here only tells "not retried" from "retried".
func TestDiagnosticsEverythingRefusing(t *testing.T) {
	const n = 5
	down := refusedURL(t)
	cfg := diagConfig(t, n, down, down, down)
	r, took := runTimed(t, "diagnostics", "-c", cfg)
	t.Logf("diagnostics, %d offerings, everything refusing: %s\n%s", n+1, took.Round(time.Millisecond), r.stdout)
	if r.code != 1 || !strings.Contains(r.stdout, "problem(s) found") {
		t.Fatalf("want exit 1 and the problems: %s", r)
	}
	if took > 6*time.Second {
		t.Errorf("took %s: refused connections were retried (the figure's target is ≤ 2 s)", took)
	}
	wantEveryUpstream(t, r.stdout+r.stderr, n)
	if strings.Contains(r.stdout+r.stderr, "needs a secret store") {
		t.Error("the openstack offering does not see the vault section's secret store")
	}

	r, took = runTimed(t, "diagnostics", "-c", cfg, "--output", "json")
	var doc struct {
		Config   string      `json:"config"`
		Errors   []any       `json:"errors"`
		Problems int         `json:"problems"`
		OK       bool        `json:"ok"`
		Checks   []diagCheck `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("--output json is not one JSON document: %v\n%s", err, r.stdout)
	}
	if r.code != 1 || doc.OK || doc.Problems != len(doc.Checks) || len(doc.Checks) < 4*n+2 || doc.Config != cfg || len(doc.Errors) != 0 {
		t.Fatalf("json: exit %d, ok %v, %d problems in %d checks, config %q", r.code, doc.OK, doc.Problems, len(doc.Checks), doc.Config)
	}
	if took > 6*time.Second {
		t.Errorf("json took %s: refused connections were retried", took)
	}
	for i := 1; i < len(doc.Checks); i++ { // in configuration order, whatever finished first
		if doc.Checks[i].Offering < doc.Checks[i-1].Offering {
			t.Fatalf("checks out of order: %s after %s", doc.Checks[i].Offering, doc.Checks[i-1].Offering)
		}
	}
	wantEveryUpstream(t, textOf(doc.Checks), n)
}

// diagCheck is one check of the --output json document.
type diagCheck struct {
	Offering, Upstream, Check, Detail string
	OK                                bool
}

// textOf renders JSON checks as the text lines, for the same assertions.
func textOf(checks []diagCheck) string {
	var b strings.Builder
	for _, c := range checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "[%s] %s · %s · %s: %s\n", mark, c.Offering, c.Upstream, c.Check, c.Detail)
	}
	return b.String()
}

// Everything hanging: every upstream of every offering is reported failed once the deadline (the
// --timeout of each check) has passed — all checks at once: in series the 22 checks would take
// 44 s, two after each other 4 s. The issue's ≤ deadline + 1 s is a `make bench` figure.
func TestDiagnosticsEverythingHanging(t *testing.T) {
	const n = 5
	hang := hangingURL(t)
	cfg := diagConfig(t, n, hang, hang, hang)
	r, took := runTimed(t, "diagnostics", "-c", cfg, "--timeout", "2s")
	t.Logf("diagnostics, %d offerings, everything hanging, --timeout 2s: %s\n%s", n+1, took.Round(time.Millisecond), r.stdout)
	if r.code != 1 {
		t.Fatalf("want exit 1: %s", r)
	}
	if took < 2*time.Second || took > 3900*time.Millisecond {
		t.Errorf("took %s, want the 2 s deadline once, not twice in a row (the figure's target is ≤ 3 s)", took)
	}
	wantEveryUpstream(t, r.stdout, n)
}

// Lines print as their checks finish: a refusing Waldur is reported at once while the hanging
// Rancher of the same offering is still being waited for.
func TestDiagnosticsPrintLinesAsChecksFinish(t *testing.T) {
	cfg := diagConfig(t, 1, refusedURL(t), hangingURL(t), refusedURL(t))
	cmd := exec.Command(binary, "diagnostics", "-c", cfg, "--timeout", "3s")
	cmd.Env = os.Environ()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var waldurAt, rancherAt time.Duration
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		switch line := sc.Text(); {
		case strings.HasPrefix(line, "[FAIL] off-0 · waldur · ") && waldurAt == 0:
			waldurAt = time.Since(start)
		case strings.HasPrefix(line, "[FAIL] off-0 · rancher · ") && rancherAt == 0:
			rancherAt = time.Since(start)
		}
	}
	t.Logf("refused Waldur line after %s, hanging Rancher line after %s", waldurAt.Round(time.Millisecond), rancherAt.Round(time.Millisecond))
	if waldurAt == 0 || rancherAt == 0 || rancherAt-waldurAt < 1500*time.Millisecond || rancherAt < 2900*time.Millisecond || rancherAt > 5800*time.Millisecond {
		t.Fatalf("want the Waldur line well before the Rancher line, which comes at the 3 s deadline")
	}
}

// A file whose secrets are in a Vault that hangs: diagnostics waits for it no longer than for a
// check (the deadline, not the loader's 30 s) and says which key could not be resolved.
func TestDiagnosticsVaultReferenceWithinTheDeadline(t *testing.T) {
	down := refusedURL(t)
	path := filepath.Join(t.TempDir(), "vault.yaml")
	text := readFile(t, diagConfigVault(t, 1, down, down, down, hangingURL(t)))
	text = strings.Replace(text, "waldur_api_token: "+diagWaldurToken, "waldur_api_token: vault:secret/waldur#token", 1)
	writeFile(t, path, text)
	r, took := runTimed(t, "diagnostics", "-c", path, "--timeout", "1s")
	t.Logf("took %s: %s", took.Round(time.Millisecond), r)
	if r.code != 2 || !strings.Contains(r.stderr, "offerings[0].waldur_api_token: cannot resolve vault:secret/waldur#token") {
		t.Fatalf("want exit 2 naming the key: %s", r)
	}
	if took > 4*time.Second { // the figure's target is the deadline + 1 s; the loader alone would wait 30 s
		t.Errorf("took %s: the reference was waited for beyond the 1 s deadline", took)
	}
}
