package vault

import (
	"context"
	"fmt"
)

// Store keeps secrets on Vault KV (v1 or v2 per mount): Put, Get and Delete by
// "<mount>/<path>", the shape of backends.SecretStore, which the agent passes it as. It is safe
// for concurrent use and meant to live as long as the agent: it keeps its token renewed (see
// session).
type Store struct {
	s *session
}

// NewStore builds a Store from the configuration's `vault` section. It validates the section and
// makes no network call; the first operation logs in.
func NewStore(section map[string]any) (*Store, error) {
	cfg, err := ParseConfig(section, nil)
	if err != nil {
		return nil, err
	}
	return NewStoreFromConfig(cfg)
}

// NewStoreFromConfig builds a Store from an already validated section.
func NewStoreFromConfig(cfg Config) (*Store, error) {
	s, err := newSession(cfg)
	if err != nil {
		return nil, err
	}
	return &Store{s: s}, nil
}

// Address is the Vault address the store talks to (the section's address).
func (st *Store) Address() string { return st.s.cfg.Address }

// TLSSkipVerify reports whether the store skips the check of Vault's certificate.
func (st *Store) TLSSkipVerify() bool { return st.s.cfg.TLSSkipVerify }

// Namespace is the Vault Enterprise namespace requests go to ("" for none).
func (st *Store) Namespace() string { return st.s.cfg.Namespace }

// Put replaces the secret at path ("<mount>/<path>") with data.
func (st *Store) Put(ctx context.Context, path string, data map[string]string) error {
	clean, err := CleanPath(path)
	if err != nil {
		return fmt.Errorf("vault: %v", err)
	}
	return st.s.writeKV(ctx, clean, data)
}

// Get returns the secret at path; an error wrapping failure.ErrNotFound when it is absent.
// Non-string values (numbers, booleans) are returned as text; nested values are an error.
func (st *Store) Get(ctx context.Context, path string) (map[string]string, error) {
	clean, err := CleanPath(path)
	if err != nil {
		return nil, fmt.Errorf("vault: %v", err)
	}
	data, err := st.s.readKV(ctx, clean)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(data))
	for k, v := range data {
		s, ok := stringValue(v)
		if !ok {
			return nil, fmt.Errorf("key %q in secret %s holds %s, not a string", k, clean, kindOf(v))
		}
		out[k] = s
	}
	return out, nil
}

// Delete removes the secret at path (every version on KV v2); an absent secret is not an error.
func (st *Store) Delete(ctx context.Context, path string) error {
	clean, err := CleanPath(path)
	if err != nil {
		return fmt.Errorf("vault: %v", err)
	}
	return st.s.deleteKV(ctx, clean)
}
