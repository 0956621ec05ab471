package vault

import (
	"errors"
	"fmt"
	"strings"
)

// refPrefix matches config.RefPrefix (this package does not import config's loader).
const refPrefix = "vault:"

// Ref is a parsed reference vault:<path>#<key>. Path is the secret's full logical path,
// mount included ("secret/site/rancher"); which leading segments form the mount is decided by
// asking Vault (see mounts.go), so mounts with slashes ("team/kv/site/x") work.
type Ref struct {
	Path string
	Key  string
}

func (r Ref) String() string { return refPrefix + r.Path + "#" + r.Key }

// ParseRef parses `vault:<mount>/<path>#<key>`. The path is everything before the first '#'
// and must have at least two non-empty segments (a mount and a secret name); the key is the
// rest and must not be empty.
func ParseRef(ref string) (Ref, error) {
	rest, ok := strings.CutPrefix(ref, refPrefix)
	if !ok {
		return Ref{}, fmt.Errorf("not a vault reference: it must start with %q", refPrefix)
	}
	path, key, ok := strings.Cut(rest, "#")
	if !ok {
		return Ref{}, errors.New("missing #<key> after the secret path (vault:<mount>/<path>#<key>)")
	}
	if key == "" {
		return Ref{}, errors.New("empty key after # (vault:<mount>/<path>#<key>)")
	}
	if strings.TrimSpace(key) != key {
		return Ref{}, errors.New("the key has leading or trailing spaces")
	}
	path, err := CleanPath(path)
	if err != nil {
		return Ref{}, err
	}
	return Ref{Path: path, Key: key}, nil
}

// CleanPath checks a secret path "<mount>/<path>": at least two segments, none empty, "." or
// "..", no spaces at either end. A leading or trailing slash is dropped.
func CleanPath(path string) (string, error) {
	path = strings.Trim(path, "/")
	if strings.TrimSpace(path) != path {
		return "", errors.New("the secret path has leading or trailing spaces")
	}
	segments := strings.Split(path, "/")
	if path == "" || len(segments) < 2 {
		return "", fmt.Errorf("secret path %q must be <mount>/<path>", path)
	}
	for _, s := range segments {
		switch s {
		case "":
			return "", fmt.Errorf("secret path %q has an empty segment", path)
		case ".", "..":
			return "", fmt.Errorf("secret path %q has a %q segment", path, s)
		}
	}
	return path, nil
}
