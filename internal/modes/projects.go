package modes

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
	wc "github.com/waldur/site-agent/internal/waldurclient"
)

// projectPass is what a membership pass knows about Waldur for resource-project backends.
type projectPass struct {
	syncer   backends.ProjectSyncer
	statuses bool // report membership sync statuses
}

// syncProjects is the membership of one resource for a backends.ProjectSyncer: the resource's
// resource projects and their grants go to the backend; each project's outcome goes back as its
// state, each grant's status as a membership sync report, and the backend metadata.
func (m *Membership) syncProjects(ctx context.Context, u *Unit, log *zap.Logger, pp *projectPass, r wc.Resource, res backends.Resource) error {
	req, rps, err := projectRequest(ctx, u, pp.syncer, r, res)
	if err != nil {
		return err
	}
	rep, err := pp.syncer.SyncProjects(ctx, req)
	if err != nil {
		return fmt.Errorf("sync resource projects: %w", err)
	}
	if err := applyOutcomes(ctx, u, log, rps, rep.Projects); err != nil {
		return err
	}
	if pp.statuses {
		reportStatuses(ctx, u, log, m.Env.now(), r.UUID, rep.Grants)
	}
	if rep.Metadata != nil && !sameJSON(rep.Metadata, r.BackendMetadata) {
		if err := u.Waldur.SetResourceMetadata(ctx, r.UUID, rep.Metadata); err != nil {
			return fmt.Errorf("set backend metadata: %w", err)
		}
	}
	return nil
}

// projectRequest reads the resource's resource projects (soft-deleted ones are left out: their
// custom resources are removed) and every grant, all pages.
func projectRequest(ctx context.Context, u *Unit, ps backends.ProjectSyncer, r wc.Resource, res backends.Resource) (
	backends.ProjectSync, map[string]wc.ResourceProject, error) {
	req := backends.ProjectSync{Resource: res}
	list, err := u.Waldur.ListResourceProjects(ctx, r.UUID)
	if err != nil {
		return req, nil, fmt.Errorf("list resource projects: %w", err)
	}
	byUUID := map[string]wc.ResourceProject{}
	for _, rp := range list {
		if rp.IsRemoved {
			continue
		}
		users, err := u.Waldur.ResourceProjectUsers(ctx, rp.UUID)
		if err != nil {
			return req, nil, fmt.Errorf("list the users of resource project %s: %w", rp.UUID, err)
		}
		byUUID[hex(rp.UUID)] = rp
		req.Projects = append(req.Projects, backends.ResourceProject{UUID: hex(rp.UUID), Name: rp.Name,
			Description: rp.Description, Limits: rp.Limits, Grants: toGrants(users)})
	}
	if ps.WantsResourceGrants() {
		users, err := u.Waldur.ResourceUsers(ctx, r.UUID)
		if err != nil {
			return req, nil, fmt.Errorf("list the users of the resource: %w", err)
		}
		req.ResourceGrants = toGrants(users)
	}
	return req, byUUID, nil
}

func toGrants(users []wc.UserRole) []backends.Grant {
	out := make([]backends.Grant, 0, len(users))
	for _, u := range users {
		out = append(out, backends.Grant{Role: u.RoleName, Username: u.UserUsername, UserUUID: hex(u.UserUUID)})
	}
	return out
}

// projectAction is the state change a resource project needs.
type projectAction int

const (
	keepState projectAction = iota
	setProjectOK
	setProjectErred
)

// projectTransition decides a resource project's state change from the provider's outcome:
// Ready moves Creating, Updating and Erred to OK; a failure moves it to Erred with the
// operator's reason, unless it is already Erred for that reason (the incumbent sent the same
// set_state_erred on every pass); anything else waits.
func projectTransition(rp wc.ResourceProject, o backends.ProjectOutcome) projectAction {
	switch o.Phase {
	case backends.ProjectReady:
		switch rp.State {
		case wc.ProjectCreating, wc.ProjectUpdating, wc.ProjectErred:
			return setProjectOK
		}
	case backends.ProjectFailed:
		if rp.State != wc.ProjectErred || rp.ErrorMessage != o.Message {
			return setProjectErred
		}
	}
	return keepState
}

// applyOutcomes sends the state changes. A refused change (another writer moved the project
// meanwhile) is logged and looked at again next pass; a temporary failure fails the resource.
func applyOutcomes(ctx context.Context, u *Unit, log *zap.Logger, rps map[string]wc.ResourceProject, outcomes []backends.ProjectOutcome) error {
	for _, o := range outcomes {
		rp, ok := rps[o.UUID]
		if !ok {
			continue
		}
		var err error
		switch projectTransition(rp, o) {
		case keepState:
			continue
		case setProjectOK:
			if err = u.Waldur.SetResourceProjectOK(ctx, rp.UUID); err == nil {
				log.Info("resource project ready", zap.String("resource_project", rp.UUID), zap.String("was", rp.State))
			}
		case setProjectErred:
			if err = u.Waldur.SetResourceProjectErred(ctx, rp.UUID, o.Message); err == nil {
				log.Warn("resource project failed on the provider side", zap.String("resource_project", rp.UUID), zap.String("reason", o.Message))
			}
		}
		if failure.IsTransient(err) {
			return fmt.Errorf("set the state of resource project %s: %w", rp.UUID, err)
		}
		if err != nil {
			log.Warn("Waldur refused a resource project state change; looked at again next pass", zap.String("resource_project", rp.UUID), zap.Error(err))
		}
	}
	return nil
}

// sentStatuses remembers the last report sent per resource, so an unchanged report is sent
// again only after resendStatuses (Waldur stores exactly what the agent sends).
type sentStatuses struct {
	mu   sync.Mutex
	last map[string]sentReport
}

type sentReport struct {
	body string
	at   time.Time
}

const resendStatuses = time.Hour

// reportStatuses sends the grant statuses as a full-replace report (best effort: a failure is
// logged and the report is sent again next pass).
func reportStatuses(ctx context.Context, u *Unit, log *zap.Logger, now time.Time, resourceUUID string, grants []backends.GrantStatus) {
	entries := make([]wc.MemberSyncStatus, 0, len(grants))
	for _, g := range grants {
		entries = append(entries, wc.MemberSyncStatus{Username: g.Username, UserUUID: g.UserUUID, ScopeType: g.Scope,
			ResourceProjectUUID: g.ProjectUUID, RoleName: g.Role, State: g.State, Message: g.Message})
	}
	body, _ := json.Marshal(entries)
	s := &u.sent
	s.mu.Lock()
	prev, seen := s.last[resourceUUID]
	s.mu.Unlock()
	if seen && prev.body == string(body) && now.Sub(prev.at) < resendStatuses {
		return
	}
	out, err := u.Waldur.SetMembershipSyncStatuses(ctx, resourceUUID, entries)
	if err != nil {
		log.Warn("could not report membership sync statuses; sent again next pass", zap.Error(err))
		return
	}
	if len(out.Skipped) > 0 {
		log.Warn("Waldur did not store the statuses of members it could not find", zap.Strings("skipped", out.Skipped))
	}
	s.mu.Lock()
	if s.last == nil {
		s.last = map[string]sentReport{}
	}
	s.last[resourceUUID] = sentReport{body: string(body), at: now}
	s.mu.Unlock()
}
