package modes

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/sim/waldursim"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// scriptedOperator is a ProjectSyncer whose provider side answers from a script: the outcome
// and grant states per resource project, as an operator would leave them.
type scriptedOperator struct {
	wantGrants bool
	outcomes   map[string]backends.ProjectOutcome
	requests   []backends.ProjectSync
}

func (s *scriptedOperator) WantsResourceGrants() bool { return s.wantGrants }

func (s *scriptedOperator) SyncProjects(_ context.Context, req backends.ProjectSync) (backends.ProjectReport, error) {
	s.requests = append(s.requests, req)
	var rep backends.ProjectReport
	for _, rp := range req.Projects {
		o := s.outcomes[rp.UUID]
		o.UUID = rp.UUID
		rep.Projects = append(rep.Projects, o)
		for _, g := range rp.Grants {
			state := map[backends.ProjectPhase]string{backends.ProjectReady: backends.GrantSynced, backends.ProjectFailed: backends.GrantError}[o.Phase]
			if state == "" {
				state = backends.GrantPending
			}
			rep.Grants = append(rep.Grants, backends.GrantStatus{Scope: backends.ScopeResourceProject, ProjectUUID: rp.UUID,
				Role: g.Role, State: state, Username: g.Username})
		}
	}
	for _, g := range req.ResourceGrants {
		rep.Grants = append(rep.Grants, backends.GrantStatus{Scope: backends.ScopeResource, Role: g.Role, State: backends.GrantPending, Username: g.Username})
	}
	rep.Metadata = map[string]any{"managed_rancher_projects": float64(len(req.Projects))}
	return rep, nil
}

type projectWorld struct {
	*flow
	op       *scriptedOperator
	resource waldursim.Resource
	rps      []waldursim.ResourceProject
}

func newProjectWorld(t *testing.T, version string) *projectWorld {
	f := newFlow(t, waldursim.Options{Version: version}, inmemory.Settings{})
	op := &scriptedOperator{wantGrants: true, outcomes: map[string]backends.ProjectOutcome{}}
	f.unit.Backend = backends.RolesOf("rancher-kc-crd", op)
	w := &projectWorld{flow: f, op: op}
	w.resource = f.sim.AddResource(waldursim.Resource{Name: "cluster", OfferingUUID: f.world.Offering.UUID, ProjectUUID: f.world.Project.UUID,
		BackendID: "c-m-1", State: waldursim.ResourceOK})
	for _, name := range []string{"web", "batch", "gone"} {
		w.rps = append(w.rps, f.sim.AddResourceProject(waldursim.ResourceProject{ResourceUUID: w.resource.UUID, Name: name,
			Limits: map[string]any{"cpu": 2000}}))
	}
	f.sim.RemoveResourceProject(w.rps[2].UUID)
	f.sim.GrantRole(w.rps[0].UUID, f.world.Users[0].UUID, "project_member")
	f.sim.GrantRole(w.rps[1].UUID, f.world.Users[1].UUID, "project_admin")
	f.sim.GrantRole(w.resource.UUID, f.world.Users[1].UUID, "resource_admin")
	return w
}

// A Waldur without the resource-project API gets one refusal naming both versions, before any
// other call: no 404s.
func TestProjectSyncRefusesAnOldWaldur(t *testing.T) {
	w := newProjectWorld(t, "8.0.5")
	err := (&Membership{Env: w.env}).RunOnce(context.Background(), w.unit)
	if err == nil || !strings.Contains(err.Error(), "Waldur 8.0.5 is too old") || !strings.Contains(err.Error(), "Waldur 8.0.8 or later") {
		t.Fatalf("error %v", err)
	}
	if calls := w.sim.Calls(); len(calls) != 1 || calls["version_retrieve"] != 1 {
		t.Fatalf("calls %v: only the version may be read", calls)
	}
	if len(w.op.requests) != 0 {
		t.Fatal("the backend was called")
	}
	w.sim.AssertNoViolations(t)
}

func TestProjectSyncReportsToWaldur(t *testing.T) {
	w := newProjectWorld(t, waldursim.AddendumVersion)
	w.sim.SetPluginOptions(w.world.Offering.UUID, map[string]any{"enable_membership_sync_status": true})
	web, batch := hex(w.rps[0].UUID), hex(w.rps[1].UUID)
	w.op.outcomes[web] = backends.ProjectOutcome{Phase: backends.ProjectReady}
	w.op.outcomes[batch] = backends.ProjectOutcome{Phase: backends.ProjectFailed, Message: "Keycloak unreachable"}
	w.run(&Membership{Env: w.env})
	req := w.op.requests[0]
	if len(req.Projects) != 2 || req.Projects[0].UUID != web || req.Projects[0].Limits["cpu"] != float64(2000) ||
		len(req.Projects[0].Grants) != 1 || req.Projects[0].Grants[0].Username != w.world.Users[0].Username ||
		len(req.ResourceGrants) != 1 || req.ResourceGrants[0].Role != "resource_admin" || req.Resource.BackendID != "c-m-1" {
		t.Fatalf("request %+v", req)
	}
	if got, _ := w.sim.ResourceProject(web); got.State != waldursim.ProjectOK {
		t.Fatalf("web %+v", got)
	}
	if got, _ := w.sim.ResourceProject(batch); got.State != waldursim.ProjectErred || got.ErrorMessage != "Keycloak unreachable" {
		t.Fatalf("batch %+v", got)
	}
	states := map[string]string{}
	for _, s := range w.sim.MembershipSyncStatuses(w.resource.UUID) {
		states[s.ScopeType+"/"+s.RoleName] = s.State
	}
	if d := cmp.Diff(map[string]string{"resource_project/project_member": "synced", "resource_project/project_admin": "error",
		"resource/resource_admin": "pending"}, states); d != "" {
		t.Fatalf("statuses (-want +got):\n%s", d)
	}
	if r, _ := w.sim.Resource(w.resource.UUID); r.BackendMetadata["managed_rancher_projects"] != float64(2) {
		t.Fatalf("metadata %v", r.BackendMetadata)
	}
	// An unchanged second pass writes nothing: no state change, no report, no metadata.
	before := w.sim.Calls()
	w.run(&Membership{Env: w.env})
	after := w.sim.Calls()
	for _, op := range []string{"marketplace_provider_resource_projects_set_state_ok", "marketplace_provider_resource_projects_set_state_erred",
		"marketplace_provider_resources_set_membership_sync_statuses", "marketplace_provider_resources_set_backend_metadata"} {
		if after[op] != before[op] {
			t.Errorf("%s sent again on an unchanged pass (%d → %d)", op, before[op], after[op])
		}
	}
	if before["version_retrieve"] != 1 || after["version_retrieve"] != 1 {
		t.Errorf("the accepted version is read once: %d %d", before["version_retrieve"], after["version_retrieve"])
	}
	// The operator's reason changes: the project is erred again with the new reason.
	w.op.outcomes[batch] = backends.ProjectOutcome{Phase: backends.ProjectFailed, Message: "quota refused"}
	w.run(&Membership{Env: w.env})
	if got, _ := w.sim.ResourceProject(batch); got.ErrorMessage != "quota refused" {
		t.Fatalf("batch %+v", got)
	}
}

// Statuses are reported only when the offering opts in and Waldur serves the call; an offering
// that opts in on a Waldur without it gets a warning, never a 404.
func TestProjectSyncStatusesNeedOptInAndRelease(t *testing.T) {
	for _, c := range []struct {
		version string
		optIn   bool
		sent    int
	}{{"8.1.0", false, 0}, {"8.0.9", true, 0}, {"8.1.0", true, 1}, {"develop", true, 1}} {
		w := newProjectWorld(t, c.version)
		w.op.wantGrants = false
		if c.optIn {
			w.sim.SetPluginOptions(w.world.Offering.UUID, map[string]any{"enable_membership_sync_status": true})
		}
		w.run(&Membership{Env: w.env})
		if got := w.sim.Calls()["marketplace_provider_resources_set_membership_sync_statuses"]; got != c.sent {
			t.Errorf("%s opt-in %v: %d reports, want %d", c.version, c.optIn, got, c.sent)
		}
		if w.sim.Calls()["marketplace_provider_resources_list_users_list"] != 0 || w.op.requests[0].ResourceGrants != nil {
			t.Errorf("resource grants fetched though the backend does not want them")
		}
	}
}

func TestProjectTransition(t *testing.T) {
	ready := backends.ProjectOutcome{Phase: backends.ProjectReady}
	failed := backends.ProjectOutcome{Phase: backends.ProjectFailed, Message: "x"}
	waiting := backends.ProjectOutcome{}
	cases := []struct {
		state, msg string
		o          backends.ProjectOutcome
		want       projectAction
	}{
		{wc.ProjectCreating, "", ready, setProjectOK}, {wc.ProjectUpdating, "", ready, setProjectOK},
		{wc.ProjectErred, "x", ready, setProjectOK}, {wc.ProjectOK, "", ready, keepState}, {"Terminating", "", ready, keepState},
		{wc.ProjectCreating, "", failed, setProjectErred}, {wc.ProjectOK, "", failed, setProjectErred},
		{wc.ProjectErred, "y", failed, setProjectErred}, {wc.ProjectErred, "x", failed, keepState},
		{wc.ProjectCreating, "", waiting, keepState}, {wc.ProjectErred, "x", waiting, keepState},
	}
	for _, c := range cases {
		if got := projectTransition(wc.ResourceProject{State: c.state, ErrorMessage: c.msg}, c.o); got != c.want {
			t.Errorf("%s/%q with %+v: %v, want %v", c.state, c.msg, c.o, got, c.want)
		}
	}
}
