package openstack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/openstack"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/sim/openstacksim"
)

// busyTenant is a tenant whose users made one of everything terminate must deal with: a load
// balancer with a listener, a server with an attached volume that has a snapshot, a full and
// an incremental backup, a server group, a protected private image, a shared image, and a
// public image (an administrator's: never deleted with the tenant).
func busyTenant(t *testing.T, env simEnv, b *openstack.Backend) backends.Resource {
	t.Helper()
	res := create(t, b, resource(1), "busy")
	p := res.BackendID
	env.sim.AddLoadBalancer(p, 1)
	srv := env.sim.AddServer(p, 2, 1024)
	vol := env.sim.AddVolume(p, 10)
	env.sim.AttachVolume(vol, srv)
	env.sim.AddSnapshot(vol)
	full := env.sim.AddBackup(vol, "")
	env.sim.AddBackup(vol, full)
	env.sim.AddServerGroup(p)
	env.sim.AddImage(p, "private", true)
	env.sim.AddImage(p, "shared", false)
	env.sim.AddImage(p, "public", false)
	return res
}

var busyObjects = openstacksim.Objects{Servers: 1, Volumes: 1, Snapshots: 1, Backups: 2, Images: 3, ServerGroups: 1, LoadBalancers: 1}

// workloads keeps the counts terminate deals with (networking aside).
func workloads(o openstacksim.Objects) openstacksim.Objects {
	return openstacksim.Objects{Servers: o.Servers, Volumes: o.Volumes, Snapshots: o.Snapshots, Backups: o.Backups,
		Images: o.Images, ServerGroups: o.ServerGroups, LoadBalancers: o.LoadBalancers}
}

func TestTerminateRefusesEveryKindByName(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{})
	res := busyTenant(t, env, b)
	err := b.Delete(ctxT(t), res)
	msg, public := failure.PublicMessage(err)
	if !public || failure.IsTransient(err) {
		t.Fatalf("want a permanent user-facing refusal, got %v", err)
	}
	want := "still has 1 load balancer(s), 1 server(s), 1 server group(s), 2 image(s), 1 snapshot(s), 2 backup(s) and 1 volume(s); " +
		"delete them first or set backend_settings.force_destroy"
	if !strings.Contains(msg, want) {
		t.Fatalf("refusal %q\nwant it to contain %q", msg, want)
	}
	if got := workloads(env.sim.ObjectsOf(res.BackendID)); !cmp.Equal(got, busyObjects) {
		t.Fatalf("a refused terminate deleted something: %+v", got)
	}
	if _, ok := env.sim.ProjectByName("wd-busy"); !ok {
		t.Fatal("refused terminate removed the project")
	}
}

// force_destroy deletes every kind in dependency order (the volume after its server and
// snapshot, the full backup after its incremental one, the protected image unprotected first)
// within one pass when the services delete at once; the public image stays.
func TestForceDestroyCleansEveryKind(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{settings: map[string]any{"force_destroy": true}})
	res := busyTenant(t, env, b)
	if err := b.Delete(ctxT(t), res); err != nil {
		t.Fatalf("force_destroy: %v", err)
	}
	if _, ok := env.sim.ProjectByName("wd-busy"); ok {
		t.Fatal("project still exists")
	}
	if got, want := workloads(env.sim.ObjectsOf(res.BackendID)), (openstacksim.Objects{Images: 1}); !cmp.Equal(got, want) {
		t.Errorf("left behind %+v, want only the public image", got)
	}
	if n := env.sim.LeftoverNeutron(); n != 0 {
		t.Errorf("%d Neutron objects outlived the project", n)
	}
}

// When deletions take time, no pass blocks: each returns a transient "deletion in progress"
// within force_destroy_wait, and the passes after finish the job.
func TestForceDestroyPassesAreBounded(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	b := env.backend(t, backendOpts{settings: map[string]any{"force_destroy": true, "force_destroy_wait": "100ms"}})
	res := busyTenant(t, env, b)
	env.sim.SetAsyncDeletes(true)
	var passes int
	for passes = 1; passes <= 5; passes++ {
		start := time.Now()
		err := b.Delete(ctxT(t), res)
		if took := time.Since(start); took > 20*time.Second {
			t.Fatalf("pass %d blocked for %s", passes, took)
		}
		if err == nil {
			break
		}
		if !failure.IsTransient(err) || !strings.Contains(err.Error(), "deletion in progress") {
			t.Fatalf("pass %d: want a transient deletion in progress, got %v", passes, err)
		}
		if _, ok := env.sim.ProjectByName("wd-busy"); !ok {
			t.Fatalf("pass %d removed the project while objects remain", passes)
		}
		env.sim.CompleteDeletes() // the services finish between passes
	}
	if passes != 3 {
		t.Errorf("took %d passes, want 3 (the volume and the full backup wait for what depends on them)", passes)
	}
	if got := workloads(env.sim.ObjectsOf(res.BackendID)); !cmp.Equal(got, openstacksim.Objects{Images: 1}) {
		t.Errorf("left behind %+v", got)
	}
}

// A cloud without Glance or Octavia has no images or load balancers: nothing to look for.
func TestTerminateWithoutGlanceAndOctavia(t *testing.T) {
	env := startSim(t, openstacksim.Options{Without: []string{"image", "load-balancer"}})
	b := env.backend(t, backendOpts{settings: map[string]any{"force_destroy": true}})
	res := create(t, b, resource(1), "plain")
	env.sim.AddServerGroup(res.BackendID)
	if err := b.Delete(ctxT(t), res); err != nil {
		t.Fatal(err)
	}
	for op := range env.sim.Calls() {
		if strings.HasPrefix(op, "glance ") || strings.HasPrefix(op, "octavia ") {
			t.Errorf("called %s, which is not in the catalog", op)
		}
	}
	if got := workloads(env.sim.ObjectsOf(res.BackendID)); !cmp.Equal(got, openstacksim.Objects{}) {
		t.Errorf("left behind %+v", got)
	}
}

// A Glance that the catalog lists but that does not answer (down for maintenance) stops only
// the work that needs it: tenants are still created, and a terminate that must look for images
// waits with a transient error (the order is retried, never erred) until Glance is back.
func TestGlanceDownStopsOnlyWhatNeedsIt(t *testing.T) {
	env := startSim(t, openstacksim.Options{})
	env.sim.SetDown("glance", true)
	b := env.backend(t, backendOpts{settings: map[string]any{"force_destroy": true}})
	res := create(t, b, resource(1), "glance-down")
	err := b.Delete(ctxT(t), res)
	if err == nil || !failure.IsTransient(err) || !strings.Contains(err.Error(), "image") {
		t.Fatalf("delete with Glance down: %v, want a transient error naming the image service", err)
	}
	env.sim.SetDown("glance", false)
	if err := b.Delete(ctxT(t), res); err != nil {
		t.Fatalf("delete once Glance is back: %v", err)
	}
	if got := workloads(env.sim.ObjectsOf(res.BackendID)); !cmp.Equal(got, openstacksim.Objects{}) {
		t.Errorf("left behind %+v", got)
	}
}
