package waldursim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
)

const (
	defaultPageSize = 10  // Waldur's REST_FRAMEWORK PAGE_SIZE
	maxPageSize     = 300 // LinkHeaderPagination.max_page_size
)

// result is what a handler answers. A list is rendered lazily: only the requested page is
// rendered (under the state lock, by materialize) and then field-filtered by respond.
type result struct {
	status int
	body   any // JSON body; nil means no body
	isList bool
	count  int                        // list length before pagination
	render func(i int) map[string]any // renders item i of the list
	list   []map[string]any           // the rendered page
	page   *pageWindow                // nil when the operation is not paginated
}

// lazy answers a list of stored rows, rendered on demand.
func lazy[T any](rows []*T, render func(*T) map[string]any) result {
	return result{status: http.StatusOK, isList: true, count: len(rows),
		render: func(i int) map[string]any { return render(rows[i]) }}
}

// materialize paginates a lazy list and renders the page; an out-of-range page becomes DRF's
// 404 "Invalid page.".
func (res *result) materialize(op *opInfo, q url.Values) {
	if !res.isList {
		return
	}
	start, end := 0, res.count
	if op.Paginated {
		page, ok := paginate(q, res.count)
		if !ok {
			*res = errorResult(http.StatusNotFound, detail("Invalid page."))
			return
		}
		res.page, start, end = &page, page.start, page.end
	}
	res.list = make([]map[string]any, 0, end-start)
	for i := start; i < end; i++ {
		res.list = append(res.list, res.render(i))
	}
}

func ok(body any) result       { return result{status: http.StatusOK, body: body} }
func created(body any) result  { return result{status: http.StatusCreated, body: body} }
func noBody(status int) result { return result{status: status} }
func listOf(items []map[string]any) result {
	return result{status: http.StatusOK, list: items, isList: true}
}
func errorResult(status int, body any) result { return result{status: status, body: body} }
func detail(msg string) map[string]any        { return map[string]any{"detail": msg} }
func notFound() result                        { return errorResult(http.StatusNotFound, detail("Not found.")) }
func conflict(msg string) result              { return errorResult(http.StatusConflict, detail(msg)) }

// fieldError is DRF's shape for a validation error of one field.
func fieldError(field, msg string) result {
	return errorResult(http.StatusBadRequest, map[string]any{field: []any{msg}})
}

func nonFieldError(msg string) result { return fieldError("non_field_errors", msg) }

// respond paginates, selects fields, validates the response against the contract and writes it.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, op *opInfo, c *call, res result) {
	body := res.body
	if res.isList {
		if res.page != nil {
			w.Header().Set("X-Result-Count", strconv.Itoa(res.count))
			w.Header().Set("Link", res.page.links(c.base+r.URL.Path, c.query))
		}
		out := make([]any, len(res.list))
		for i, it := range res.list {
			out[i] = selectFields(it, c.fields)
		}
		body = out
	} else if m, isMap := body.(map[string]any); isMap && res.status < 300 && len(c.fields) > 0 {
		body = selectFields(m, c.fields)
	}
	var raw []byte
	if body != nil {
		var err error
		if raw, err = marshalJSON(body); err != nil {
			s.violation(r.Method, r.URL.Path, "response: cannot encode: "+err.Error())
			writeJSON(w, http.StatusInternalServerError, detail("Simulator failed to encode the response."))
			return
		}
	}
	if s.validate && res.status >= 200 && res.status < 300 {
		if err := s.checkResponse(op, c, res.status, body, raw); err != nil {
			s.violation(r.Method, r.URL.Path, "response: "+shortError(err))
		}
	}
	if raw == nil {
		w.WriteHeader(res.status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(res.status)
	_, _ = w.Write(raw)
}

// checkResponse validates a success response: its status must be documented, its body present
// exactly when the contract declares one, and the body must match the declared schema (or,
// with field selection, the schema restricted to the requested fields). The schema is visited
// on the value that was encoded, which avoids decoding the body again.
func (s *Server) checkResponse(op *opInfo, c *call, status int, body any, raw []byte) error {
	resp := op.Op.Responses.Status(status)
	if resp == nil || resp.Value == nil {
		return fmt.Errorf("status %d is not documented for %s", status, op.ID)
	}
	declared := resp.Value.Content.Get("application/json") != nil
	switch {
	case declared && raw == nil:
		return fmt.Errorf("status %d of %s must have a JSON body", status, op.ID)
	case !declared && raw != nil:
		return fmt.Errorf("status %d of %s has no body in the contract", status, op.ID)
	case raw == nil:
		return nil
	}
	var schema *openapi3.Schema
	var err error
	if len(c.fields) > 0 {
		schema, err = s.c.fieldSchema(op, status, c.fields)
	} else {
		schema, err = responseSchema(op, status)
	}
	if err != nil {
		return err
	}
	if !jsonNative(body) {
		if err := json.Unmarshal(raw, &body); err != nil {
			return err
		}
	}
	return schema.VisitJSON(body, openapi3.VisitAsResponse(), openapi3.WithStringFormatValidators(s.c.formats))
}

// jsonNative reports whether v holds only the types a JSON decoder produces (plus int), which
// the schema validator accepts as they are.
func jsonNative(v any) bool {
	switch x := v.(type) {
	case nil, bool, float64, int, string:
		return true
	case map[string]any:
		for _, e := range x {
			if !jsonNative(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !jsonNative(e) {
				return false
			}
		}
		return true
	}
	return false
}

// selectFields keeps only the requested keys, like Waldur's RestrictedSerializerMixin.
func selectFields(obj map[string]any, fields []string) map[string]any {
	if len(fields) == 0 {
		return obj
	}
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		if v, ok := obj[f]; ok {
			out[f] = v
		}
	}
	return out
}

// pageWindow is one page of a list.
type pageWindow struct {
	number, last, start, end int
}

// paginate mimics DRF's PageNumberPagination: an invalid page_size falls back to the default,
// a large one is capped, an out-of-range page is an error ("Invalid page.").
func paginate(q url.Values, total int) (pageWindow, bool) {
	size := defaultPageSize
	if v, err := strconv.Atoi(q.Get("page_size")); err == nil && v > 0 {
		size = min(v, maxPageSize)
	}
	last := max(1, (total+size-1)/size)
	number := 1
	if raw := q.Get("page"); raw != "" {
		v, err := strconv.Atoi(raw)
		if err != nil || v < 1 || v > last {
			return pageWindow{}, false
		}
		number = v
	}
	start := (number - 1) * size
	return pageWindow{number: number, last: last, start: start, end: min(start+size, total)}, true
}

// links renders Waldur's Link header: first, prev, next, last, with query keys sorted as
// Django's replace_query_param does.
func (p pageWindow) links(path string, q url.Values) string {
	link := func(n int) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Del("page")
		if n > 1 {
			v.Set("page", strconv.Itoa(n))
		}
		if len(v) == 0 {
			return path
		}
		return path + "?" + v.Encode()
	}
	out := fmt.Sprintf(`<%s>; rel="first"`, link(1))
	if p.number > 1 {
		out += fmt.Sprintf(`, <%s>; rel="prev"`, link(p.number-1))
	}
	if p.number < p.last {
		out += fmt.Sprintf(`, <%s>; rel="next"`, link(p.number+1))
	}
	return out + fmt.Sprintf(`, <%s>; rel="last"`, link(p.last))
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	raw, err := json.Marshal(body)
	if err != nil {
		raw = []byte(`{"detail":"encoding failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(raw)
}
