package nodeemu

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// EtcdProcs is Etcd with real members: each server runs an etcd process (Debian's etcd-server
// 3.4) on loopback ports. The initial server starts the cluster (initial-cluster-state new); a
// joining server is added through a live member the way k3s/RKE2 joins (k3s pkg/etcd/etcd.go
// join: MemberAddAsLearner, then etcd started with initial-cluster-state existing) and promoted
// to a voter once it has caught up (manageLearners: MemberPromote); a server whose machine goes
// has its process killed and stays a member until it is removed (MemberRemove, which etcd's
// strict reconfiguration check refuses while it would cost the quorum). Membership requests go
// through etcd's v3 HTTP/JSON gateway. A writer keeps writing while members live (Writes):
// Problems lists every run of failed writes longer than one election, and the moments the
// members had no quorum. Members asks etcd.
type EtcdProcs struct {
	bin, dir, token string
	hc              *http.Client

	change   sync.Mutex // one membership change at a time
	mu       sync.Mutex // the fields below, held briefly (the writer reads procs)
	procs    map[string]*etcdProc
	started  int // processes started (each gets a data directory of its own)
	problems []string
	w        *etcdWriter
}

// NewEtcdProcs returns an empty cluster whose members run bin (default "etcd" on PATH) with
// their data and logs under dir (tmpfs is faster). Close stops them.
func NewEtcdProcs(bin, dir string) *EtcdProcs {
	if bin == "" {
		bin = "etcd"
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	e := &EtcdProcs{bin: bin, dir: dir, token: "nodeemu-" + hex.EncodeToString(b), procs: map[string]*etcdProc{},
		hc: &http.Client{Timeout: 10 * time.Second}}
	e.w = newEtcdWriter(e)
	return e
}

// Close stops the writer and every member.
func (e *EtcdProcs) Close() {
	e.w.stop()
	e.change.Lock()
	defer e.change.Unlock()
	for _, p := range e.snapshot() {
		p.kill()
	}
}

// snapshot copies the processes by name.
func (e *EtcdProcs) snapshot() map[string]*etcdProc {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]*etcdProc, len(e.procs))
	for n, p := range e.procs {
		out[n] = p
	}
	return out
}

func (e *EtcdProcs) setProc(name string, p *etcdProc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p == nil {
		delete(e.procs, name)
		return
	}
	e.procs[name] = p
}

// liveClients are the client URLs of the members whose process runs (except skip), sorted.
func (e *EtcdProcs) liveClients(skip string) []string {
	var out []string
	for n, p := range e.snapshot() {
		if n != skip && p.alive() {
			out = append(out, p.client)
		}
	}
	sort.Strings(out)
	return out
}

// Add implements Etcd.
func (e *EtcdProcs) Add(name string) error {
	e.change.Lock()
	defer e.change.Unlock()
	procs := e.snapshot()
	if _, ok := procs[name]; ok {
		return fmt.Errorf("etcd: member %s already exists", name)
	}
	peer, client, err := loopbackURLs()
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.started++
	dir := filepath.Join(e.dir, fmt.Sprintf("%s-%d", name, e.started))
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if len(procs) == 0 {
		p, err := startEtcd(e.bin, dir, name, e.token, name+"="+peer, "new", peer, client)
		if err != nil {
			return err
		}
		e.setProc(name, p)
		if err := waitHealthy(ctx, e.hc, p); err != nil {
			return err
		}
		e.w.start()
		return nil
	}
	return e.join(ctx, name, dir, peer, client)
}

// join adds a learner through a live member, starts it, and promotes it once in sync (e.change
// held).
func (e *EtcdProcs) join(ctx context.Context, name, dir, peer, client string) error {
	via := e.liveClients("")
	if len(via) == 0 {
		return fmt.Errorf("%w: %s: no live etcd member to join through", ErrRefused, name)
	}
	var added struct {
		Member  etcdMember
		Members []etcdMember
	}
	// etcd refuses to add a member until every voter has been connected for 5 s (strict
	// reconfiguration check: "unhealthy cluster"); RKE2's service restarts and tries again.
	for {
		err := gateway(ctx, e.hc, via[0], "/v3/cluster/member/add", map[string]any{"peerURLs": []string{peer}, "isLearner": true}, &added)
		if err == nil {
			break
		}
		if ctx.Err() != nil || !strings.Contains(err.Error(), "unhealthy cluster") {
			return fmt.Errorf("%w: %s: etcd member add: %v", ErrRefused, name, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	initial := []string{name + "=" + peer}
	for _, m := range added.Members {
		if m.ID != added.Member.ID && m.Name != "" && len(m.PeerURLs) > 0 {
			initial = append(initial, m.Name+"="+m.PeerURLs[0])
		}
	}
	p, err := startEtcd(e.bin, dir, name, e.token, strings.Join(initial, ","), "existing", peer, client)
	if err != nil {
		return err
	}
	e.setProc(name, p)
	for {
		err := gateway(ctx, e.hc, via[0], "/v3/cluster/member/promote", map[string]any{"ID": added.Member.ID}, nil)
		if err == nil {
			return nil
		}
		if !p.alive() || ctx.Err() != nil {
			return fmt.Errorf("etcd: promoting %s: %v\n%s", name, err, p.logTail())
		}
		time.Sleep(100 * time.Millisecond) // "can only promote a learner member which is in sync with leader"
	}
}

// Down implements Etcd: the member's process is killed; it stays a member.
func (e *EtcdProcs) Down(name string) {
	p := e.snapshot()[name]
	if p == nil {
		return
	}
	p.kill()
	members := e.Members()
	dead := 0
	for _, m := range members {
		if strings.HasSuffix(m, "(dead)") {
			dead++
		}
	}
	if len(members) > 0 && len(members)-dead < len(members)/2+1 {
		e.problem("etcd without quorum after %s's machine went: %v", name, members)
	}
}

// Remove implements Etcd, through a live member other than the one removed.
func (e *EtcdProcs) Remove(name string) (bool, error) {
	e.change.Lock()
	defer e.change.Unlock()
	via := e.liveClients(name)
	if len(via) == 0 {
		return false, fmt.Errorf("etcd: no live member to remove %s through", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	members, err := memberList(ctx, e.hc, via[0])
	if err != nil {
		return false, fmt.Errorf("etcd member list: %w", err)
	}
	id := ""
	for _, m := range members {
		if m.Name == name {
			id = m.ID
		}
	}
	if id != "" {
		if err := gateway(ctx, e.hc, via[0], "/v3/cluster/member/remove", map[string]any{"ID": id}, nil); err != nil {
			return false, fmt.Errorf("etcd member remove %s: %w", name, err)
		}
	}
	if p := e.snapshot()[name]; p != nil {
		p.kill() // a removed member stops by itself; its machine may still run
		_ = os.RemoveAll(p.dir)
		e.setProc(name, nil)
	}
	return true, nil
}

// Members implements Etcd with etcd's own member list, asked of a live member: "name", or
// "name(dead)" when its process is gone, "name(learner)" before its promotion, "<id>(unstarted)"
// for a member added that never started. Without a live member, the processes known dead.
func (e *EtcdProcs) Members() []string {
	procs := e.snapshot()
	var out []string
	for _, c := range e.liveClients("") {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		members, err := memberList(ctx, e.hc, c)
		cancel()
		if err != nil {
			continue
		}
		for _, m := range members {
			out = append(out, memberLabel(m, procs[m.Name]))
		}
		sort.Strings(out)
		return out
	}
	for n := range procs {
		out = append(out, n+"(dead)")
	}
	sort.Strings(out)
	return out
}

func memberLabel(m etcdMember, p *etcdProc) string {
	switch {
	case m.Name == "":
		return m.ID + "(unstarted)"
	case p == nil || !p.alive():
		return m.Name + "(dead)"
	case m.IsLearner:
		return m.Name + "(learner)"
	}
	return m.Name
}

// Problems implements Etcd.
func (e *EtcdProcs) Problems() []string {
	e.w.check()
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.problems...)
}

// Writes reports the writer's successful and failed writes so far.
func (e *EtcdProcs) Writes() (ok, failed int) { return e.w.counts() }

func (e *EtcdProcs) problem(format string, args ...any) {
	e.mu.Lock()
	e.problems = append(e.problems, fmt.Sprintf(format, args...))
	e.mu.Unlock()
}
