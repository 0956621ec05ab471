package vault

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/hashicorp/vault/api"
	"github.com/waldur/site-agent/internal/failure"
)

// readKV returns the key/value data of the secret at path ("<mount>/<path>"); a missing (or, on
// KV v2, deleted) secret is an error wrapping failure.ErrNotFound.
func (s *session) readKV(ctx context.Context, path string) (map[string]any, error) {
	m, rel, err := s.locate(ctx, path)
	if err != nil {
		return nil, err
	}
	var sec *api.Secret
	err = s.do(ctx, func(c *api.Client) error {
		var err error
		sec, err = c.Logical().ReadWithContext(ctx, m.dataPath(rel))
		return err
	})
	if err != nil {
		return nil, wrapErr(err, "reading %s (%s)", path, m)
	}
	var data map[string]any
	if sec != nil {
		data = sec.Data
		if m.version == 2 {
			data, _ = sec.Data["data"].(map[string]any)
		}
	}
	if data == nil {
		return nil, &opError{msg: fmt.Sprintf("secret %s not found (%s)", path, m), cause: failure.ErrNotFound}
	}
	return data, nil
}

// writeKV replaces the secret at path with data (a new version on KV v2).
func (s *session) writeKV(ctx context.Context, path string, data map[string]string) error {
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
	}
	err = s.do(ctx, func(c *api.Client) error {
		_, err := c.Logical().WriteWithContext(ctx, m.dataPath(rel), body)
		return err
	})
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

// keysOf lists a secret's keys (never its values) for messages.
func keysOf(data map[string]any) []string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
