package backends

import (
	"context"
	"time"
)

// Observer is told about every backend operation (for metrics and debug logs).
type Observer func(operation string, took time.Duration, err error)

// Instrument wraps every role of s so that obs sees each call.
func Instrument(s Set, obs Observer) Set {
	out := s
	in := instr{obs}
	if s.Provisioner != nil {
		out.Provisioner = instrProvisioner{s.Provisioner, in}
	}
	if s.Members != nil {
		out.Members = instrMembers{s.Members, in}
	}
	if s.Usage != nil {
		out.Usage = instrUsage{s.Usage, in}
	}
	if s.Reconciler != nil {
		out.Reconciler = instrReconciler{s.Reconciler, in}
	}
	if s.Status != nil {
		out.Status = instrStatus{s.Status, in}
	}
	if s.Limits != nil {
		out.Limits = instrLimits{s.Limits, in}
	}
	if s.Projects != nil {
		out.Projects = instrProjects{s.Projects, in}
	}
	return out
}

type instr struct{ obs Observer }

func (i instr) track(op string, fn func() error) error {
	start := time.Now()
	err := fn()
	i.obs(op, time.Since(start), err)
	return err
}

type instrProvisioner struct {
	p Provisioner
	instr
}

func (w instrProvisioner) Create(ctx context.Context, req CreateRequest) (info Info, err error) {
	err = w.track("create", func() error { info, err = w.p.Create(ctx, req); return err })
	return info, err
}
func (w instrProvisioner) Lookup(ctx context.Context, res Resource) (info Info, err error) {
	err = w.track("lookup", func() error { info, err = w.p.Lookup(ctx, res); return err })
	return info, err
}
func (w instrProvisioner) SetLimits(ctx context.Context, res Resource, q Quantities) error {
	return w.track("set_limits", func() error { return w.p.SetLimits(ctx, res, q) })
}
func (w instrProvisioner) Delete(ctx context.Context, res Resource) error {
	return w.track("delete", func() error { return w.p.Delete(ctx, res) })
}

type instrMembers struct {
	m MembershipManager
	instr
}

func (w instrMembers) Members(ctx context.Context, res Resource) (out []string, err error) {
	err = w.track("members", func() error { out, err = w.m.Members(ctx, res); return err })
	return out, err
}
func (w instrMembers) AddMembers(ctx context.Context, res Resource, ms []Member) error {
	return w.track("add_members", func() error { return w.m.AddMembers(ctx, res, ms) })
}
func (w instrMembers) RemoveMembers(ctx context.Context, res Resource, us []string) error {
	return w.track("remove_members", func() error { return w.m.RemoveMembers(ctx, res, us) })
}

type instrUsage struct {
	u UsageReporter
	instr
}

func (w instrUsage) Usage(ctx context.Context, rs []Resource, p Period, cur bool) (out map[string]Usage, err error) {
	err = w.track("usage", func() error { out, err = w.u.Usage(ctx, rs, p, cur); return err })
	return out, err
}

type instrReconciler struct {
	r Reconciler
	instr
}

func (w instrReconciler) Reconcile(ctx context.Context, res Resource) error {
	return w.track("reconcile", func() error { return w.r.Reconcile(ctx, res) })
}

type instrStatus struct {
	s StatusController
	instr
}

func (w instrStatus) Pause(ctx context.Context, res Resource) error {
	return w.track("pause", func() error { return w.s.Pause(ctx, res) })
}
func (w instrStatus) Downscale(ctx context.Context, res Resource) error {
	return w.track("downscale", func() error { return w.s.Downscale(ctx, res) })
}
func (w instrStatus) Restore(ctx context.Context, res Resource) error {
	return w.track("restore", func() error { return w.s.Restore(ctx, res) })
}

type instrLimits struct {
	l LimitsReader
	instr
}

func (w instrLimits) Limits(ctx context.Context, res Resource) (out Quantities, err error) {
	err = w.track("limits", func() error { out, err = w.l.Limits(ctx, res); return err })
	return out, err
}

type instrProjects struct {
	p ProjectSyncer
	instr
}

func (w instrProjects) WantsResourceGrants() bool { return w.p.WantsResourceGrants() }
func (w instrProjects) SyncProjects(ctx context.Context, req ProjectSync) (out ProjectReport, err error) {
	err = w.track("sync_projects", func() error { out, err = w.p.SyncProjects(ctx, req); return err })
	return out, err
}
