package vault

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/waldur/site-agent/internal/secret"
)

// Resolver resolves vault:<mount>/<path>#<key> references. One is built per configuration load,
// so each secret is read once per load however many keys of it are referenced.
type Resolver struct {
	s *session

	mu    sync.Mutex
	cache map[string]map[string]any // secret path → data
}

// NewResolver builds a Resolver from the configuration's `vault` section (the agent adapts it to
// config.NewResolver). It validates the section and makes no network call.
func NewResolver(section map[string]any) (*Resolver, error) {
	return newResolver(section, nil)
}

func newResolver(section map[string]any, environ func() []string) (*Resolver, error) {
	cfg, err := ParseConfig(section, environ)
	if err != nil {
		return nil, err
	}
	s, err := newSession(cfg)
	if err != nil {
		return nil, err
	}
	return &Resolver{s: s, cache: map[string]map[string]any{}}, nil
}

// Resolve returns the value a reference names. Errors say why (invalid reference, login
// failed, permission denied, secret not found, key missing) and never contain a value.
func (r *Resolver) Resolve(ctx context.Context, ref string) (string, error) {
	p, err := ParseRef(ref)
	if err != nil {
		return "", fmt.Errorf("invalid reference: %v", err)
	}
	data, err := r.read(ctx, p.Path)
	if err != nil {
		return "", err
	}
	v, ok := data[p.Key]
	if !ok {
		return "", fmt.Errorf("key %q missing in secret %s (its keys: %s)", p.Key, p.Path, strings.Join(slices.Sorted(maps.Keys(data)), ", "))
	}
	str, ok := stringValue(v)
	if !ok {
		return "", fmt.Errorf("key %q in secret %s holds %s, not a string", p.Key, p.Path, kindOf(v))
	}
	secret.New(str) // scrubbed from any text that leaves the process
	return str, nil
}

func (r *Resolver) read(ctx context.Context, path string) (map[string]any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if data, ok := r.cache[path]; ok {
		return data, nil
	}
	data, err := r.s.readKV(ctx, path)
	if err != nil {
		return nil, err
	}
	r.cache[path] = data
	return data, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("a %T", v)
}
