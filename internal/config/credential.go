package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CredentialPrefix marks a string value that names a systemd credential:
// credential:<name> is the content of $CREDENTIALS_DIRECTORY/<name>, which systemd provides
// to a unit with LoadCredential=<name>:<file> (or SetCredential=, LoadCredentialEncrypted=).
const CredentialPrefix = "credential:"

// credentialsDirEnv is the variable systemd sets for a service that has credentials.
const credentialsDirEnv = "CREDENTIALS_DIRECTORY"

// resolveCredentials replaces every string value starting with CredentialPrefix, anywhere in
// raw (the vault section included, so Vault's own token can be a credential), by the
// credential's content without a trailing newline. Each value is registered with the secret
// scrubber. Problems name the key that holds the reference.
func resolveCredentials(raw map[string]any, environ func() []string) *Error {
	refs, order := findRefs(raw, CredentialPrefix)
	if len(order) == 0 {
		return nil
	}
	dir := lookupEnv(environ, credentialsDirEnv)
	values := map[string]string{}
	for _, ref := range order {
		v, err := readCredential(dir, strings.TrimPrefix(ref, CredentialPrefix))
		if err != nil {
			return &Error{Key: refs[ref][0], Problem: err.Error()}
		}
		values[ref] = v
	}
	substitute(raw, values)
	return nil
}

// readCredential reads one credential; its errors are sentences for the configuration error.
func readCredential(dir, name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return "", fmt.Errorf("%q is not a credential name (credential:<name>, a file name without /)", CredentialPrefix+name)
	}
	if dir == "" {
		return "", fmt.Errorf("refers to %s%s but $%s is not set: run the agent from a unit with LoadCredential=%s:<file>",
			CredentialPrefix, name, credentialsDirEnv, name)
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("credential %q is not in $%s (%s): add LoadCredential=%s:<file> to the unit", name, credentialsDirEnv, dir, name)
	case err != nil:
		return "", fmt.Errorf("cannot read credential %q: %v", name, err)
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	if v == "" {
		return "", fmt.Errorf("credential %q is empty", name)
	}
	return v, nil
}

// lookupEnv returns the value of the last key=value entry for key.
func lookupEnv(environ func() []string, key string) string {
	if environ == nil {
		environ = os.Environ
	}
	value := ""
	for _, kv := range environ() {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			value = v
		}
	}
	return value
}
