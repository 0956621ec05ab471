package vclusters

import (
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"strings"
)

// guard lets a request through to the API only when it is meant for it (issue 19 item 12):
//
//   - its Host is a name of the listen address (its host, and on loopback localhost, 127.0.0.1
//     and ::1): a web page whose own name resolves to 127.0.0.1 (DNS rebinding) is answered 421;
//   - with api_token set, it carries `Authorization: Bearer <api_token>` (401 otherwise), every
//     path included;
//   - a POST has `Content-Type: application/json` (415 otherwise): a cross-site form or no-cors
//     fetch can only send text/plain, form or multipart bodies, so a page the operator visits
//     cannot make the browser create, scale or break clusters with the operator's Rancher
//     token. DELETE carries no body; browsers send it cross-site only after a CORS preflight,
//     which the API never answers.
func (m *Manager) guard(next http.Handler) http.Handler {
	hosts := allowedHosts(m.cfg.Listen)
	token := []byte(m.cfg.APIToken.Reveal())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hosts[requestHost(r.Host)] {
			writeJSON(w, http.StatusMisdirectedRequest, apiError{Error: "this API answers only to the host names of its listen address"})
			return
		}
		if len(token) > 0 && !bearerIs(r.Header.Get("Authorization"), token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="site-agent-vclusters"`)
			writeJSON(w, http.StatusUnauthorized, apiError{Error: "a bearer token (api_token) is required"})
			return
		}
		if r.Method == http.MethodPost {
			if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
				writeJSON(w, http.StatusUnsupportedMediaType, apiError{Error: "the body must be sent as Content-Type: application/json"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// allowedHosts are the Host names the API answers to for listen (host:port).
func allowedHosts(listen string) map[string]bool {
	host, _, _ := net.SplitHostPort(listen)
	host = strings.ToLower(host)
	out := map[string]bool{host: true}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			out[h] = true
		}
	}
	return out
}

// requestHost is a Host header's name without its port or brackets, in lower case.
func requestHost(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
}

// bearerIs compares an Authorization header with the token in constant time.
func bearerIs(header string, token []byte) bool {
	scheme, value, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(value)), token) == 1
}
