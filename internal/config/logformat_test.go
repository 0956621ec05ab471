package config

import (
	"strings"
	"testing"
)

// log_format: json by default, text (zap's console encoder) when asked, from the file or
// SITE_AGENT_LOG_FORMAT; anything else is refused naming the key (TestInvalidConfigNamesTheKey).
func TestLogFormat(t *testing.T) {
	base := strings.Replace(minimal, "%s", "https://w.example/api/", 1)
	cases := []struct {
		name, yaml string
		env        []string
		want       string
	}{
		{"default", base, nil, "json"},
		{"text", "log_format: text\n" + base, nil, "text"},
		{"any case", "log_format: JSON\n" + base, nil, "json"},
		{"environment", base, []string{"SITE_AGENT_LOG_FORMAT=text"}, "text"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, _, err := Parse("agent.yaml", []byte(c.yaml), Options{Environ: func() []string { return c.env }})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.LogFormat != c.want {
				t.Errorf("log format %q, want %q", cfg.LogFormat, c.want)
			}
		})
	}
}
