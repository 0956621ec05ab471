package tenant

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2"

	osc "github.com/waldur/site-agent/internal/clients/openstack"
)

// Leftover is one object a project's users made (not the agent) that terminate must delete
// (force_destroy) or refuse to leave behind.
type Leftover struct {
	ID, Name string
	Service  string // for error classification: nova, cinder, glance, octavia, neutron
	Busy     bool   // its deletion is under way: nothing to ask
	Blocked  bool   // cannot be deleted yet (a backup other backups are based on)
	Status   string // e.g. SOFT_DELETED servers, protected images
	// AttachedTo are the servers a volume is attached to.
	AttachedTo []string
}

// Kind is one sort of leftover. Kinds are deleted in the order of their list; a kind waits
// while any kind in After still has objects.
type Kind struct {
	Name   string // singular, as shown to users: "server", "load balancer"
	After  []string
	List   func(ctx context.Context, s Services, projectID string) ([]Leftover, error)
	Remove func(ctx context.Context, s Services, o Leftover) error
}

// Inventory is what a project holds, by kind name, with the kinds in deletion order.
type Inventory struct {
	Kinds []Kind
	By    map[string][]Leftover
}

// Find lists every kind's objects in the project.
func Find(ctx context.Context, s Services, kinds []Kind, projectID string) (Inventory, error) {
	inv := Inventory{Kinds: kinds, By: map[string][]Leftover{}}
	for _, k := range kinds {
		found, err := k.List(ctx, s, projectID)
		if err != nil {
			return inv, err
		}
		if len(found) > 0 {
			inv.By[k.Name] = found
		}
	}
	return inv, nil
}

// Empty: nothing left.
func (inv Inventory) Empty() bool {
	for _, l := range inv.By {
		if len(l) > 0 {
			return false
		}
	}
	return true
}

// Filter keeps the objects keep accepts.
func (inv Inventory) Filter(keep func(kind string, o Leftover) bool) Inventory {
	out := Inventory{Kinds: inv.Kinds, By: map[string][]Leftover{}}
	for k, l := range inv.By {
		for _, o := range l {
			if keep(k, o) {
				out.By[k] = append(out.By[k], o)
			}
		}
	}
	return out
}

// Settled: no object's deletion is under way.
func (inv Inventory) Settled() bool {
	for _, l := range inv.By {
		for _, o := range l {
			if o.Busy {
				return false
			}
		}
	}
	return true
}

// String names every kind present with its count, e.g. "1 server(s), 2 volume(s) and 1 image(s)".
func (inv Inventory) String() string {
	var parts []string
	for _, k := range inv.Kinds {
		if n := len(inv.By[k.Name]); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s(s)", n, k.Name))
		}
	}
	return joinAnd(parts)
}

// Names lists every object with its kind, name and id, e.g. "server web (8c1…), volume data (77e…)".
func (inv Inventory) Names() string {
	var parts []string
	for _, k := range inv.Kinds {
		var these []string
		for _, o := range inv.By[k.Name] {
			name := o.Name
			if name == "" {
				name = "(no name)"
			}
			these = append(these, fmt.Sprintf("%s %s (%s)", k.Name, name, o.ID))
		}
		sort.Strings(these)
		parts = append(parts, these...)
	}
	return joinAnd(parts)
}

func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// RemoveAll asks for the deletion of every leftover that can go now. Refusals that resolve on
// their own (409 while an object changes state, Cinder's 400 for a volume still attached) are
// not errors: the first is returned as a note for the caller's message.
func RemoveAll(ctx context.Context, s Services, inv Inventory) (string, error) {
	note := ""
	for _, k := range inv.Kinds {
		if waits(inv, k.After) {
			continue
		}
		for _, o := range inv.By[k.Name] {
			if o.Busy || o.Blocked {
				continue
			}
			err := k.Remove(ctx, s, o)
			switch {
			case err == nil || gophercloud.ResponseCodeIs(err, http.StatusNotFound):
			case gophercloud.ResponseCodeIs(err, http.StatusConflict) || gophercloud.ResponseCodeIs(err, http.StatusBadRequest):
				if note == "" {
					note = fmt.Sprintf("%s %s: %v", k.Name, o.ID, osc.Classify(o.Service, err))
				}
			default:
				return note, osc.Classify(o.Service, fmt.Errorf("delete %s %s: %w", k.Name, o.ID, err))
			}
		}
	}
	return note, nil
}

func waits(inv Inventory, after []string) bool {
	for _, a := range after {
		if len(inv.By[a]) > 0 {
			return true
		}
	}
	return false
}
