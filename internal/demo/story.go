package demo

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/waldur/site-agent/internal/cli"
	"github.com/waldur/site-agent/internal/modes"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

func (d *demo) run(ctx context.Context) error {
	w := d.world
	fmt.Fprintf(d.out, "site-agent %s demo: a Waldur simulator at %s, offering %q, backend inmemory\n\n", cli.Version, d.url, w.Offering.Name)
	orders := []waldursim.Order{
		w.CreateOrder("halo-sim-small", map[string]float64{"cpu": 4, "ram": 16}),
		w.CreateOrder("halo-sim-large", map[string]float64{"cpu": 32, "ram": 128}),
		w.CreateOrder("postprocessing", map[string]float64{"cpu": 8, "ram": 32}),
		w.CreateOrder("greedy-request", map[string]float64{"cpu": 512, "ram": 2048}),
	}
	fmt.Fprintf(d.out, "1. %d Create orders wait for the provider; the site allows at most 64 CPU per resource.\n", len(orders))
	if err := d.pass(ctx, modes.ModeOrderProcess); err != nil {
		return err
	}
	d.printOrders(orders)
	fmt.Fprintln(d.out, "\n2. Membership sync gives the project team access to the new resources.")
	if err := d.pass(ctx, modes.ModeMembershipSync); err != nil {
		return err
	}
	d.printMembers()
	fmt.Fprintln(d.out, "\n3. Usage reporting sends this month's usage (per resource and per user).")
	if err := d.pass(ctx, modes.ModeReport); err != nil {
		return err
	}
	d.printUsage()
	small, _ := w.Sim.Order(orders[0].UUID)
	post, _ := w.Sim.Order(orders[2].UUID)
	more := []waldursim.Order{w.UpdateOrder(small.ResourceUUID, map[string]float64{"cpu": 8, "ram": 32}), w.TerminateOrder(post.ResourceUUID)}
	w.Sim.RemoveProjectMember(w.Project.UUID, w.Users[1].UUID)
	fmt.Fprintf(d.out, "\n4. The team grows a resource and retires another; %s leaves the project.\n", w.Users[1].Username)
	for _, mode := range []string{modes.ModeOrderProcess, modes.ModeMembershipSync, modes.ModeReport} {
		if err := d.pass(ctx, mode); err != nil {
			return err
		}
	}
	d.printOrders(more)
	d.printMembers()
	return d.summary(append(orders, more...))
}

func (d *demo) printOrders(orders []waldursim.Order) {
	for _, o := range orders {
		cur, _ := d.world.Sim.Order(o.UUID)
		res, _ := d.world.Sim.Resource(cur.ResourceUUID)
		line := fmt.Sprintf("   %-9s %-16s → %-9s", cur.Type, res.Name, cur.State)
		switch {
		case cur.State == waldursim.OrderRejected:
			line += " (" + cur.ProviderRejectionComment + ")"
		case cur.State == waldursim.OrderErred:
			line += " (" + cur.ErrorMessage + ")"
		case res.BackendID != "":
			line += fmt.Sprintf(" backend id %s, limits %s", res.BackendID, limits(res.Limits))
		}
		fmt.Fprintln(d.out, line)
	}
}

func (d *demo) printMembers() {
	objs, _ := d.backend.Objects()
	for _, o := range objs {
		fmt.Fprintf(d.out, "   %-28s members: %s\n", o.ID, strings.Join(o.Members, ", "))
	}
}

func (d *demo) printUsage() {
	for _, r := range d.world.Sim.Resources() {
		for _, u := range d.world.Sim.ComponentUsages(r.UUID) {
			fmt.Fprintf(d.out, "   %-16s %-8s %8.2f for %s (%d per-user shares)\n", r.Name, u.Type, u.Amount, u.BillingPeriod, len(u.UserUsages))
		}
	}
}

func (d *demo) summary(orders []waldursim.Order) error {
	states := map[string]int{}
	for _, o := range orders {
		cur, _ := d.world.Sim.Order(o.UUID)
		states[cur.State]++
	}
	objs, _ := d.backend.Objects()
	ops, _ := d.backend.Ops()
	usages := 0
	for _, r := range d.world.Sim.Resources() {
		usages += len(d.world.Sim.ComponentUsages(r.UUID))
	}
	violations := d.world.Sim.Violations()
	fmt.Fprintf(d.out, "\nSummary: orders %s; %d backend resources, %d backend operations; %d usage records;\n",
		counts(states), len(objs), len(ops), usages)
	fmt.Fprintf(d.out, "         %d Waldur requests, %d contract violations, %s.\n",
		d.world.Sim.TotalCalls(), len(violations), time.Since(d.start).Round(time.Millisecond))
	if len(violations) > 0 {
		return fmt.Errorf("the agent sent requests that break the Waldur contract: %s", strings.Join(violations, "; "))
	}
	if states[waldursim.OrderDone] != len(orders)-1 || states[waldursim.OrderRejected] != 1 {
		return fmt.Errorf("unexpected order outcome: %s", counts(states))
	}
	return nil
}

func limits(m map[string]float64) string {
	return joinSorted(m, " ", func(k string, v float64) string { return fmt.Sprintf("%s=%g", k, v) })
}

func counts(m map[string]int) string {
	return joinSorted(m, ", ", func(k string, v int) string { return fmt.Sprintf("%d %s", v, k) })
}

// joinSorted formats m's entries in key order and joins them with sep.
func joinSorted[V any](m map[string]V, sep string, format func(string, V) string) string {
	parts := []string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, format(k, m[k]))
	}
	return strings.Join(parts, sep)
}
