package backends

import (
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/secret"
)

func TestDecodeSettings(t *testing.T) {
	var s struct {
		URL      string            `mapstructure:"backend_url"`
		Password secret.Secret     `mapstructure:"password"`
		Labels   map[string]string `mapstructure:"namespace_labels"`
		Timeout  time.Duration     `mapstructure:"timeout"`
		Retries  int               `mapstructure:"retries"`
	}
	warnings, err := DecodeSettings(map[string]any{
		"backend_url": "https://r", "password": "hunter2-secret", "namespace_labels": map[string]any{"gpu-pool": "a"},
		"timeout": "5s", "retries": 3, "allocation_prefix": "x_", "pasword": "typo",
	}, &s)
	if err != nil {
		t.Fatal(err)
	}
	if s.URL != "https://r" || s.Password.Reveal() != "hunter2-secret" || s.Labels["gpu-pool"] != "a" || s.Timeout != 5*time.Second || s.Retries != 3 {
		t.Fatalf("decoded %+v", s)
	}
	if len(warnings) != 1 || warnings[0] != "backend_settings.pasword" {
		t.Fatalf("warnings %v (core keys are not warnings, typos are)", warnings)
	}
	if _, err := DecodeSettings(map[string]any{"retries": "many"}, &s); err == nil {
		t.Fatal("wrong type accepted")
	}
	if _, err := DecodeSettings(map[string]any{"password": 5}, &s); err == nil {
		t.Fatal("non-string secret accepted")
	}
}

func TestRegistryAndRoles(t *testing.T) {
	r := NewRegistry()
	r.Register("x", func(Params) (Backend, []string, error) { return struct{ Pinger }{}, nil, nil })
	if _, _, err := r.New("y", Params{}); err == nil {
		t.Fatal("unknown name accepted")
	}
	b, _, err := r.New("x", Params{})
	if err != nil {
		t.Fatal(err)
	}
	set := RolesOf("x", b)
	if set.Pinger == nil || set.Provisioner != nil || set.Usage != nil {
		t.Fatalf("roles %+v", set)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate registration should panic")
		}
	}()
	r.Register("x", nil)
}

// Boolean settings read yes/no, on/off as the incumbent's PyYAML did; strings stay strings.
func TestDecodeSettingsYAML11Booleans(t *testing.T) {
	type settings struct {
		Verify   *bool  `mapstructure:"verify_cert"`
		Keycloak bool   `mapstructure:"keycloak_enabled"`
		Role     string `mapstructure:"default_role"`
	}
	cases := []struct {
		verify, keycloak any
		wantVerify       bool
		wantKeycloak     bool
	}{
		{"no", "yes", false, true},
		{"Off", "ON", false, true},
		{"N", "y", false, true},
		{"FALSE", "True", false, true},
		{false, true, false, true},
		{0, 1, false, true},
	}
	for _, c := range cases {
		var s settings
		if _, err := DecodeSettings(Settings{"verify_cert": c.verify, "keycloak_enabled": c.keycloak, "default_role": "yes"}, &s); err != nil {
			t.Fatalf("%v/%v: %v", c.verify, c.keycloak, err)
		}
		if s.Verify == nil || *s.Verify != c.wantVerify || s.Keycloak != c.wantKeycloak || s.Role != "yes" {
			t.Errorf("%v/%v decoded to %v/%v, role %q", c.verify, c.keycloak, s.Verify, s.Keycloak, s.Role)
		}
	}
	var s settings
	if _, err := DecodeSettings(Settings{"keycloak_enabled": "maybe"}, &s); err == nil || !strings.Contains(err.Error(), "keycloak_enabled") {
		t.Fatalf("a non-boolean word should be an error naming the key, got %v", err)
	}
}
