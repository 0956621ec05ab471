package vault

import (
	"context"
	"errors"
	"fmt"
)

// ErrVersionMismatch: a check-and-set write found the secret at another version than the one
// given (another writer came first, or an earlier attempt of the same write succeeded).
var ErrVersionMismatch = errors.New("the secret's version changed")

// GetVersioned returns the secret at path with its KV v2 version (0 on a KV v1 mount); an
// error wrapping failure.ErrNotFound when it is absent (or its latest version is deleted).
func (a *Admin) GetVersioned(ctx context.Context, path string) (map[string]string, int, error) {
	clean, err := CleanPath(path)
	if err != nil {
		return nil, 0, fmt.Errorf("vault: %v", err)
	}
	data, version, err := a.s.readKVVersion(ctx, clean)
	if err != nil {
		return nil, 0, err
	}
	out := make(map[string]string, len(data))
	for k, v := range data {
		s, ok := stringValue(v)
		if !ok {
			return nil, 0, fmt.Errorf("key %q in secret %s holds %s, not a string", k, clean, kindOf(v))
		}
		out[k] = s
	}
	return out, version, nil
}

// PutCAS writes data at path only if the secret's current version is version — 0: only if
// there is no such secret — on a KV v2 mount (check-and-set). Otherwise it writes nothing and
// returns an error wrapping ErrVersionMismatch. It is how a value that must be created once
// (a cluster's join token) survives retries and concurrent writers: the second write fails.
func (a *Admin) PutCAS(ctx context.Context, path string, data map[string]string, version int) error {
	clean, err := CleanPath(path)
	if err != nil {
		return fmt.Errorf("vault: %v", err)
	}
	if version < 0 {
		return fmt.Errorf("vault: check-and-set version %d of %s is negative", version, clean)
	}
	return a.s.writeKVCAS(ctx, clean, data, version)
}
