package vault

import (
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
	"github.com/waldur/site-agent/internal/yaml11"
)

// Auth methods.
const (
	MethodToken      = "token"
	MethodAppRole    = "approle"
	MethodKubernetes = "kubernetes"
)

// DefaultJWTFile is where Kubernetes mounts a pod's service account token.
const DefaultJWTFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"

const (
	defaultTimeout    = 30 * time.Second
	defaultMaxRetries = 3
	// Exponential backoff (250 ms, 500 ms, 1 s …) that honours Retry-After on 429 and 503.
	defaultBackoffMin = 250 * time.Millisecond
	defaultBackoffMax = 2 * time.Second
)

// Config is a validated `vault` section.
type Config struct {
	Address       string
	CACert        string
	TLSSkipVerify bool
	Namespace     string
	Timeout       time.Duration
	MaxRetries    int
	BackoffMin    time.Duration // first wait between retries
	BackoffMax    time.Duration // cap of the wait
	Auth          AuthConfig
}

// AuthConfig says how the agent logs in.
type AuthConfig struct {
	Method       string
	Token        secret.Secret // token
	RoleID       string        // approle
	SecretID     secret.Secret // approle (or SecretIDFile)
	SecretIDFile string        // approle
	Mount        string        // approle / kubernetes auth mount path
	Role         string        // kubernetes
	JWTFile      string        // kubernetes
}

// TokenConfig is the configuration of a Vault at address reached with a token, with the
// section's default timeout, retries and backoff (the rke2 backend's deprecated flat keys).
func TokenConfig(address string, token secret.Secret, tlsSkipVerify bool) Config {
	return Config{Address: address, TLSSkipVerify: tlsSkipVerify, Timeout: defaultTimeout, MaxRetries: defaultMaxRetries,
		BackoffMin: defaultBackoffMin, BackoffMax: defaultBackoffMax, Auth: AuthConfig{Method: MethodToken, Token: token}}
}

// WithUpstream applies the configuration's upstreams.vault settings; their zero fields keep
// c's. (The vault section gets them from the configuration loader, where its own keys win.)
func (c Config) WithUpstream(s upstream.Settings) Config {
	c.Timeout = s.TimeoutOr(c.Timeout)
	c.MaxRetries = s.RetriesOr(c.MaxRetries)
	if s.BackoffMin > 0 {
		c.BackoffMin = s.BackoffMin
	}
	if s.BackoffMax > 0 {
		c.BackoffMax = s.BackoffMax
	}
	return c
}

// section reads one mapping of the vault section, remembering which keys were used so that
// unknown keys can be reported by name.
type section struct {
	prefix string
	m      map[string]any
	seen   map[string]bool
	err    error
}

func newSection(prefix string, m map[string]any) *section {
	return &section{prefix: prefix, m: m, seen: map[string]bool{}}
}

func (s *section) fail(key, format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("%s.%s: %s", s.prefix, key, fmt.Sprintf(format, args...))
	}
}

func (s *section) str(key string) string {
	s.seen[key] = true
	v, ok := s.m[key]
	if !ok || v == nil {
		return ""
	}
	str, ok := v.(string)
	if !ok {
		s.fail(key, "expected a string, got %T", v)
		return ""
	}
	return strings.TrimSpace(str)
}

func (s *section) boolean(key string) bool {
	s.seen[key] = true
	v, ok := s.m[key]
	if !ok || v == nil {
		return false
	}
	b, ok := yaml11.Bool(v) // yes/no, on/off as in the rest of the file
	if !ok {
		s.fail(key, "expected true or false, got %T", v)
	}
	return b
}

func (s *section) integer(key string, def int) int {
	s.seen[key] = true
	v, ok := s.m[key]
	if !ok || v == nil {
		return def
	}
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		if n == math.Trunc(n) {
			return int(n)
		}
	}
	s.fail(key, "expected a whole number, got %v", v)
	return def
}

func (s *section) duration(key string, def time.Duration) time.Duration {
	str := s.str(key)
	if str == "" {
		return def
	}
	d, err := time.ParseDuration(str)
	if err != nil || d <= 0 {
		s.fail(key, "expected a positive duration such as 30s, got %q", str)
		return def
	}
	return d
}

// unknown fails on the first key that was never read.
func (s *section) unknown() {
	var extra []string
	for k := range s.m {
		if !s.seen[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		s.fail(extra[0], "unknown key (a typo?)")
	}
}

// ParseConfig validates a `vault` section. environ supplies VAULT_ADDR, VAULT_TOKEN and
// VAULT_NAMESPACE fallbacks (nil: os.Environ). Errors name the key: `vault.auth.method: …`.
func ParseConfig(m map[string]any, environ func() []string) (Config, error) {
	if environ == nil {
		environ = os.Environ
	}
	env := envLookup(environ())
	s := newSection("vault", m)
	c := Config{
		Address:       s.str("address"),
		CACert:        s.str("ca_cert"),
		TLSSkipVerify: s.boolean("tls_skip_verify"),
		Namespace:     s.str("namespace"),
		Timeout:       s.duration("timeout", defaultTimeout),
		MaxRetries:    s.integer("max_retries", defaultMaxRetries),
		BackoffMin:    s.duration("backoff_min", defaultBackoffMin),
		BackoffMax:    s.duration("backoff_max", defaultBackoffMax),
	}
	if c.Address == "" {
		c.Address = env["VAULT_ADDR"]
	}
	if c.Namespace == "" {
		c.Namespace = env["VAULT_NAMESPACE"]
	}
	switch {
	case c.Address == "":
		s.fail("address", "required (or set VAULT_ADDR)")
	case !strings.HasPrefix(c.Address, "https://") && !strings.HasPrefix(c.Address, "http://"):
		s.fail("address", "must be an http:// or https:// URL, got %q", c.Address)
	}
	if c.MaxRetries < 0 || c.MaxRetries > 10 {
		s.fail("max_retries", "must be between 0 and 10, got %d", c.MaxRetries)
	}
	if c.BackoffMax < c.BackoffMin {
		s.fail("backoff_max", "must not be below backoff_min (%s), got %s", c.BackoffMin, c.BackoffMax)
	}
	if c.CACert != "" {
		if _, err := os.Stat(c.CACert); err != nil {
			s.fail("ca_cert", "cannot read %s: %v", c.CACert, unwrapPathError(err))
		}
	}
	s.seen["auth"] = true
	authMap, ok := m["auth"].(map[string]any)
	if !ok && s.err == nil {
		s.fail("auth", "required: a mapping with at least a method (token, approle or kubernetes)")
	}
	s.unknown()
	if s.err != nil {
		return Config{}, s.err
	}
	auth, err := parseAuth(authMap, env)
	if err != nil {
		return Config{}, err
	}
	c.Auth = auth
	return c, nil
}

func parseAuth(m map[string]any, env map[string]string) (AuthConfig, error) {
	s := newSection("vault.auth", m)
	a := AuthConfig{Method: s.str("method")}
	token := s.str("token")
	a.RoleID = s.str("role_id")
	secretID := s.str("secret_id")
	a.SecretIDFile = s.str("secret_id_file")
	a.Mount = strings.Trim(s.str("mount"), "/")
	a.Role = s.str("role")
	jwtFile := s.str("jwt_file")
	a.JWTFile = jwtFile
	s.unknown()
	if s.err != nil {
		return AuthConfig{}, s.err
	}
	only := func(method string, keys map[string]string) {
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if keys[k] != "" && a.Method != method {
				s.fail(k, "only used with method %s (method is %s)", method, a.Method)
			}
		}
	}
	token = checkMethod(s, &a, token, secretID, env)
	only(MethodToken, map[string]string{"token": token})
	only(MethodAppRole, map[string]string{"role_id": a.RoleID, "secret_id": secretID, "secret_id_file": a.SecretIDFile})
	only(MethodKubernetes, map[string]string{"role": a.Role, "jwt_file": jwtFile})
	if s.err != nil {
		return AuthConfig{}, s.err
	}
	a.Token, a.SecretID = secret.New(token), secret.New(secretID)
	return a, nil
}

// checkMethod applies the method's requirements and defaults; it returns the token to use
// (VAULT_TOKEN when the method is token and the section has none).
func checkMethod(s *section, a *AuthConfig, token, secretID string, env map[string]string) string {
	switch a.Method {
	case MethodToken:
		if token == "" {
			token = env["VAULT_TOKEN"]
		}
		if token == "" {
			s.fail("token", "required for method token (or set VAULT_TOKEN)")
		}
		if a.Mount != "" {
			s.fail("mount", "not used with method token")
		}
	case MethodAppRole:
		switch {
		case a.RoleID == "":
			s.fail("role_id", "required for method approle")
		case secretID == "" && a.SecretIDFile == "":
			s.fail("secret_id", "required for method approle (or secret_id_file)")
		case secretID != "" && a.SecretIDFile != "":
			s.fail("secret_id_file", "set either secret_id or secret_id_file, not both")
		}
		a.Mount = defaultString(a.Mount, MethodAppRole)
	case MethodKubernetes:
		if a.Role == "" {
			s.fail("role", "required for method kubernetes")
		}
		a.Mount = defaultString(a.Mount, MethodKubernetes)
		a.JWTFile = defaultString(a.JWTFile, DefaultJWTFile)
	default:
		s.fail("method", "must be token, approle or kubernetes, got %q", a.Method)
	}
	return token
}

func envLookup(environ []string) map[string]string {
	out := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "VAULT_") {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

func defaultString(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// unwrapPathError drops the path from an *os.PathError (the caller names it already).
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
