package waldursim

import (
	"fmt"
	"time"
)

// Seeding methods store an object and return the stored copy, with UUIDs, slugs and
// timestamps filled in when empty. UUIDs may be given with or without dashes. A reference to
// something that does not exist, or a malformed UUID, panics: it is a mistake in the test.

// AddCustomer stores a customer.
func (s *Server) AddCustomer(c Customer) Customer {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.UUID = s.st.idOr(c.UUID)
	if c.Slug == "" {
		c.Slug = uniqueSlug(slugify(c.Name), func(x string) bool {
			return anyOf(s.st.customers.all(), func(o *Customer) bool { return o.Slug == x })
		})
	}
	s.st.customers.put(c.UUID, &c)
	return c
}

// AddProject stores a project of an existing customer.
func (s *Server) AddProject(p Project) Project {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.UUID = s.st.idOr(p.UUID)
	p.CustomerUUID = s.st.mustRef("customer", p.CustomerUUID, &s.st.customers)
	if p.Slug == "" {
		p.Slug = uniqueSlug(slugify(p.Name), func(x string) bool {
			return anyOf(s.st.projects.all(), func(o *Project) bool { return o.Slug == x })
		})
	}
	s.st.projects.put(p.UUID, &p)
	return p
}

// AddUser stores a user.
func (s *Server) AddUser(u User) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	u.UUID = s.st.idOr(u.UUID)
	s.st.users.put(u.UUID, &u)
	return u
}

// AddProjectMember gives a user a role (e.g. "PROJECT.MEMBER") in a project.
func (s *Server) AddProjectMember(projectUUID, userUUID, role string) {
	defer s.flushEvents()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.st.mustRef("project", projectUUID, &s.st.projects)
	u := s.st.mustRef("user", userUUID, &s.st.users)
	if s.st.members[p] == nil {
		s.st.members[p] = map[string]string{}
	}
	s.st.members[p][u] = role
	s.st.emitRole(p, u, role, true)
}

// RemoveProjectMember removes a user's role in a project.
func (s *Server) RemoveProjectMember(projectUUID, userUUID string) {
	defer s.flushEvents()
	s.mu.Lock()
	defer s.mu.Unlock()
	p, _ := normUUID(projectUUID)
	u, _ := normUUID(userUUID)
	role, had := s.st.members[p][u]
	delete(s.st.members[p], u)
	if had {
		s.st.emitRole(p, u, role, false)
	}
}

// AddOffering stores an offering of an existing customer; component and plan UUIDs are filled.
func (s *Server) AddOffering(o Offering) Offering {
	s.mu.Lock()
	defer s.mu.Unlock()
	o.UUID = s.st.idOr(o.UUID)
	o.CustomerUUID = s.st.mustRef("customer", o.CustomerUUID, &s.st.customers)
	if o.Slug == "" {
		o.Slug = slugify(o.Name)
	}
	if o.Type == "" {
		o.Type = "Marketplace.Slurm"
	}
	o.Components = append([]Component(nil), o.Components...)
	for i := range o.Components {
		o.Components[i].UUID = s.st.idOr(o.Components[i].UUID)
	}
	o.Plans = append([]Plan(nil), o.Plans...)
	for i := range o.Plans {
		o.Plans[i].UUID = s.st.idOr(o.Plans[i].UUID)
		o.Plans[i].Quotas = cloneFloats(o.Plans[i].Quotas)
	}
	o.PluginOptions = cloneMap(o.PluginOptions)
	s.st.offerings.put(o.UUID, &o)
	return copyOffering(&o)
}

// AddServiceProvider registers an existing customer as a service provider.
func (s *Server) AddServiceProvider(sp ServiceProvider) ServiceProvider {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp.UUID = s.st.idOr(sp.UUID)
	sp.CustomerUUID = s.st.mustRef("customer", sp.CustomerUUID, &s.st.customers)
	s.st.providers.put(sp.UUID, &sp)
	return sp
}

// AddSSHKey stores a public key of an existing user.
func (s *Server) AddSSHKey(k SSHKey) SSHKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	k.UUID = s.st.idOr(k.UUID)
	k.UserUUID = s.st.mustRef("user", k.UserUUID, &s.st.users)
	s.st.keys.put(k.UUID, &k)
	return k
}

// AddOfferingUser links an existing user to an existing offering (State default OK).
func (s *Server) AddOfferingUser(ou OfferingUser) OfferingUser {
	defer s.flushEvents()
	s.mu.Lock()
	defer s.mu.Unlock()
	ou.UUID = s.st.idOr(ou.UUID)
	ou.OfferingUUID = s.st.mustRef("offering", ou.OfferingUUID, &s.st.offerings)
	ou.UserUUID = s.st.mustRef("user", ou.UserUUID, &s.st.users)
	if ou.State == "" {
		ou.State = OUOK
	}
	s.stamp(&ou.Created, &ou.Modified)
	s.st.offeringUsers.put(ou.UUID, &ou)
	s.st.emitOfferingUser(&ou, "create")
	return ou
}

// AddResource stores a resource of an existing offering and project (State default OK).
func (s *Server) AddResource(r Resource) Resource {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.addResource(&r, s)
	return copyResource(&r)
}

func (st *state) addResource(r *Resource, s *Server) {
	r.UUID = st.idOr(r.UUID)
	r.OfferingUUID = st.mustRef("offering", r.OfferingUUID, &st.offerings)
	r.ProjectUUID = st.mustRef("project", r.ProjectUUID, &st.projects)
	if r.PlanUUID != "" {
		r.PlanUUID = st.idOr(r.PlanUUID)
	}
	if r.State == "" {
		r.State = ResourceOK
	}
	if r.Slug == "" {
		r.Slug = uniqueSlug(slugify(r.Name), func(x string) bool {
			return anyOf(st.resources.all(), func(o *Resource) bool { return o.Slug == x })
		})
	}
	r.Limits, r.Attributes, r.BackendMetadata = cloneFloats(r.Limits), cloneMap(r.Attributes), cloneMap(r.BackendMetadata)
	s.stamp(&r.Created, &r.Modified)
	st.resources.put(r.UUID, r)
}

// AddOrder stores an order (State default pending-provider). A Create order without
// ResourceUUID creates its resource in state Creating, named Attributes["name"] or
// ResourceName; other orders need an existing ResourceUUID, whose project and offering they
// default to. An order stored as executing gets the resource effects of approval.
func (s *Server) AddOrder(o Order) Order {
	defer s.flushEvents()
	s.mu.Lock()
	defer s.mu.Unlock()
	o.UUID = s.st.idOr(o.UUID)
	if o.Type == "" {
		o.Type = OrderCreate
	}
	if o.PlanUUID != "" {
		o.PlanUUID = s.st.idOr(o.PlanUUID)
	}
	o.Limits, o.Attributes = cloneFloats(o.Limits), cloneMap(o.Attributes)
	if o.ResourceUUID == "" && o.Type == OrderCreate {
		name, _ := o.Attributes["name"].(string)
		if name == "" {
			name = o.ResourceName
		}
		r := &Resource{Name: name, OfferingUUID: o.OfferingUUID, ProjectUUID: o.ProjectUUID, PlanUUID: o.PlanUUID,
			State: ResourceCreating, Limits: o.Limits, Attributes: o.Attributes}
		s.st.addResource(r, s)
		o.ResourceUUID = r.UUID
	}
	r, found := s.st.resources.get(s.st.idOr(o.ResourceUUID))
	if !found {
		panic(fmt.Sprintf("waldursim: order refers to unknown resource %q", o.ResourceUUID))
	}
	o.ResourceUUID, o.ResourceName = r.UUID, r.Name
	if o.OfferingUUID == "" {
		o.OfferingUUID = r.OfferingUUID
	}
	if o.ProjectUUID == "" {
		o.ProjectUUID = r.ProjectUUID
	}
	o.OfferingUUID = s.st.mustRef("offering", o.OfferingUUID, &s.st.offerings)
	o.ProjectUUID = s.st.mustRef("project", o.ProjectUUID, &s.st.projects)
	s.stamp(&o.Created, &o.Modified)
	switch o.State {
	case "":
		o.State = OrderPendingProvider
		s.st.emitOrder(&o)
	case OrderExecuting:
		s.st.startExecuting(&o, o.Modified)
	default:
		s.st.emitOrder(&o)
	}
	s.st.orders.put(o.UUID, &o)
	return copyOrder(&o)
}

// AddComponentUsage stores a usage record of an existing resource; BillingPeriod defaults to
// the month of Date, Date to now.
func (s *Server) AddComponentUsage(u ComponentUsage) ComponentUsage {
	s.mu.Lock()
	defer s.mu.Unlock()
	u.UUID = s.st.idOr(u.UUID)
	u.ResourceUUID = s.st.mustRef("resource", u.ResourceUUID, &s.st.resources)
	if u.Date.IsZero() {
		u.Date = s.now()
	}
	if u.BillingPeriod == "" {
		u.BillingPeriod = period(u.Date)
	}
	s.stamp(&u.Created, &u.Modified)
	u.UserUsages = append([]UserUsage(nil), u.UserUsages...)
	for i := range u.UserUsages {
		u.UserUsages[i].UUID = s.st.idOr(u.UserUsages[i].UUID)
	}
	s.st.usages.put(u.UUID, &u)
	return copyUsage(&u)
}

// AddUserUsageLimit stores a per-user limit for a resource component.
func (s *Server) AddUserUsageLimit(l UserUsageLimit) UserUsageLimit {
	s.mu.Lock()
	defer s.mu.Unlock()
	l.UUID = s.st.idOr(l.UUID)
	l.ResourceUUID = s.st.mustRef("resource", l.ResourceUUID, &s.st.resources)
	l.OfferingUserUUID = s.st.mustRef("offering user", l.OfferingUserUUID, &s.st.offeringUsers)
	s.st.limits.put(l.UUID, &l)
	return l
}

// AddServiceAccount stores a project service account (State default OK).
func (s *Server) AddServiceAccount(a ServiceAccount) ServiceAccount {
	defer s.flushEvents()
	s.mu.Lock()
	defer s.mu.Unlock()
	a.UUID = s.st.idOr(a.UUID)
	a.ProjectUUID = s.st.mustRef("project", a.ProjectUUID, &s.st.projects)
	if a.State == "" {
		a.State = "OK"
	}
	s.st.serviceAccounts.put(a.UUID, &a)
	s.st.emitAccount("service_account", a.UUID, a.Username, a.ProjectUUID, a.State)
	return a
}

// AddCourseAccount stores a course account (State default OK).
func (s *Server) AddCourseAccount(a CourseAccount) CourseAccount {
	defer s.flushEvents()
	s.mu.Lock()
	defer s.mu.Unlock()
	a.UUID = s.st.idOr(a.UUID)
	a.ProjectUUID = s.st.mustRef("project", a.ProjectUUID, &s.st.projects)
	if a.UserUUID != "" {
		a.UserUUID = s.st.mustRef("user", a.UserUUID, &s.st.users)
	} else {
		a.UserUUID = s.st.newUUID()
	}
	if a.State == "" {
		a.State = "OK"
	}
	s.st.courseAccounts.put(a.UUID, &a)
	s.st.emitAccount("course_account", a.UUID, a.Username, a.ProjectUUID, a.State)
	return a
}

// stamp fills zero timestamps with the simulator clock.
func (s *Server) stamp(created, modified *time.Time) {
	if created.IsZero() {
		*created = s.now()
	}
	if modified.IsZero() {
		*modified = *created
	}
}

// mustRef normalizes a reference and checks the row exists.
func (st *state) mustRef(kind, id string, t interface{ has(string) bool }) string {
	n, ok := normUUID(id)
	if !ok || !t.has(n) {
		panic(fmt.Sprintf("waldursim: unknown %s %q", kind, id))
	}
	return n
}

func (t *table[T]) has(id string) bool {
	_, ok := t.rows[id]
	return ok
}

func anyOf[T any](xs []*T, pred func(*T) bool) bool {
	for _, x := range xs {
		if pred(x) {
			return true
		}
	}
	return false
}

// SetPluginOptions merges options into an offering's plugin_options (as an offering update
// would), e.g. enable_membership_sync_status.
func (s *Server) SetPluginOptions(offeringUUID string, options map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, _ := s.st.offerings.get(s.st.mustRef("offering", offeringUUID, &s.st.offerings))
	if o.PluginOptions == nil {
		o.PluginOptions = map[string]any{}
	}
	for k, v := range options {
		o.PluginOptions[k] = cloneAny(v)
	}
}
