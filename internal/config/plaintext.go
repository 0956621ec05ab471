package config

import (
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"

	"github.com/waldur/site-agent/internal/yaml11"
)

// plainTextWarnings names every key that makes the agent send credentials in plain text or
// accept any certificate: an http:// (or ws://) URL, websocket_use_tls: false with events on
// (the STOMP passcode is the Waldur token), any verify_*/…_verify key set to false, and the
// vault section's tls_skip_verify: true. Connections to loopback addresses (a sidecar, a test)
// are not named. The agent still starts: this is the operator's choice, said once at start.
func plainTextWarnings(cfg *Config) []string {
	var w []string
	for _, o := range cfg.Offerings {
		prefix := fmt.Sprintf("offerings[%d].", o.Index)
		if plainURL(o.APIURL) {
			w = append(w, prefix+"waldur_api_url: "+plainText("the Waldur API token", o.APIURL))
		}
		if o.OIDC != nil && plainURL(o.OIDC.TokenURL) {
			w = append(w, prefix+"oidc_token_url: "+plainText("the OIDC client secret", o.OIDC.TokenURL))
		}
		if !o.VerifySSL && !loopbackURL(o.APIURL) {
			w = append(w, prefix+"verify_ssl: false: Waldur's certificate is not checked, so whoever answers in its place gets the API token")
		}
		if o.StompEnabled && !o.EventBroker.TLS && !loopbackHost(o.EventBroker.Host) {
			w = append(w, fmt.Sprintf("%swebsocket_use_tls: false: the event broker %s is reached over plain ws://, and the STOMP passcode is the Waldur API token",
				prefix, o.EventBroker.Host))
		}
		w = append(w, settingsWarnings(prefix+"backend_settings", o.BackendSettings)...)
	}
	if cfg.Vault != nil {
		w = append(w, settingsWarnings("vault", cfg.Vault)...)
		addr, _ := cfg.Vault["address"].(string)
		if skip, _ := yaml11.Bool(cfg.Vault["tls_skip_verify"]); skip && !loopbackURL(addr) {
			w = append(w, "vault.tls_skip_verify: true: Vault's certificate is not checked, so whoever answers in its place gets the Vault token")
		}
	}
	return w
}

// settingsWarnings walks a settings mapping (backend_settings, the vault section): URLs in
// plain text and verification switched off, each named by its key path.
func settingsWarnings(path string, m map[string]any) []string {
	var w []string
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		key := path + "." + k
		if sub, ok := m[k].(map[string]any); ok {
			w = append(w, settingsWarnings(key, sub)...)
			continue
		}
		if v, ok := m[k].(string); ok && isURLKey(k) && plainURL(v) {
			w = append(w, key+": "+plainText("credentials", v))
		}
		// yes/no/on/off count as booleans here too, as they do where the setting is read.
		if v, ok := yaml11.Bool(m[k]); ok && !v && isVerifyKey(k) && !loopbackURL(verifiedURL(k, m)) {
			w = append(w, key+": false: the server's certificate is not checked, so whoever answers in its place gets the credentials")
		}
	}
	return w
}

func isURLKey(k string) bool {
	return k == "url" || k == "address" || strings.HasSuffix(k, "_url") || strings.HasSuffix(k, "_address")
}

func isVerifyKey(k string) bool {
	return strings.HasPrefix(k, "verify_") || strings.HasSuffix(k, "_verify")
}

// verifiedURL is the URL (or host) a verify key is about: keycloak_ssl_verify → keycloak_url,
// vault_tls_verify → vault_host, verify_cert and verify_ssl → backend_url or auth_url. "" when
// the mapping holds none (then the warning is given).
func verifiedURL(k string, m map[string]any) string {
	candidates := []string{"backend_url", "auth_url", "url", "address"}
	if !strings.HasPrefix(k, "verify_") {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(k, "_verify"), "_ssl"), "_tls")
		candidates = []string{base + "_url", base + "_host", base + "_address"}
	}
	for _, c := range candidates {
		if s, ok := m[c].(string); ok && s != "" {
			if !strings.Contains(s, "://") {
				s = "https://" + s // a bare host such as vault_host
			}
			return s
		}
	}
	return ""
}

func plainText(what, raw string) string {
	return fmt.Sprintf("%s is sent in plain text to %s (http://); use https://", what, hostOf(raw))
}

// plainURL: an http:// or ws:// URL to a host that is not loopback.
func plainURL(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	return (scheme == "http" || scheme == "ws") && u.Host != "" && !loopbackHost(u.Hostname())
}

func loopbackURL(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	return err == nil && u.Host != "" && loopbackHost(u.Hostname())
}

func loopbackHost(h string) bool {
	h = strings.ToLower(strings.Trim(h, "[]"))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// hostOf names a URL's host (never its credentials, path or query).
func hostOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return "the configured host"
	}
	return u.Host
}
