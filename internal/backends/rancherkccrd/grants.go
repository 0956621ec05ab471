package rancherkccrd

import (
	"github.com/waldur/site-agent/internal/backends"
)

// Messages of the grant states (the incumbent's words).
const (
	msgProviderFailed = "Reconciliation failed on the provider side"
	msgNotConfirmed   = "User not confirmed in the identity provider; access activates after their first login"
	msgNoProjectYet   = "No resource project carries the cluster roles yet; they are applied with the first one"
)

// grantState is the state of one grant given the phase the agent acts on and whether the
// operator confirmed the member:
//
//	Error → error; Ready and confirmed → synced; Ready and not confirmed → missing_in_idp;
//	anything else (Pending, Creating, Updating, Deleting, no status, a stale status) → pending.
//
// The incumbent reported Deleting like Ready (synced or missing_in_idp), and trusted a status
// written for an older spec; both count as in progress here.
func grantState(phase string, confirmed bool) (state, message string) {
	switch {
	case phase == phaseError:
		return backends.GrantError, msgProviderFailed
	case phase != phaseReady:
		return backends.GrantPending, ""
	case confirmed:
		return backends.GrantSynced, ""
	default:
		return backends.GrantMissingInIdP, msgNotConfirmed
	}
}

// projectGrants reports the grants of one resource project whose role the map knows and whose
// member has an identifier (unmapped roles never reach the custom resource: not reported).
// buildErr, when set, is why the custom resource could not be written: every grant is error.
func (c *config) projectGrants(rp backends.ResourceProject, o observed, buildErr string) []backends.GrantStatus {
	confirmed := o.status.confirmed(false)
	var out []backends.GrantStatus
	for _, g := range rp.Grants {
		id := c.identifier(g)
		if _, mapped := c.roleMap[g.Role]; !mapped || g.Role == "" || id == "" {
			continue
		}
		state, msg := grantState(o.phase(), confirmed[id])
		if buildErr != "" {
			state, msg = backends.GrantError, buildErr
		}
		out = append(out, c.status(backends.ScopeResourceProject, hexUUID(rp.UUID), g, state, msg))
	}
	return out
}

// clusterGrants reports the resource-scope grants. Every custom resource of the resource
// carries the same cluster bindings and the operator shares the groups, so any up-to-date Ready
// one speaks for all: synced when one of them confirms the member, missing_in_idp when one is
// Ready without it, else error when one failed, else pending. (The incumbent read only the last
// resource project's status.) Without any resource project nothing carries them: pending.
func (c *config) clusterGrants(grants []backends.Grant, all []observed) []backends.GrantStatus {
	var out []backends.GrantStatus
	for _, g := range grants {
		id := c.identifier(g)
		if _, mapped := c.clusterRoleMap[g.Role]; !mapped || g.Role == "" || id == "" {
			continue
		}
		state, msg := backends.GrantPending, msgNoProjectYet
		if len(all) > 0 {
			state, msg = clusterState(id, all)
		}
		out = append(out, c.status(backends.ScopeResource, "", g, state, msg))
	}
	return out
}

func clusterState(id string, all []observed) (string, string) {
	ready, failed := false, false
	for _, o := range all {
		switch o.phase() {
		case phaseReady:
			if o.status.confirmed(true)[id] {
				return grantState(phaseReady, true)
			}
			ready = true
		case phaseError:
			failed = true
		}
	}
	switch {
	case ready:
		return grantState(phaseReady, false)
	case failed:
		return grantState(phaseError, false)
	}
	return grantState("", false)
}

func (c *config) status(scope, rpUUID string, g backends.Grant, state, msg string) backends.GrantStatus {
	s := backends.GrantStatus{Scope: scope, ProjectUUID: rpUUID, Role: g.Role, State: state, Message: msg}
	if c.useUserID {
		s.UserUUID = hexUUID(g.UserUUID)
	} else {
		s.Username = g.Username
	}
	return s
}

// outcome is a resource project's state as the operator reports it.
func outcome(rpUUID string, o observed, buildErr string) backends.ProjectOutcome {
	out := backends.ProjectOutcome{UUID: rpUUID}
	switch {
	case buildErr != "":
		out.Phase, out.Message = backends.ProjectFailed, buildErr
	case o.phase() == phaseReady:
		out.Phase = backends.ProjectReady
	case o.phase() == phaseError:
		out.Phase, out.Message = backends.ProjectFailed, o.status.failure()
	}
	return out
}
