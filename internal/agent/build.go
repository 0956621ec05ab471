package agent

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/backends/openstack"
	"github.com/waldur/site-agent/internal/backends/rancher"
	"github.com/waldur/site-agent/internal/backends/rancherkccrd"
	rke2assembly "github.com/waldur/site-agent/internal/backends/rke2/assembly"
	"github.com/waldur/site-agent/internal/clients/vault"
	"github.com/waldur/site-agent/internal/config"
	"github.com/waldur/site-agent/internal/upstream"
	"github.com/waldur/site-agent/internal/waldurclient"
)

// Backends lists every backend the agent can run. Adding a backend means adding a line here.
func Backends() *backends.Registry {
	r := backends.NewRegistry()
	r.Register("inmemory", inmemory.New)
	r.Register("openstack", openstack.New)
	r.Register("rancher", rancher.New)
	r.Register(rancherkccrd.Name, rancherkccrd.New)
	r.Register("rke2", rke2assembly.New)
	return r
}

// SecretResolver resolves vault: references in the configuration through the top-level vault
// section; it is the configuration loader's config.NewResolver.
func SecretResolver(section map[string]any) (config.Resolver, error) {
	r, err := vault.NewResolver(section)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return r, nil
}

var (
	_ config.NewResolver   = SecretResolver
	_ backends.SecretStore = (*vault.Admin)(nil)
)

// secretStore builds the agent's Vault client from the vault section (nil without one): a
// *vault.Admin, which every backend gets as its secret store and the rke2 backend also uses
// for its per-cluster policies and AppRoles. It validates the section and makes no network
// call.
func secretStore(cfg *config.Config) (backends.SecretStore, error) {
	if cfg.Vault == nil {
		return nil, nil
	}
	st, err := vault.NewAdmin(cfg.Vault)
	if err != nil {
		return nil, &config.Error{Path: cfg.Path, Problem: err.Error()}
	}
	return st, nil
}

func (a *Agent) backend(reg *backends.Registry, off config.Offering, o Options, key, name string) (backends.Set, error) {
	var b backends.Backend
	if o.BackendOverride != nil {
		b = o.BackendOverride(off)
	}
	if b == nil {
		if !reg.Has(name) {
			return backends.Set{}, &config.Error{Path: a.cfg.Path, Offering: off.Label(), Key: fmt.Sprintf("offerings[%d].%s", off.Index, key),
				Problem: fmt.Sprintf("unknown backend %q (available: %v)", name, reg.Names())}
		}
		var warnings []string
		var err error
		b, warnings, err = reg.New(name, backends.Params{Offering: off.Name, Settings: off.BackendSettings,
			Components: off.Components, Logger: a.log.With(zap.String("offering", off.Name), zap.String("backend", name)), DryRun: o.DryRun, Secrets: a.secrets,
			Upstreams: a.cfg.Upstreams})
		for _, w := range warnings {
			detail := fmt.Sprintf("offerings[%d].%s", off.Index, w)
			if !strings.Contains(w, ": ") {
				detail += ": unknown key, ignored"
			}
			a.warnings = append(a.warnings, detail)
			a.log.Warn("configuration warning", zap.String("offering", off.Name), zap.String("detail", detail))
		}
		if err != nil {
			return backends.Set{}, backendErrors(a.cfg.Path, off, err)
		}
	}
	set := backends.RolesOf(name, b)
	if set.Closer != nil {
		a.closers = append(a.closers, set.Closer)
	}
	set = backends.Instrument(set, a.observeBackend(off, name))
	if o.DryRun {
		set = backends.DryRun(set)
	}
	return set, nil
}

// backendErrors turns a backend constructor's error — one problem, or several joined — into
// configuration problems that name the offering and, where the backend's message starts with
// it ("backend_settings.cluster_id: is required"), the key.
func backendErrors(path string, off config.Offering, err error) config.Errors {
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	var out config.Errors
	for _, e := range list {
		key, problem := fmt.Sprintf("offerings[%d]", off.Index), e.Error()
		if k, rest, ok := strings.Cut(problem, ": "); ok && strings.HasPrefix(k, "backend_settings") && !strings.ContainsAny(k, " \t") {
			key, problem = key+"."+k, rest
		}
		out = append(out, &config.Error{Path: path, Offering: off.Label(), Key: key, Problem: problem})
	}
	return out
}

func (a *Agent) waldurClient(cfg *config.Config, off config.Offering, o Options, clients map[string]*http.Client) (*waldurclient.Client, error) {
	hc := o.HTTPClient
	if hc == nil {
		key := strconv.FormatBool(off.VerifySSL)
		if hc = clients[key]; hc == nil {
			hc = waldurclient.NewHTTPClient(waldurclient.TransportOptions{VerifyTLS: off.VerifySSL, Proxy: cfg.GlobalProxy,
				Timeout: cfg.Upstreams.Get(upstream.Waldur).Timeout})
			clients[key] = hc
		}
	}
	opts := waldurclient.Options{BaseURL: off.APIURL, Token: off.Token, HTTPClient: hc, DryRun: o.DryRun,
		Retry:     cfg.Upstreams.Get(upstream.Waldur).RetryPolicy(),
		UserAgent: "site-agent-" + o.Mode + "/" + a.version, Logger: a.log.With(zap.String("offering", off.Name)),
		OnRequest: a.observeWaldur(off)}
	opts.OIDC = oidc(off)
	c, err := waldurclient.New(opts)
	if err != nil {
		return nil, &config.Error{Path: cfg.Path, Offering: off.Label(), Key: fmt.Sprintf("offerings[%d].waldur_api_url", off.Index), Problem: err.Error()}
	}
	return c, nil
}
