package ranchersim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with norman's error document.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"type": "error", "baseType": "error", "status": status, "code": code, "message": msg})
}

// fieldError answers a 422 about one field, as norman's builder does.
func fieldError(w http.ResponseWriter, code, field, msg string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"type": "error", "baseType": "error",
		"status": http.StatusUnprocessableEntity, "code": code, "fieldName": field, "message": msg})
}

// baseURL is the URL clients reached the server with (links are absolute, as Rancher's are).
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// decodeBody reads a JSON object; a malformed body is answered with 422 InvalidBodyContent.
func decodeBody(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "InvalidBodyContent", "unreadable body")
		return nil, false
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil || body == nil {
		writeError(w, http.StatusUnprocessableEntity, "InvalidBodyContent", "Failed to parse body: not a JSON object")
		return nil, false
	}
	return body, true
}

// fieldKind is the type of a schema field as far as validation goes.
type fieldKind int

const (
	kString fieldKind = iota
	kStringMap
	kReference
	kAny    // any JSON value (action inputs the simulator does not model)
	kBool   // a JSON boolean
	kInt    // a JSON number without a fraction
	kObject // a JSON object
)

// input checks a create/update body against the fields the operation accepts: wrong types are
// 422 InvalidFormat; unknown and read-only fields are ignored like norman does, and recorded.
func (s *Server) input(w http.ResponseWriter, op string, body map[string]any, fields map[string]fieldKind) (map[string]any, bool) {
	out := map[string]any{}
	for k, v := range body {
		kind, known := fields[k]
		switch {
		case k == "type" || k == "links" || k == "actions" || k == "id":
			continue
		case !known:
			s.violation("%s: field %q is not accepted (norman ignores it)", op, k)
			continue
		case v == nil:
			continue
		}
		switch kind {
		case kAny:
			out[k] = v
		case kBool, kInt, kObject:
			if !kindMatches(kind, v) {
				fieldError(w, "InvalidFormat", k, fmt.Sprintf("wrong type %T", v))
				return nil, false
			}
			out[k] = v
		case kString, kReference:
			str, ok := v.(string)
			if !ok {
				fieldError(w, "InvalidFormat", k, fmt.Sprintf("expected a string, got %T", v))
				return nil, false
			}
			out[k] = str
		case kStringMap:
			m, ok := v.(map[string]any)
			if !ok {
				fieldError(w, "InvalidFormat", k, fmt.Sprintf("expected a map, got %T", v))
				return nil, false
			}
			sm := map[string]string{}
			for mk, mv := range m {
				str, ok := mv.(string)
				if !ok {
					fieldError(w, "InvalidFormat", k, fmt.Sprintf("value of %q must be a string", mk))
					return nil, false
				}
				sm[mk] = str
			}
			out[k] = sm
		}
	}
	return out, true
}

// page is one page of a filtered collection.
type page struct {
	items []map[string]any
	next  string
	limit int
	total int
}

// paginate applies limit (default PageSize, -1 = all) and marker to items.
func (s *Server) paginate(r *http.Request, items []map[string]any) page {
	q := r.URL.Query()
	limit := s.opts.PageSize
	if l := q.Get("limit"); l != "" {
		if n, err := strconv.Atoi(l); err == nil {
			limit = n
		}
	}
	start := 0
	if m := q.Get("marker"); strings.HasPrefix(m, "m") {
		if n, err := strconv.Atoi(m[1:]); err == nil && n >= 0 && n <= len(items) {
			start = n
		}
	}
	p := page{limit: limit, total: len(items)}
	end := len(items)
	if limit > 0 && start+limit < end {
		end = start + limit
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("marker", "m"+strconv.Itoa(end))
		p.next = baseURL(r) + r.URL.Path + "?" + nq.Encode()
	}
	p.items = items[start:end]
	return p
}

func (s *Server) writeCollection(w http.ResponseWriter, r *http.Request, resourceType string, items []map[string]any) {
	p := s.paginate(r, items)
	if p.items == nil {
		p.items = []map[string]any{}
	}
	pag := map[string]any{"limit": p.limit, "total": p.total}
	if p.next != "" {
		pag["next"] = p.next
		pag["partial"] = true
	}
	writeJSON(w, http.StatusOK, map[string]any{"type": "collection", "resourceType": resourceType,
		"links": map[string]string{"self": baseURL(r) + r.URL.RequestURI()}, "actions": map[string]string{},
		"createTypes": map[string]string{}, "pagination": pag, "data": p.items})
}

// filters returns the equality filters of a list request; unknown filter names are ignored
// (as norman does) and recorded.
func (s *Server) filters(r *http.Request, op string, fields map[string]bool) map[string]string {
	out := map[string]string{}
	for k, v := range r.URL.Query() {
		switch {
		case k == "limit" || k == "marker" || k == "sort" || k == "order" || k == "reverse":
		case fields[k]:
			out[k] = v[0]
		default:
			s.violation("%s: unknown filter %q (ignored)", op, k)
		}
	}
	return out
}

func matches(item map[string]any, filters map[string]string) bool {
	for k, v := range filters {
		if fmt.Sprint(item[k]) != v {
			return false
		}
	}
	return true
}
