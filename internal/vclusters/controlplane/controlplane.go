package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/rest"
)

// Options say which binaries to run and where their files live.
type Options struct {
	Dir               string // kept across restarts
	APIServer         string // kube-apiserver binary (required)
	Etcd              string // etcd binary (required)
	ControllerManager string // kube-controller-manager binary (optional)
	Port              int    // API server port on first start (0: a free one)
	// EtcdNoFsync trades durability for speed (etcd --unsafe-no-fsync), for throwaway load tests.
	EtcdNoFsync bool
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
	procs []*Process
	log   *zap.Logger
}

// Start launches (or relaunches, reusing Dir) etcd, kube-apiserver and the controller manager
// and returns once /readyz answers 200.
func Start(ctx context.Context, o Options) (*ControlPlane, error) {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	l := newLayout(o.Dir)
	p, err := l.loadPorts(o.Port)
	if err != nil {
		return nil, err
	}
	host := fmt.Sprintf("https://127.0.0.1:%d", p.APIServer)
	token, ca, err := l.credentials(host)
	if err != nil {
		return nil, fmt.Errorf("main API credentials: %w", err)
	}
	cp := &ControlPlane{Host: host, Token: token, CAPEM: ca, log: o.Logger}
	if err := cp.launch(ctx, o, l, p); err != nil {
		cp.Stop()
		return nil, err
	}
	return cp, nil
}

func (cp *ControlPlane) launch(ctx context.Context, o Options, l layout, p ports) error {
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(p.EtcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(p.EtcdPeer)
	etcdArgs := []string{"--name=default", "--data-dir=" + l.etcdData, "--listen-client-urls=" + etcdURL,
		"--advertise-client-urls=" + etcdURL, "--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL, "--heartbeat-interval=10", "--election-timeout=100",
		"--logger=zap", "--log-outputs=stderr"}
	if o.EtcdNoFsync {
		etcdArgs = append(etcdArgs, "--unsafe-no-fsync")
	}
	if err := cp.run("etcd", o.Etcd, l.dir, etcdArgs); err != nil {
		return err
	}
	err := cp.run("kube-apiserver", o.APIServer, l.dir, []string{
		"--etcd-servers=" + etcdURL, "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(p.APIServer), "--tls-cert-file=" + l.cert, "--tls-private-key-file=" + l.key,
		"--client-ca-file=" + l.ca, "--token-auth-file=" + l.tokens, "--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + l.saPub, "--service-account-signing-key-file=" + l.saKey,
		"--service-cluster-ip-range=10.0.0.0/24", "--endpoint-reconciler-type=none", "--profiling=false",
		// Watch streams (WatchList) need etcd's progress requests, which Debian's etcd 3.4.23
		// lacks: the server would accept them and end each at once ("the required storage
		// feature RequestWatchProgress is disabled"), and informers that ask for them (KWOK's:
		// client-go v0.36) would never catch up. Refused, they fall back to list and watch.
		"--feature-gates=WatchList=false"})
	if err != nil {
		return err
	}
	if err := cp.waitReady(ctx); err != nil {
		return err
	}
	if o.ControllerManager == "" {
		cp.log.Warn("no kube-controller-manager: namespaces of deleted clusters stay terminating and agent tokens come from the token request api")
		return nil
	}
	grace := o.NodeMonitorGracePeriod
	if grace <= 0 {
		grace = 40 * time.Second
	}
	return cp.run("kube-controller-manager", o.ControllerManager, l.dir, []string{
		"--kubeconfig=" + l.kubecfg, "--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0",
		"--controllers=serviceaccount-token,serviceaccount,namespace,resourcequota,root-ca-cert-publisher,nodelifecycle",
		"--node-monitor-grace-period=" + grace.String(), "--node-monitor-period=2s",
		"--service-account-private-key-file=" + l.saKey, "--root-ca-file=" + l.ca,
		"--use-service-account-credentials=false", "--resource-quota-sync-period=10s"})
}

// RESTConfig is an admin client configuration for the API server.
func (cp *ControlPlane) RESTConfig() *rest.Config {
	return &rest.Config{Host: cp.Host, BearerToken: cp.Token, TLSClientConfig: rest.TLSClientConfig{CAData: cp.CAPEM}}
}

// Stop terminates the processes in reverse order (SIGTERM, then SIGKILL after 10 s).
func (cp *ControlPlane) Stop() {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		cp.procs[i].Stop()
	}
	cp.procs = nil
}

func (cp *ControlPlane) waitReady(ctx context.Context) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cp.CAPEM)
	client := &http.Client{Timeout: 2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cp.Host+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+cp.Token)
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		last = err
		for _, p := range cp.procs {
			if e := p.Exited(); e != nil {
				return fmt.Errorf("%w (see %s)", e, p.LogPath)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("main API server not ready: %v", last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Process is a child process logging to <dir>/<name>.log, in its own process group and killed
// when the tool dies (Linux).
type Process struct {
	Name, LogPath string
	cmd           *exec.Cmd
	done          chan struct{}
	err           error
}

// StartProcess starts bin with args, logging to <dir>/<name>.log.
func StartProcess(name, bin, dir string, args []string, log *zap.Logger) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = f, f, procAttr()
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	log.Info("started main api process", zap.String("process", name), zap.Int("pid", cmd.Process.Pid), zap.String("log", logPath))
	return p, nil
}

func (cp *ControlPlane) run(name, bin, dir string, args []string) error {
	p, err := StartProcess(name, bin, dir, args, cp.log)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, p)
	return nil
}

// Exited says why the process ended (nil while it runs).
func (p *Process) Exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited: %v", p.Name, p.err)
	default:
		return nil
	}
}

// Stop sends SIGTERM and, after 10 s, SIGKILL; it returns once the process is gone.
func (p *Process) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
