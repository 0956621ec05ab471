package keycloaksim

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
)

const maxBody = 1 << 20

// call is one routed request as handlers see it.
type call struct {
	s     *Server
	r     *http.Request
	rt    route
	realm *realm
	roles map[string]bool
	q     query
	body  []byte
}

// result is a handler's answer, written after the state lock is released.
type result struct {
	status int
	body   any // JSON-encoded when non-nil
	header http.Header
}

func (r result) write(w http.ResponseWriter) {
	for k, vs := range r.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if r.body == nil {
		w.WriteHeader(r.status)
		return
	}
	writeJSON(w, r.status, r.body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":"unknown_error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// errorResult is Keycloak's {"error": message} shape (401, 403, 404, 500).
func errorResult(status int, msg string) result {
	return result{status: status, body: map[string]string{"error": msg}}
}

// messageResult is the admin API's {"errorMessage": message} shape (400, 409 validation).
func messageResult(status int, msg string) result {
	return result{status: status, body: map[string]string{"errorMessage": msg}}
}

// oauthResult is the RFC 6749 {"error", "error_description"} shape.
func oauthResult(status int, code, desc string) result {
	return result{status: status, body: map[string]string{"error": code, "error_description": desc}}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func okResult(v any) result { return result{status: http.StatusOK, body: v} }

func noContent() result { return result{status: http.StatusNoContent} }

// readBody reads the body of writes. assumption: a JSON write with another content type is
// answered 415 as JAX-RS @Consumes does; an empty body where a representation is expected is a
// 400 "Cannot parse the JSON" (Keycloak would fail on the null representation).
func (s *Server) readBody(c *call) (result, bool) {
	if c.r.Body == nil {
		return result{}, false
	}
	data, err := io.ReadAll(io.LimitReader(c.r.Body, maxBody))
	if err != nil {
		return oauthResult(http.StatusBadRequest, "invalid_request", "Cannot parse the JSON"), true
	}
	c.body = data
	if !wantsBody(c.rt.name) {
		return result{}, false
	}
	if ct := c.r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return errorResult(http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type"), true
		}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		code := "invalid_request"
		if len(trimmed) > 0 && trimmed[0] == '[' {
			code = "unknown_error"
		}
		return oauthResult(http.StatusBadRequest, code, "Cannot parse the JSON"), true
	}
	return result{}, false
}

func wantsBody(route string) bool {
	return route == RouteCreateGroup || route == RouteCreateChild || route == RouteUpdateGroup
}

// groupInput is the part of a GroupRepresentation a write reads.
type groupInput struct {
	ID         *string             `json:"id"`
	Name       *string             `json:"name"`
	Attributes map[string][]string `json:"attributes"`
}

// groupRepFields are the GroupRepresentation properties Keycloak knows; others are ignored (and
// recorded) as Jackson ignores them on these endpoints.
var groupRepFields = set("id", "name", "path", "parentId", "subGroupCount", "subGroups",
	"attributes", "realmRoles", "clientRoles", "access", "description")

// decodeGroup decodes a group representation; a type mismatch is the 400 Jackson produces.
func (c *call) decodeGroup() (groupInput, *result) {
	var in groupInput
	if err := json.Unmarshal(c.body, &in); err != nil {
		res := oauthResult(http.StatusBadRequest, "invalid_request", "Cannot parse the JSON")
		return in, &res
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(c.body, &keys)
	for k := range keys {
		if !groupRepFields[k] {
			c.s.ignoredFields = append(c.s.ignoredFields, c.rt.name+": "+k)
		}
	}
	return in, nil
}

// baseURL is scheme://host of the request plus the path prefix, for Location headers.
func (c *call) baseURL() string {
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.r.Host + c.s.opts.PathPrefix
}

func (c *call) location(groupID string) http.Header {
	return http.Header{"Location": {c.baseURL() + "/admin/realms/" + c.realm.name + "/groups/" + groupID}}
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }
