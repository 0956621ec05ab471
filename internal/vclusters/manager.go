package vclusters

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/vclusters/apiproxy"
	"github.com/waldur/site-agent/internal/vclusters/pki"
	"github.com/waldur/site-agent/internal/vclusters/tunnel"
)

// Errors the API maps to status codes.
var (
	ErrInvalidName = errors.New("invalid name")
	ErrDuplicate   = errors.New("a virtual cluster with this name exists")
	ErrNotFound    = errors.New("no virtual cluster with this name")
	ErrBusy        = errors.New("the virtual cluster is being deleted")
	ErrNotRunning  = errors.New("the manager is not running")
)

// Deps are the manager's connections, made by the command (or a test).
type Deps struct {
	Kube *Kube // the main API server, as an administrator
	// KubeURL and KubeTransport are the proxies' upstream: the main API server's URL and a
	// transport that trusts it but carries no credentials of its own.
	KubeURL       *url.URL
	KubeTransport http.RoundTripper
	Logger        *zap.Logger
	Metrics       *Metrics
}

// Manager owns the virtual clusters: their records, their proxies and their tunnels.
type Manager struct {
	cfg      Config
	log      *zap.Logger
	met      *Metrics
	main     *mainAPI
	rancher  *rancherapi.Client
	deps     Deps
	ports    *apiproxy.Ports
	ca       *pki.CA
	serving  *pki.Serving
	throttle *tunnel.Throttle
	state    *stateFile
	setupSem chan struct{}

	mu       sync.Mutex
	clusters map[string]*cluster
	ctx      context.Context // Run's; nil before Run
	running  chan struct{}   // closed once Run has taken ctx: the API can accept clusters
	dirty    chan struct{}
	deletion chan struct{} // asks the deletion watcher to look now
	saveMu   sync.Mutex
	pods     podSet // the main API server's Pods, for the pod-resource annotations
}

// NewManager prepares a manager: the state file is read and the proxy CA loaded or created.
// Nothing is sent anywhere.
func NewManager(cfg Config, d Deps) (*Manager, error) {
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	if d.Metrics == nil {
		d.Metrics = NewMetrics()
	}
	rc, err := newRancherClient(cfg.Rancher, d.Logger)
	if err != nil {
		return nil, err
	}
	ca, err := pki.LoadOrCreateCA(cfg.StateDir, "proxy-ca", "site-agent-vclusters proxy CA")
	if err != nil {
		return nil, fmt.Errorf("proxy CA in %s: %w", cfg.StateDir, err)
	}
	serving, err := ca.IssueServing("virtual-cluster-proxy")
	if err != nil {
		return nil, err
	}
	m := &Manager{running: make(chan struct{}), cfg: cfg, log: d.Logger, met: d.Metrics, rancher: rc, deps: d, ca: ca, serving: serving,
		ports:    apiproxy.NewPorts(cfg.Proxy.PortBase, cfg.Proxy.PortCount),
		throttle: tunnel.NewThrottle(cfg.Tunnel.Concurrency, cfg.Tunnel.ConnectRate),
		state:    newStateFile(cfg.StateDir), setupSem: make(chan struct{}, cfg.SetupConcurrency),
		clusters: map[string]*cluster{}, dirty: make(chan struct{}, 1), deletion: make(chan struct{}, 1)}
	if err := m.cfg.Template.validate(); err != nil {
		return nil, err
	}
	m.main = &mainAPI{kube: d.Kube, tmpl: &m.cfg.Template, log: d.Logger, kubelet: cfg.Kwok.manages()}
	records, err := m.state.load()
	if err != nil {
		return nil, err
	}
	for _, r := range records {
		if r.Nodes == 0 { // written before clusters had their own size
			r.Nodes, r.Pods = cfg.Template.Nodes, cfg.Template.Pods
		}
		m.clusters[r.Name] = newCluster(r)
	}
	return m, nil
}

// Run resumes the recorded clusters (rehydrating and reconnecting them), runs the steady-state
// loops and, when ctx ends, stops every proxy and tunnel and writes the state file.
func (m *Manager) Run(ctx context.Context) error {
	m.mu.Lock()
	m.ctx = ctx
	resumed := make([]*cluster, 0, len(m.clusters))
	for _, c := range m.clusters {
		resumed = append(resumed, c)
	}
	m.mu.Unlock()
	close(m.running)
	if len(resumed) > 0 {
		m.log.Info("resuming virtual clusters from the state file", zap.Int("clusters", len(resumed)))
	}
	for _, c := range resumed {
		m.start(c)
	}
	var loops sync.WaitGroup
	for _, loop := range []func(context.Context){m.saver, m.deletionWatcher, m.driftLoop, m.podWatchLoop, m.podResourcesLoop} {
		loops.Add(1)
		go func() {
			defer loops.Done()
			loop(ctx)
		}()
	}
	<-ctx.Done()
	m.stopAll()
	loops.Wait()
	return m.saveNow()
}

// Running is closed once Run accepts clusters.
func (m *Manager) Running() <-chan struct{} { return m.running }

func (m *Manager) stopAll() {
	m.mu.Lock()
	all := make([]*cluster, 0, len(m.clusters))
	for _, c := range m.clusters {
		all = append(all, c)
	}
	m.mu.Unlock()
	for _, c := range all {
		c.cancel()
	}
	for _, c := range all {
		<-c.done
	}
}

// Create records a new cluster (written to the state file before this returns) and starts
// setting it up in the background.
func (m *Manager) Create(name string) (View, error) {
	if err := validName(name); err != nil {
		return View{}, fmt.Errorf("%w: %v", ErrInvalidName, err)
	}
	m.mu.Lock()
	if m.ctx == nil {
		m.mu.Unlock()
		return View{}, ErrNotRunning
	}
	if m.clusters[name] != nil {
		m.mu.Unlock()
		return View{}, ErrDuplicate
	}
	c := newCluster(Record{Name: name, ID: newID(), Status: StatusCreating, CreatedAt: time.Now().UTC(),
		Nodes: m.cfg.Template.Nodes, Pods: m.cfg.Template.Pods})
	c.accepted = time.Now()
	m.clusters[name] = c
	m.countLocked()
	m.mu.Unlock()
	if err := m.saveNow(); err != nil {
		m.mu.Lock()
		delete(m.clusters, name)
		m.countLocked()
		m.mu.Unlock()
		return View{}, fmt.Errorf("write state file: %w", err)
	}
	m.start(c)
	v, _ := m.Get(name)
	return v, nil
}

// Get returns one cluster's view.
func (m *Manager) Get(name string) (View, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.clusters[name]
	if c == nil {
		return View{}, false
	}
	return m.viewLocked(c), true
}

// List returns every cluster's view, sorted by name.
func (m *Manager) List() []View {
	m.mu.Lock()
	out := make([]View, 0, len(m.clusters))
	for _, c := range m.clusters {
		out = append(out, m.viewLocked(c))
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Delete removes a cluster. Unless Rancher deleted it already, the Rancher cluster is deleted
// first and its tunnels stay up until Rancher has removed it (or sync.rancher_removal_wait
// passed): on delete Rancher deploys its cleanup (a Job, ClusterRoles, a service account)
// through the tunnel and holds the cluster on a finalizer until the agent is reachable
// (rancher pkg/controllers/management/usercontrollers). Then the tunnels and proxy stop and the
// Pods, Nodes, binding and namespace go from the main API server.
func (m *Manager) Delete(ctx context.Context, name string, byRancher bool) error {
	m.mu.Lock()
	c := m.clusters[name]
	switch {
	case c == nil:
		m.mu.Unlock()
		return ErrNotFound
	case c.deleting:
		m.mu.Unlock()
		return ErrBusy
	}
	c.deleting = true
	m.setStatusLocked(c, StatusDeleting, "")
	rec := c.rec
	m.mu.Unlock()
	err := m.deleteInRancher(ctx, rec, byRancher)
	if err == nil {
		c.cancel()
		<-c.done
		podWait := m.cfg.Sync.PodDeletionWait
		if !m.main.kubelet {
			podWait = 0 // nobody finishes a graceful deletion
		}
		err = m.main.removeTenant(ctx, rec, podWait)
	}
	m.mu.Lock()
	if err != nil {
		c.deleting = false
		m.setStatusLocked(c, StatusError, "deletion failed: "+err.Error())
		m.mu.Unlock()
		m.met.Errors.WithLabelValues("delete").Inc()
		return err
	}
	delete(m.clusters, name)
	m.countLocked()
	m.mu.Unlock()
	by := "api"
	if byRancher {
		by = "rancher"
	}
	m.met.Deleted.WithLabelValues(by).Inc()
	m.log.Info("virtual cluster deleted", zap.String("cluster", name), zap.String("by", by))
	return m.saveNow()
}

// deleteInRancher deletes the Rancher cluster and waits, tunnels up, until Rancher lists it no
// more or sync.rancher_removal_wait passed.
func (m *Manager) deleteInRancher(ctx context.Context, rec Record, byRancher bool) error {
	if byRancher || rec.RancherID == "" {
		return nil
	}
	if err := m.rancher.DeleteCluster(ctx, rec.RancherID); err != nil {
		return fmt.Errorf("delete rancher cluster %s: %w", rec.RancherID, err)
	}
	began := time.Now()
	waitCtx, cancel := context.WithTimeout(ctx, m.cfg.Sync.RancherRemovalWait)
	defer cancel()
	for {
		all, err := rancherClusters(waitCtx, m.rancher)
		if _, found := all[rec.RancherID]; err == nil && !found {
			m.log.Info("rancher removed the cluster", zap.String("cluster", rec.Name), zap.String("rancher_cluster", rec.RancherID),
				zap.Duration("waited", time.Since(began).Round(time.Millisecond)))
			return nil
		}
		select {
		case <-waitCtx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			m.log.Warn("rancher has not removed the cluster yet, closing its tunnels anyway", zap.String("cluster", rec.Name),
				zap.String("rancher_cluster", rec.RancherID), zap.Duration("waited", m.cfg.Sync.RancherRemovalWait))
			return nil
		case <-time.After(removalPoll):
		}
	}
}

// removalPoll is how often Delete asks Rancher whether the cluster is gone.
const removalPoll = 2 * time.Second

func newID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "vc-" + hex.EncodeToString(b)
}
