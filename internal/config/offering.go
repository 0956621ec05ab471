package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/secret"
)

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)

// parseOffering reads one offering; errs holds every problem found in it.
func parseOffering(i int, m map[string]any) (o Offering, warnings []string, errs Errors) {
	name, _ := m["name"].(string)
	label := offeringLabel(i, name)
	r := newReader(m, fmt.Sprintf("offerings[%d].", i), label)
	o = Offering{
		Index:             i,
		Name:              r.str("name", ""),
		BackendType:       strings.ToLower(r.str("backend_type", "")),
		VerifySSL:         r.boolean("verify_ssl", true),
		OrderBackend:      r.str("order_processing_backend", ""),
		MembershipBackend: r.str("membership_sync_backend", ""),
		ReportingBackend:  r.str("reporting_backend", ""),
		BackendSettings:   r.mapping("backend_settings"),
	}
	if o.BackendSettings == nil {
		o.BackendSettings = backends.Settings{}
	}
	if o.Name == "" {
		r.fail("name", "is required")
	}
	if o.BackendType == "" {
		r.fail("backend_type", "is required")
	}
	o.APIURL = parseAPIURL(r)
	o.UUID = r.str("waldur_offering_uuid", "")
	if !uuidPattern.MatchString(o.UUID) {
		r.fail("waldur_offering_uuid", "must be a UUID (32 hex digits, dashes optional), got %q", o.UUID)
	}
	parseAuth(r, &o)
	parseStompKeys(r, &o)
	warnings = append(ignoredOfferingKeys(r, o), checkStompKeys(r, o)...)
	parseCoreSettings(r, &o)
	o.Components = parseComponents(r, r.mapping("backend_components"))
	warnings = append(warnings, unknownWarnings(r.unknown())...)
	return o, warnings, r.errs
}

// parseAPIURL validates waldur_api_url and returns the base without the /api suffix. The
// incumbent stripped any trailing run of the characters "/", "a", "p", "i" (Python rstrip),
// which mangled hosts like "host.ai"; this removes exactly one "/api" path suffix.
func parseAPIURL(r *reader) string {
	raw := strings.TrimSpace(r.str("waldur_api_url", ""))
	if raw == "" {
		r.fail("waldur_api_url", "is required")
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		r.fail("waldur_api_url", "must be an http:// or https:// URL such as https://waldur.example.com/api/, got %q", raw)
		return ""
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		r.fail("waldur_api_url", "must not contain credentials, a query or a fragment")
		return ""
	}
	path := strings.TrimRight(u.Path, "/")
	path = strings.TrimSuffix(path, "/api")
	u.Path = path
	return strings.TrimRight(u.String(), "/")
}

func parseAuth(r *reader, o *Offering) {
	token := r.str("waldur_api_token", "")
	tokenURL := r.str("oidc_token_url", "")
	clientID := r.str("oidc_client_id", "")
	clientSecret := r.str("oidc_client_secret", "")
	anyOIDC := tokenURL != "" || clientID != "" || clientSecret != ""
	switch {
	case anyOIDC:
		if tokenURL == "" || clientID == "" || clientSecret == "" {
			missing := "oidc_token_url"
			if tokenURL != "" {
				missing = "oidc_client_id"
				if clientID != "" {
					missing = "oidc_client_secret"
				}
			}
			r.fail(missing, "is required when OIDC client credentials are used (set oidc_token_url, oidc_client_id and oidc_client_secret)")
			return
		}
		if !hasHTTPScheme(tokenURL) {
			r.fail("oidc_token_url", "must be an http:// or https:// URL")
			return
		}
		o.OIDC = &OIDC{TokenURL: tokenURL, ClientID: clientID, ClientSecret: secret.New(clientSecret)}
		if token != "" {
			o.Token = secret.New(token) // OIDC wins; the static token is kept for nothing else
		}
	case token == "":
		r.fail("waldur_api_token", "is required (or configure oidc_token_url, oidc_client_id and oidc_client_secret)")
	default:
		o.Token = secret.New(token)
	}
}

// ignoredOfferingKeys warns about incumbent keys that are set but not acted on.
func ignoredOfferingKeys(r *reader, o Offering) []string {
	var w []string
	warn := func(key, why string) { w = append(w, r.prefix+key+": "+why) }
	if ub := r.str("username_management_backend", "base"); ub != "base" {
		warn("username_management_backend", fmt.Sprintf("%q is not implemented; usernames are taken from Waldur as they are", ub))
	}
	if r.boolean("resource_import_enabled", false) {
		warn("resource_import_enabled", "accepted but not implemented")
	}
	if r.boolean("username_reconciliation_enabled", false) {
		warn("username_reconciliation_enabled", "accepted but not implemented")
	}
	return w
}

func parseCoreSettings(r *reader, o *Offering) {
	s := newReader(o.BackendSettings, r.prefix+"backend_settings.", r.label)
	o.AllocationPrefix = s.str("allocation_prefix", "")
	o.ProjectPrefix = s.str("project_prefix", "")
	o.CustomerPrefix = s.str("customer_prefix", "")
	o.CheckBackendIDUniqueness = s.boolean("check_backend_id_uniqueness", false)
	o.CheckAllOfferings = s.boolean("check_all_offerings", false)
	o.BackendIDMaxRetries = s.integer("backend_id_max_retries", 50)
	o.ClusterName = s.str("cluster_name", "")
	if o.BackendIDMaxRetries < 1 || o.BackendIDMaxRetries > 1000 {
		s.fail("backend_id_max_retries", "must be between 1 and 1000")
	}
	r.absorb(s.errs)
}

func checkDuplicates(offs []Offering) Errors {
	var errs Errors
	seen := map[string]int{}
	for _, o := range offs {
		key := strings.ToLower(strings.ReplaceAll(o.UUID, "-", ""))
		if prev, dup := seen[key]; dup {
			errs = append(errs, &Error{Offering: o.Label(), Key: fmt.Sprintf("offerings[%d].waldur_offering_uuid", o.Index),
				Problem: fmt.Sprintf("the same offering is already configured as offerings[%d]", prev)})
			continue
		}
		seen[key] = o.Index
	}
	return errs
}
