package config

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/waldur/site-agent/internal/secret"
)

// RefPrefix marks a string value that names a secret in Vault: vault:<mount>/<path>#<key>.
const RefPrefix = "vault:"

// Resolver turns references into values. It is built from the top-level `vault` section.
type Resolver interface {
	Resolve(ctx context.Context, ref string) (string, error)
}

// NewResolver builds a Resolver from the `vault` section (nil when the file has none).
type NewResolver func(section map[string]any) (Resolver, error)

// resolveRefs replaces every string value starting with RefPrefix, anywhere in raw, by the
// secret it names. Each reference is fetched once. Problems name the key that holds the reference.
func resolveRefs(ctx context.Context, raw map[string]any, newResolver NewResolver) *Error {
	refs, order := findRefs(raw, RefPrefix)
	if len(order) == 0 {
		return nil
	}
	if newResolver == nil {
		return &Error{Key: refs[order[0]][0], Problem: "secret references (vault:…) are not supported by this command"}
	}
	section, _ := asMap(raw["vault"])
	if section == nil {
		return &Error{Key: refs[order[0]][0], Problem: "uses a vault: reference but the file has no top-level vault section"}
	}
	res, err := newResolver(section)
	if err != nil {
		return &Error{Key: "vault", Problem: err.Error()}
	}
	values := map[string]string{}
	for _, ref := range order {
		v, err := res.Resolve(ctx, ref)
		if err != nil {
			return &Error{Key: refs[ref][0], Problem: fmt.Sprintf("cannot resolve %s: %v", ref, err)}
		}
		values[ref] = v
	}
	substitute(raw, values)
	return nil
}

// findRefs finds the string values in raw that start with prefix: refs maps each to the keys
// holding it (in walk order), order lists them sorted.
func findRefs(raw map[string]any, prefix string) (refs map[string][]string, order []string) {
	refs = map[string][]string{}
	walkStrings(raw, "", func(key, value string) {
		if strings.HasPrefix(value, prefix) {
			refs[value] = append(refs[value], key)
		}
	})
	return refs, slices.Sorted(maps.Keys(refs))
}

// walkStrings calls fn for every string leaf with its key path (offerings[0].backend_settings.password).
func walkStrings(v any, path string, fn func(key, value string)) {
	switch t := v.(type) {
	case string:
		fn(path, t)
	case map[string]any:
		for k, val := range t {
			walkStrings(val, join(path, k), fn)
		}
	case []any:
		for i, val := range t {
			walkStrings(val, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
}

// substitute replaces every string of raw that is a key of values with its value, each value
// registered with the scrubber first: it never leaves the process in text.
func substitute(raw map[string]any, values map[string]string) {
	for _, v := range values {
		secret.New(v)
	}
	replaceStrings(raw, func(value string) string {
		if v, ok := values[value]; ok {
			return v
		}
		return value
	})
}

func replaceStrings(v any, fn func(string) string) {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if s, ok := val.(string); ok {
				t[k] = fn(s)
			} else {
				replaceStrings(val, fn)
			}
		}
	case []any:
		for i, val := range t {
			if s, ok := val.(string); ok {
				t[i] = fn(s)
			} else {
				replaceStrings(val, fn)
			}
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
