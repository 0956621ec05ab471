package nodeemu

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
)

// Cluster is an emulated RKE2 cluster: its join token and the nodes that joined, each with the
// address its supervisor (port 9345) listens on and its node-label labels. Once a server has
// applied Rancher's import manifest (Apply), the cluster agent it deploys reports the cluster's
// Nodes to the Rancher simulator after every change (agent.go).
type Cluster struct {
	mu    sync.Mutex
	token string
	nodes map[string]*member // by node name

	agent      *agent // set by the first Apply
	reportErrs []string
	etcd       Etcd // the servers' etcd members (etcd.go)

	kube      kubernetes.Interface // UseKube: the cluster's Nodes are these (agentkube.go)
	grace     time.Duration
	stopWatch context.CancelFunc
}

// ErrRefused marks a join that RKE2 would refuse (wrong order, server, token or name).
var ErrRefused = errors.New("refused by the RKE2 cluster")

type member struct {
	role, addr string
	labels     map[string]string
	up         bool
	version    string // the RKE2 release it runs: its kubelet reports it
}

// NewCluster returns an empty cluster that accepts token; with "" the initial server's token
// becomes the cluster's, as RKE2's first server does with its configured token.
func NewCluster(token string) *Cluster {
	return NewClusterWithEtcd(token, NewMemEtcd())
}

// NewClusterWithEtcd is NewCluster whose servers are members of e.
func NewClusterWithEtcd(token string, e Etcd) *Cluster {
	return &Cluster{token: token, nodes: map[string]*member{}, etcd: e}
}

// Etcd is the cluster's etcd membership.
func (c *Cluster) Etcd() Etcd { return c.etcd }

// Join adds a booted node that holds token and listens on addr, with RKE2's rules: the initial
// server (no server URL) only into an empty cluster; any other node only through a live
// server's supervisor; only with the cluster's token.
// The cluster agent's report follows (its failure is kept: ReportErrors).
func (c *Cluster) Join(b Boot, token, addr string) error {
	if err := c.join(b, token, addr); err != nil {
		return err
	}
	c.keep(c.report())
	return nil
}

func (c *Cluster) join(b Boot, token, addr string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.nodes[b.NodeName]; dup {
		return fmt.Errorf("%w: %s: a node with that name is already in the cluster", ErrRefused, b.NodeName)
	}
	if b.ServerURL == "" {
		if b.Role != "server" {
			return fmt.Errorf("%w: %s: an agent needs a server to join", ErrRefused, b.NodeName)
		}
		if len(c.nodes) > 0 {
			return fmt.Errorf("%w: %s: a server without server: would start a second cluster", ErrRefused, b.NodeName)
		}
		if c.token == "" {
			c.token = token // the first server's configured token becomes the cluster's
		}
	} else if err := c.reachable(b.ServerURL); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRefused, b.NodeName, err)
	}
	if token == "" || token != c.token {
		return fmt.Errorf("%w: %s: the server refused the token", ErrRefused, b.NodeName)
	}
	if b.Role == "server" {
		if err := c.etcd.Add(b.NodeName); err != nil {
			return err
		}
	}
	c.nodes[b.NodeName] = &member{role: b.Role, addr: addr, labels: b.Labels, up: true, version: b.Version}
	return nil
}

// joined: the node is a member, at addr.
func (c *Cluster) joined(name, addr string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.nodes[name]
	return m != nil && m.addr == addr
}

// reachable checks that url is https://<addr of a live server>:9345.
func (c *Cluster) reachable(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Port() != "9345" {
		return fmt.Errorf("server %q is not an RKE2 supervisor URL (https://<server>:9345)", raw)
	}
	for _, m := range c.nodes {
		if m.role == "server" && m.addr == u.Hostname() && m.up {
			return nil
		}
	}
	return fmt.Errorf("no live server at %s", u.Host)
}

// Stop makes a node unreachable (its VM died): its Node turns NotReady.
func (c *Cluster) Stop(name string) {
	c.mu.Lock()
	m := c.nodes[name]
	if m != nil {
		m.up = false
	}
	c.mu.Unlock()
	if m != nil && m.role == "server" {
		c.etcd.Down(name)
	}
	c.keep(c.report())
}

// Start brings a stopped node back (its VM answers again): its Node turns Ready and a server's
// etcd member is live again. False when no node has that name.
func (c *Cluster) Start(name string) bool {
	c.mu.Lock()
	m := c.nodes[name]
	if m != nil {
		m.up = true
	}
	c.mu.Unlock()
	if m == nil {
		return false
	}
	if up, ok := c.etcd.(interface{ Up(string) }); ok && m.role == "server" {
		up.Up(name)
	}
	c.keep(c.report())
	return true
}

// Upgrade makes a node run another RKE2 release, as the system-upgrade-controller's job does
// (it replaces the binary and restarts the service): its kubelet then reports that version.
// False when no node has that name.
func (c *Cluster) Upgrade(name, version string) bool {
	c.mu.Lock()
	m := c.nodes[name]
	if m != nil {
		m.version = version
	}
	c.mu.Unlock()
	if m != nil {
		c.keep(c.report())
	}
	return m != nil
}

// Version is the RKE2 release a node runs ("" when no node has that name).
func (c *Cluster) Version(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.nodes[name]; m != nil {
		return m.version
	}
	return ""
}

// Remove takes a node out of the cluster (its VM was deleted and its Node object with it, as
// Rancher deletes it when the node is deleted there). A server's etcd member stays, dead,
// until RemoveMember.
func (c *Cluster) Remove(name string) {
	c.mu.Lock()
	m := c.nodes[name]
	delete(c.nodes, name)
	c.mu.Unlock()
	if m != nil && m.role == "server" {
		c.etcd.Down(name)
	}
	c.keep(c.report())
}

// RemoveMember removes a server's etcd member, as RKE2's managed-etcd controller does for a
// Node annotated etcd.rke2.cattle.io/remove=true; true once it is gone.
func (c *Cluster) RemoveMember(name string) (bool, error) { return c.etcd.Remove(name) }

func (c *Cluster) keep(err error) {
	if err != nil {
		c.mu.Lock()
		c.reportErrs = append(c.reportErrs, err.Error())
		c.mu.Unlock()
	}
}

// ReportErrors lists the cluster agent's failed reports (after its retries).
func (c *Cluster) ReportErrors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.reportErrs...)
}

// Members lists the joined nodes as "name(role)", sorted.
func (c *Cluster) Members() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.nodes))
	for n, m := range c.nodes {
		out = append(out, n+"("+m.role+")")
	}
	sort.Strings(out)
	return out
}

// String lists the members for messages.
func (c *Cluster) String() string { return strings.Join(c.Members(), ", ") }
