package rke2

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/clients/keycloak"
	"github.com/waldur/site-agent/internal/failure"
)

// Access gives the resource's team a cluster role through Keycloak (seed 000): a parent group
// c_<cluster> with one child group per role template, c_<cluster>_<role template>, bound to the
// cluster with a cluster role template binding (principal keycloakoidc_group://<child>). Team
// sync adds and removes the members of the child group. With no Keycloak configured the
// backend claims no membership role.
type Access struct {
	b  *Backend
	kc *keycloak.Client
	// Role is the role template the team gets (default cluster-member).
	Role string
}

// AccessFor adds Keycloak-backed membership to the backend.
func (b *Backend) AccessFor(kc *keycloak.Client, role string) *Access {
	if role == "" {
		role = "cluster-member"
	}
	return &Access{b: b, kc: kc, Role: role}
}

var _ backends.MembershipManager = (*Access)(nil)

func parentGroup(cluster string) string { return "c_" + cluster }

func (a *Access) child(cluster string) string { return parentGroup(cluster) + "_" + a.Role }

// Principal is the Rancher principal of the cluster's team group.
func (a *Access) Principal(cluster string) string { return "keycloakoidc_group://" + a.child(cluster) }

// ensure makes the team group and binds it to the cluster; it returns the group id.
func (a *Access) ensure(ctx context.Context, res backends.Resource) (string, error) {
	ref := ClusterRef{UUID: res.UUID, Name: res.BackendID}
	rc, err := a.b.managementCluster(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("rancher cluster: %w", err)
	}
	if rc.ManagementID == "" {
		return "", notReady(ref, "no management id yet for the team binding")
	}
	id, _, err := a.kc.EnsureChildGroup(ctx, parentGroup(res.BackendID), "Waldur cluster "+res.BackendID,
		a.child(res.BackendID), "Role "+a.Role+" on cluster "+res.BackendID)
	if err != nil {
		return "", fmt.Errorf("keycloak group: %w", err)
	}
	// Bound on every call, not only when the group was created: one listing repairs a binding
	// removed behind the agent's back.
	if err := a.b.d.Rancher.BindGroup(ctx, rc, a.Principal(res.BackendID), a.Role); err != nil {
		return "", fmt.Errorf("bind %s: %w", a.child(res.BackendID), err)
	}
	return id, nil
}

// Members lists the usernames in the cluster's team group.
func (a *Access) Members(ctx context.Context, res backends.Resource) ([]string, error) {
	id, found, err := a.kc.FindChildGroup(ctx, parentGroup(res.BackendID), a.child(res.BackendID))
	if err != nil || !found {
		return nil, err
	}
	users, err := a.kc.Members(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(users))
	for _, u := range users {
		out = append(out, strings.ToLower(u.Username))
	}
	return out, nil
}

// AddMembers puts the users into the team group (users Keycloak does not know yet are skipped
// and logged; the next pass tries again).
func (a *Access) AddMembers(ctx context.Context, res backends.Resource, members []backends.Member) error {
	id, err := a.ensure(ctx, res)
	if err != nil {
		return err
	}
	for _, m := range members {
		u, found, err := a.kc.FindUser(ctx, m.Username, false)
		if err != nil {
			return err
		}
		if !found {
			backends.Log(ctx, a.b.d.Log).Warn("user not in keycloak yet; access waits", zap.String("user", m.Username), zap.String("cluster", res.BackendID))
			continue
		}
		if err := a.kc.AddMember(ctx, u.ID, id); err != nil {
			return err
		}
	}
	return nil
}

// RemoveMembers takes the users out of the team group.
func (a *Access) RemoveMembers(ctx context.Context, res backends.Resource, usernames []string) error {
	id, found, err := a.kc.FindChildGroup(ctx, parentGroup(res.BackendID), a.child(res.BackendID))
	if err != nil || !found {
		return err
	}
	for _, name := range usernames {
		u, found, err := a.kc.FindUser(ctx, name, false)
		if err != nil {
			return err
		}
		if found {
			if err := a.kc.RemoveMember(ctx, u.ID, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// remove deletes the cluster's team group, its parent and its binding (terminate).
func (a *Access) remove(ctx context.Context, ref ClusterRef) error {
	if rc, err := a.b.d.Rancher.Cluster(ctx, ref); err == nil && rc.ManagementID != "" {
		if err := a.b.d.Rancher.UnbindGroups(ctx, rc, []string{a.Principal(ref.Name)}); err != nil {
			return fmt.Errorf("unbind: %w", err)
		}
	} else if err != nil && !errors.Is(err, failure.ErrNotFound) {
		return err
	}
	id, found, err := a.kc.FindChildGroup(ctx, parentGroup(ref.Name), a.child(ref.Name))
	if err != nil {
		return err
	}
	if found {
		if err := a.kc.DeleteGroup(ctx, id); err != nil {
			return err
		}
	}
	_, err = a.kc.DeleteParentIfEmpty(ctx, parentGroup(ref.Name))
	return err
}

// WithAccess is the backend with Keycloak membership: it adds the membership role and removes
// the team group and its binding when the cluster is terminated.
type WithAccess struct {
	*Backend
	*Access
}

var (
	_ backends.MembershipManager = WithAccess{}
	_ backends.Provisioner       = WithAccess{}
)

// Create builds the cluster, then gives the order's team access to it.
func (w WithAccess) Create(ctx context.Context, req backends.CreateRequest) (backends.Info, error) {
	info, err := w.Backend.Create(ctx, req)
	if err != nil || len(req.Members) == 0 {
		return info, err
	}
	res := req.Resource
	res.BackendID = info.BackendID
	if err := w.Access.AddMembers(ctx, res, req.Members); err != nil {
		return info, fmt.Errorf("team access: %w", err)
	}
	return info, nil
}

// Probes adds Keycloak to the cluster backend's.
func (w WithAccess) Probes() []backends.Probe {
	return append(w.Backend.Probes(), backends.Probe{Upstream: "keycloak", Run: func(ctx context.Context) []backends.Check {
		var out []backends.Check
		for _, l := range w.Access.kc.Diagnose(ctx) {
			out = append(out, backends.Check(l))
		}
		return out
	}})
}

// Delete removes the team group and binding, then the cluster.
func (w WithAccess) Delete(ctx context.Context, res backends.Resource) error {
	if err := w.Access.remove(ctx, ClusterRef{UUID: res.UUID, Name: res.BackendID}); err != nil {
		return fmt.Errorf("team access: %w", err)
	}
	return w.Backend.Delete(ctx, res)
}
