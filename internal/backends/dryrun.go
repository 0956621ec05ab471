package backends

import "context"

// DryRun returns a Set whose writes do nothing: reads (lookups, member lists, usage, limits,
// diagnostics) reach the backend, while create, limit changes, deletes, membership changes and
// status changes are only logged by the caller; project syncs are asked to read and report only. Create answers with the proposed name so the
// rest of a dry-run order can be followed; Reconcile is dropped (it repairs, i.e. writes).
func DryRun(s Set) Set {
	out := s
	if s.Provisioner != nil {
		out.Provisioner = dryProvisioner{s.Provisioner}
	}
	if s.Members != nil {
		out.Members = dryMembers{s.Members}
	}
	if s.Status != nil {
		out.Status = dryStatus{}
	}
	if s.Projects != nil {
		out.Projects = dryProjects{s.Projects}
	}
	out.Reconciler = nil
	return out
}

type dryProvisioner struct{ Provisioner }

func (d dryProvisioner) Create(ctx context.Context, req CreateRequest) (Info, error) {
	if info, err := d.Provisioner.Lookup(ctx, Resource{BackendID: req.Name}); err == nil {
		return info, nil
	}
	return Info{BackendID: req.Name, Limits: req.Resource.Limits}, nil
}
func (dryProvisioner) SetLimits(context.Context, Resource, Quantities) error { return nil }
func (dryProvisioner) Delete(context.Context, Resource) error                { return nil }

type dryMembers struct{ MembershipManager }

func (dryMembers) AddMembers(context.Context, Resource, []Member) error    { return nil }
func (dryMembers) RemoveMembers(context.Context, Resource, []string) error { return nil }

type dryStatus struct{}

func (dryStatus) Pause(context.Context, Resource) error     { return nil }
func (dryStatus) Downscale(context.Context, Resource) error { return nil }
func (dryStatus) Restore(context.Context, Resource) error   { return nil }

type dryProjects struct{ ProjectSyncer }

func (d dryProjects) SyncProjects(ctx context.Context, req ProjectSync) (ProjectReport, error) {
	req.DryRun = true
	return d.ProjectSyncer.SyncProjects(ctx, req)
}
