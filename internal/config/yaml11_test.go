package config

import (
	"fmt"
	"strings"
	"testing"
)

// An unchanged incumbent file spells booleans the YAML 1.1 way (PyYAML read them so): every key
// that takes a boolean reads yes/no, on/off, y/n in any case; string keys keep the words.
func TestYAML11BooleansWhereABooleanIsExpected(t *testing.T) {
	const file = `
expose_backend_error_details: no
log_shipping: {enabled: off}
leader_election: {enabled: No}
offerings:
  - name: "yes"
    waldur_api_url: https://waldur.example.com/api/
    waldur_api_token: tok-123456
    waldur_offering_uuid: e2ef0000-0000-0000-0000-000000000001
    backend_type: slurm
    order_processing_backend: inmemory
    verify_ssl: no
    stomp_enabled: OFF
    websocket_use_tls: Y
    resource_import_enabled: n
    backend_settings: {allocation_prefix: "on", check_backend_id_uniqueness: yes, check_all_offerings: On}
    backend_components:
      cpu: {measured_unit: h, accounting_type: usage, label: "no", is_prepaid: yes, is_boolean: NO}
`
	cfg, warnings, err := Parse("incumbent.yaml", []byte(file), Options{Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	// verify_ssl: no is read as false, so the plain-text warning names it (and nothing else warns).
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "offerings[0].verify_ssl: false") {
		t.Errorf("warnings: %v", warnings)
	}
	o := cfg.Offerings[0]
	bools := []struct {
		key       string
		got, want bool
	}{
		{"expose_backend_error_details", cfg.ExposeBackendErrorDetails, false},
		{"leader_election.enabled", cfg.LeaderElection.Enabled, false},
		{"verify_ssl", o.VerifySSL, false},
		{"stomp_enabled", o.StompEnabled, false},
		{"websocket_use_tls", o.EventBroker.TLS, true},
		{"check_backend_id_uniqueness", o.CheckBackendIDUniqueness, true},
		{"check_all_offerings", o.CheckAllOfferings, true},
	}
	for _, b := range bools {
		if b.got != b.want {
			t.Errorf("%s = %v, want %v", b.key, b.got, b.want)
		}
	}
	if o.Name != "yes" || o.AllocationPrefix != "on" {
		t.Errorf("string keys changed: name %q, allocation_prefix %q", o.Name, o.AllocationPrefix)
	}
	cpu, _ := o.Components.Get("cpu")
	if cpu.Label != "no" || cpu.Settings["is_prepaid"] != true || cpu.Settings["is_boolean"] != false {
		t.Errorf("component: label %q, is_prepaid %#v, is_boolean %#v", cpu.Label, cpu.Settings["is_prepaid"], cpu.Settings["is_boolean"])
	}
}

func TestYAML11BooleanErrorsNameTheKey(t *testing.T) {
	for key, line := range map[string]string{
		"offerings[0].verify_ssl":                           "    verify_ssl: perhaps\n",
		"offerings[0].backend_components.cpu.is_prepaid":    "    backend_components: {cpu: {measured_unit: h, accounting_type: usage, label: C, is_prepaid: sometimes}}\n",
		"offerings[0].backend_settings.check_all_offerings": "    backend_settings: {check_all_offerings: 2}\n",
		"offerings[0].stomp_enabled":                        "    stomp_enabled: yess\n",
	} {
		_, _, err := Parse("x.yaml", []byte(strings.TrimRight(fmt.Sprintf(minimal, "https://waldur.example.com/api/"), "\n")+"\n"+line), Options{Environ: noEnv})
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: want an error naming the key, got %v", key, err)
		}
	}
}
