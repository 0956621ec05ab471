package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestLoadIncumbentExample(t *testing.T) {
	cfg, warnings, err := Load("testdata/incumbent.yaml", Options{Environ: func() []string { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("unexpected warnings: %v", warnings)
	}
	o := cfg.Offerings[0]
	checks := []struct{ name, got, want string }{
		{"api url", o.APIURL, "https://waldur.example.com"},
		{"uuid", o.UUID, "e2ef0000000000000000000000000001"},
		{"backend type", o.BackendType, "slurm"},
		{"order backend", o.OrderBackend, "inmemory"},
		{"allocation prefix", o.AllocationPrefix, "hpc_"},
		{"log level", cfg.LogLevel, "info"},
		{"tz", cfg.Location.String(), "UTC"},
		{"token prints redacted", fmt.Sprint(o.Token), "[REDACTED]"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if !o.CheckBackendIDUniqueness || o.BackendIDMaxRetries != 50 || cfg.ReportingPeriods != 2 {
		t.Errorf("core settings wrong: %+v", o)
	}
	cpu, _ := o.Components.Get("cpu")
	if cpu.UnitFactor != 60000 || cpu.Limit == nil || *cpu.Limit != 10 || cpu.AccountingType != "usage" {
		t.Errorf("cpu component wrong: %+v", cpu)
	}
	if got := o.Components.Names(); strings.Join(got, ",") != "cpu,mem" {
		t.Errorf("components = %v", got)
	}
	if !o.MembershipPolling() {
		t.Error("membership should poll when stomp is off")
	}
}

const minimal = `
offerings:
  - name: A
    waldur_api_url: %s
    waldur_api_token: tok-123456
    waldur_offering_uuid: e2ef0000-0000-0000-0000-000000000001
    backend_type: inmemory
    order_processing_backend: inmemory
`

func TestAPIURLNormalisation(t *testing.T) {
	cases := map[string]string{
		"https://waldur.example.com/api/": "https://waldur.example.com",
		"https://waldur.example.com/api":  "https://waldur.example.com",
		"https://waldur.example.com":      "https://waldur.example.com",
		"https://host.ai/api/":            "https://host.ai", // the incumbent's rstrip ate "ai"
		"http://127.0.0.1:8080/sub/api/":  "http://127.0.0.1:8080/sub",
		"https://api.example.com/":        "https://api.example.com",
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			cfg, _, err := Parse("x.yaml", []byte(fmt.Sprintf(minimal, in)), Options{Environ: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Offerings[0].APIURL; got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func noEnv() []string { return nil }

// wantKeyError fails unless err is a *Error naming key, whose message contains problem (when
// given) and the file name agent.yaml.
func wantKeyError(t *testing.T, err error, key, problem string) *Error {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("want *Error naming %s, got %v", key, err)
	}
	if ce.Key != key || !strings.Contains(ce.Error(), problem) || !strings.Contains(ce.Error(), "agent.yaml") {
		t.Fatalf("got key %q message %q; want key %q containing %q and the file name", ce.Key, ce.Error(), key, problem)
	}
	return ce
}

func TestInvalidConfigNamesTheKey(t *testing.T) {
	base := strings.Replace(minimal, "%s", "https://w.example/api/", 1)
	cases := []struct {
		name, yaml, key, problem string
	}{
		{"bad url", strings.Replace(base, "https://w.example/api/", "ftp://w", 1), "offerings[0].waldur_api_url", "http"},
		{"no token", strings.Replace(base, "waldur_api_token: tok-123456", "", 1), "offerings[0].waldur_api_token", "required"},
		{"partial oidc", strings.Replace(base, "waldur_api_token: tok-123456", "oidc_token_url: https://kc/token\n    oidc_client_id: x", 1), "offerings[0].oidc_client_secret", "required"},
		{"bad uuid", strings.Replace(base, "e2ef0000-0000-0000-0000-000000000001", "not-a-uuid", 1), "offerings[0].waldur_offering_uuid", "UUID"},
		{"no name", strings.Replace(base, "name: A", "", 1), "offerings[0].name", "required"},
		{"bad bool", base + "    verify_ssl: maybe\n", "offerings[0].verify_ssl", "true or false"},
		{"bad tz", "timezone: Mars/Base\n" + base, "timezone", "time zone"},
		{"periods", "reporting_periods: 13\n" + base, "reporting_periods", "between 1 and 12"},
		{"log level", "log_level: LOUD\n" + base, "log_level", "must be one of"},
		{"log format", "log_format: xml\n" + base, "log_format", "must be json or text"},
		{"heartbeat interval", "heartbeat_interval: 10m\n" + base, "heartbeat_interval", "at most 2m"},
		{"no offerings", "log_level: INFO\n", "offerings", "at least one"},
		{"offering not a map", "offerings: [1]\n", "offerings[0]", "mapping"},
		{"component unit factor", base + "    backend_components:\n      cpu: {measured_unit: h, accounting_type: usage, label: CPU, unit_factor: 0}\n", "offerings[0].backend_components.cpu.unit_factor", "greater than zero"},
		{"component accounting", base + "    backend_components:\n      cpu: {measured_unit: h, accounting_type: fixed, label: CPU}\n", "offerings[0].backend_components.cpu.accounting_type", "usage, limit, one"},
		{"component label", base + "    backend_components:\n      cpu: {measured_unit: h, accounting_type: usage}\n", "offerings[0].backend_components.cpu.label", "required"},
		{"retries", base + "    backend_settings: {backend_id_max_retries: 0}\n", "offerings[0].backend_settings.backend_id_max_retries", "between"},
		{"duplicate", base + strings.SplitN(base, "offerings:\n", 2)[1], "offerings[1].waldur_offering_uuid", "already configured"},
		{"yaml", "offerings: [\n", "", "not valid YAML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Parse("agent.yaml", []byte(c.yaml), Options{Environ: noEnv})
			ce := wantKeyError(t, err, c.key, c.problem)
			if strings.Contains(ce.Error(), "tok-123456") {
				t.Errorf("message leaks the token: %s", ce.Error())
			}
		})
	}
}

func TestWarningsForUnknownAndIgnoredKeys(t *testing.T) {
	y := "sentry_dsn: https://x@sentry.example/1\nlog_levle: DEBUG\n" +
		strings.Replace(minimal, "%s", "https://w.example/api/", 1) +
		"    stomp_enabled: true\n    verfy_ssl: false\n    username_management_backend: ldap\n"
	_, warnings, err := Parse("x.yaml", []byte(y), Options{Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(warnings, "\n")
	for _, want := range []string{"sentry_dsn", "log_levle: unknown key", "offerings[0].verfy_ssl: unknown key",
		"offerings[0].username_management_backend"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "stomp_enabled") {
		t.Errorf("stomp_enabled is implemented now, yet warned about:\n%s", joined)
	}
}

func TestEnvAndFlagOverrides(t *testing.T) {
	y := "log_level: INFO\nconcurrency: 4\n" + strings.Replace(minimal, "%s", "https://w.example/api/", 1)
	env := func() []string {
		return []string{"SITE_AGENT_LOG_LEVEL=debug", "SITE_AGENT_CONCURRENCY=16", "SITE_AGENT_UNRELATED=1", "HOME=/root",
			"SITE_AGENT_HEARTBEAT_INTERVAL=5s"}
	}
	cfg, _, err := Parse("x.yaml", []byte(y), Options{Environ: env, Overrides: map[string]any{"concurrency": 2, "cycle_timeout": "90s"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LogLevel != "debug" || cfg.Concurrency != 2 || cfg.CycleTimeout != 90*time.Second || cfg.HeartbeatInterval != 5*time.Second {
		t.Errorf("got level %s concurrency %d timeout %v heartbeat %v", cfg.LogLevel, cfg.Concurrency, cfg.CycleTimeout, cfg.HeartbeatInterval)
	}
}

func TestOIDCCredentials(t *testing.T) {
	y := strings.Replace(strings.Replace(minimal, "%s", "https://w.example/api/", 1), "waldur_api_token: tok-123456",
		"oidc_token_url: https://idp.example/token\n    oidc_client_id: agent\n    oidc_client_secret: s3cret-value", 1)
	cfg, _, err := Parse("x.yaml", []byte(y), Options{Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Offerings[0].OIDC
	if o == nil || o.ClientID != "agent" || o.ClientSecret.Reveal() != "s3cret-value" || fmt.Sprintf("%+v", o) == "" {
		t.Fatalf("oidc = %+v", o)
	}
	if strings.Contains(fmt.Sprintf("%+v %v", *o, cfg.Offerings[0]), "s3cret-value") {
		t.Error("client secret printed")
	}
}

func TestNamespaceLabelKeysWithDotsSurvive(t *testing.T) {
	y := strings.Replace(minimal, "%s", "https://w.example/api/", 1) +
		"    backend_settings:\n      namespace_labels: {\"example.com/pool\": h100, gpu-pool: a}\n"
	cfg, _, err := Parse("x.yaml", []byte(y), Options{Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	labels, _ := asMap(cfg.Offerings[0].BackendSettings["namespace_labels"])
	if labels["example.com/pool"] != "h100" || labels["gpu-pool"] != "a" {
		t.Fatalf("labels = %#v", labels)
	}
}

// Every problem of a file is reported at once, each naming its offering and key, in file order.
func TestEveryProblemAtOnce(t *testing.T) {
	const file = `
log_level: LOUD
reporting_periods: 40
upstreams: {waldur: {retries: 99}}
offerings:
  - name: A
    waldur_api_url: ftp://waldur
    waldur_api_token: tok-123456
    waldur_offering_uuid: nope
    backend_type: inmemory
    verify_ssl: perhaps
    backend_components:
      cpu: {measured_unit: h, accounting_type: sometimes, label: ""}
  - name: B
    waldur_api_url: https://waldur.example.com/api/
    waldur_offering_uuid: e2ef0000-0000-0000-0000-000000000001
    backend_type: inmemory
`
	_, _, err := Parse("agent.yaml", []byte(file), Options{Environ: noEnv})
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("got %T %v", err, err)
	}
	want := []string{
		"upstreams.waldur.retries",
		"log_level", "reporting_periods",
		`offering "A" (offerings[0]): offerings[0].verify_ssl`,
		`offering "A" (offerings[0]): offerings[0].waldur_api_url`,
		`offering "A" (offerings[0]): offerings[0].waldur_offering_uuid`,
		`offering "A" (offerings[0]): offerings[0].backend_components.cpu.label`,
		`offering "A" (offerings[0]): offerings[0].backend_components.cpu.accounting_type`,
		`offering "B" (offerings[1]): offerings[1].waldur_api_token`,
	}
	if len(es) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(es), len(want), err)
	}
	for i, w := range want {
		if !strings.Contains(es[i].Detail(), w) || es[i].Path != "agent.yaml" {
			t.Errorf("problem %d = %q (file %q), want it to name %s", i, es[i].Detail(), es[i].Path, w)
		}
	}
	text := err.Error()
	if !strings.HasPrefix(text, "invalid configuration in agent.yaml: 9 problems\n  ") || strings.Count(text, "\n") != 9 {
		t.Errorf("message:\n%s", text)
	}
	var one *Error
	if !errors.As(err, &one) || one.Key != "upstreams.waldur.retries" {
		t.Errorf("errors.As finds the first problem, got %+v", one)
	}
}
