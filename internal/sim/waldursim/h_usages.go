package waldursim

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// backfillMessage is Mastermind's refusal of a non-staff usage report for a past period.
const backfillMessage = "Service providers can only specify date for limit-based or prepaid billing " +
	"components when backfilling past billing periods."

func monthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

func period(t time.Time) string { return monthStart(t).Format("2006-01-02") }

// usageDate reads the optional "date" of a usage report: default now; never in the future;
// a past billing period only for staff or non-usage components.
func (s *Server) usageDate(c *call, raw string, comp *Component) (time.Time, *result) {
	if raw == "" {
		return c.now, nil
	}
	d, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		r := fieldError("date", "Datetime has wrong format.")
		return time.Time{}, &r
	}
	if d.After(c.now) {
		r := fieldError("date", "Cannot submit usage for future dates.")
		return time.Time{}, &r
	}
	past := monthStart(d).Before(monthStart(c.now))
	if past && !s.opts.Staff && comp.BillingType == "usage" && !comp.IsPrepaid {
		r := fieldError("date", backfillMessage)
		return time.Time{}, &r
	}
	return d, nil
}

// billableResource finds the resource usage is reported for and checks it may be billed.
func (s *Server) billableResource(c *call) (*Resource, *result) {
	if c.has("plan_period") && !c.has("resource") {
		r := s.unsupported(c, "usage reports addressed by plan_period")
		return nil, &r
	}
	id, _ := normUUID(c.str("resource"))
	r, found := s.st.resources.get(id)
	if !found {
		res := fieldError("resource", "Object with uuid="+c.str("resource")+" does not exist.")
		return nil, &res
	}
	if r.PlanUUID == "" {
		res := nonFieldError("Resource must have a plan to report usage.")
		return nil, &res
	}
	if r.State == ResourceCreating || r.State == ResourceTerminated {
		res := nonFieldError(fmt.Sprintf("Usage cannot be reported for a resource in state %s.", r.State))
		return nil, &res
	}
	return r, nil
}

type usageItem struct {
	comp   *Component
	amount float64
	desc   string
}

// setUsage creates or updates one ComponentUsage per (resource, type, billing period). All
// items are validated before any is stored.
func (s *Server) setUsage(c *call) result {
	r, fail := s.billableResource(c)
	if fail != nil {
		return *fail
	}
	rawItems, _ := c.body["usages"].([]any)
	items := make([]usageItem, 0, len(rawItems))
	var date time.Time
	for _, raw := range rawItems {
		it, _ := raw.(map[string]any)
		typ, _ := it["type"].(string)
		comp := s.st.componentOf(r.OfferingUUID, typ)
		if comp == nil {
			return nonFieldError(fmt.Sprintf("Component %q is not found in offering.", typ))
		}
		amount, err := strconv.ParseFloat(fmt.Sprint(it["amount"]), 64)
		if err != nil || amount < 0 {
			return fieldError("amount", "A valid non-negative number is required.")
		}
		d, fail := s.usageDate(c, c.str("date"), comp)
		if fail != nil {
			return *fail
		}
		desc, _ := it["description"].(string)
		date = d
		items = append(items, usageItem{comp: comp, amount: amount, desc: desc})
	}
	for _, it := range items {
		u := s.st.usageFor(r.UUID, it.comp.Type, date, c.now)
		u.Amount, u.Date, u.Description, u.Modified = it.amount, date, it.desc, c.now
	}
	return noBody(http.StatusCreated)
}

// usageFor finds or creates the ComponentUsage of (resource, type, period of date).
func (st *state) usageFor(resourceUUID, typ string, date, now time.Time) *ComponentUsage {
	p := period(date)
	for _, u := range st.usages.all() {
		if u.ResourceUUID == resourceUUID && u.Type == typ && u.BillingPeriod == p {
			return u
		}
	}
	u := &ComponentUsage{UUID: st.newUUID(), ResourceUUID: resourceUUID, Type: typ, BillingPeriod: p,
		Date: date, Created: now, Modified: now}
	st.usages.put(u.UUID, u)
	return u
}

func (s *Server) setUserUsages(c *call) result {
	items, _ := c.body["usages"].([]any)
	return s.applyUserUsages(c, items)
}

func (s *Server) setUserUsage(c *call) result {
	return s.applyUserUsages(c, []any{c.body})
}

type userUsageItem struct {
	target           *ComponentUsage // nil: create for period
	date             time.Time
	username, rawURL string
	ouUUID           string
	usage            float64
}

// applyUserUsages upserts per-user usages (unique per username and component usage) after
// validating every item.
func (s *Server) applyUserUsages(c *call, raw []any) result {
	cu, found := s.st.usages.get(c.params["uuid"])
	if !found {
		return notFound()
	}
	r, found := s.st.resources.get(cu.ResourceUUID)
	if !found {
		return notFound()
	}
	comp := s.st.componentOf(r.OfferingUUID, cu.Type)
	if comp == nil {
		return notFound()
	}
	items := make([]userUsageItem, 0, len(raw))
	for _, x := range raw {
		it, _ := x.(map[string]any)
		item, fail := s.userUsageItem(c, cu, r, comp, it)
		if fail != nil {
			return *fail
		}
		items = append(items, item)
	}
	for _, it := range items {
		target := it.target
		if target == nil {
			target = s.st.usageFor(cu.ResourceUUID, cu.Type, it.date, c.now)
		}
		target.upsertUserUsage(s.st, UserUsage{Username: it.username, UserURL: it.rawURL,
			OfferingUserUUID: it.ouUUID, Usage: it.usage})
		target.Modified = c.now
	}
	return noBody(http.StatusCreated)
}

func (s *Server) userUsageItem(c *call, cu *ComponentUsage, r *Resource, comp *Component, it map[string]any) (userUsageItem, *result) {
	item := userUsageItem{target: cu}
	item.username, _ = it["username"].(string)
	if v, present := it["usage"]; present {
		n, err := strconv.ParseFloat(fmt.Sprint(v), 64)
		if err != nil || n < 0 {
			res := fieldError("usage", "A valid non-negative number is required.")
			return item, &res
		}
		item.usage = n
	}
	if d, _ := it["date"].(string); d != "" {
		date, fail := s.usageDate(c, d, comp)
		if fail != nil {
			return item, fail
		}
		if period(date) != cu.BillingPeriod {
			item.target, item.date = nil, date
		}
	}
	if u, _ := it["user"].(string); u != "" {
		id, _ := normUUID(lastSegment(u))
		ou, found := s.st.offeringUsers.get(id)
		if !found {
			res := fieldError("user", "Invalid hyperlink - Object does not exist.")
			return item, &res
		}
		item.rawURL, item.ouUUID = u, ou.UUID
		for _, l := range s.st.limits.all() {
			if l.ResourceUUID == r.UUID && l.OfferingUserUUID == ou.UUID && l.ComponentType == cu.Type && item.usage > l.Limit {
				res := nonFieldError(fmt.Sprintf("Usage limit exceeded: %s > %s.", decimal(item.usage), decimal(l.Limit)))
				return item, &res
			}
		}
	}
	return item, nil
}

func (u *ComponentUsage) upsertUserUsage(st *state, uu UserUsage) {
	for i := range u.UserUsages {
		if u.UserUsages[i].Username == uu.Username {
			uu.UUID = u.UserUsages[i].UUID
			u.UserUsages[i] = uu
			return
		}
	}
	uu.UUID = st.newUUID()
	u.UserUsages = append(u.UserUsages, uu)
}

func lastSegment(u string) string {
	parts := strings.Split(strings.TrimRight(u, "/"), "/")
	return parts[len(parts)-1]
}

func (s *Server) usagesList(c *call) result {
	f := filter{c.query}
	var rows []*ComponentUsage
	for _, u := range s.st.usages.all() {
		r, sc := s.st.usageScope(u.ResourceUUID)
		if f.uuid("resource_uuid", r.UUID) && f.oneOf("billing_period", u.BillingPeriod) && f.oneOf("type", u.Type) &&
			f.uuid("offering_uuid", sc.offering.UUID) && f.uuid("project_uuid", sc.project.UUID) &&
			f.uuid("customer_uuid", sc.customer.UUID) {
			rows = append(rows, u)
		}
	}
	return lazy(rows, func(u *ComponentUsage) map[string]any { return s.st.renderUsage(c, u) })
}

func (s *Server) userUsagesList(c *call) result {
	f := filter{c.query}
	type userUsageRef struct {
		usage *ComponentUsage
		index int
	}
	var rows []*userUsageRef
	for _, u := range s.st.usages.all() {
		r, sc := s.st.usageScope(u.ResourceUUID)
		if !f.uuid("resource_uuid", r.UUID) || !f.oneOf("component_usage__billing_period", u.BillingPeriod) ||
			!f.oneOf("type", u.Type) || !f.uuid("offering_uuid", sc.offering.UUID) {
			continue
		}
		for i := range u.UserUsages {
			if f.oneOf("username", u.UserUsages[i].Username) {
				rows = append(rows, &userUsageRef{u, i})
			}
		}
	}
	return lazy(rows, func(ref *userUsageRef) map[string]any {
		return s.st.renderUserUsage(c, ref.usage, &ref.usage.UserUsages[ref.index])
	})
}

func (s *Server) userLimitsList(c *call) result {
	f := filter{c.query}
	var rows []*UserUsageLimit
	for _, l := range s.st.limits.all() {
		r, _ := s.st.usageScope(l.ResourceUUID)
		username := ""
		if ou, ok := s.st.offeringUsers.get(l.OfferingUserUUID); ok {
			username = ou.Username
		}
		if f.uuid("resource_uuid", l.ResourceUUID) && f.oneOf("username", username) &&
			f.oneOf("component_type", l.ComponentType) && f.uuid("offering_uuid", r.OfferingUUID) {
			rows = append(rows, l)
		}
	}
	return lazy(rows, func(l *UserUsageLimit) map[string]any { return s.st.renderUserLimit(c, l) })
}
