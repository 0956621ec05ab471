package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/hashicorp/vault/api"
	"github.com/waldur/site-agent/internal/failure"
)

// readKV returns the key/value data of the secret at path ("<mount>/<path>"); a missing (or, on
// KV v2, deleted) secret is an error wrapping failure.ErrNotFound.
func (s *session) readKV(ctx context.Context, path string) (map[string]any, error) {
	data, _, err := s.readKVVersion(ctx, path)
	return data, err
}

// readKVVersion is readKV with the secret's version (KV v2; 0 on KV v1).
func (s *session) readKVVersion(ctx context.Context, path string) (map[string]any, int, error) {
	m, rel, err := s.locate(ctx, path)
	if err != nil {
		return nil, 0, err
	}
	var sec *api.Secret
	err = s.do(ctx, func(c *api.Client) error {
		var err error
		sec, err = c.Logical().ReadWithContext(ctx, m.dataPath(rel))
		return err
	})
	if err != nil {
		return nil, 0, wrapErr(err, "reading %s (%s)", path, m)
	}
	var data map[string]any
	version := 0
	if sec != nil {
		data = sec.Data
		if m.version == 2 {
			data, _ = sec.Data["data"].(map[string]any)
			meta, _ := sec.Data["metadata"].(map[string]any)
			v, _ := stringValue(meta["version"])
			version, _ = strconv.Atoi(v)
		}
	}
	if data == nil {
		return nil, 0, &opError{msg: fmt.Sprintf("secret %s not found (%s)", path, m), cause: failure.ErrNotFound}
	}
	return data, version, nil
}

// writeKV replaces the secret at path with data (a new version on KV v2).
func (s *session) writeKV(ctx context.Context, path string, data map[string]string) error {
	return s.writeKVCAS(ctx, path, data, -1)
}

// errCASMismatch is Vault's answer to a check-and-set write over another version.
const errCASMismatch = "check-and-set parameter did not match the current version"

// writeKVCAS is writeKV with check-and-set when cas ≥ 0 (KV v2 only): the write happens only
// if the secret's current version is cas, 0 meaning that it does not exist.
func (s *session) writeKVCAS(ctx context.Context, path string, data map[string]string, cas int) error {
	m, rel, err := s.locate(ctx, path)
	if err != nil {
		return err
	}
	body := make(map[string]any, len(data))
	for k, v := range data {
		body[k] = v
	}
	if m.version == 2 {
		body = map[string]any{"data": body}
		if cas >= 0 {
			body["options"] = map[string]any{"cas": cas}
		}
	} else if cas >= 0 {
		return fmt.Errorf("writing %s: check-and-set needs a KV v2 mount, %s has no versions", path, m)
	}
	err = s.do(ctx, func(c *api.Client) error {
		_, err := c.Logical().WriteWithContext(ctx, m.dataPath(rel), body)
		return err
	})
	var re *api.ResponseError
	if cas >= 0 && errors.As(err, &re) && re.StatusCode == http.StatusBadRequest && strings.Contains(strings.Join(re.Errors, " "), errCASMismatch) {
		return &opError{msg: fmt.Sprintf("writing %s (%s): the secret is not at version %d", path, m, cas), cause: ErrVersionMismatch}
	}
	if err != nil {
		return wrapErr(err, "writing %s (%s)", path, m)
	}
	return nil
}

// deleteKV removes the secret at path, on KV v2 with all its versions; absent is not an error.
func (s *session) deleteKV(ctx context.Context, path string) error {
	m, rel, err := s.locate(ctx, path)
	if err != nil {
		return err
	}
	err = s.do(ctx, func(c *api.Client) error {
		_, err := c.Logical().DeleteWithContext(ctx, m.deletePath(rel))
		return err
	})
	if err != nil && !isStatus(err, 404) {
		return wrapErr(err, "deleting %s (%s)", path, m)
	}
	return nil
}

// stringValue renders one value of a secret. Strings are returned as they are; numbers and
// booleans (JSON scalars) as their text; objects, lists and null are refused.
func stringValue(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case json.Number:
		return t.String(), true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(t), true
	}
	return "", false
}
