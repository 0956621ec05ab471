package backends

import (
	"context"
	"time"
)

// Observer is told about every backend operation (for metrics and debug logs).
type Observer func(operation string, took time.Duration, err error)

// Instrument wraps every role of s so that obs sees each call.
func Instrument(s Set, obs Observer) Set {
	out, in := s, instr{obs}
	out.Provisioner = wrap(s.Provisioner, func(r Provisioner) Provisioner { return instrProvisioner{r, in} })
	out.Members = wrap(s.Members, func(r MembershipManager) MembershipManager { return instrMembers{r, in} })
	out.Usage = wrap(s.Usage, func(r UsageReporter) UsageReporter { return instrUsage{r, in} })
	out.Reconciler = wrap(s.Reconciler, func(r Reconciler) Reconciler { return instrReconciler{r, in} })
	out.Status = wrap(s.Status, func(r StatusController) StatusController { return instrStatus{r, in} })
	out.Limits = wrap(s.Limits, func(r LimitsReader) LimitsReader { return instrLimits{r, in} })
	out.Projects = wrap(s.Projects, func(r ProjectSyncer) ProjectSyncer { return instrProjects{r, in} })
	return out
}

// wrap returns w(role), or role itself when the backend lacks it (nil).
func wrap[R comparable](role R, w func(R) R) R {
	var none R
	if role == none {
		return role
	}
	return w(role)
}

type instr struct{ obs Observer }

func (i instr) track(op string, fn func() error) error {
	start := time.Now()
	err := fn()
	i.obs(op, time.Since(start), err)
	return err
}

// tracked is track for calls that return a value.
func tracked[T any](i instr, op string, fn func() (T, error)) (out T, err error) {
	err = i.track(op, func() error { out, err = fn(); return err })
	return out, err
}

type instrProvisioner struct {
	p Provisioner
	instr
}

func (w instrProvisioner) Create(ctx context.Context, req CreateRequest) (Info, error) {
	return tracked(w.instr, "create", func() (Info, error) { return w.p.Create(ctx, req) })
}
func (w instrProvisioner) Lookup(ctx context.Context, res Resource) (Info, error) {
	return tracked(w.instr, "lookup", func() (Info, error) { return w.p.Lookup(ctx, res) })
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

func (w instrMembers) Members(ctx context.Context, res Resource) ([]string, error) {
	return tracked(w.instr, "members", func() ([]string, error) { return w.m.Members(ctx, res) })
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

func (w instrUsage) Usage(ctx context.Context, rs []Resource, p Period, cur bool) (map[string]Usage, error) {
	return tracked(w.instr, "usage", func() (map[string]Usage, error) { return w.u.Usage(ctx, rs, p, cur) })
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

func (w instrLimits) Limits(ctx context.Context, res Resource) (Quantities, error) {
	return tracked(w.instr, "limits", func() (Quantities, error) { return w.l.Limits(ctx, res) })
}

type instrProjects struct {
	p ProjectSyncer
	instr
}

func (w instrProjects) WantsResourceGrants() bool { return w.p.WantsResourceGrants() }
func (w instrProjects) SyncProjects(ctx context.Context, req ProjectSync) (ProjectReport, error) {
	return tracked(w.instr, "sync_projects", func() (ProjectReport, error) { return w.p.SyncProjects(ctx, req) })
}
