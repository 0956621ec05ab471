package openstacksim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
)

const maxBody = 1 << 20

func (c *call) readBody() bool {
	if c.r.Body == nil {
		return true
	}
	b, err := io.ReadAll(io.LimitReader(c.r.Body, maxBody+1))
	if err != nil || len(b) > maxBody {
		c.fail(http.StatusBadRequest, "request body unreadable or too large")
		return false
	}
	c.body = b
	return true
}

// object decodes the body as {"<wrapper>": {...}} with exactly that top-level key and returns
// the inner members. allowed lists the inner keys accepted (nil: any).
func (c *call) object(wrapper string, allowed ...string) (map[string]json.RawMessage, bool) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(c.body, &top); err != nil {
		c.fail(http.StatusBadRequest, "malformed JSON body: "+err.Error())
		return nil, false
	}
	for k := range top {
		if k != wrapper {
			c.fail(http.StatusBadRequest, fmt.Sprintf("Additional properties are not allowed ('%s' was unexpected)", k))
			return nil, false
		}
	}
	raw, ok := top[wrapper]
	if !ok {
		c.fail(http.StatusBadRequest, fmt.Sprintf("'%s' is a required property", wrapper))
		return nil, false
	}
	var inner map[string]json.RawMessage
	if err := json.Unmarshal(raw, &inner); err != nil || inner == nil {
		c.fail(http.StatusBadRequest, fmt.Sprintf("'%s' must be an object", wrapper))
		return nil, false
	}
	if allowed != nil {
		if bad := unknownKeys(inner, allowed); len(bad) > 0 {
			c.fail(http.StatusBadRequest, fmt.Sprintf("Unrecognized attribute(s) '%s'", strings.Join(bad, ", ")))
			return nil, false
		}
	}
	return inner, true
}

func unknownKeys(m map[string]json.RawMessage, allowed []string) []string {
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	var bad []string
	for k := range m {
		if !ok[k] {
			bad = append(bad, k)
		}
	}
	sort.Strings(bad)
	return bad
}

// field decodes one member into dst; a wrong type is a 400 naming the member.
func (c *call) field(m map[string]json.RawMessage, key string, dst any) bool {
	raw, ok := m[key]
	if !ok {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		c.fail(http.StatusBadRequest, fmt.Sprintf("Invalid input for %s: %v", key, err))
		return false
	}
	return true
}

// fields decodes several members; it stops at the first bad one.
func (c *call) fields(m map[string]json.RawMessage, dst map[string]any) bool {
	keys := make([]string, 0, len(dst))
	for k := range dst {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !c.field(m, k, dst[k]) {
			return false
		}
	}
	return true
}

func (c *call) reply(status int, v any) {
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(status)
	if v != nil {
		_ = json.NewEncoder(c.w).Encode(v)
	}
}

func (c *call) noContent(status int) { c.w.WriteHeader(status) }

// writeError answers in the error format of each service.
func writeError(w http.ResponseWriter, service string, status int, msg string) {
	var body any
	switch service {
	case "neutron":
		body = map[string]any{"NeutronError": map[string]any{"type": neutronType(status), "message": msg, "detail": ""}}
	case "nova", "cinder":
		key := map[int]string{400: "badRequest", 403: "forbidden", 404: "itemNotFound", 409: "conflictingRequest"}[status]
		if key == "" {
			key = "computeFault"
		}
		body = map[string]any{key: map[string]any{"code": status, "message": msg}}
	default:
		body = map[string]any{"error": map[string]any{"code": status, "message": msg, "title": http.StatusText(status)}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func neutronType(status int) string {
	switch status {
	case 400:
		return "HTTPBadRequest"
	case 404:
		return "NotFound"
	case 409:
		return "Conflict"
	}
	return "HTTPError"
}
