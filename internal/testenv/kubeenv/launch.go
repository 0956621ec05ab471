package kubeenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/waldur/site-agent/internal/vclusters/controlplane"
)

// maxAttempts bounds restarts after a port clash (a port picked free was taken before the
// server bound it).
const maxAttempts = 3

// controllers are the controllers the tests need: quota accounting, service-account tokens
// (what Rancher's cluster agent reads its token from) and namespace deletion.
var controllers = []string{"resourcequota", "serviceaccount", "serviceaccount-token", "namespace"}

// cluster is one started control plane (the product's launcher, internal/vclusters/controlplane)
// and the directories it removes when stopped.
type cluster struct {
	env      *Env
	cp       *controlplane.ControlPlane
	owned    []string // removed by stop, after the processes are dead
	stopOnce sync.Once
}

// launch starts a control plane with its files under dir (a fresh directory in tmpfs, owned by
// the cluster, when dir is empty), retrying with new ports after a port clash.
func launch(ctx context.Context, bins binaries, dir string) (*cluster, error) {
	sweepStaleDirs()
	var owned []string
	if dir == "" {
		root, err := makeTempDir()
		if err != nil {
			return nil, err
		}
		dir, owned = root, []string{root}
	}
	for attempt := 1; ; attempt++ {
		c, err := startOnce(ctx, bins, filepath.Join(dir, fmt.Sprintf("attempt-%d", attempt)))
		if err == nil {
			c.owned = append(c.owned, owned...)
			return c, nil
		}
		c.stop()
		if !errors.Is(err, controlplane.ErrPortTaken) || attempt == maxAttempts || ctx.Err() != nil {
			removeAll(owned)
			return nil, fmt.Errorf("start control plane (attempt %d): %w", attempt, err)
		}
	}
}

// startOnce runs one attempt. The returned cluster is never nil: on error the caller stops it.
func startOnce(ctx context.Context, bins binaries, dir string) (*cluster, error) {
	began := time.Now()
	c := &cluster{}
	dataDir, err := makeTempDir()
	if err != nil {
		return c, err
	}
	c.owned = append(c.owned, dataDir)
	c.cp, err = controlplane.Start(ctx, controlplane.Options{Dir: dir, APIServer: bins.apiserver, Etcd: bins.etcd,
		ControllerManager: bins.controllerManager, EtcdDataDir: dataDir, Controllers: controllers,
		// Quota admission charges a new pod only if the apiserver's cache already holds the
		// namespace's quotas; a pod created right after its quota can slip through uncharged
		// until the next full recount. Recount often: tests see settled usage within seconds.
		ResourceQuotaSyncPeriod: 2 * time.Second})
	if err != nil {
		return c, err
	}
	if c.env, err = newEnv(c); err != nil {
		return c, err
	}
	c.env.StartupTime = time.Since(began)
	return c, nil
}

// newEnv builds the client side of a started cluster.
func newEnv(c *cluster) (*Env, error) {
	cfg := c.cp.RESTConfig()
	cfg.QPS, cfg.Burst, cfg.Timeout = 200, 400, 30*time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build clientset: %w", err)
	}
	return &Env{Host: c.cp.Host, Token: c.cp.Token, CAData: c.cp.CAPEM, Config: cfg, Clientset: cs, Dir: c.cp.Dir, cluster: c}, nil
}

// stop kills the processes and removes the owned directories.
func (c *cluster) stop() {
	c.stopOnce.Do(func() {
		if c.cp != nil {
			c.cp.Kill()
		}
		removeAll(c.owned)
	})
}

// poll calls check every interval until it succeeds, a process of the cluster exits, or ctx
// ends. The last check error is part of a timeout error.
func (c *cluster) poll(ctx context.Context, what string, interval time.Duration, check func(context.Context) error) error {
	var last error
	for {
		reqCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = check(reqCtx)
		cancel()
		if last == nil {
			return nil
		}
		if err := c.cp.Exited(); err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last check: %v)", what, ctx.Err(), last)
		case <-time.After(interval):
		}
	}
}

// tails returns the last lines of every process log.
func (c *cluster) tails() string { return controlplane.Tails(c.cp.Dir, 30) }

func removeAll(dirs []string) {
	for _, d := range dirs {
		_ = os.RemoveAll(d)
	}
}
