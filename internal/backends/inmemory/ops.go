package inmemory

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/failure"
)

// do runs one operation: latency, context check, fault injection, then fn under the write lock.
// Each change it made is logged (with the order or resource the caller named in ctx).
func (b *Backend) do(ctx context.Context, op string, fn func(*state) error) error {
	b.pause()
	if err := ctx.Err(); err != nil {
		return err
	}
	var changes []Op
	err := b.write(func(st *state) error {
		if err := b.fault(op); err != nil {
			return err
		}
		before := len(st.Ops)
		if err := fn(st); err != nil {
			return err
		}
		changes = append(changes, st.Ops[before:]...)
		return nil
	})
	if err != nil {
		return err
	}
	log := backends.Log(ctx, b.log)
	for _, c := range changes {
		log.Info("in-memory object changed", zap.String("op", c.Op), zap.String("id", c.ID), zap.String("detail", c.Detail))
	}
	return nil
}

// Create implements backends.Provisioner.
func (b *Backend) Create(ctx context.Context, req backends.CreateRequest) (backends.Info, error) {
	if id := req.Resource.BackendID; id != "" {
		req.Name = id // ids are names here: a vanished object comes back under its old id
	}
	if req.Name == "" {
		return backends.Info{}, failure.Errorf("no name given for the new resource")
	}
	var info backends.Info
	err := b.do(ctx, "create", func(st *state) error {
		obj, exists := st.Objects[req.Name]
		switch {
		case exists && obj.ResourceUUID != req.Resource.UUID:
			return fmt.Errorf("%q belongs to resource %s: %w", req.Name, obj.ResourceUUID, failure.ErrDuplicate)
		case exists:
			if !maps.Equal(obj.Limits, req.Resource.Limits) {
				obj.Limits = req.Resource.Limits.Clone()
				st.log("set_limits", obj.ID, formatQ(obj.Limits))
			}
		default:
			obj = &Object{ID: req.Name, ResourceUUID: req.Resource.UUID, Limits: req.Resource.Limits.Clone(),
				Description: describe(req.Resource), Created: time.Now().UTC()}
			st.Objects[obj.ID] = obj
			st.log("create", obj.ID, formatQ(obj.Limits))
		}
		for _, m := range req.Members {
			if addMember(obj, m.Username) {
				st.log("add_member", obj.ID, m.Username)
			}
		}
		info = backends.Info{BackendID: obj.ID, Limits: obj.Limits.Clone()}
		return nil
	})
	return info, err
}

// Lookup implements backends.Provisioner.
func (b *Backend) Lookup(ctx context.Context, res backends.Resource) (backends.Info, error) {
	var info backends.Info
	err := b.read(func(st *state) error {
		obj, ok := st.Objects[res.BackendID]
		if !ok {
			return fmt.Errorf("in-memory object %q: %w", res.BackendID, failure.ErrNotFound)
		}
		info = backends.Info{BackendID: obj.ID, Limits: obj.Limits.Clone()}
		return nil
	})
	return info, err
}

// SetLimits implements backends.Provisioner.
func (b *Backend) SetLimits(ctx context.Context, res backends.Resource, limits backends.Quantities) error {
	return b.do(ctx, "set_limits", func(st *state) error {
		obj, err := find(st, res)
		if err != nil {
			return err
		}
		if !maps.Equal(obj.Limits, limits) {
			obj.Limits = limits.Clone()
			st.log("set_limits", obj.ID, formatQ(limits))
		}
		return nil
	})
}

// Delete implements backends.Provisioner; deleting a missing object succeeds.
func (b *Backend) Delete(ctx context.Context, res backends.Resource) error {
	return b.do(ctx, "delete", func(st *state) error {
		if _, ok := st.Objects[res.BackendID]; ok {
			delete(st.Objects, res.BackendID)
			st.log("delete", res.BackendID, "")
		}
		return nil
	})
}

// Members implements backends.MembershipManager.
func (b *Backend) Members(ctx context.Context, res backends.Resource) ([]string, error) {
	var out []string
	err := b.read(func(st *state) error {
		obj, err := find(st, res)
		if err != nil {
			return err
		}
		out = append(out, obj.Members...)
		return nil
	})
	return out, err
}

// AddMembers implements backends.MembershipManager.
func (b *Backend) AddMembers(ctx context.Context, res backends.Resource, members []backends.Member) error {
	return b.do(ctx, "add_members", func(st *state) error {
		obj, err := find(st, res)
		if err != nil {
			return err
		}
		for _, m := range members {
			if addMember(obj, m.Username) {
				st.log("add_member", obj.ID, m.Username)
			}
		}
		return nil
	})
}

// RemoveMembers implements backends.MembershipManager.
func (b *Backend) RemoveMembers(ctx context.Context, res backends.Resource, usernames []string) error {
	return b.do(ctx, "remove_members", func(st *state) error {
		obj, err := find(st, res)
		if err != nil {
			return err
		}
		drop := map[string]bool{}
		for _, u := range usernames {
			drop[u] = true
		}
		kept := obj.Members[:0]
		for _, u := range obj.Members {
			if drop[u] {
				st.log("remove_member", obj.ID, u)
				continue
			}
			kept = append(kept, u)
		}
		obj.Members = kept
		return nil
	})
}

func find(st *state, res backends.Resource) (*Object, error) {
	obj, ok := st.Objects[res.BackendID]
	if !ok {
		return nil, fmt.Errorf("in-memory object %q: %w", res.BackendID, failure.ErrNotFound)
	}
	return obj, nil
}

func addMember(obj *Object, username string) bool {
	for _, u := range obj.Members {
		if u == username {
			return false
		}
	}
	obj.Members = append(obj.Members, username)
	sort.Strings(obj.Members)
	return true
}

func formatQ(q backends.Quantities) string {
	parts := make([]string, 0, len(q))
	for _, k := range q.Keys() {
		parts = append(parts, fmt.Sprintf("%s=%g", k, q[k]))
	}
	return strings.Join(parts, " ")
}

func describe(r backends.Resource) string {
	return fmt.Sprintf("%s (customer %s, project %s)", r.Name, r.CustomerSlug, r.ProjectSlug)
}
