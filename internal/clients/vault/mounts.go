package vault

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/hashicorp/vault/api"
)

// mount is a KV secrets engine: its path (no trailing slash) and version (1 or 2).
type mount struct {
	path    string
	version int
}

// dataPath is the API path that reads and writes the secret rel inside the mount.
func (m mount) dataPath(rel string) string {
	if m.version == 2 {
		return m.path + "/data/" + rel
	}
	return m.path + "/" + rel
}

// deletePath removes the secret: every version and its metadata on KV v2.
func (m mount) deletePath(rel string) string {
	if m.version == 2 {
		return m.path + "/metadata/" + rel
	}
	return m.path + "/" + rel
}

func (m mount) String() string { return fmt.Sprintf("KV v%d mount %s/", m.version, m.path) }

// mountCache remembers the mounts already looked up, so Vault is asked once per mount.
type mountCache struct {
	mu    sync.Mutex
	known []mount
}

// find returns the longest known mount containing path.
func (c *mountCache) find(path string) (mount, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	best, found := mount{}, false
	for _, m := range c.known {
		if strings.HasPrefix(path, m.path+"/") && len(m.path) > len(best.path) {
			best, found = m, true
		}
	}
	return best, found
}

func (c *mountCache) add(m mount) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.known {
		if k.path == m.path {
			return
		}
	}
	c.known = append(c.known, m)
}

// locate splits a secret path into its mount and the path inside it, asking Vault
// (sys/internal/ui/mounts/<path>, as the vault CLI does) the first time a mount is seen. A
// Vault without that endpoint (404) has no KV v2: the first segment is taken as a v1 mount.
func (s *session) locate(ctx context.Context, path string) (mount, string, error) {
	m, ok := s.mounts.find(path)
	if !ok {
		var err error
		if m, err = s.lookupMount(ctx, path); err != nil {
			return mount{}, "", err
		}
		s.mounts.add(m)
	}
	rel := strings.TrimPrefix(path, m.path+"/")
	if rel == "" || rel == path {
		return mount{}, "", fmt.Errorf("%s names the %s itself, not a secret in it", path, m)
	}
	return m, rel, nil
}

func (s *session) lookupMount(ctx context.Context, path string) (mount, error) {
	var sec *api.Secret
	err := s.do(ctx, func(c *api.Client) error {
		var err error
		sec, err = c.Logical().ReadWithContext(ctx, "sys/internal/ui/mounts/"+path)
		return err
	})
	if isStatus(err, http.StatusForbidden) {
		return mount{}, &opError{msg: fmt.Sprintf("looking up the mount of %s: permission denied (HTTP 403: "+
			"no secrets engine is mounted there, the token's policies grant nothing under it, or the token expired or was revoked)", path), cause: err}
	}
	if err != nil {
		return mount{}, wrapErr(err, "looking up the mount of %s", path)
	}
	if sec == nil || sec.Data == nil {
		first, _, _ := strings.Cut(path, "/")
		return mount{path: first, version: 1}, nil
	}
	mpath, _ := sec.Data["path"].(string)
	mpath = strings.Trim(mpath, "/")
	typ, _ := sec.Data["type"].(string)
	if mpath == "" {
		return mount{}, fmt.Errorf("looking up the mount of %s: Vault answered without a mount path", path)
	}
	if typ != "kv" && typ != "generic" {
		return mount{}, fmt.Errorf("%s is in a %q secrets engine mounted at %s/, not a KV engine", path, typ, mpath)
	}
	m := mount{path: mpath, version: 1}
	if opts, ok := sec.Data["options"].(map[string]any); ok && fmt.Sprint(opts["version"]) == "2" {
		m.version = 2
	}
	return m, nil
}
