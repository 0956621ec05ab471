package waldursim

import (
	"fmt"
	"strconv"
	"time"
)

// Renderers build the JSON objects of the contract from stored state. They run under the
// state lock and deep-copy every map so responses never alias stored state.

// categoryUUID is the single marketplace category every simulated offering belongs to.
const categoryUUID = "5a1c0000000040008000000000000001"

func ts(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z07:00") }

func nullableTS(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return ts(t)
}

func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func objectOrEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return cloneMap(m)
}

func numbers(m map[string]float64) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// context objects of a resource or order; missing ones are zero values.
type scope struct {
	offering *Offering
	provider *Customer
	project  *Project
	customer *Customer
	plan     *Plan
}

func (st *state) scopeOf(offeringUUID, projectUUID, planUUID string) scope {
	sc := scope{offering: &Offering{}, provider: &Customer{}, project: &Project{}, customer: &Customer{}}
	if o, ok := st.offerings.get(offeringUUID); ok {
		sc.offering = o
		if c, ok := st.customers.get(o.CustomerUUID); ok {
			sc.provider = c
		}
		for i := range o.Plans {
			if o.Plans[i].UUID == planUUID {
				sc.plan = &o.Plans[i]
			}
		}
	}
	if p, ok := st.projects.get(projectUUID); ok {
		sc.project = p
		if c, ok := st.customers.get(p.CustomerUUID); ok {
			sc.customer = c
		}
	}
	return sc
}

// addScope writes the offering/provider/plan/project/customer fields shared by orders and
// resources.
func addScope(c *call, m map[string]any, sc scope) {
	m["offering"] = c.url("marketplace-public-offerings/" + sc.offering.UUID + "/")
	m["offering_uuid"] = sc.offering.UUID
	m["offering_name"] = sc.offering.Name
	m["offering_type"] = sc.offering.Type
	m["offering_description"] = ""
	m["offering_shared"] = true
	m["offering_billable"] = true
	m["offering_plugin_options"] = objectOrEmpty(sc.offering.PluginOptions)
	m["provider_name"] = sc.provider.Name
	m["provider_uuid"] = sc.provider.UUID
	m["provider_slug"] = sc.provider.Slug
	m["category_title"] = "Simulated"
	m["category_uuid"] = categoryUUID
	m["category_icon"], m["offering_image"], m["offering_thumbnail"] = "", "", ""
	m["plan_uuid"], m["plan_name"], m["plan_description"], m["plan_unit"] = nil, nil, nil, nil
	if sc.plan != nil {
		m["plan"] = c.url("marketplace-public-plans/" + sc.plan.UUID + "/")
		m["plan_uuid"], m["plan_name"], m["plan_description"], m["plan_unit"] = sc.plan.UUID, sc.plan.Name, "", "month"
	}
	m["project_uuid"] = sc.project.UUID
	m["project_name"] = sc.project.Name
	m["project_slug"] = sc.project.Slug
	m["project_description"] = sc.project.Description
	m["customer_uuid"] = sc.customer.UUID
	m["customer_name"] = sc.customer.Name
	m["customer_slug"] = sc.customer.Slug
}

func (st *state) renderOrder(c *call, o *Order) map[string]any {
	sc := st.scopeOf(o.OfferingUUID, o.ProjectUUID, o.PlanUUID)
	m := map[string]any{
		"uuid": o.UUID, "url": c.url("marketplace-orders/" + o.UUID + "/"),
		"created": ts(o.Created), "modified": ts(o.Modified),
		"type": o.Type, "state": o.State,
		"attributes": objectOrEmpty(o.Attributes), "limits": numbers(o.Limits),
		"resource_uuid": nil, "resource_type": nil, "resource_name": o.ResourceName,
		"marketplace_resource_uuid": o.ResourceUUID, "backend_id": o.BackendID,
		"error_message": o.ErrorMessage, "error_traceback": o.ErrorTraceback,
		"provider_rejection_comment": o.ProviderRejectionComment, "consumer_rejection_comment": "",
		"slug": "order-" + o.UUID[:8], "output": "", "cost": nil,
		"can_terminate": false, "fixed_price": 0, "activation_price": 0,
		"old_cost_estimate": 0, "new_cost_estimate": nil,
		"created_by_username": "requester", "created_by_full_name": "Order Requester",
		"created_by_civil_number": nil, "created_by_email": nil,
		"completed_at": nil, "request_comment": nil, "start_date": nil, "callback_url": nil,
		"consumer_reviewed_by": nil, "provider_reviewed_by": nil, "provider_reviewed_at": nil,
		"termination_comment": nil, "order_subtype": nil, "issue": nil,
		"provider_message": "", "consumer_message": "", "provider_message_url": "",
		"attachment": nil, "provider_message_attachment": nil, "consumer_message_attachment": nil,
		"consumer_reviewed_at": nil, "consumer_reviewed_by_full_name": nil, "consumer_reviewed_by_username": nil,
		"provider_reviewed_by_full_name": nil, "provider_reviewed_by_username": nil,
		"created_by_organization": nil, "created_by_organization_registry_code": nil,
		"old_plan_name": nil, "old_plan_uuid": nil, "new_plan_name": nil, "new_plan_uuid": nil,
	}
	if r, ok := st.resources.get(o.ResourceUUID); ok {
		m["resource_name"] = r.Name
	}
	if o.State == OrderDone {
		m["completed_at"] = ts(o.Modified)
	}
	addScope(c, m, sc)
	return m
}

func (st *state) renderResource(c *call, r *Resource) map[string]any {
	sc := st.scopeOf(r.OfferingUUID, r.ProjectUUID, r.PlanUUID)
	lastSync := r.LastSync
	if lastSync.IsZero() {
		lastSync = r.Created
	}
	m := map[string]any{
		"uuid": r.UUID, "url": c.url("marketplace-resources/" + r.UUID + "/"),
		"created": ts(r.Created), "modified": ts(r.Modified),
		"name": r.Name, "slug": r.Slug, "description": "", "state": r.State,
		"backend_id": r.BackendID, "effective_id": "",
		"resource_uuid": nil, "resource_type": nil,
		"attributes": objectOrEmpty(r.Attributes), "limits": numbers(r.Limits),
		"current_usages": st.currentUsages(r.UUID), "limit_usage": map[string]any{},
		"backend_metadata": objectOrEmpty(r.BackendMetadata),
		"offering_slug":    sc.offering.Slug, "offering_backend_id": sc.offering.BackendID,
		"offering_state": "Active", "offering_components": renderComponents(sc.offering.Components),
		"project": c.url("projects/" + sc.project.UUID + "/"), "project_end_date": orNull(sc.project.EndDate),
		"end_date": orNull(r.EndDate), "end_date_requested_by": nil, "username": nil,
		"paused": r.Paused, "downscaled": r.Downscaled, "restrict_member_access": r.RestrictMemberAccess,
		"is_usage_based": hasBilling(sc.offering, "usage"), "is_limit_based": hasBilling(sc.offering, "limit"),
		"can_terminate": r.State == ResourceOK || r.State == ResourceErred,
		"endpoints":     []any{}, "available_actions": []any{},
		"error_message": r.ErrorMessage, "error_traceback": r.ErrorTraceback,
		"options": nil, "last_sync": ts(lastSync),
		"order_in_progress": nil, "creation_order": nil, "renewal_date": nil,
		"user_requires_reconsent": false, "report": []any{}, "scope": "", "project_end_date_requested_by": "",
	}
	addScope(c, m, sc)
	return m
}

// currentUsages are the latest usage amounts per component type of a resource.
func (st *state) currentUsages(resourceUUID string) map[string]any {
	out := map[string]any{}
	latest := map[string]string{}
	for _, u := range st.usages.all() {
		if u.ResourceUUID == resourceUUID && u.BillingPeriod >= latest[u.Type] {
			latest[u.Type] = u.BillingPeriod
			out[u.Type] = u.Amount
		}
	}
	return out
}

func hasBilling(o *Offering, billingType string) bool {
	for _, comp := range o.Components {
		if comp.BillingType == billingType {
			return true
		}
	}
	return false
}

func renderComponents(comps []Component) []any {
	out := make([]any, 0, len(comps))
	for _, comp := range comps {
		out = append(out, renderComponent(comp))
	}
	return out
}

func renderComponent(comp Component) map[string]any {
	factor := comp.UnitFactor
	if factor == 0 {
		factor = 1
	}
	var limit any
	if comp.LimitAmount != nil {
		limit = *comp.LimitAmount
	}
	return map[string]any{
		"uuid": comp.UUID, "type": comp.Type, "name": comp.Name, "description": comp.Description,
		"billing_type": comp.BillingType, "measured_unit": comp.MeasuredUnit,
		"unit_factor": factor, "limit_period": orNull(comp.LimitPeriod), "limit_amount": limit,
		"article_code": "", "max_value": nil, "min_value": nil, "max_available_limit": nil,
		"is_boolean": false, "default_limit": nil, "factor": nil, "is_builtin": false,
		"is_prepaid": comp.IsPrepaid, "overage_component": nil,
		"min_prepaid_duration": nil, "max_prepaid_duration": nil,
	}
}

func (st *state) renderOffering(c *call, o *Offering) map[string]any {
	provider, _ := st.customers.get(o.CustomerUUID)
	if provider == nil {
		provider = &Customer{}
	}
	partitions := make([]any, 0, len(o.Partitions))
	for i, name := range o.Partitions {
		partitions = append(partitions, map[string]any{
			"uuid": derivedUUID(o.UUID, i), "partition_name": name, "qos": "",
			"exclusive_topo": false, "exclusive_user": false, "req_resv": false,
		})
	}
	plans := make([]any, 0, len(o.Plans))
	for i := range o.Plans {
		plans = append(plans, st.renderPlan(c, o, &o.Plans[i]))
	}
	return map[string]any{
		"uuid": o.UUID, "url": c.url("marketplace-provider-offerings/" + o.UUID + "/"),
		"created": ts(time.Unix(0, 0)), "name": o.Name, "slug": o.Slug, "description": "",
		"customer": c.url("customers/" + provider.UUID + "/"), "customer_uuid": provider.UUID,
		"customer_name": provider.Name, "project": nil, "project_uuid": nil, "project_name": nil,
		"category": c.url("marketplace-categories/" + categoryUUID + "/"), "category_uuid": categoryUUID,
		"category_title": "Simulated", "attributes": map[string]any{},
		"components": renderComponents(o.Components), "plugin_options": objectOrEmpty(o.PluginOptions),
		"state": "Active", "type": o.Type, "shared": true, "billable": true, "backend_id": o.BackendID,
		"partitions": partitions, "plans": plans, "endpoints": []any{}, "order_count": 0,
		"scope_uuid": nil, "scope_name": nil, "scope_state": nil, "scope_error_message": nil,
		"thumbnail": nil, "image": nil, "latitude": nil, "longitude": nil,
		"parent_uuid": nil, "parent_name": nil, "parent_description": nil,
		"full_description": "", "privacy_policy_link": "", "access_url": "", "vendor_details": "",
		"getting_started": "", "integration_guide": "", "datacite_doi": "", "paused_reason": "",
		"billing_type_classification": "", "country": "", "scope": "", "citation_count": 0,
		"software_catalogs": []any{}, "roles": []any{}, "screenshots": []any{}, "files": []any{},
		"quotas": []any{}, "organization_groups": []any{}, "tags": []any{},
		"options":          map[string]any{"order": []any{}, "options": map[string]any{}},
		"resource_options": map[string]any{"order": []any{}, "options": map[string]any{}},
		"secret_options":   map[string]any{}, "service_attributes": map[string]any{},
		"backend_id_rules": map[string]any{}, "backend_metadata": map[string]any{},
		"has_compliance_requirements": false, "compliance_checklist": nil, "integration_status": nil,
		"google_calendar_is_public": nil, "google_calendar_link": nil,
		"total_customers": nil, "total_cost": nil, "total_cost_estimated": nil,
	}
}

func (st *state) renderPlan(c *call, o *Offering, p *Plan) map[string]any {
	components := make([]any, 0, len(o.Components))
	prices := map[string]any{}
	for _, comp := range o.Components {
		components = append(components, map[string]any{
			"type": comp.Type, "name": comp.Name, "measured_unit": comp.MeasuredUnit,
			"amount": p.Quotas[comp.Type], "price": "0.00", "future_price": nil,
			"discount_threshold": nil, "discount_rate": nil,
		})
		prices[comp.Type] = 0
	}
	count := 0
	for _, r := range st.resources.all() {
		if r.PlanUUID == p.UUID {
			count++
		}
	}
	return map[string]any{
		"uuid": p.UUID, "url": c.url("marketplace-public-plans/" + p.UUID + "/"),
		"name": p.Name, "description": "", "article_code": "", "max_amount": nil,
		"archived": false, "is_active": true, "unit_price": "0.00", "unit": "month",
		"init_price": 0, "switch_price": 0, "backend_id": "", "organization_groups": []any{},
		"components": components, "offering": c.url("marketplace-provider-offerings/" + o.UUID + "/"),
		"prices": prices, "future_prices": map[string]any{}, "quotas": numbers(p.Quotas),
		"resources_count": count, "plan_type": "limit", "minimal_price": 0,
	}
}

// derivedUUID makes a stable UUID for the i-th sub-object (e.g. a partition) of a stored object.
func derivedUUID(parent string, i int) string {
	tail, _ := strconv.ParseUint(parent[28:], 16, 16)
	return fmt.Sprintf("%s%04x", parent[:28], (tail+uint64(i)+1)&0xffff)
}
