package openstack

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// Backend is the OpenStack tenant backend.
type Backend struct {
	settings  Settings
	quotas    quotaMap
	log       *zap.Logger
	secrets   backends.SecretStore
	hc        *http.Client // retrying; see newHTTPClient
	pollEvery time.Duration

	connMu sync.Mutex
	cl     *clients
}

// Options are test and tuning hooks for NewWithOptions.
type Options struct {
	// Transport is the innermost HTTP transport, under the retry layer (nil: a pooled
	// transport honouring verify_ssl and ca_cert). Tests use it to count or break requests.
	Transport http.RoundTripper
	// RetryWaitMin and RetryWaitMax bound the backoff between attempts (default 250ms–5s).
	RetryWaitMin, RetryWaitMax time.Duration
	// PollInterval is how often force_destroy looks again at deletions in progress within
	// one pass (default 2s).
	PollInterval time.Duration
}

// New is the registry constructor. It validates settings and components and makes no
// network calls.
func New(p backends.Params) (backends.Backend, []string, error) {
	b, warnings, err := NewWithOptions(p, Options{})
	if err != nil {
		return nil, warnings, err
	}
	return b, warnings, nil
}

// NewWithOptions is New with test and tuning hooks.
func NewWithOptions(p backends.Params, o Options) (*Backend, []string, error) {
	s, warnings, err := decodeSettings(p.Settings)
	if err != nil {
		return nil, warnings, err
	}
	if s.CreateTenantUser && p.Secrets == nil {
		return nil, warnings, fmt.Errorf("backend_settings.create_tenant_user: needs a secret store for the generated passwords (configure the vault section) or set it to false")
	}
	qm, err := mapComponents(p.Components)
	if err != nil {
		return nil, warnings, err
	}
	pool, err := s.certPool()
	if err != nil {
		return nil, warnings, err
	}
	log := p.Logger
	if log == nil {
		log = zap.NewNop()
	}
	hc := newHTTPClient(withUpstream(httpOptions{Base: o.Transport, VerifyTLS: *s.VerifySSL, RootCAs: pool, Retries: *s.Retries,
		Timeout: s.RequestTimeout, WaitMin: o.RetryWaitMin, WaitMax: o.RetryWaitMax, Logger: log}, p))
	if o.PollInterval <= 0 {
		o.PollInterval = 2 * time.Second
	}
	return &Backend{settings: s, quotas: qm, log: log, secrets: p.Secrets, hc: hc, pollEvery: o.PollInterval}, warnings, nil
}

// Close implements backends.Closer.
func (b *Backend) Close() error {
	b.hc.CloseIdleConnections()
	return nil
}

// Tags on a tenant project.
const (
	tagManaged      = "site-agent"
	ownerTagPrefix  = "waldur-resource="
	statusTagPrefix = "site-agent-status="
	statusPaused    = "paused"
	statusDown      = "downscaled"
)

func ownerTag(resourceUUID string) string { return ownerTagPrefix + resourceUUID }

// tagValue returns the value of the first "prefix<value>" tag.
func tagValue(tags []string, prefix string) (string, bool) {
	for _, t := range tags {
		if v, ok := strings.CutPrefix(t, prefix); ok {
			return v, true
		}
	}
	return "", false
}

// withStatus returns tags with the status tag replaced ("" removes it).
func withStatus(tags []string, status string) []string {
	out := make([]string, 0, len(tags)+1)
	for _, t := range tags {
		if !strings.HasPrefix(t, statusTagPrefix) {
			out = append(out, t)
		}
	}
	if status != "" {
		out = append(out, statusTagPrefix+status)
	}
	return out
}

// names of the objects the backend creates in a tenant, derived from the project name.
type names struct{ project, network, subnet, router, user string }

// maxNameLen is Keystone's limit on project and user names.
const maxNameLen = 64

func (b *Backend) namesFor(requested string) (names, error) {
	p := b.settings.TenantPrefix + requested
	if requested == "" {
		return names{}, failure.Errorf("no name given for the new tenant")
	}
	if len(p) > maxNameLen {
		return names{}, failure.Errorf("tenant name %q is longer than Keystone's %d characters", p, maxNameLen)
	}
	return names{project: p, network: p + "-int-net", subnet: p + "-sub-net", router: p + "-router", user: p}, nil
}

// credentialsPath is where a tenant user's credentials are stored.
func (b *Backend) credentialsPath(project string) string {
	return strings.TrimRight(b.settings.CredentialsPath, "/") + "/" + project
}

func describe(res backends.Resource) string {
	d := fmt.Sprintf("Waldur resource %q (%s)", res.Name, res.UUID)
	if res.ProjectName != "" || res.ProjectSlug != "" {
		d += fmt.Sprintf(", project %q (%s)", res.ProjectName, res.ProjectSlug)
	}
	if res.CustomerName != "" || res.CustomerSlug != "" {
		d += fmt.Sprintf(", customer %q (%s)", res.CustomerName, res.CustomerSlug)
	}
	return d + "; managed by site-agent"
}

// logger is the backend's logger inside an operation: with the order or resource the caller
// named in ctx (backends.Log).
func (b *Backend) logger(ctx context.Context) *zap.Logger { return backends.Log(ctx, b.log) }
