package vclusters

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/waldur/site-agent/internal/telemetry"
	"github.com/waldur/site-agent/internal/vclusters/controlplane"
	"github.com/waldur/site-agent/internal/vclusters/kwok"
)

// Exit codes (the same as the rest of site-agent's commands).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

const usage = `Usage: site-agent-vclusters [-c FILE] [flags]

Runs many virtual clusters (namespaces and Node objects in one main API server) imported into
Rancher and connected over Rancher's own tunnels, managed through an HTTP API:

  curl -X POST localhost:9090/clusters -d '{"name":"vc-001"}'
  curl localhost:9090/clusters
  curl -X DELETE localhost:9090/clusters/vc-001

The Rancher API key comes from rancher.token or SITE_AGENT_VC_RANCHER_TOKEN.
See docs/virtual-clusters.md. Flags:
`

// Command runs `site-agent-vclusters` until ctx ends and returns the exit code.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	f := newFlagSet()
	f.fs.SetOutput(stderr)
	f.fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		f.fs.PrintDefaults()
	}
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if f.fs.NArg() > 0 {
		fmt.Fprintf(stderr, "site-agent-vclusters: unexpected argument %q\n", f.fs.Arg(0))
		return exitUsage
	}
	cfg, err := LoadConfig(f.config, environ, f.overrides())
	if err != nil {
		fmt.Fprintln(stderr, "site-agent-vclusters:", err)
		return exitUsage
	}
	log, err := telemetry.NewLogger(stdout, cfg.LogLevel)
	if err != nil {
		fmt.Fprintln(stderr, "site-agent-vclusters: invalid configuration: log_level:", err)
		return exitUsage
	}
	defer func() { _ = log.Sync() }()
	routeLibraryLogs(log)
	if err := serve(ctx, cfg, log); err != nil {
		log.Error("virtual clusters stopped", zap.Error(err))
		fmt.Fprintln(stderr, "site-agent-vclusters:", err)
		return exitFailure
	}
	return exitOK
}

func serve(ctx context.Context, cfg Config, log *zap.Logger) error {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	deps, stop, err := connectMainAPI(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stop()
	m, err := NewManager(cfg, deps)
	if err != nil {
		return err
	}
	// The manager runs before the API serves, so a client that sees the port open can create
	// clusters at once (the listener queues connections meanwhile).
	runDone := make(chan error, 1)
	go func() { runDone <- m.Run(ctx) }()
	select {
	case <-m.Running():
	case err := <-runDone:
		return err
	}
	srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("virtual clusters api listening", zap.String("address", ln.Addr().String()),
		zap.String("main_api", deps.KubeURL.String()), zap.String("rancher", cfg.Rancher.URL))
	runErr := <-runDone
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	return runErr
}

// connectMainAPI reaches the main API server through the kubeconfig, or starts one.
func connectMainAPI(ctx context.Context, cfg Config, log *zap.Logger) (Deps, func(), error) {
	var rc *rest.Config
	stop := func() {}
	if cfg.MainAPI.Kubeconfig != "" {
		var err error
		rc, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: cfg.MainAPI.Kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: cfg.MainAPI.Context}).ClientConfig()
		if err != nil {
			return Deps{}, stop, fmt.Errorf("main_api.kubeconfig: %w", err)
		}
	} else {
		s := cfg.MainAPI.Start
		cp, err := controlplane.Start(ctx, controlplane.Options{Dir: filepath.Join(cfg.StateDir, "main-api"),
			APIServer: s.KubeAPIServer, Etcd: s.Etcd, ControllerManager: s.KubeControllerManager, Port: s.Port,
			EtcdNoFsync: s.EtcdNoFsync, NodeMonitorGracePeriod: s.NodeMonitorGracePeriod, Logger: log})
		if err != nil {
			return Deps{}, stop, fmt.Errorf("start the main API server: %w", err)
		}
		rc, stop = cp.RESTConfig(), cp.Stop
		log.Info("main api server started", zap.String("host", cp.Host),
			zap.String("kubeconfig", filepath.Join(cfg.StateDir, "main-api", "admin.kubeconfig")))
	}
	stopKwok, err := startKwok(cfg, rc, log)
	if err != nil {
		stop()
		return Deps{}, func() {}, err
	}
	stopAll := func() { stopKwok(); stop() }
	d, err := DepsFor(rc, log)
	if err != nil {
		stopAll()
	}
	return d, stopAll, err
}

// startKwok runs KWOK against the main API server when kwok.mode is run.
func startKwok(cfg Config, rc *rest.Config, log *zap.Logger) (func(), error) {
	if cfg.Kwok.Mode != KwokRun {
		return func() {}, nil
	}
	k := cfg.Kwok
	c, err := kwok.Start(kwok.Options{Binary: k.Binary, Dir: filepath.Join(cfg.StateDir, "kwok"), Main: rc,
		NodeLeaseDuration: k.NodeLeaseDuration, PodCIDR: k.PodCIDR, Logger: log,
		Stages: kwok.Stages{NodeStatusInterval: k.NodeStatusInterval, NodeStatusJitter: k.NodeStatusJitter,
			PodStartLatency: k.PodStartLatency, PodStartJitter: k.PodStartJitter}})
	if err != nil {
		return nil, fmt.Errorf("start kwok: %w", err)
	}
	return c.Stop, nil
}

// DepsFor builds the manager's connections to the main API server described by rc.
func DepsFor(rc *rest.Config, log *zap.Logger) (Deps, error) {
	rc = rest.CopyConfig(rc)
	rc.QPS, rc.Burst = 200, 400
	kube, err := NewKube(rc)
	if err != nil {
		return Deps{}, err
	}
	u, _, err := rest.DefaultServerUrlFor(rc)
	if err != nil {
		return Deps{}, err
	}
	tr, err := proxyTransport(rc)
	if err != nil {
		return Deps{}, err
	}
	return Deps{Kube: kube, KubeURL: u, KubeTransport: tr, Logger: log, Metrics: NewMetrics()}, nil
}

// proxyTransport trusts the main API server like rc does but presents none of rc's
// credentials: requests through the proxies authenticate with the caller's own token.
func proxyTransport(rc *rest.Config) (*http.Transport, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: rc.ServerName, InsecureSkipVerify: rc.Insecure} //nolint:gosec // the kubeconfig's choice
	ca := rc.CAData
	if len(ca) == 0 && rc.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(rc.CAFile); err != nil {
			return nil, fmt.Errorf("main API CA: %w", err)
		}
	}
	if len(ca) > 0 {
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(ca) {
			return nil, errors.New("main API CA: no PEM certificate")
		}
	}
	return &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true, DisableCompression: true,
		MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second,
		DialContext: (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext}, nil
}
