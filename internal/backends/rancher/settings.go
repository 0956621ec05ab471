package rancher

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// Usage sources.
const (
	UsageFromQuota = "quota" // ResourceQuota status.used (the incumbent's source)
	UsageFromPods  = "pods"  // sum of container requests of non-terminal pods
)

// Settings are the backend_settings of a `backend_type: rancher` offering, with the incumbent's
// keys and defaults (spec/rancher.md §1.1) plus usage_source and timeout.
type Settings struct {
	BackendURL        string            `mapstructure:"backend_url"`
	Username          string            `mapstructure:"username"` // Rancher access key (token-xxxxx)
	Password          secret.Secret     `mapstructure:"password"` // Rancher secret key
	ClusterID         string            `mapstructure:"cluster_id"`
	VerifyCert        *bool             `mapstructure:"verify_cert"`
	ProjectPrefix     *string           `mapstructure:"project_prefix"`
	DefaultRole       string            `mapstructure:"default_role"`
	KeycloakEnabled   bool              `mapstructure:"keycloak_enabled"`
	KeycloakUseUserID *bool             `mapstructure:"keycloak_use_user_id"`
	NamespaceLabels   map[string]string `mapstructure:"namespace_labels"`
	Keycloak          KeycloakSettings  `mapstructure:"keycloak"`
	UsageSource       string            `mapstructure:"usage_source"`
	// Timeout bounds one HTTP attempt (default 30s, the incumbent's).
	Timeout time.Duration `mapstructure:"timeout"`
	// RemoveStaleBindings (default true) removes keycloakoidc_group:// bindings on managed
	// projects that the agent did not make.
	RemoveStaleBindings *bool `mapstructure:"remove_stale_bindings"`
	// DownscaleFactor multiplies the quota amounts of a downscaled resource (default 0.5).
	DownscaleFactor *float64 `mapstructure:"downscale_factor"`
}

// KeycloakSettings is the nested `keycloak` section.
type KeycloakSettings struct {
	URL       string        `mapstructure:"keycloak_url"`
	Realm     string        `mapstructure:"keycloak_realm"`
	UserRealm string        `mapstructure:"keycloak_user_realm"`
	Username  string        `mapstructure:"keycloak_username"`
	Password  secret.Secret `mapstructure:"keycloak_password"`
	SSLVerify *bool         `mapstructure:"keycloak_ssl_verify"`
	ClientID  string        `mapstructure:"client_id"`
}

// config is Settings after defaults and validation.
type config struct {
	baseURL     string // without /v3 and without a trailing slash
	accessKey   string
	secretKey   secret.Secret
	clusterID   string
	verifyTLS   bool
	prefix      string
	role        string
	keycloak    bool
	useUserID   bool
	labels      map[string]string // namespace_labels
	kc          KeycloakSettings
	usageSource string
	timeout     time.Duration
	timeoutSet  bool               // backend_settings.timeout given: it wins over the upstreams section
	up          upstream.Upstreams // the configuration's upstreams section
	parentGroup string
	quotaKeys   quotaMap
	extras
}

var clusterIDPattern = regexp.MustCompile(`^(c-[a-z0-9][a-z0-9-]*|local)$`)

// parseSettings decodes and validates backend_settings; errors name the key.
func parseSettings(in backends.Settings, comps backends.Components) (*config, []string, error) {
	var s Settings
	warnings, err := backends.DecodeSettings(in, &s)
	if err != nil {
		return nil, warnings, err
	}
	c := &config{accessKey: strings.TrimSpace(s.Username), secretKey: s.Password, clusterID: strings.TrimSpace(s.ClusterID),
		verifyTLS: boolOr(s.VerifyCert, true), prefix: strOr(s.ProjectPrefix, "waldur-"), role: strings.TrimSpace(s.DefaultRole),
		keycloak: s.KeycloakEnabled, useUserID: boolOr(s.KeycloakUseUserID, true), labels: s.NamespaceLabels,
		usageSource: s.UsageSource, timeout: s.Timeout, timeoutSet: s.Timeout != 0}
	if c.role == "" {
		c.role = "workloads-manage"
	}
	if c.usageSource == "" {
		c.usageSource = UsageFromQuota
	}
	if c.timeout == 0 {
		c.timeout = 30 * time.Second
	}
	var w []string
	if s.BackendURL == "" {
		s.BackendURL = "https://localhost"
	}
	if c.baseURL, w, err = parseBaseURL(s.BackendURL); err != nil {
		return nil, warnings, err
	}
	warnings = append(warnings, w...)
	if c.extras, err = parseExtras(s, in); err != nil {
		return nil, warnings, err
	}
	var errs []error // every problem at once
	for _, check := range []func(*config) error{checkCredentials, checkCluster, checkPrefix, checkRole, checkLabels, checkMisc} {
		errs = append(errs, check(c))
	}
	if c.keycloak {
		c.kc, err = keycloakSettings(s.Keycloak)
		errs = append(errs, err)
	}
	c.parentGroup = parentGroupName(c.clusterID)
	c.quotaKeys, err = buildQuotaMap(comps)
	if err = errors.Join(append(errs, err)...); err != nil {
		return nil, warnings, err
	}
	return c, warnings, nil
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

func strOr(p *string, def string) string {
	if p == nil {
		return def
	}
	return strings.TrimSpace(*p)
}

// parseBaseURL accepts https://rancher.example.com (the incumbent appends /v3 itself); a /v3
// suffix is tolerated with a warning.
func parseBaseURL(raw string) (string, []string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, fmt.Errorf("backend_settings.backend_url: must be an http:// or https:// URL such as https://rancher.example.com, got %q", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", nil, fmt.Errorf("backend_settings.backend_url: must not contain credentials, a query or a fragment (put the API key in username/password)")
	}
	var warnings []string
	path := strings.TrimRight(u.Path, "/")
	if strings.HasSuffix(path, "/v3") {
		path = strings.TrimSuffix(path, "/v3")
		warnings = append(warnings, "backend_settings.backend_url: ends in /v3, which the agent adds itself; it was removed")
	}
	u.Path = path
	return strings.TrimRight(u.String(), "/"), warnings, nil
}

func checkCredentials(c *config) error {
	if c.accessKey == "" {
		return fmt.Errorf("backend_settings.username: the Rancher API access key (token-xxxxx) is required")
	}
	if strings.Contains(c.accessKey, ":") {
		return fmt.Errorf("backend_settings.username: must be only the access key (token-xxxxx); put the secret key in password")
	}
	if c.secretKey.IsZero() {
		return fmt.Errorf("backend_settings.password: the Rancher API secret key is required")
	}
	return nil
}

func checkCluster(c *config) error {
	switch {
	case c.clusterID == "":
		return fmt.Errorf("backend_settings.cluster_id: is required (the downstream cluster id, e.g. c-m-1234abcd)")
	case strings.Contains(c.clusterID, ":"):
		return fmt.Errorf("backend_settings.cluster_id: %q is a project reference (c-…:p-…); use only the cluster part %q",
			c.clusterID, strings.SplitN(c.clusterID, ":", 2)[0])
	case !clusterIDPattern.MatchString(c.clusterID):
		return fmt.Errorf("backend_settings.cluster_id: %q is not a Rancher cluster id (c-xxxxx, c-m-xxxxxxxx or local)", c.clusterID)
	}
	return nil
}

func checkPrefix(c *config) error {
	if c.prefix == "" {
		return nil
	}
	if !regexp.MustCompile(`^[a-z0-9][-a-z0-9]*$`).MatchString(c.prefix) || len(c.prefix) > 40 {
		return fmt.Errorf("backend_settings.project_prefix: %q must be lower-case letters, digits and '-', start with a letter or digit "+
			"and be at most 40 characters (it starts namespace names)", c.prefix)
	}
	return nil
}

func checkRole(c *config) error {
	if errs := validation.IsDNS1123Subdomain(c.role); len(errs) > 0 {
		return fmt.Errorf("backend_settings.default_role: %q is not a Rancher role template id: %s", c.role, strings.Join(errs, "; "))
	}
	return nil
}

func checkLabels(c *config) error {
	keys := make([]string, 0, len(c.labels))
	for k := range c.labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("backend_settings.namespace_labels: %q is not a valid label key: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(c.labels[k]); len(errs) > 0 {
			return fmt.Errorf("backend_settings.namespace_labels.%s: %q is not a valid label value: %s", k, c.labels[k], strings.Join(errs, "; "))
		}
		if k == projectIDKey {
			return fmt.Errorf("backend_settings.namespace_labels: %s is set by the agent and cannot be configured", k)
		}
	}
	return nil
}

func checkMisc(c *config) error {
	if c.usageSource != UsageFromQuota && c.usageSource != UsageFromPods {
		return fmt.Errorf("backend_settings.usage_source: must be %q or %q, got %q", UsageFromQuota, UsageFromPods, c.usageSource)
	}
	if c.timeout < time.Second || c.timeout > 10*time.Minute {
		return fmt.Errorf("backend_settings.timeout: must be between 1s and 10m, got %s", c.timeout)
	}
	return nil
}

// keycloakSettings applies the incumbent's defaults and validates the section.
func keycloakSettings(k KeycloakSettings) (KeycloakSettings, error) {
	k.URL = cmp.Or(k.URL, "https://localhost/auth/")
	u, err := url.Parse(k.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return k, fmt.Errorf("backend_settings.keycloak.keycloak_url: must be an http:// or https:// URL without credentials, got %q", k.URL)
	}
	k.Realm, k.UserRealm, k.ClientID = cmp.Or(k.Realm, "waldur"), cmp.Or(k.UserRealm, "master"), cmp.Or(k.ClientID, "admin-cli")
	if k.SSLVerify == nil {
		t := true
		k.SSLVerify = &t
	}
	if k.Username == "" {
		return k, fmt.Errorf("backend_settings.keycloak.keycloak_username: is required when keycloak_enabled is true")
	}
	if k.Password.IsZero() {
		return k, fmt.Errorf("backend_settings.keycloak.keycloak_password: is required when keycloak_enabled is true")
	}
	return k, nil
}

// Format prints the configuration without its secrets (fmt cannot reach the Secret's own
// redaction through unexported fields).
func (c *config) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "rancher{url=%s cluster=%s access_key=%s prefix=%q role=%s keycloak=%v usage=%s}",
		c.baseURL, c.clusterID, c.accessKey, c.prefix, c.role, c.keycloak, c.usageSource)
}
