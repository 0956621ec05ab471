package main

// operation names one path + method of the Waldur contract.
type operation struct {
	Method string // lower case, as in the OpenAPI document
	Path   string
}

// keptOperations are the Waldur endpoints the site agent calls that exist in the 8.0.5 contract
// (spec/core.md §8). The service-provider sub-resources use {service_provider_uuid} in 8.0.5.
var keptOperations = []operation{
	{"get", "/api/users/me/"},
	{"get", "/api/version/"},

	{"get", "/api/marketplace-provider-offerings/{uuid}/"},
	{"get", "/api/marketplace-provider-offerings/{uuid}/user-attribute-config/"},
	{"post", "/api/marketplace-provider-offerings/{uuid}/create_offering_component/"},
	{"post", "/api/marketplace-provider-offerings/{uuid}/update_offering_component/"},
	{"post", "/api/marketplace-provider-offerings/{uuid}/check_unique_backend_id/"},
	{"get", "/api/marketplace-provider-offerings/{uuid}/list_project_service_accounts/"},
	{"get", "/api/marketplace-provider-offerings/{uuid}/list_course_accounts/"},

	{"get", "/api/marketplace-service-providers/"},
	{"get", "/api/marketplace-service-providers/{service_provider_uuid}/keys/"},
	{"get", "/api/marketplace-service-providers/{service_provider_uuid}/projects/"},

	{"get", "/api/marketplace-orders/"},
	{"get", "/api/marketplace-orders/{uuid}/"},
	{"post", "/api/marketplace-orders/{uuid}/approve_by_provider/"},
	{"post", "/api/marketplace-orders/{uuid}/reject_by_provider/"},
	{"post", "/api/marketplace-orders/{uuid}/set_state_done/"},
	{"post", "/api/marketplace-orders/{uuid}/set_state_erred/"},
	{"post", "/api/marketplace-orders/{uuid}/set_backend_id/"},

	{"get", "/api/marketplace-plans/{uuid}/"},

	{"get", "/api/marketplace-provider-resources/"},
	{"get", "/api/marketplace-provider-resources/{uuid}/"},
	{"get", "/api/marketplace-provider-resources/{uuid}/team/"},
	{"post", "/api/marketplace-provider-resources/{uuid}/set_backend_id/"},
	{"post", "/api/marketplace-provider-resources/{uuid}/set_limits/"},
	{"post", "/api/marketplace-provider-resources/{uuid}/set_backend_metadata/"},
	{"post", "/api/marketplace-provider-resources/{uuid}/set_as_erred/"},
	{"post", "/api/marketplace-provider-resources/{uuid}/set_as_ok/"},
	{"post", "/api/marketplace-provider-resources/{uuid}/refresh_last_sync/"},
	{"get", "/api/marketplace-resources/"},

	{"get", "/api/marketplace-offering-users/"},
	{"patch", "/api/marketplace-offering-users/{uuid}/"},
	{"post", "/api/marketplace-offering-users/{uuid}/begin_creating/"},
	{"post", "/api/marketplace-offering-users/{uuid}/set_validation_complete/"},
	{"post", "/api/marketplace-offering-users/{uuid}/set_error_creating/"},
	{"post", "/api/marketplace-offering-users/{uuid}/set_pending_account_linking/"},
	{"post", "/api/marketplace-offering-users/{uuid}/set_pending_additional_validation/"},

	{"get", "/api/marketplace-component-usages/"},
	{"post", "/api/marketplace-component-usages/set_usage/"},
	{"post", "/api/marketplace-component-usages/{uuid}/set_user_usages/"},
	{"post", "/api/marketplace-component-usages/{uuid}/set_user_usage/"},
	{"get", "/api/marketplace-component-user-usages/"},
	{"get", "/api/component-user-usage-limits/"},

	{"get", "/api/marketplace-site-agent-identities/"},
	{"post", "/api/marketplace-site-agent-identities/"},
	{"put", "/api/marketplace-site-agent-identities/{uuid}/"},
	{"post", "/api/marketplace-site-agent-identities/{uuid}/register_service/"},
	{"post", "/api/marketplace-site-agent-identities/{uuid}/register_event_subscription/"},
	{"post", "/api/marketplace-site-agent-services/{uuid}/register_processor/"},
	{"post", "/api/event-subscriptions/{uuid}/create_queue/"},
	{"delete", "/api/event-subscriptions/{uuid}/"},

	{"get", "/api/projects/"},
	{"get", "/api/backend-resources/"},
	{"post", "/api/backend-resources/"},
}
