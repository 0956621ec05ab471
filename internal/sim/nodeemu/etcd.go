package nodeemu

import (
	"fmt"
	"sort"
	"sync"
)

// Etcd is an emulated cluster's etcd membership, as etcd keeps it: the initial server starts
// the cluster alone; a joining server is added through the live members (MemberAdd needs a
// quorum); a member whose machine is gone stays a member — dead, counted in the quorum — until
// it is removed (MemberRemove: a change of the configuration, so it needs the members' quorum
// to commit, and etcd's strict reconfiguration check refuses it when the members left would have
// no quorum). Every moment without quorum is recorded (Problems).
// EtcdProcs (etcdreal.go) is the same with real etcd members.
type Etcd interface {
	// Add makes the server a member: the first one starts the cluster.
	Add(name string) error
	// Down: the member's machine is gone (it stays a member).
	Down(name string)
	// Remove removes the member; true when it is not (or no longer) a member.
	Remove(name string) (bool, error)
	// Members lists "name" of live and "name(dead)" of dead members, sorted.
	Members() []string
	// Problems lists the moments the cluster had no quorum, and failed writes.
	Problems() []string
}

// MemEtcd is Etcd in memory.
type MemEtcd struct {
	mu       sync.Mutex
	members  map[string]bool // name → live
	problems []string
}

// NewMemEtcd returns an empty membership.
func NewMemEtcd() *MemEtcd { return &MemEtcd{members: map[string]bool{}} }

func (e *MemEtcd) quorateLocked(members map[string]bool) (bool, int) {
	live := 0
	for _, up := range members {
		if up {
			live++
		}
	}
	return len(members) == 0 || live >= len(members)/2+1, live
}

func (e *MemEtcd) checkLocked(when string) {
	if ok, live := e.quorateLocked(e.members); !ok {
		e.problems = append(e.problems, fmt.Sprintf("etcd without quorum %s: %d live of %d members %v", when, live, len(e.members), e.listLocked()))
	}
}

// Add implements Etcd.
func (e *MemEtcd) Add(name string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.members[name]; ok {
		return fmt.Errorf("etcd: member %s already exists", name)
	}
	if ok, live := e.quorateLocked(e.members); !ok {
		return fmt.Errorf("%w: %s: etcd cannot add a member without quorum (%d live of %d)", ErrRefused, name, live, len(e.members))
	}
	e.members[name] = true
	e.checkLocked("after " + name + " joined")
	return nil
}

// Down implements Etcd.
func (e *MemEtcd) Down(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.members[name]; ok {
		e.members[name] = false
		e.checkLocked("after " + name + "'s machine went")
	}
}

// Up: the member's machine answers again (a member that was down; no effect otherwise).
// Optional for an Etcd: Cluster.Start uses it when present.
func (e *MemEtcd) Up(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.members[name]; ok {
		e.members[name] = true
	}
}

// Remove implements Etcd.
func (e *MemEtcd) Remove(name string) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.members[name]; !ok {
		return true, nil
	}
	if ok, live := e.quorateLocked(e.members); !ok {
		return false, fmt.Errorf("etcd: removing %s needs a quorum to commit (%d live of %d)", name, live, len(e.members))
	}
	rest := map[string]bool{}
	for k, v := range e.members {
		if k != name {
			rest[k] = v
		}
	}
	if ok, _ := e.quorateLocked(rest); !ok {
		return false, fmt.Errorf("etcd: removing %s would leave the cluster without quorum", name)
	}
	delete(e.members, name)
	return true, nil
}

// Members implements Etcd.
func (e *MemEtcd) Members() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.listLocked()
}

func (e *MemEtcd) listLocked() []string {
	out := make([]string, 0, len(e.members))
	for n, up := range e.members {
		if !up {
			n += "(dead)"
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Problems implements Etcd.
func (e *MemEtcd) Problems() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.problems...)
}
