package vault

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/hashicorp/vault/api"
	"github.com/hashicorp/vault/api/auth/approle"
	"github.com/hashicorp/vault/api/auth/kubernetes"

	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// session owns an authenticated Vault client. It logs in lazily, renews the token once two
// thirds of its TTL have passed, logs in again when renewal is not possible, and retries a
// request answered 403 once after a fresh login (login methods only).
type session struct {
	cfg    Config
	client *api.Client
	now    func() time.Time

	mu       sync.Mutex
	gen      int           // bumped on every login; 0 = not logged in
	token    secret.Secret // the login token, scrubbed from text while it is the session's
	ttl      time.Duration
	renewAt  time.Time // zero: the token does not expire
	loginTTL time.Duration

	mounts mountCache
}

func newSession(cfg Config) (*session, error) {
	ac, err := apiConfig(cfg)
	if err != nil {
		return nil, err
	}
	client, err := api.NewClient(ac)
	if err != nil {
		return nil, fmt.Errorf("vault.address: %v", err)
	}
	// NewClient still reads VAULT_TOKEN, VAULT_NAMESPACE and VAULT_HEADERS: undo all three, so
	// the configuration alone decides the token (ParseConfig), the namespace and the headers.
	client.ClearToken()
	client.SetHeaders(http.Header{api.RequestHeaderName: []string{"true"}})
	if cfg.Namespace != "" {
		client.SetNamespace(cfg.Namespace)
	}
	return &session{cfg: cfg, client: client, now: time.Now}, nil
}

// apiConfig builds the Vault client's configuration from the vault section alone. It does not
// start from api.DefaultConfig, which reads VAULT_ADDR, VAULT_SKIP_VERIFY, VAULT_CACERT,
// VAULT_CLIENT_CERT, VAULT_TLS_SERVER_NAME, VAULT_MAX_RETRIES and the other VAULT_* variables:
// an environment variable must not turn certificate checks off or send the token elsewhere.
// Redirects are not followed (DisableRedirects, and CheckRedirect on the HTTP client): the API
// client would repeat the request, token included, to whatever host a 307 names.
func apiConfig(cfg Config) (*api.Config, error) {
	tr := upstream.Transport(upstream.TransportOptions{VerifyTLS: true})
	ac := &api.Config{
		Address:          cfg.Address,
		HttpClient:       &http.Client{Transport: tr, CheckRedirect: upstream.NoRedirect},
		Timeout:          cfg.Timeout,
		MaxRetries:       cfg.MaxRetries,
		MinRetryWait:     cfg.BackoffMin,
		MaxRetryWait:     cfg.BackoffMax,
		Backoff:          retryablehttp.DefaultBackoff,
		CheckRetry:       upstream.ProbeAware(api.DefaultRetryPolicy), // diagnostics: a refused connection is not retried
		DisableRedirects: true,
	}
	if cfg.CACert != "" || cfg.TLSSkipVerify {
		if err := ac.ConfigureTLS(&api.TLSConfig{CACert: cfg.CACert, Insecure: cfg.TLSSkipVerify}); err != nil {
			return nil, fmt.Errorf("vault.ca_cert: %v", err)
		}
	}
	return ac, nil
}

// do runs op with a valid token. A 403 from a login method triggers one fresh login and retry,
// but only when the token itself is no longer valid (revoked or expired between the check and
// the request): a policy denial with a good token is returned as it is, so denied requests do
// not spend logins (an AppRole secret id may allow only a few).
func (s *session) do(ctx context.Context, op func(c *api.Client) error) error {
	gen, err := s.ensure(ctx)
	if err != nil {
		return err
	}
	err = op(s.client)
	if s.cfg.Auth.Method == MethodToken || !isStatus(err, http.StatusForbidden) {
		return err
	}
	if _, lerr := s.client.Auth().Token().LookupSelfWithContext(ctx); lerr == nil {
		return err // the token is fine: the policy denies this path
	}
	if lerr := s.relogin(ctx, gen); lerr != nil {
		return lerr
	}
	return op(s.client)
}

// ensure logs in on first use and renews or replaces a token that nears its expiry.
func (s *session) ensure(ctx context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen == 0 {
		return s.gen, s.login(ctx)
	}
	if s.renewAt.IsZero() || s.now().Before(s.renewAt) {
		return s.gen, nil
	}
	if s.renew(ctx) {
		return s.gen, nil
	}
	if s.cfg.Auth.Method == MethodToken {
		s.renewAt = time.Time{} // nothing to log in with; requests will say the token expired
		return s.gen, nil
	}
	return s.gen, s.login(ctx)
}

func (s *session) relogin(ctx context.Context, gen int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != gen {
		return nil // another request logged in meanwhile
	}
	return s.login(ctx)
}

// login authenticates and schedules renewal. Callers hold s.mu.
func (s *session) login(ctx context.Context) error {
	a := s.cfg.Auth
	var auth *api.SecretAuth
	switch a.Method {
	case MethodToken:
		s.client.SetToken(a.Token.Reveal())
		auth = s.lookupSelf(ctx)
	default:
		method, err := s.authMethod()
		if err != nil {
			return err
		}
		sec, err := s.client.Auth().Login(ctx, method)
		if err != nil {
			return loginError(a, err)
		}
		if sec == nil || sec.Auth == nil || sec.Auth.ClientToken == "" {
			return fmt.Errorf("vault login (%s at auth/%s): no token in the response", a.Method, a.Mount)
		}
		s.token = secret.Replace(s.token, sec.Auth.ClientToken) // the old token leaves the scrubber
		auth = sec.Auth
	}
	s.gen++
	s.schedule(auth, true)
	return nil
}

func (s *session) authMethod() (api.AuthMethod, error) {
	a := s.cfg.Auth
	switch a.Method {
	case MethodAppRole:
		sid := &approle.SecretID{FromString: a.SecretID.Reveal(), FromFile: a.SecretIDFile}
		m, err := approle.NewAppRoleAuth(a.RoleID, sid, approle.WithMountPath(a.Mount))
		if err != nil {
			return nil, fmt.Errorf("vault.auth: %v", err)
		}
		return m, nil
	case MethodKubernetes:
		// Built at each login: projected service account tokens rotate on disk.
		m, err := kubernetes.NewKubernetesAuth(a.Role, kubernetes.WithMountPath(a.Mount),
			kubernetes.WithServiceAccountTokenPath(a.JWTFile))
		if err != nil {
			return nil, fmt.Errorf("vault login (kubernetes at auth/%s): cannot read the service account token %s: %v", a.Mount, a.JWTFile, rootCause(err))
		}
		return m, nil
	}
	return nil, fmt.Errorf("vault.auth.method: unsupported method %q", a.Method)
}

// lookupSelf asks for a static token's TTL so that renewable (e.g. periodic) tokens are
// renewed. A token without the default policy cannot look itself up; it is used as is.
func (s *session) lookupSelf(ctx context.Context) *api.SecretAuth {
	sec, err := s.client.Auth().Token().LookupSelfWithContext(ctx)
	if err != nil || sec == nil {
		return nil
	}
	ttl, _ := sec.TokenTTL()
	renewable, _ := sec.TokenIsRenewable()
	return &api.SecretAuth{LeaseDuration: int(ttl / time.Second), Renewable: renewable}
}

// renew extends the token; false means a new login is needed (not renewable, refused, or the
// token is close to its maximum TTL). Callers hold s.mu.
func (s *session) renew(ctx context.Context) bool {
	if s.ttl <= 0 {
		return false
	}
	sec, err := s.client.Auth().Token().RenewSelfWithContext(ctx, int(s.loginTTL/time.Second))
	if err != nil || sec == nil || sec.Auth == nil {
		return false
	}
	if time.Duration(sec.Auth.LeaseDuration)*time.Second < s.loginTTL/3 {
		return false // capped by the maximum TTL: better log in again now
	}
	s.schedule(sec.Auth, false)
	return true
}

// schedule records a token's TTL and when to renew it. Callers hold s.mu.
func (s *session) schedule(auth *api.SecretAuth, fresh bool) {
	s.ttl, s.renewAt = 0, time.Time{}
	if auth == nil || auth.LeaseDuration <= 0 {
		return
	}
	s.ttl = time.Duration(auth.LeaseDuration) * time.Second
	if fresh {
		s.loginTTL = s.ttl
	}
	if !auth.Renewable && s.cfg.Auth.Method == MethodToken {
		s.ttl = 0 // cannot renew and cannot log in again: use it until it expires
		return
	}
	s.renewAt = s.now().Add(s.ttl * 2 / 3)
}

// loginError describes a failed login; a 403 there means the credentials were refused, not a
// missing policy.
func loginError(a AuthConfig, err error) error {
	where := fmt.Sprintf("vault login (%s at auth/%s)", a.Method, a.Mount)
	var re *api.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusForbidden {
		return &opError{msg: secret.Scrub(where + ": permission denied (HTTP 403" + prefixed(": ", vaultErrors(re)) +
			"; the credentials were not accepted)"), cause: statusError(re)}
	}
	return wrapErr(err, "%s", where)
}
