package backends

import (
	"context"
	"errors"
	"testing"
	"time"
)

// recordingSyncer remembers the last request it was given.
type recordingSyncer struct {
	last ProjectSync
	err  error
}

func (r *recordingSyncer) WantsResourceGrants() bool { return true }
func (r *recordingSyncer) SyncProjects(_ context.Context, req ProjectSync) (ProjectReport, error) {
	r.last = req
	return ProjectReport{Projects: []ProjectOutcome{{UUID: "a", Phase: ProjectReady}}}, r.err
}

func TestProjectSyncerDecorators(t *testing.T) {
	rec := &recordingSyncer{}
	set := RolesOf("kc", rec)
	if set.Projects == nil || set.Members != nil {
		t.Fatalf("roles %+v", set)
	}
	var ops []string
	obs := func(op string, _ time.Duration, err error) {
		ops = append(ops, op+":"+map[bool]string{true: "ok", false: "err"}[err == nil])
	}
	wrapped := DryRun(Instrument(set, obs))
	if !wrapped.Projects.WantsResourceGrants() {
		t.Fatal("WantsResourceGrants lost by the decorators")
	}
	rep, err := wrapped.Projects.SyncProjects(context.Background(), ProjectSync{Resource: Resource{UUID: "r"}})
	if err != nil || len(rep.Projects) != 1 || !rec.last.DryRun || rec.last.Resource.UUID != "r" {
		t.Fatalf("report %+v err %v request %+v", rep, err, rec.last)
	}
	rec.err = errors.New("boom")
	if _, err := Instrument(set, obs).Projects.SyncProjects(context.Background(), ProjectSync{}); err == nil || rec.last.DryRun {
		t.Fatalf("err %v, dry run %v: without DryRun the request must not be marked", err, rec.last.DryRun)
	}
	if len(ops) != 2 || ops[0] != "sync_projects:ok" || ops[1] != "sync_projects:err" {
		t.Fatalf("observed %v", ops)
	}
}
