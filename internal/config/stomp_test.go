package config

import (
	"strings"
	"testing"
)

func TestEventBrokerDefaultsAndOverrides(t *testing.T) {
	base := strings.Replace(minimal, "%s", "https://waldur.example.com/api/", 1) + "    stomp_enabled: true\n"
	cases := []struct{ name, extra, url string }{
		{"defaults: API host, TLS, 443", "", "wss://waldur.example.com:443/rmqws-stomp"},
		{"no TLS: port 80 (not tied to verify_ssl)", "    websocket_use_tls: false\n    verify_ssl: true\n", "ws://waldur.example.com:80/rmqws-stomp"},
		{"all set", "    stomp_ws_host: mq.example.com\n    stomp_ws_port: 15674\n    stomp_ws_path: /ws\n    websocket_use_tls: false\n", "ws://mq.example.com:15674/ws"},
		{"ipv6", "    stomp_ws_host: \"::1\"\n    stomp_ws_port: 15674\n", "wss://[::1]:15674/rmqws-stomp"},
		{"null values take defaults", "    stomp_ws_host: null\n    stomp_ws_port: null\n", "wss://waldur.example.com:443/rmqws-stomp"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, warnings, err := Parse("x.yaml", []byte(base+c.extra), Options{Environ: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			o := cfg.Offerings[0]
			if got := o.EventBroker.URL(); got != c.url || !o.StompEnabled || o.MembershipPolling() {
				t.Errorf("url %q (want %q), enabled %v, polling %v", got, c.url, o.StompEnabled, o.MembershipPolling())
			}
			// plain ws:// to a host that is not loopback is named (plaintext.go), nothing else
			plain := strings.HasPrefix(c.url, "ws://")
			if len(warnings) != map[bool]int{false: 0, true: 1}[plain] ||
				(plain && !strings.HasPrefix(warnings[0], "offerings[0].websocket_use_tls: false")) {
				t.Errorf("warnings %v", warnings)
			}
		})
	}
}

func TestEventBrokerInvalidValuesNameTheKey(t *testing.T) {
	base := strings.Replace(minimal, "%s", "https://w.example/api/", 1)
	cases := []struct{ name, extra, key, problem string }{
		{"scheme in host", "    stomp_ws_host: wss://mq.example.com\n", "offerings[0].stomp_ws_host", "host name or address only"},
		{"port in host", "    stomp_ws_host: mq.example.com:15674\n", "offerings[0].stomp_ws_host", "stomp_ws_port"},
		{"empty host", "    stomp_ws_host: \"\"\n", "offerings[0].stomp_ws_host", "must not be empty"},
		{"port range", "    stomp_ws_port: 70000\n", "offerings[0].stomp_ws_port", "between 1 and 65535"},
		{"port text", "    stomp_ws_port: abc\n", "offerings[0].stomp_ws_port", "number"},
		{"path", "    stomp_ws_path: rmqws-stomp\n", "offerings[0].stomp_ws_path", "starting with /"},
		{"tls", "    websocket_use_tls: sometimes\n", "offerings[0].websocket_use_tls", "true or false"},
		{"stomp flag", "    stomp_enabled: 2\n", "offerings[0].stomp_enabled", "true or false"},
		{"oidc only", "    stomp_enabled: true\n", "offerings[0].waldur_api_token", "STOMP passcode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			y := base + c.extra
			if c.name == "oidc only" {
				y = strings.Replace(y, "waldur_api_token: tok-123456", "oidc_token_url: https://kc/token\n    oidc_client_id: x\n    oidc_client_secret: s", 1)
			}
			_, _, err := Parse("agent.yaml", []byte(y), Options{Environ: noEnv})
			wantKeyError(t, err, c.key, c.problem)
		})
	}
}

func TestMembershipEventsWithoutStompIsAMisconfiguration(t *testing.T) {
	y := strings.Replace(minimal, "%s", "https://w.example/api/", 1) + "    stomp_membership_sync_enabled: true\n"
	cfg, warnings, err := Parse("x.yaml", []byte(y), Options{Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Offerings[0].MembershipPolling() || len(warnings) != 1 || !strings.Contains(warnings[0], "MISCONFIGURATION") {
		t.Errorf("polling %v, warnings %v", cfg.Offerings[0].MembershipPolling(), warnings)
	}
}
