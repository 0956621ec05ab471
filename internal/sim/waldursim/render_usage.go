package waldursim

import (
	"strconv"
)

// decimal renders an amount like DRF's DecimalField(decimal_places=2).
func decimal(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func (st *state) componentOf(offeringUUID, componentType string) *Component {
	if o, ok := st.offerings.get(offeringUUID); ok {
		for i := range o.Components {
			if o.Components[i].Type == componentType {
				return &o.Components[i]
			}
		}
	}
	return nil
}

// usageScope returns the resource of a usage and the scope around it.
func (st *state) usageScope(resourceUUID string) (*Resource, scope) {
	r, ok := st.resources.get(resourceUUID)
	if !ok {
		r = &Resource{UUID: resourceUUID}
	}
	return r, st.scopeOf(r.OfferingUUID, r.ProjectUUID, r.PlanUUID)
}

func (st *state) renderUsage(c *call, u *ComponentUsage) map[string]any {
	r, sc := st.usageScope(u.ResourceUUID)
	comp := st.componentOf(r.OfferingUUID, u.Type)
	if comp == nil {
		comp = &Component{Type: u.Type}
	}
	return map[string]any{
		"uuid": u.UUID, "created": ts(u.Created), "description": u.Description,
		"type": u.Type, "name": comp.Name, "measured_unit": comp.MeasuredUnit,
		"usage": decimal(u.Amount), "date": ts(u.Date), "recurring": false,
		"resource_name": r.Name, "resource_uuid": r.UUID,
		"offering_name": sc.offering.Name, "offering_uuid": sc.offering.UUID,
		"project_name": sc.project.Name, "project_uuid": sc.project.UUID,
		"customer_name": sc.customer.Name, "customer_uuid": sc.customer.UUID,
		"billing_period": u.BillingPeriod, "modified_by": nil,
	}
}

func (st *state) renderUserUsage(c *call, u *ComponentUsage, uu *UserUsage) map[string]any {
	r, sc := st.usageScope(u.ResourceUUID)
	comp := st.componentOf(r.OfferingUUID, u.Type)
	if comp == nil {
		comp = &Component{Type: u.Type}
	}
	var user any
	if uu.OfferingUserUUID != "" {
		user = c.url("marketplace-offering-users/" + uu.OfferingUserUUID + "/")
	}
	return map[string]any{
		"uuid": uu.UUID, "user": user, "username": uu.Username,
		"component_usage": c.url("marketplace-component-usages/" + u.UUID + "/"),
		"usage":           decimal(uu.Usage), "measured_unit": comp.MeasuredUnit, "description": "",
		"created": ts(u.Created), "modified": ts(u.Modified), "backend_id": "",
		"resource_name": r.Name, "resource_uuid": r.UUID,
		"offering_name": sc.offering.Name, "offering_uuid": sc.offering.UUID,
		"project_name": sc.project.Name, "project_uuid": sc.project.UUID,
		"customer_name": sc.customer.Name, "customer_uuid": sc.customer.UUID,
		"component_type": u.Type, "date": ts(u.Date), "billing_period": u.BillingPeriod,
	}
}

func (st *state) renderUserLimit(c *call, l *UserUsageLimit) map[string]any {
	r, _ := st.usageScope(l.ResourceUUID)
	comp := st.componentOf(r.OfferingUUID, l.ComponentType)
	compUUID := ""
	if comp != nil {
		compUUID = comp.UUID
	}
	return map[string]any{
		"url": c.url("component-user-usage-limits/" + l.UUID + "/"), "uuid": l.UUID,
		"resource":  c.url("marketplace-resources/" + l.ResourceUUID + "/"),
		"component": compUUID, "component_type": l.ComponentType,
		"user":  c.url("marketplace-offering-users/" + l.OfferingUserUUID + "/"),
		"limit": decimal(l.Limit),
	}
}

func (st *state) renderIdentity(c *call, id *Identity) map[string]any {
	services := []any{}
	for _, svc := range st.services.all() {
		if svc.IdentityUUID == id.UUID {
			services = append(services, map[string]any{
				"uuid": svc.UUID, "url": c.url("marketplace-site-agent-services/" + svc.UUID + "/"),
				"name": svc.Name, "mode": orNull(svc.Mode), "state": svc.State, "statistics": map[string]any{},
				"created": ts(svc.Created), "modified": ts(svc.Modified),
			})
		}
	}
	lastRestarted := id.LastRestarted
	if lastRestarted == "" {
		lastRestarted = ts(id.Created)
	}
	return map[string]any{
		"uuid": id.UUID, "url": c.url("marketplace-site-agent-identities/" + id.UUID + "/"),
		"offering": id.OfferingUUID, "name": id.Name, "version": orNull(id.Version),
		"dependencies": cloneAny(id.Dependencies), "config_file_path": orNull(id.ConfigFilePath),
		"config_file_content": orNull(id.ConfigFileContent), "last_restarted": lastRestarted,
		"created": ts(id.Created), "modified": ts(id.Modified), "services": services,
	}
}

func (st *state) renderService(c *call, svc *agentService) map[string]any {
	identityName := ""
	if id, ok := st.identities.get(svc.IdentityUUID); ok {
		identityName = id.Name
	}
	processors := make([]any, 0, len(svc.Processors))
	for _, p := range svc.Processors {
		processors = append(processors, map[string]any{
			"uuid": p.UUID, "url": c.url("marketplace-site-agent-processors/" + p.UUID + "/"),
			"name": p.Name, "last_run": nil, "backend_type": p.BackendType,
			"backend_version": orNull(p.BackendVersion), "created": ts(p.Created), "modified": ts(p.Modified),
		})
	}
	return map[string]any{
		"uuid": svc.UUID, "url": c.url("marketplace-site-agent-services/" + svc.UUID + "/"),
		"identity": svc.IdentityUUID, "identity_name": identityName, "name": svc.Name,
		"mode": orNull(svc.Mode), "state": svc.State, "statistics": map[string]any{},
		"created": ts(svc.Created), "modified": ts(svc.Modified), "processors": processors,
	}
}

func renderProcessor(c *call, svc *agentService, p *agentProcessor) map[string]any {
	return map[string]any{
		"uuid": p.UUID, "url": c.url("marketplace-site-agent-processors/" + p.UUID + "/"),
		"service": svc.UUID, "service_name": svc.Name, "name": p.Name, "last_run": nil,
		"backend_type": p.BackendType, "backend_version": orNull(p.BackendVersion),
		"created": ts(p.Created), "modified": ts(p.Modified),
	}
}

func (st *state) renderSubscription(c *call, sub *EventSubscription) map[string]any {
	me := st.me.User
	return map[string]any{
		"uuid": sub.UUID, "url": c.url("event-subscriptions/" + sub.UUID + "/"),
		"description": sub.Description, "user": c.url("users/" + me.UUID + "/"),
		"user_uuid": me.UUID, "user_username": me.Username, "user_full_name": me.FullName,
		"observable_objects": []any{map[string]any{"object_type": sub.ObjectType}},
		"created":            ts(c.now), "modified": ts(c.now), "source_ip": nil,
	}
}

func renderQueue(c *call, sub *EventSubscription, q *EventQueue) map[string]any {
	return map[string]any{
		"uuid": q.UUID, "url": c.url("event-subscription-queues/" + q.UUID + "/"),
		"event_subscription":      c.url("event-subscriptions/" + sub.UUID + "/"),
		"event_subscription_uuid": sub.UUID, "offering_uuid": q.OfferingUUID,
		"object_type": q.ObjectType, "queue_name": q.QueueName, "vhost": q.VHost, "created": ts(c.now),
	}
}

func (st *state) renderBackendResource(c *call, b *BackendResource) map[string]any {
	sc := st.scopeOf(b.OfferingUUID, b.ProjectUUID, "")
	return map[string]any{
		"url": c.url("backend-resources/" + b.UUID + "/"), "uuid": b.UUID, "name": b.Name,
		"created": ts(b.Created), "modified": ts(b.Modified),
		"project": b.ProjectUUID, "project_name": sc.project.Name, "project_url": c.url("projects/" + b.ProjectUUID + "/"),
		"offering": b.OfferingUUID, "offering_name": sc.offering.Name,
		"offering_url": c.url("marketplace-provider-offerings/" + b.OfferingUUID + "/"),
		"backend_id":   b.BackendID, "backend_metadata": cloneAny(b.BackendMetadata),
	}
}
