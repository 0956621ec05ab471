package rke2

import (
	"context"
	"fmt"
	"sort"
)

// The memWorld's etcd: a server becomes a member of its cluster's etcd when it registers, and
// stays one — dead or alive — until the member is removed, as real etcd keeps a member whose
// machine is gone (etcd's membership changes only through MemberRemove; RKE2's and k3s's
// managed-etcd controller calls it for a Node annotated etcd.<runtime>.cattle.io/remove=true or
// deleted, pkg/etcd/member_controller.go). Deleting a member's VM while other members remain
// is a test failure (its vote would be lost, not removed), and so is any moment without
// quorum: live members must be a majority of all members.

// etcdMembers returns the cluster's member set, creating it.
func (w *memWorld) etcdMembers(cluster string) map[string]bool {
	if w.etcd == nil {
		w.etcd = map[string]map[string]bool{}
	}
	if w.etcd[cluster] == nil {
		w.etcd[cluster] = map[string]bool{}
	}
	return w.etcd[cluster]
}

// etcdJoin makes a registered server a member (called with w.mu held).
func (w *memWorld) etcdJoin(cluster, node string) {
	w.etcdMembers(cluster)[node] = true
	w.checkQuorum(cluster, "after "+node+" joined")
}

// liveMember: the member's VM exists and runs.
func (w *memWorld) liveMember(node string) bool {
	for _, vm := range w.servers {
		if vm.view.Name == node && vm.view.Status == "ACTIVE" {
			return true
		}
	}
	return false
}

func (w *memWorld) quorate(members map[string]bool) (bool, int) {
	live := 0
	for m := range members {
		if w.liveMember(m) {
			live++
		}
	}
	return len(members) == 0 || live >= len(members)/2+1, live
}

func (w *memWorld) checkQuorum(cluster, when string) {
	if w.terminating[cluster] {
		return
	}
	members := w.etcdMembers(cluster)
	if ok, live := w.quorate(members); !ok {
		w.t.Fatalf("etcd lost quorum %s: %d live of %d members %v", when, live, len(members), sortedKeys(members))
	}
}

// etcdVMDeleted asserts that a server VM goes only after its member was removed (unless it is
// the last member, or the cluster is being deleted as a whole), then that quorum holds.
func (w *memWorld) etcdVMDeleted(cluster, node string) {
	members := w.etcdMembers(cluster)
	if members[node] && len(members) > 1 && !w.terminating[cluster] && w.vmsNamed(node) == 0 {
		w.t.Fatalf("server %s's VM was deleted while it is still an etcd member of %v: etcd keeps counting it", node, sortedKeys(members))
	}
	if w.vmsNamed(node) == 0 && len(members) == 1 && members[node] {
		delete(members, node) // the last member goes with the cluster's data
	}
	w.checkQuorum(cluster, "after "+node+"'s VM was deleted")
}

// RemoveEtcdMember implements Rancher: the first call asks (the annotation, or the machine's
// deletion), the member controller removes the member a tick later; etcd refuses a removal
// that would leave the remaining members without quorum (--strict-reconfig-check).
func (m memRancher) RemoveEtcdMember(_ context.Context, rc RancherCluster, node string) (bool, error) {
	w := m.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.call("RemoveEtcdMember"); err != nil {
		return false, err
	}
	uuid := m.uuidOf(rc)
	members := w.etcdMembers(uuid)
	if !members[node] {
		return true, nil
	}
	if w.etcdRemoveAsked == nil {
		w.etcdRemoveAsked = map[string]int{}
	}
	key := uuid + "/" + node
	if _, asked := w.etcdRemoveAsked[key]; !asked {
		w.etcdRemoveAsked[key] = w.tickCount
		return false, nil
	}
	if w.etcdRemoveAsked[key] == w.tickCount {
		return false, nil
	}
	rest := map[string]bool{}
	for k := range members {
		if k != node {
			rest[k] = true
		}
	}
	if ok, _ := w.quorate(rest); !ok {
		w.t.Fatalf("etcd member %s removed although the remaining members %v have no quorum", node, sortedKeys(rest))
	}
	delete(members, node)
	delete(w.etcdRemoveAsked, key)
	return true, nil
}

func (m memRancher) uuidOf(rc RancherCluster) string {
	for uuid, c := range m.w.clusters {
		if c.mgmtID == rc.ManagementID {
			return uuid
		}
	}
	panic(fmt.Sprintf("no cluster %s", rc.ManagementID))
}

// EtcdMembers lists the cluster's members (tests).
func (w *memWorld) EtcdMembers(cluster string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return sortedKeys(w.etcdMembers(cluster))
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
