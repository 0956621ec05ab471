package rancher

import (
	"testing"

	"github.com/waldur/site-agent/internal/sim/ranchersim"
)

// A lost response to a project POST must not produce a second project: ensureProject looks
// for the name again before posting.
func TestEnsureProjectAfterLostResponse(t *testing.T) {
	f := newFixture(t, fixtureOpts{kube: true})
	b := core(f.backend(nil))
	res := f.resource(1)
	f.rs.FailNext("project.create", 1, ranchersim.FaultLoseResponse)
	f.rs.FailNext("project.create", 1, ranchersim.Fault500) // a second POST would fail the test below
	p, _, err := b.ensureProject(ctxT(t), res, f.prefix+"res-1")
	if err != nil {
		t.Fatal(err)
	}
	if ps := f.rs.Projects(); len(ps) != 1 || ps[0].ID != p.ID || f.rs.Calls()["project.create"] != 1 {
		t.Fatalf("projects %+v after %d POSTs", ps, f.rs.Calls()["project.create"])
	}
	if err := b.v3.DeleteProject(ctxT(t), p.ID); err != nil {
		t.Fatal(err)
	}
}
