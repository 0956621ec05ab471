package waldursim

import (
	"net/url"
	"strings"
)

// endpoint is the simulator's implementation of one contract operation; filters are the
// operation's query parameters it honours (page, page_size and field are handled for all).
type endpoint struct {
	fn      func(s *Server, c *call) result
	filters []string
	// unmodelled are field= values the simulator does not render: for them real Waldur
	// answers null where the 8.0.5 contract forbids null, so no conforming value exists.
	unmodelled []string
}

func (e endpoint) implements(name string) bool {
	for _, f := range e.filters {
		if f == name {
			return true
		}
	}
	return false
}

// endpoints maps every operationId of the trimmed contract to its handler.
var endpoints = map[string]endpoint{
	"users_me_retrieve":          {fn: (*Server).usersMe},
	"version_retrieve":           {fn: (*Server).version},
	"marketplace_plans_retrieve": {fn: (*Server).planRetrieve},
	"projects_list":              {fn: (*Server).projectsList, filters: []string{"slug", "name", "customer", "query"}},
	"backend_resources_list":     {fn: (*Server).backendResourcesList, filters: []string{"backend_id", "project_uuid", "offering_uuid", "name"}},
	"backend_resources_create":   {fn: (*Server).backendResourceCreate},

	"marketplace_service_providers_list":          {fn: (*Server).serviceProvidersList, filters: []string{"customer_uuid"}},
	"marketplace_service_providers_keys_list":     {fn: (*Server).serviceProviderKeys, filters: []string{"user_uuid", "name", "uuid"}},
	"marketplace_service_providers_projects_list": {fn: (*Server).serviceProviderProjects, filters: []string{"query", "slug", "name"}},

	"marketplace_provider_offerings_retrieve":                           {fn: (*Server).offeringRetrieve},
	"marketplace_provider_offerings_user_attribute_config_retrieve":     {fn: (*Server).attributeConfig},
	"marketplace_provider_offerings_create_offering_component":          {fn: (*Server).createComponent},
	"marketplace_provider_offerings_update_offering_component":          {fn: (*Server).updateComponent},
	"marketplace_provider_offerings_check_unique_backend_id":            {fn: (*Server).checkUniqueBackendID},
	"marketplace_provider_offerings_list_project_service_accounts_list": {fn: (*Server).serviceAccounts, filters: []string{"project_uuid"}},
	"marketplace_provider_offerings_list_course_accounts_list":          {fn: (*Server).courseAccounts, filters: []string{"project_uuid"}},

	"marketplace_orders_list":                {fn: (*Server).ordersList, filters: []string{"offering_uuid", "state", "type", "project_uuid", "resource_uuid", "customer_uuid"}},
	"marketplace_orders_retrieve":            {fn: (*Server).orderRetrieve},
	"marketplace_orders_approve_by_provider": {fn: (*Server).orderApprove},
	"marketplace_orders_reject_by_provider":  {fn: (*Server).orderReject},
	"marketplace_orders_set_state_done":      {fn: (*Server).orderDone},
	"marketplace_orders_set_state_erred":     {fn: (*Server).orderErred},
	"marketplace_orders_set_backend_id":      {fn: (*Server).orderSetBackendID},

	"marketplace_provider_resources_list":                 {fn: (*Server).providerResourcesList, filters: resourceFilters, unmodelled: resourceUnmodelled},
	"marketplace_resources_list":                          {fn: (*Server).providerResourcesList, filters: resourceFilters, unmodelled: resourceUnmodelled},
	"marketplace_provider_resources_retrieve":             {fn: (*Server).resourceRetrieve, unmodelled: resourceUnmodelled},
	"marketplace_provider_resources_team_list":            {fn: (*Server).resourceTeam},
	"marketplace_provider_resources_set_backend_id":       {fn: (*Server).resourceSetBackendID},
	"marketplace_provider_resources_set_limits":           {fn: (*Server).resourceSetLimits},
	"marketplace_provider_resources_set_backend_metadata": {fn: (*Server).resourceSetBackendMetadata},
	"marketplace_provider_resources_set_as_erred":         {fn: (*Server).resourceSetErred},
	"marketplace_provider_resources_set_as_ok":            {fn: (*Server).resourceSetOK},
	"marketplace_provider_resources_refresh_last_sync":    {fn: (*Server).resourceRefreshLastSync},

	"marketplace_offering_users_list":                              {fn: (*Server).offeringUsersList, filters: []string{"offering_uuid", "is_restricted", "state", "user_uuid", "user_username"}},
	"marketplace_offering_users_partial_update":                    {fn: (*Server).offeringUserPatch},
	"marketplace_offering_users_begin_creating":                    {fn: ouTransition(OUCreating, OURequested, OUErrorCreating)},
	"marketplace_offering_users_set_validation_complete":           {fn: ouTransition(OUOK, OUPendingAdditionalValidation, OUPendingAccountLinking)},
	"marketplace_offering_users_set_error_creating":                {fn: ouTransition(OUErrorCreating, OURequested, OUCreating, OUPendingAccountLinking, OUPendingAdditionalValidation)},
	"marketplace_offering_users_set_pending_account_linking":       {fn: ouTransition(OUPendingAccountLinking, OUCreating, OUErrorCreating, OUPendingAdditionalValidation)},
	"marketplace_offering_users_set_pending_additional_validation": {fn: ouTransition(OUPendingAdditionalValidation, OUCreating, OUErrorCreating, OUPendingAccountLinking)},

	"marketplace_component_usages_list":            {fn: (*Server).usagesList, filters: []string{"resource_uuid", "billing_period", "type", "offering_uuid", "project_uuid", "customer_uuid"}},
	"marketplace_component_usages_set_usage":       {fn: (*Server).setUsage},
	"marketplace_component_usages_set_user_usages": {fn: (*Server).setUserUsages},
	"marketplace_component_usages_set_user_usage":  {fn: (*Server).setUserUsage},
	"marketplace_component_user_usages_list":       {fn: (*Server).userUsagesList, filters: []string{"resource_uuid", "component_usage__billing_period", "username", "type", "offering_uuid"}},
	"component_user_usage_limits_list":             {fn: (*Server).userLimitsList, filters: []string{"resource_uuid", "username", "component_type", "offering_uuid"}},

	"marketplace_site_agent_identities_list":                        {fn: (*Server).identitiesList, filters: []string{"name", "offering_uuid"}},
	"marketplace_site_agent_identities_create":                      {fn: (*Server).identityCreate},
	"marketplace_site_agent_identities_update":                      {fn: (*Server).identityUpdate},
	"marketplace_site_agent_identities_register_service":            {fn: (*Server).registerService},
	"marketplace_site_agent_identities_register_event_subscription": {fn: (*Server).registerSubscription},
	"marketplace_site_agent_services_register_processor":            {fn: (*Server).registerProcessor},
	"event_subscriptions_create_queue":                              {fn: (*Server).createQueue},
	"event_subscriptions_destroy":                                   {fn: (*Server).deleteSubscription},

	// The contract addendum (addendum.go).
	"marketplace_provider_resource_projects_list":                 {fn: (*Server).resourceProjectsList, filters: []string{"resource_uuid", "name", "resource"}},
	"marketplace_provider_resource_projects_list_users_list":      {fn: (*Server).listUsers},
	"marketplace_provider_resource_projects_set_state_ok":         {fn: (*Server).resourceProjectSetOK},
	"marketplace_provider_resource_projects_set_state_erred":      {fn: (*Server).resourceProjectSetErred},
	"marketplace_provider_resources_list_users_list":              {fn: (*Server).listUsers},
	"marketplace_provider_resources_set_membership_sync_statuses": {fn: (*Server).setMembershipSyncStatuses},
}

var resourceUnmodelled = []string{"parent_name", "parent_offering_name", "parent_offering_slug",
	"parent_offering_uuid", "parent_uuid", "service_settings_uuid"}

var resourceFilters = []string{"offering_uuid", "state", "project_uuid", "backend_id", "customer_uuid", "name", "paused", "downscaled", "restrict_member_access"}

// filter answers "does this value pass the query parameter?" for list handlers; an absent
// parameter always passes.
type filter struct{ q url.Values }

func (f filter) values(name string) []string {
	var out []string
	for _, v := range f.q[name] {
		out = append(out, strings.Split(v, ",")...) // explode=false lists arrive comma-separated
	}
	return out
}

// uuid passes when the parameter is absent or one of its UUIDs equals id.
func (f filter) uuid(name, id string) bool {
	vs := f.values(name)
	if len(vs) == 0 {
		return true
	}
	for _, v := range vs {
		if n, ok := normUUID(v); ok && n == id {
			return true
		}
	}
	return false
}

// oneOf passes when the parameter is absent or one of its values equals v exactly.
func (f filter) oneOf(name, v string) bool {
	vs := f.values(name)
	if len(vs) == 0 {
		return true
	}
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// boolean passes when the parameter is absent or equals v ("true"/"false", as Django reads it).
func (f filter) boolean(name string, v bool) bool {
	raw := f.q.Get(name)
	if raw == "" {
		return true
	}
	return (raw == "true" || raw == "True" || raw == "1") == v
}

// contains passes when the parameter is absent or v contains it, case-insensitively.
func (f filter) contains(name, v string) bool {
	raw := f.q.Get(name)
	return raw == "" || strings.Contains(strings.ToLower(v), strings.ToLower(raw))
}
