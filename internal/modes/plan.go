package modes

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/usage"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// orderStep is what to do next with an order.
type orderStep int

const (
	stepSkip    orderStep = iota // nothing to do (finished, or waiting on the consumer)
	stepApprove                  // pending-provider: evaluate, then approve
	stepExecute                  // executing: do the backend work
	stepReject                   // pending-provider and malformed: reject with a reason
	stepErr                      // executing and malformed: mark erred with a reason
)

// planOrder decides the next step for an order and, for malformed orders, why.
func planOrder(o wc.Order) (orderStep, string) {
	var problem string
	switch {
	case o.Malformed != "":
		problem = "order could not be read: " + o.Malformed
	case o.Type != wc.OrderCreate && o.Type != wc.OrderUpdate && o.Type != wc.OrderTerminate && o.Type != wc.OrderRestore:
		problem = fmt.Sprintf("order type %q is not supported by this agent", o.Type)
	case o.ResourceUUID == "":
		problem = "order has no marketplace resource"
	default:
		problem = checkLimits(o.Limits)
	}
	switch o.State {
	case wc.OrderPendingProvider:
		if problem != "" {
			return stepReject, problem
		}
		return stepApprove, ""
	case wc.OrderExecuting:
		if problem != "" {
			return stepErr, problem
		}
		return stepExecute, ""
	}
	return stepSkip, ""
}

func checkLimits(limits wc.Quantities) string {
	for _, k := range slices.Sorted(maps.Keys(limits)) {
		v := limits[k]
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprintf("limit %q must be a non-negative number, got %v", k, v)
		}
	}
	return ""
}

// groupOrders groups orders by resource (orders of one resource run in creation order, one at a
// time; different resources run in parallel) and returns the groups in a stable order.
func groupOrders(orders []wc.Order) [][]wc.Order {
	byRes := map[string][]wc.Order{}
	var keys []string
	for _, o := range orders {
		k := o.ResourceUUID
		if k == "" {
			k = "order:" + o.UUID
		}
		if _, seen := byRes[k]; !seen {
			keys = append(keys, k)
		}
		byRes[k] = append(byRes[k], o)
	}
	out := make([][]wc.Order, 0, len(keys))
	for _, k := range keys {
		g := byRes[k]
		sort.SliceStable(g, func(i, j int) bool { return g[i].Created.Before(g[j].Created) })
		out = append(out, g)
	}
	return out
}

// nameCandidates yields backend ids to try for a new resource: the base (prefix + slug, lower
// case) and then base-1, base-2, … (the incumbent re-checked the same id under its default
// policy; this gives every attempt a new name).
func nameCandidates(prefix, slug, uuid string, n int) []string {
	base := slug
	if base == "" {
		base = "resource-" + first8(uuid)
	}
	base = strings.ToLower(prefix + base)
	out := []string{base}
	for i := 1; i < n; i++ {
		out = append(out, fmt.Sprintf("%s-%d", base, i))
	}
	return out
}

func first8(s string) string {
	s = strings.ReplaceAll(s, "-", "")
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

// memberDiff compares who should have access with who has it.
func memberDiff(desired []backends.Member, current []string) (add []backends.Member, remove []string) {
	have := map[string]bool{}
	for _, u := range current {
		have[u] = true
	}
	want := map[string]bool{}
	for _, m := range desired {
		want[m.Username] = true
		if !have[m.Username] {
			add = append(add, m)
		}
	}
	for _, u := range current {
		if !want[u] {
			remove = append(remove, u)
		}
	}
	sort.Slice(add, func(i, j int) bool { return add[i].Username < add[j].Username })
	sort.Strings(remove)
	return add, remove
}

// goneStates are offering-user states in which the user must not keep access.
var goneStates = map[string]bool{"Requested deletion": true, "Deleting": true, "Deleted": true, "Error deleting": true}

// desiredMembers turns a project team into backend members: users with an offering username,
// not on their way out, de-duplicated. restrict_member_access empties the list.
func desiredMembers(team []wc.TeamMember, restrict bool) []backends.Member {
	if restrict {
		return nil
	}
	seen := map[string]bool{}
	var out []backends.Member
	for _, m := range team {
		if m.OfferingUserUsername == "" || goneStates[m.OfferingUserState] || seen[m.OfferingUserUsername] {
			continue
		}
		seen[m.OfferingUserUsername] = true
		out = append(out, backends.Member{Username: m.OfferingUserUsername, UserUUID: m.UUID, Role: m.Role,
			Email: m.Email, FullName: m.FullName})
	}
	return out
}

// usageVerdict is the outcome of comparing a usage report with what Waldur has.
type usageVerdict int

const (
	usageSend usageVerdict = iota
	usageUnchanged
	usageAnomaly
)

// planUsage rounds amounts (Waldur units) to two decimals, drops components the offering does
// not know, and compares with the existing records of the period. Decreasing totals and
// duplicate records are anomalies unless allowDecrease.
func planUsage(amounts backends.Quantities, existing []wc.ComponentUsage, known map[string]bool, allowDecrease bool) (
	items []wc.UsageItem, verdict usageVerdict, dropped []string, reason string) {
	rounded := backends.Quantities{}
	for _, k := range amounts.Keys() {
		if !known[k] {
			dropped = append(dropped, k)
			continue
		}
		rounded[k] = usage.Round2(amounts[k])
		items = append(items, wc.UsageItem{Type: k, Amount: usage.Amount(rounded[k])})
	}
	have := backends.Quantities{}
	for _, e := range existing {
		if _, dup := have[e.Type]; dup {
			if !allowDecrease {
				return items, usageAnomaly, dropped, fmt.Sprintf("Waldur holds more than one %q record for the period", e.Type)
			}
			continue
		}
		have[e.Type] = float64(e.Usage)
	}
	if len(items) == 0 {
		return nil, usageUnchanged, dropped, ""
	}
	same := true
	for k, v := range rounded {
		old, ok := have[k]
		if !ok || !usage.Close(old, v) {
			same = false
		}
		if ok && v < old-1e-6 && !allowDecrease {
			return items, usageAnomaly, dropped, fmt.Sprintf("%s usage would decrease from %v to %v", k, old, v)
		}
	}
	if same {
		return items, usageUnchanged, dropped, ""
	}
	return items, usageSend, dropped, ""
}
