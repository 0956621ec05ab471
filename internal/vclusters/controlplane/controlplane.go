package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/rest"
)

// DefaultControllers are the controllers the controller manager runs unless Options name others:
// serviceaccount-token fills the service-account token Secrets Rancher's agent reads (with the
// key that signs the API server's own tokens), serviceaccount makes every namespace's "default"
// one, namespace finishes namespace deletion, resourcequota counts quota usage,
// root-ca-cert-publisher publishes kube-root-ca.crt, and nodelifecycle marks a Node NotReady
// when its heartbeats stop.
var DefaultControllers = []string{"serviceaccount-token", "serviceaccount", "namespace", "resourcequota",
	"root-ca-cert-publisher", "nodelifecycle"}

// ErrPortTaken is wrapped by Start's error when a process could not bind its port (a port
// picked free was taken before the process bound it).
var ErrPortTaken = errors.New("a port of the control plane is taken")

// Options say which binaries to run and where their files live.
type Options struct {
	Dir               string // kept across restarts: certificates, keys, token, ports, logs
	APIServer         string // kube-apiserver binary (required)
	Etcd              string // etcd binary (required)
	ControllerManager string // kube-controller-manager binary (optional)
	Port              int    // API server port on first start (0: a free one)
	// EtcdDataDir is etcd's data directory (default <Dir>/etcd); tests keep it in tmpfs.
	EtcdDataDir string
	// EtcdNoFsync trades durability for speed (etcd --unsafe-no-fsync), for throwaway load tests.
	EtcdNoFsync bool
	// Controllers the controller manager runs (default DefaultControllers).
	Controllers []string
	// ResourceQuotaSyncPeriod is how often quota usage is recounted in full (default 10 s).
	ResourceQuotaSyncPeriod time.Duration
	// NodeMonitorGracePeriod is how long the node-lifecycle controller waits for a Node's
	// heartbeat (Lease renewal or status update) before marking it NotReady (0: 40 s).
	NodeMonitorGracePeriod time.Duration
	Logger                 *zap.Logger
}

// ControlPlane is a running main API server.
type ControlPlane struct {
	Host  string // https://127.0.0.1:<port>
	Token string // admin bearer token (system:masters)
	CAPEM []byte
	Dir   string
	// Phases is how long each step of the start took (etcd, kube-apiserver until /readyz,
	// kube-controller-manager until the "default" ServiceAccount exists).
	Phases []Phase
	procs  []*Process
	log    *zap.Logger
}

// Phase is one timed step of a start.
type Phase struct {
	Name string
	Took time.Duration
}

func (p Phase) String() string { return p.Name + "=" + p.Took.Round(time.Millisecond).String() }

// Start launches (or relaunches, reusing Dir) etcd, kube-apiserver and the controller manager
// and returns once /readyz answers 200 and, with a controller manager, the serviceaccount
// controller has made the "default" ServiceAccount (which proves it works). On failure the
// processes are stopped and the error carries the end of the failed process's log.
func Start(ctx context.Context, o Options) (*ControlPlane, error) {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	l := newLayout(o.Dir)
	if o.EtcdDataDir != "" {
		l.etcdData = o.EtcdDataDir
	}
	p, err := l.loadPorts(o.Port)
	if err != nil {
		return nil, err
	}
	host := fmt.Sprintf("https://127.0.0.1:%d", p.APIServer)
	token, ca, err := l.credentials(host)
	if err != nil {
		return nil, fmt.Errorf("main API credentials: %w", err)
	}
	cp := &ControlPlane{Host: host, Token: token, CAPEM: ca, Dir: o.Dir, log: o.Logger}
	if err := cp.launch(ctx, o, l, p); err != nil {
		cp.Kill()
		if PortClash(o.Dir) {
			err = fmt.Errorf("%w: %w", ErrPortTaken, err)
		}
		return nil, err
	}
	return cp, nil
}

func (cp *ControlPlane) launch(ctx context.Context, o Options, l layout, p ports) error {
	// etcd holds every Secret: it serves TLS only, to clients and peers with a certificate of its
	// own CA (the API server's), on loopback.
	etcdURL := "https://127.0.0.1:" + strconv.Itoa(p.EtcdClient)
	peerURL := "https://127.0.0.1:" + strconv.Itoa(p.EtcdPeer)
	etcdArgs := []string{"--name=default", "--data-dir=" + l.etcdData, "--listen-client-urls=" + etcdURL,
		"--advertise-client-urls=" + etcdURL, "--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		"--cert-file=" + l.etcdCert, "--key-file=" + l.etcdKey, "--client-cert-auth", "--trusted-ca-file=" + l.etcdCA,
		"--peer-cert-file=" + l.etcdCert, "--peer-key-file=" + l.etcdKey, "--peer-client-cert-auth",
		"--peer-trusted-ca-file=" + l.etcdCA,
		// A lone member still waits out an election timeout before leading: keep it short.
		"--heartbeat-interval=10", "--election-timeout=100", "--logger=zap", "--log-outputs=stderr"}
	if o.EtcdNoFsync {
		etcdArgs = append(etcdArgs, "--unsafe-no-fsync")
	}
	if err := cp.timed("etcd", func() error { return cp.run("etcd", o.Etcd, etcdArgs, nil) }); err != nil {
		return err
	}
	if err := cp.timed("kube-apiserver", func() error { return cp.startAPIServer(ctx, o, l, p, etcdURL) }); err != nil {
		return err
	}
	if o.ControllerManager == "" {
		cp.log.Warn("no kube-controller-manager: namespaces of deleted clusters stay terminating and agent tokens come from the token request api")
		return nil
	}
	return cp.timed("kube-controller-manager", func() error { return cp.startControllerManager(ctx, o, l) })
}

// apiServerEnv runs the API server with GOGC=200 unless the tool's environment sets GOGC: the
// server is what limits a burst of cluster setups, and with Go's default of 100 its garbage
// collector took ≈ 15 % of its CPU at 1,000 clusters; it holds about half as much again of
// memory for it (docs/virtual-clusters.md).
func apiServerEnv() []string {
	if _, set := os.LookupEnv("GOGC"); set {
		return nil
	}
	return []string{"GOGC=200"}
}

func (cp *ControlPlane) startAPIServer(ctx context.Context, o Options, l layout, p ports, etcdURL string) error {
	err := cp.run("kube-apiserver", o.APIServer, []string{
		"--etcd-servers=" + etcdURL, "--etcd-cafile=" + l.etcdCA, "--etcd-certfile=" + l.etcdClientCert,
		"--etcd-keyfile=" + l.etcdClientKey, "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(p.APIServer), "--tls-cert-file=" + l.cert, "--tls-private-key-file=" + l.key,
		"--client-ca-file=" + l.ca, "--token-auth-file=" + l.tokens, "--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + l.saPub, "--service-account-signing-key-file=" + l.saKey,
		"--service-cluster-ip-range=10.0.0.0/24", "--profiling=false",
		// The lease reconciler would publish 127.0.0.1 as the "kubernetes" service endpoint,
		// which validation rejects (loopback), and log the failure every 10 s.
		"--endpoint-reconciler-type=none",
		// Watch streams (WatchList) need etcd's progress requests, which Debian's etcd 3.4.23
		// lacks: the server would accept them and end each at once ("the required storage
		// feature RequestWatchProgress is disabled"), and informers that ask for them (KWOK's:
		// client-go v0.36) would never catch up. Refused, they fall back to list and watch.
		"--feature-gates=WatchList=false"}, apiServerEnv())
	if err != nil {
		return err
	}
	return cp.waitReady(ctx)
}

func (cp *ControlPlane) startControllerManager(ctx context.Context, o Options, l layout) error {
	controllers := o.Controllers
	if len(controllers) == 0 {
		controllers = DefaultControllers
	}
	grace := o.NodeMonitorGracePeriod
	if grace <= 0 {
		grace = 40 * time.Second
	}
	quotaSync := o.ResourceQuotaSyncPeriod
	if quotaSync <= 0 {
		quotaSync = 10 * time.Second
	}
	err := cp.run("kube-controller-manager", o.ControllerManager, []string{
		"--kubeconfig=" + l.kubecfg, "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0",
		"--controllers=" + strings.Join(controllers, ","),
		"--node-monitor-grace-period=" + grace.String(), "--node-monitor-period=2s",
		"--service-account-private-key-file=" + l.saKey, "--root-ca-file=" + l.ca,
		"--use-service-account-credentials=false",
		// Quota admission charges a new Pod only to quotas the API server already counted; a
		// full recount this often settles usage within seconds.
		"--resource-quota-sync-period=" + quotaSync.String()}, nil)
	if err != nil {
		return err
	}
	for _, c := range controllers {
		if c == "serviceaccount" {
			return cp.waitDefaultServiceAccount(ctx)
		}
	}
	return nil
}

// RESTConfig is an admin client configuration for the API server.
func (cp *ControlPlane) RESTConfig() *rest.Config {
	return &rest.Config{Host: cp.Host, BearerToken: cp.Token, TLSClientConfig: rest.TLSClientConfig{CAData: cp.CAPEM}}
}

// Processes are the running processes in start order.
func (cp *ControlPlane) Processes() []*Process { return cp.procs }

// Stop terminates the processes in reverse order (SIGTERM, then SIGKILL after 10 s).
func (cp *ControlPlane) Stop() {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		cp.procs[i].Stop()
	}
	cp.procs = nil
}

// Kill ends the processes' groups at once (SIGKILL), for throwaway data.
func (cp *ControlPlane) Kill() {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		cp.procs[i].Kill()
	}
	cp.procs = nil
}

func (cp *ControlPlane) run(name, bin string, args, env []string) error {
	p, err := StartProcess(name, bin, cp.Dir, args, env, cp.log)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, p)
	return nil
}

func (cp *ControlPlane) timed(name string, step func() error) error {
	began := time.Now()
	err := step()
	cp.Phases = append(cp.Phases, Phase{Name: name, Took: time.Since(began)})
	return err
}

// logPaths are the logs of a control plane directory.
func logPaths(dir string) []string {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	return paths
}
