package waldursim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
)

const maxBody = 8 << 20

// call is one validated request as handlers see it.
type call struct {
	op     *opInfo
	params map[string]string // path parameters; UUIDs normalized
	query  url.Values
	body   map[string]any // decoded JSON object body, nil when none
	base   string         // scheme://host of the request, for absolute URLs
	fields []string       // field= selection
	now    time.Time
}

// rejection is a request the simulator refuses; it is recorded as a violation.
type rejection struct {
	status int
	reason string
	body   any
}

// commonQuery are query parameters the pipeline itself implements on every operation that
// declares them.
var commonQuery = map[string]bool{"page": true, "page_size": true, "field": true}

// checkRequest validates r against the contract and the simulator's own strictness rules.
func (s *Server) checkRequest(r *http.Request, op *opInfo, params map[string]string) (*call, *rejection) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, &rejection{http.StatusBadRequest, "unreadable body: " + err.Error(), detail("Unreadable body.")}
	}
	if !op.HasBody && strings.TrimSpace(string(raw)) == "{}" {
		raw = nil // DRF ignores an empty JSON object sent to an action without a body
	}
	query := r.URL.Query()
	if rej := checkQueryNames(op, query); rej != nil {
		return nil, rej
	}
	norm, rej := normalizePathParams(params)
	if rej != nil {
		return nil, rej
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	r.ContentLength = int64(len(raw))
	input := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: op.Route, Options: s.c.options}
	if err := openapi3filter.ValidateRequest(r.Context(), input); err != nil {
		msg := shortError(err)
		return nil, &rejection{http.StatusBadRequest, "request violates contract: " + msg, contractError(msg)}
	}
	c := &call{op: op, params: norm, query: query, base: baseURL(r), fields: query["field"]}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &c.body); err != nil {
			msg := "body is not a JSON object: " + err.Error()
			return nil, &rejection{http.StatusBadRequest, msg, contractError(msg)}
		}
		if unknown := unknownProperties(requestSchema(op), c.body, ""); len(unknown) > 0 {
			msg := "body properties not declared by the contract: " + strings.Join(unknown, ", ")
			return nil, &rejection{http.StatusBadRequest, msg, contractError(msg)}
		}
	}
	return c, nil
}

// checkQueryNames rejects query parameters the operation does not declare (Django would ignore
// them; a typo must not pass silently) and declared ones the simulator does not implement (it
// would otherwise answer as if the filter were absent).
func checkQueryNames(op *opInfo, query url.Values) *rejection {
	names := make([]string, 0, len(query))
	for name := range query {
		names = append(names, name)
	}
	sort.Strings(names)
	ep := endpoints[op.ID]
	for _, name := range names {
		if _, declared := op.Query[name]; !declared {
			msg := fmt.Sprintf("query parameter %q is not declared by %s", name, op.ID)
			return &rejection{http.StatusBadRequest, msg, contractError(msg)}
		}
		if !commonQuery[name] && !ep.implements(name) {
			msg := fmt.Sprintf("query parameter %q of %s is declared but not implemented by the simulator", name, op.ID)
			return &rejection{http.StatusBadRequest, msg, contractError(msg)}
		}
	}
	for _, f := range query["field"] {
		if slices.Contains(ep.unmodelled, f) {
			msg := fmt.Sprintf("field %q of %s is not modelled by the simulator", f, op.ID)
			return &rejection{http.StatusBadRequest, msg, contractError(msg)}
		}
	}
	return nil
}

// normalizePathParams normalizes UUID path parameters; a malformed one is a 404 in Django.
func normalizePathParams(params map[string]string) (map[string]string, *rejection) {
	out := make(map[string]string, len(params))
	for k, v := range params {
		if k == "uuid" || strings.HasSuffix(k, "_uuid") {
			n, ok := normUUID(v)
			if !ok {
				return nil, &rejection{http.StatusNotFound, fmt.Sprintf("malformed UUID %q in path", v), detail("Not found.")}
			}
			v = n
		}
		out[k] = v
	}
	return out, nil
}

func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// shortError drops the schema dump kin-openapi appends to schema errors.
func shortError(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "\nSchema:"); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(strings.ReplaceAll(msg, "\n", " "))
}

func contractError(msg string) map[string]any {
	return map[string]any{
		"detail": "Request does not match the Waldur " + ContractVersion + " contract (simulator).",
		"errors": []any{msg},
	}
}

// str returns a string field of the body ("" when absent or not a string).
func (c *call) str(key string) string {
	v, _ := c.body[key].(string)
	return v
}

// has reports whether the body has key.
func (c *call) has(key string) bool {
	_, ok := c.body[key]
	return ok
}

// boolean returns a boolean field of the body.
func (c *call) boolean(key string) bool {
	v, _ := c.body[key].(bool)
	return v
}

// url builds an absolute URL for an API path such as "marketplace-orders/<uuid>/".
func (c *call) url(path string) string {
	return c.base + "/api/" + path
}
