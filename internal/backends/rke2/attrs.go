package rke2

import (
	"encoding/json"
	"fmt"
	"math"
)

// attrs reads order attributes as they arrive from Waldur's JSON (numbers are float64 or
// json.Number). Every error names the attribute with its path, e.g. attributes.nodes[1].role.
type attrs struct {
	path string
	m    map[string]any
}

func (a attrs) key(k string) string { return a.path + "." + k }

func (a attrs) has(k string) bool {
	v, ok := a.m[k]
	return ok && v != nil
}

func (a attrs) str(k string, required bool) (string, error) {
	v, ok := a.m[k]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("%s: is required", a.key(k))
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: want a string, got %T", a.key(k), v)
	}
	if required && s == "" {
		return "", fmt.Errorf("%s: is required", a.key(k))
	}
	return s, nil
}

func (a attrs) integer(k string, required bool) (int, error) {
	v, ok := a.m[k]
	if !ok || v == nil {
		if required {
			return 0, fmt.Errorf("%s: is required", a.key(k))
		}
		return 0, nil
	}
	n, ok := toInt(v)
	if !ok {
		return 0, fmt.Errorf("%s: want a whole number, got %v", a.key(k), v)
	}
	if n < 0 {
		return 0, fmt.Errorf("%s: must not be negative, got %d", a.key(k), n)
	}
	return n, nil
}

func toInt(v any) (int, bool) {
	var f float64
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		f = float64(x)
	case float64:
		f = x
	case json.Number:
		g, err := x.Float64()
		if err != nil {
			return 0, false
		}
		f = g
	default:
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<40 {
		return 0, false
	}
	return int(f), true
}

func (a attrs) boolean(k string) (bool, error) {
	v, ok := a.m[k]
	if !ok || v == nil {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s: want true or false, got %v", a.key(k), v)
	}
	return b, nil
}

func (a attrs) list(k string) ([]any, error) {
	v, ok := a.m[k]
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a list, got %T", a.key(k), v)
	}
	return l, nil
}

// object returns element i of a list as attrs.
func object(path string, v any) (attrs, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return attrs{}, fmt.Errorf("%s: want an object, got %T", path, v)
	}
	return attrs{path: path, m: m}, nil
}

// strList reads a list of strings, or of objects with a "name" (Waldur's security_groups).
func (a attrs) strList(k string) ([]string, error) {
	l, err := a.list(k)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(l))
	for i, v := range l {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			name, _ := x["name"].(string)
			if name == "" {
				return nil, fmt.Errorf("%s[%d].name: is required", a.key(k), i)
			}
			out = append(out, name)
		default:
			return nil, fmt.Errorf("%s[%d]: want a name, got %T", a.key(k), i, v)
		}
	}
	return out, nil
}

// mbToGB converts the order's MB sizes (Waldur's convention) to Cinder's GB, rounding up.
func mbToGB(mb int) int { return (mb + 1023) / 1024 }
