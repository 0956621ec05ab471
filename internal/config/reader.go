package config

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/yaml11"
)

// reader reads typed values out of one YAML mapping, remembering which keys it consumed (so the
// rest can be reported as unknown) and every problem it met (with the key's full path; one per
// key).
type reader struct {
	m      map[string]any
	prefix string // e.g. "offerings[0]."
	used   map[string]bool
	errs   Errors
	label  string // offering label for errors
}

func newReader(m map[string]any, prefix, label string) *reader {
	return &reader{m: m, prefix: prefix, used: map[string]bool{}, label: label}
}

// fail records a problem with key, unless the key already has one.
func (r *reader) fail(key, format string, args ...any) {
	full := r.prefix + key
	for _, e := range r.errs {
		if e.Key == full {
			return
		}
	}
	r.errs = append(r.errs, &Error{Offering: r.label, Key: full, Problem: fmt.Sprintf(format, args...)})
}

// failed reports whether any problem was recorded.
func (r *reader) failed() bool { return len(r.errs) > 0 }

// absorb takes the problems of a reader of a nested section.
func (r *reader) absorb(errs Errors) { r.errs = append(r.errs, errs...) }

func (r *reader) get(key string) (any, bool) {
	r.used[key] = true
	v, ok := r.m[key]
	if v == nil {
		return nil, false
	}
	return v, ok
}

func (r *reader) has(key string) bool { _, ok := r.get(key); return ok }

func (r *reader) str(key, def string) string {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	switch t := v.(type) {
	case string:
		return t
	case int, int64, float64, bool:
		return fmt.Sprint(t) // pydantic's lax mode accepted scalars here too
	}
	r.fail(key, "expected a string, got %s", describe(v))
	return def
}

func (r *reader) boolean(key string, def bool) bool {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	if b, ok := yaml11.Bool(v); ok { // yes/no/on/off as the incumbent's PyYAML read them
		return b
	}
	r.fail(key, "expected true or false (or yes/no, on/off), got %s", describe(v))
	return def
}

func (r *reader) optBool(key string) *bool { return optional(r, key, r.boolean) }

func (r *reader) float(key string, def float64) float64 {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	switch t := v.(type) {
	case int:
		return float64(t)
	case int64:
		return float64(t)
	case uint64:
		return float64(t)
	case float64:
		if !math.IsNaN(t) && !math.IsInf(t, 0) {
			return t
		}
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(t), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
	}
	r.fail(key, "expected a number, got %s", describe(v))
	return def
}

func (r *reader) optFloat(key string) *float64 { return optional(r, key, r.float) }

// optional reads a present key with read (its default the zero value); nil when key is absent.
func optional[T any](r *reader, key string, read func(key string, def T) T) *T {
	if !r.has(key) {
		return nil
	}
	var zero T
	v := read(key, zero)
	return &v
}

func (r *reader) integer(key string, def int) int {
	if !r.has(key) {
		return def
	}
	f := r.float(key, float64(def))
	if f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		r.fail(key, "expected a whole number, got %v", f)
		return def
	}
	return int(f)
}

func (r *reader) mapping(key string) map[string]any {
	v, ok := r.get(key)
	if !ok {
		return nil
	}
	if m, ok := asMap(v); ok {
		return m
	}
	r.fail(key, "expected a mapping, got %s", describe(v))
	return nil
}

func (r *reader) list(key string) []any {
	v, ok := r.get(key)
	if !ok {
		return nil
	}
	if l, ok := v.([]any); ok {
		return l
	}
	r.fail(key, "expected a list, got %s", describe(v))
	return nil
}

// unknown returns the keys present in the mapping that nobody asked for, as full paths.
func (r *reader) unknown() []string {
	var out []string
	for k := range r.m {
		if !r.used[k] {
			out = append(out, r.prefix+k)
		}
	}
	sort.Strings(out)
	return out
}

func asMap(v any) (map[string]any, bool) {
	switch t := v.(type) {
	case map[string]any:
		return t, true
	case backends.Settings:
		return t, true
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			out[fmt.Sprint(k)] = val
		}
		return out, true
	}
	return nil, false
}

func describe(v any) string {
	switch v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case map[string]any, map[any]any:
		return "a mapping"
	case []any:
		return "a list"
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	}
	return fmt.Sprintf("%v (%T)", v, v)
}
