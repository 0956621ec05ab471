package waldursim

import (
	"net/http"
	"strings"
)

func (s *Server) usersMe(c *call) result {
	return ok(s.st.renderMe(c, s.opts.Staff))
}

func (s *Server) version(c *call) result {
	return ok(map[string]any{"version": s.opts.Version})
}

func (s *Server) planRetrieve(c *call) result {
	id := c.params["uuid"]
	for _, o := range s.st.offerings.all() {
		for i := range o.Plans {
			if o.Plans[i].UUID == id {
				return ok(s.st.renderPlan(c, o, &o.Plans[i]))
			}
		}
	}
	return notFound()
}

func (s *Server) projectsList(c *call) result {
	f := filter{c.query}
	var rows []*Project
	for _, p := range s.st.projects.all() {
		if f.oneOf("slug", p.Slug) && f.contains("name", p.Name) && f.contains("query", p.Name+" "+p.UUID) &&
			f.oneOf("customer", c.url("customers/"+p.CustomerUUID+"/")) {
			rows = append(rows, p)
		}
	}
	return lazy(rows, func(p *Project) map[string]any { return s.st.renderProject(c, p) })
}

func (s *Server) backendResourcesList(c *call) result {
	f := filter{c.query}
	var rows []*BackendResource
	for _, b := range s.st.backendResources.all() {
		if f.oneOf("backend_id", b.BackendID) && f.uuid("project_uuid", b.ProjectUUID) &&
			f.uuid("offering_uuid", b.OfferingUUID) && f.contains("name", b.Name) {
			rows = append(rows, b)
		}
	}
	return lazy(rows, func(b *BackendResource) map[string]any { return s.st.renderBackendResource(c, b) })
}

func (s *Server) backendResourceCreate(c *call) result {
	project, okP := normUUID(c.str("project"))
	offering, okO := normUUID(c.str("offering"))
	if _, found := s.st.projects.get(project); !okP || !found {
		return fieldError("project", "Object with uuid="+c.str("project")+" does not exist.")
	}
	if _, found := s.st.offerings.get(offering); !okO || !found {
		return fieldError("offering", "Object with uuid="+c.str("offering")+" does not exist.")
	}
	b := &BackendResource{
		UUID: s.st.newUUID(), Name: c.str("name"), ProjectUUID: project, OfferingUUID: offering,
		BackendID: c.str("backend_id"), BackendMetadata: map[string]any{},
		Created: c.now, Modified: c.now,
	}
	if md, present := c.body["backend_metadata"]; present && md != nil {
		b.BackendMetadata = cloneAny(md)
	}
	s.st.backendResources.put(b.UUID, b)
	return created(s.st.renderBackendResource(c, b))
}

func (s *Server) serviceProvidersList(c *call) result {
	f := filter{c.query}
	var rows []*ServiceProvider
	for _, sp := range s.st.providers.all() {
		if f.uuid("customer_uuid", sp.CustomerUUID) {
			rows = append(rows, sp)
		}
	}
	return lazy(rows, func(sp *ServiceProvider) map[string]any { return s.st.renderServiceProvider(c, sp) })
}

// providerProjects are the projects having resources of the provider's offerings, like
// Mastermind's service-provider projects.
func (st *state) providerProjects(sp *ServiceProvider) []*Project {
	seen := map[string]bool{}
	for _, r := range st.resources.all() {
		if o, ok := st.offerings.get(r.OfferingUUID); ok && o.CustomerUUID == sp.CustomerUUID {
			seen[r.ProjectUUID] = true
		}
	}
	var out []*Project
	for _, p := range st.projects.all() {
		if seen[p.UUID] {
			out = append(out, p)
		}
	}
	return out
}

func (s *Server) serviceProviderProjects(c *call) result {
	sp, found := s.st.providers.get(c.params["service_provider_uuid"])
	if !found {
		return notFound()
	}
	f := filter{c.query}
	var rows []*Project
	for _, p := range s.st.providerProjects(sp) {
		if f.oneOf("slug", p.Slug) && f.contains("name", p.Name) && matchesQuery(c.query.Get("query"), p) {
			rows = append(rows, p)
		}
	}
	return lazy(rows, func(p *Project) map[string]any { return s.st.renderProject(c, p) })
}

// matchesQuery is Waldur's project "query" filter: name contains it, or it is the UUID.
func matchesQuery(q string, p *Project) bool {
	if q == "" {
		return true
	}
	if id, ok := normUUID(q); ok {
		return id == p.UUID
	}
	return strings.Contains(strings.ToLower(p.Name), strings.ToLower(q))
}

// serviceProviderKeys lists the SSH keys of users who are members of the provider's projects.
func (s *Server) serviceProviderKeys(c *call) result {
	sp, found := s.st.providers.get(c.params["service_provider_uuid"])
	if !found {
		return notFound()
	}
	users := map[string]bool{}
	for _, p := range s.st.providerProjects(sp) {
		for u := range s.st.members[p.UUID] {
			users[u] = true
		}
	}
	f := filter{c.query}
	var rows []*SSHKey
	for _, k := range s.st.keys.all() {
		if users[k.UserUUID] && f.uuid("user_uuid", k.UserUUID) && f.uuid("uuid", k.UUID) && f.contains("name", k.Name) {
			rows = append(rows, k)
		}
	}
	return lazy(rows, func(k *SSHKey) map[string]any { return renderKey(c, k) })
}

// offering returns the offering of the path, or a 404 result.
func (s *Server) offering(c *call) (*Offering, *result) {
	o, found := s.st.offerings.get(c.params["uuid"])
	if !found {
		r := notFound()
		return nil, &r
	}
	return o, nil
}

func (s *Server) offeringRetrieve(c *call) result {
	o, miss := s.offering(c)
	if miss != nil {
		return *miss
	}
	return ok(s.st.renderOffering(c, o))
}

func (s *Server) attributeConfig(c *call) result {
	o, miss := s.offering(c)
	if miss != nil {
		return *miss
	}
	return ok(renderAttributeConfig(o))
}

// projectsOfOffering are the projects having a resource of the offering.
func (st *state) projectsOfOffering(offeringUUID string) map[string]bool {
	out := map[string]bool{}
	for _, r := range st.resources.all() {
		if r.OfferingUUID == offeringUUID {
			out[r.ProjectUUID] = true
		}
	}
	return out
}

func (s *Server) serviceAccounts(c *call) result {
	o, miss := s.offering(c)
	if miss != nil {
		return *miss
	}
	projects, f := s.st.projectsOfOffering(o.UUID), filter{c.query}
	var rows []*ServiceAccount
	for _, a := range s.st.serviceAccounts.all() {
		if projects[a.ProjectUUID] && f.uuid("project_uuid", a.ProjectUUID) {
			rows = append(rows, a)
		}
	}
	return lazy(rows, func(a *ServiceAccount) map[string]any { return s.st.renderServiceAccount(c, a) })
}

func (s *Server) courseAccounts(c *call) result {
	o, miss := s.offering(c)
	if miss != nil {
		return *miss
	}
	projects, f := s.st.projectsOfOffering(o.UUID), filter{c.query}
	var rows []*CourseAccount
	for _, a := range s.st.courseAccounts.all() {
		if projects[a.ProjectUUID] && f.uuid("project_uuid", a.ProjectUUID) {
			rows = append(rows, a)
		}
	}
	return lazy(rows, func(a *CourseAccount) map[string]any { return s.st.renderCourseAccount(c, a) })
}

func (s *Server) checkUniqueBackendID(c *call) result {
	o, miss := s.offering(c)
	if miss != nil {
		return *miss
	}
	id, all := c.str("backend_id"), c.boolean("check_all_offerings")
	unique := true
	for _, r := range s.st.resources.all() {
		if r.BackendID == id && (all || r.OfferingUUID == o.UUID) {
			unique = false
		}
	}
	return ok(map[string]any{"is_unique": unique, "is_valid_format": true, "errors": []any{}})
}

// createComponent adds a component; its type must be new in the offering.
func (s *Server) createComponent(c *call) result {
	o, miss := s.offering(c)
	if miss != nil {
		return *miss
	}
	typ := c.str("type")
	for _, comp := range o.Components {
		if comp.Type == typ {
			return nonFieldError("The fields offering, type must make a unique set.")
		}
	}
	comp := Component{UUID: s.st.newUUID()}
	applyComponent(&comp, c)
	o.Components = append(o.Components, comp)
	return noBody(http.StatusCreated)
}

func (s *Server) updateComponent(c *call) result {
	o, miss := s.offering(c)
	if miss != nil {
		return *miss
	}
	id, _ := normUUID(c.str("uuid"))
	for i := range o.Components {
		if o.Components[i].UUID != id {
			continue
		}
		for j, other := range o.Components {
			if j != i && other.Type == c.str("type") {
				return nonFieldError("The fields offering, type must make a unique set.")
			}
		}
		applyComponent(&o.Components[i], c)
		return noBody(http.StatusOK)
	}
	return fieldError("uuid", "Offering component with uuid "+c.str("uuid")+" is not found.")
}

func applyComponent(comp *Component, c *call) {
	comp.Type, comp.Name, comp.BillingType = c.str("type"), c.str("name"), c.str("billing_type")
	if c.has("measured_unit") {
		comp.MeasuredUnit = c.str("measured_unit")
	}
	if c.has("description") {
		comp.Description = c.str("description")
	}
	if c.has("limit_period") {
		comp.LimitPeriod = c.str("limit_period")
	}
	if c.has("unit_factor") {
		comp.UnitFactor, _ = c.body["unit_factor"].(float64)
	}
	if c.has("limit_amount") {
		comp.LimitAmount = nil
		if v, isNum := c.body["limit_amount"].(float64); isNum {
			comp.LimitAmount = &v
		}
	}
	if c.has("is_prepaid") {
		comp.IsPrepaid = c.boolean("is_prepaid")
	}
}
