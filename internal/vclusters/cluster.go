package vclusters

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/upstream"
	"github.com/waldur/site-agent/internal/vclusters/apiproxy"
	"github.com/waldur/site-agent/internal/vclusters/tunnel"
)

// cluster is a record plus what runs for it. Fields other than ctx, cancel and done are
// guarded by Manager.mu.
type cluster struct {
	rec    Record
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the lifecycle goroutine has stopped everything
	tenant sync.Mutex    // one change of the cluster's objects at a time (setup, scale, drift)

	proxy       *apiproxy.Proxy
	tun         *tunnel.Client
	up          map[tunnel.Kind]bool
	everUp      map[tunnel.Kind]bool
	deleting    bool
	accepted    time.Time // when POST accepted it (zero for resumed clusters)
	connectedAt time.Time
	// reregistered is when the tunnels were last reconnected because Rancher's record lacked
	// the agent's parameters (reregisterLocked).
	reregistered time.Time
}

func newCluster(r Record) *cluster {
	c := &cluster{rec: r, up: map[tunnel.Kind]bool{}, everUp: map[tunnel.Kind]bool{}, done: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

// View is a cluster as the API shows it.
type View struct {
	Name             string            `json:"name"`
	ID               string            `json:"id"`
	Status           Status            `json:"status"`
	Reason           string            `json:"reason,omitempty"`
	Namespace        string            `json:"namespace"`
	RancherClusterID string            `json:"rancherClusterId,omitempty"`
	ProxyAddress     string            `json:"proxyAddress,omitempty"`
	Nodes            int               `json:"nodes"`
	Pods             int               `json:"pods"`
	NotReady         int               `json:"notReady"` // Nodes told to stop heartbeating
	Tunnels          map[string]string `json:"tunnels"`
	CreatedAt        time.Time         `json:"createdAt"`
	ConnectedAt      *time.Time        `json:"connectedAt,omitempty"`
}

func (m *Manager) viewLocked(c *cluster) View {
	v := View{Name: c.rec.Name, ID: c.rec.ID, Status: c.rec.Status, Reason: c.rec.Reason, Namespace: TenantNamespace(c.rec.Name),
		RancherClusterID: c.rec.RancherID, Nodes: c.rec.Nodes, Pods: c.rec.Pods, NotReady: c.rec.NotReady, CreatedAt: c.rec.CreatedAt,
		Tunnels: map[string]string{"agent": sessionState(c, tunnel.Agent), "steve": sessionState(c, tunnel.Steve)}}
	if !m.cfg.Tunnel.Steve {
		v.Tunnels["steve"] = "off"
	}
	if c.proxy != nil {
		v.ProxyAddress = c.proxy.Addr()
	}
	if !c.connectedAt.IsZero() {
		t := c.connectedAt.UTC()
		v.ConnectedAt = &t
	}
	return v
}

func sessionState(c *cluster, k tunnel.Kind) string {
	if c.up[k] {
		return "up"
	}
	return "down"
}

// start runs the cluster's lifecycle in the background.
func (m *Manager) start(c *cluster) {
	go m.lifecycle(c)
}

// lifecycle sets the cluster up (retrying with backoff until it works), then keeps its proxy
// and tunnels running until the cluster is deleted or the manager stops.
func (m *Manager) lifecycle(c *cluster) {
	defer close(c.done)
	defer m.stopRuntime(c)
	for attempt := 0; ; attempt++ {
		err := m.setup(c.ctx, c)
		if err == nil {
			break
		}
		if c.ctx.Err() != nil {
			return
		}
		m.met.Errors.WithLabelValues("setup").Inc()
		delay := upstream.Backoff(time.Second, time.Minute, attempt, nil)
		m.log.Warn("virtual cluster setup failed, retrying", zap.String("cluster", c.rec.Name),
			zap.Duration("retry_in", delay), zap.Error(err))
		m.mu.Lock()
		m.setStatusLocked(c, StatusError, err.Error())
		m.mu.Unlock()
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(delay):
		}
	}
	<-c.ctx.Done()
}

// setup makes sure everything of the cluster exists — again after a crash or restart, where
// it adopts what is there — and starts its tunnels. At most setup_concurrency run at once.
func (m *Manager) setup(ctx context.Context, c *cluster) error {
	select {
	case m.setupSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-m.setupSem }()
	m.mu.Lock()
	rec := c.rec
	m.mu.Unlock()
	if err := m.ensureProxy(c, rec); err != nil {
		return fmt.Errorf("api proxy: %w", err)
	}
	if err := m.ensureTenant(ctx, c); err != nil {
		return err
	}
	m.update(c, func(r *Record) { r.Step = maxStep(r.Step, StepTenant) })
	m.setStatus(c, StatusReady, "")
	m.log.Info("cluster is ready, connecting to rancher", zap.String("cluster", rec.Name))
	credName, err := m.imported(ctx, c)
	if err != nil {
		return fmt.Errorf("rancher import: %w", err)
	}
	creds, err := m.main.agentCredentials(ctx, rec, credName, m.cfg.Sync.TokenWait)
	if err != nil {
		return fmt.Errorf("agent credentials: %w", err)
	}
	m.setStatus(c, StatusConnecting, "")
	m.startTunnel(c, creds)
	return nil
}

// ensureTenant makes the cluster's objects (with its current size), their pod-resource
// annotations and its chaos.
func (m *Manager) ensureTenant(ctx context.Context, c *cluster) error {
	c.tenant.Lock()
	defer c.tenant.Unlock()
	m.mu.Lock()
	rec := c.rec
	m.mu.Unlock()
	fresh, err := m.main.ensureTenant(ctx, rec)
	if err != nil {
		return fmt.Errorf("tenant: %w", err)
	}
	if !fresh {
		if err := m.main.annotateNodes(ctx, rec, rec.Nodes); err != nil {
			return fmt.Errorf("pod resource annotations: %w", err)
		}
	}
	if m.main.kubelet && rec.NotReady > 0 {
		if err := m.main.applyChaos(ctx, rec); err != nil {
			return fmt.Errorf("chaos: %w", err)
		}
	}
	return nil
}

// imported imports the cluster into Rancher unless an earlier run did (then the credentials
// Secret it applied is still in the tenant namespace) and returns the credentials Secret's name.
func (m *Manager) imported(ctx context.Context, c *cluster) (string, error) {
	m.mu.Lock()
	rec := c.rec
	m.mu.Unlock()
	if rec.Step == StepImported && rec.RancherID != "" {
		name, err := m.main.credentialsSecret(ctx, rec)
		if err != nil || name != "" {
			return name, err
		}
	}
	rc, err := m.rancher.EnsureCluster(ctx, rec.Name, "virtual cluster (site-agent virtual-clusters)")
	if err != nil {
		return "", err
	}
	id := rc.ID
	m.update(c, func(r *Record) { r.RancherID = id })
	reg, err := m.rancher.Registration(ctx, id)
	if err != nil {
		return "", err
	}
	defer reg.Token.Forget()
	defer reg.ManifestURL.Forget()
	if reg.ManifestURL.IsZero() {
		return "", fmt.Errorf("rancher returned a registration token for %s without a manifest URL", id)
	}
	data, err := m.rancher.Manifest(ctx, reg.ManifestURL)
	if err != nil {
		return "", err
	}
	man, err := transformManifest(data, rec)
	if err != nil {
		return "", err
	}
	if len(man.skipped) > 0 {
		m.log.Debug("import manifest objects left out (this tool is the agent)", zap.String("cluster", rec.Name), zap.Strings("objects", man.skipped))
	}
	if err := m.main.applyManifest(ctx, man); err != nil {
		return "", err
	}
	m.update(c, func(r *Record) { r.Step = StepImported })
	m.log.Info("imported into rancher", zap.String("cluster", rec.Name), zap.String("rancher_cluster", id))
	return man.credentials, nil
}

func maxStep(a, b Step) Step {
	if a == StepImported || b == StepImported {
		return StepImported
	}
	if a == StepTenant || b == StepTenant {
		return StepTenant
	}
	return StepNone
}

// ensureProxy starts the cluster's API proxy (on the port it had, when that is free).
func (m *Manager) ensureProxy(c *cluster, rec Record) error {
	m.mu.Lock()
	running := c.proxy != nil
	m.mu.Unlock()
	if running {
		return nil
	}
	// Every proxy hides the tool's tenant namespaces (all of them: a cluster's own holds only the
	// Pods the tool made) from namespace lists and watches. Rancher runs namespace controllers
	// per cluster (the namespace-auth lifecycle, project-scoped secrets, quotas: rancher
	// pkg/controllers/managementuser); in one shared API server each of N clusters acted on every
	// cluster's namespace, so a new cluster's namespace drew N racing writers (409s) — measured at
	// 50 clusters, 85 failed namespace PUTs a second.
	scopes := map[string]string{"/api/v1/namespaces": "!" + LabelLogicalCluster}
	if m.cfg.Proxy.ScopeNodes {
		scopes["/api/v1/nodes"] = NodeSelector(rec.Name)
	}
	p, err := apiproxy.Start(apiproxy.Options{Cluster: rec.Name, Upstream: m.deps.KubeURL, Transport: m.deps.KubeTransport,
		Cert: m.serving.TLS, Ports: m.ports, Preferred: rec.ProxyPort, Selectors: scopes, OnRequest: m.met.proxied,
		OnMove: func(addr string) { m.proxyMoved(c) }, Logger: m.log})
	if err != nil {
		return err
	}
	m.mu.Lock()
	c.proxy = p
	c.rec.ProxyPort = p.Port()
	m.mu.Unlock()
	m.markDirty()
	return nil
}

// proxyMoved records the proxy's new port and reconnects the tunnels so that Rancher learns
// the new address (it is part of the agent's parameters).
func (m *Manager) proxyMoved(c *cluster) {
	m.met.ProxyRestarts.Inc()
	m.mu.Lock()
	c.rec.ProxyPort = c.proxy.Port()
	tun := c.tun
	m.mu.Unlock()
	m.markDirty()
	if tun != nil {
		tun.Reconnect()
	}
}

// stopRuntime stops the cluster's tunnels and proxy.
func (m *Manager) stopRuntime(c *cluster) {
	m.mu.Lock()
	tun, p := c.tun, c.proxy
	c.tun, c.proxy = nil, nil
	m.mu.Unlock()
	if tun != nil {
		tun.Stop()
	}
	if p != nil {
		p.Close()
	}
	m.mu.Lock()
	for k, up := range c.up {
		if up {
			m.met.Sessions.WithLabelValues(string(k)).Dec()
		}
		c.up[k] = false
	}
	m.mu.Unlock()
}

func (m *Manager) update(c *cluster, f func(*Record)) {
	m.mu.Lock()
	f(&c.rec)
	m.mu.Unlock()
	m.markDirty()
}

func (m *Manager) setStatus(c *cluster, s Status, reason string) {
	m.mu.Lock()
	m.setStatusLocked(c, s, reason)
	m.mu.Unlock()
}

// setStatusLocked changes a status (never away from deleting, except by Delete) and updates
// the gauge.
func (m *Manager) setStatusLocked(c *cluster, s Status, reason string) {
	if c.deleting && s != StatusDeleting && s != StatusError {
		return
	}
	c.rec.Status, c.rec.Reason = s, reason
	m.countLocked()
	m.markDirty()
}

// countLocked sets the clusters-by-status gauge.
func (m *Manager) countLocked() {
	counts := map[Status]int{StatusCreating: 0, StatusReady: 0, StatusConnecting: 0, StatusConnected: 0, StatusError: 0, StatusDeleting: 0}
	for _, c := range m.clusters {
		counts[c.rec.Status]++
	}
	for s, n := range counts {
		m.met.Clusters.WithLabelValues(string(s)).Set(float64(n))
	}
}
