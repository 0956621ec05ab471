package backends

import (
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
