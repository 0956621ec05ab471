package kubeenv

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// maxAttempts bounds restarts after a port clash (a port picked free was taken before the
// server bound it).
const maxAttempts = 3

// cluster is one started control plane: its processes (in start order) and the directories it
// removes when stopped.
type cluster struct {
	env      *Env
	dir      string // certificates and logs
	procs    []*proc
	owned    []string // removed by stop, after the processes are dead
	stopOnce sync.Once
	phases   []phase // how long each start step took
}

// phase is one timed step of a start, for diagnosing slow starts.
type phase struct {
	name string
	took time.Duration
}

// timed runs step and records its duration under name.
func (c *cluster) timed(name string, step func() error) error {
	began := time.Now()
	err := step()
	c.phases = append(c.phases, phase{name: name, took: time.Since(began)})
	return err
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
		logs, clash := c.tails(), c.portClash()
		c.stop()
		if !clash || attempt == maxAttempts || ctx.Err() != nil {
			removeAll(owned)
			return nil, fmt.Errorf("start control plane (attempt %d): %w\n%s", attempt, err, logs)
		}
	}
}

// startOnce runs one attempt. The returned cluster is never nil: on error the caller reads its
// logs and stops it.
func startOnce(ctx context.Context, bins binaries, dir string) (*cluster, error) {
	began := time.Now()
	c := &cluster{dir: dir}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return c, fmt.Errorf("create %s: %w", dir, err)
	}
	dataDir, err := makeTempDir()
	if err != nil {
		return c, err
	}
	c.owned = append(c.owned, dataDir)
	ports, err := freePorts(3)
	if err != nil {
		return c, err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	host := fmt.Sprintf("https://127.0.0.1:%d", ports[2])
	creds, err := newCredentials()
	if err != nil {
		return c, err
	}
	f, err := creds.write(dir, host)
	if err != nil {
		return c, err
	}
	err = c.timed("etcd", func() error { return c.startEtcd(ctx, bins.etcd, dataDir, etcdURL, ports[1]) })
	if err != nil {
		return c, err
	}
	if c.env, err = newEnv(host, creds, dir, c); err != nil {
		return c, err
	}
	err = c.timed("kube-apiserver", func() error { return c.startAPIServer(ctx, bins.apiserver, f, etcdURL, ports[2]) })
	if err != nil {
		return c, err
	}
	err = c.timed("kube-controller-manager", func() error { return c.startControllerManager(ctx, bins.controllerManager, f) })
	if err != nil {
		return c, err
	}
	c.env.StartupTime = time.Since(began)
	return c, nil
}

// stop kills the processes in reverse start order and removes the owned directories.
func (c *cluster) stop() {
	c.stopOnce.Do(func() {
		for i := len(c.procs) - 1; i >= 0; i-- {
			c.procs[i].stop()
		}
		removeAll(c.owned)
	})
}

// run starts one process of the cluster, logging to <dir>/<name>.log.
func (c *cluster) run(name, bin string, args []string) error {
	p, err := startProc(name, bin, filepath.Join(c.dir, name+".log"), args)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return nil
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
		for _, p := range c.procs {
			if err := p.exitError(); err != nil {
				return fmt.Errorf("waiting for %s: %w", what, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last check: %v)", what, ctx.Err(), last)
		case <-time.After(interval):
		}
	}
}

// tails returns the last lines of every process log.
func (c *cluster) tails() string {
	var b strings.Builder
	for _, p := range c.procs {
		fmt.Fprintf(&b, "--- %s (%s), last lines:\n%s\n", p.name, p.logPath, tailFile(p.logPath, 30))
	}
	return b.String()
}

// portClash reports whether a process failed because its port was taken.
func (c *cluster) portClash() bool {
	for _, p := range c.procs {
		data, err := os.ReadFile(p.logPath)
		if err == nil && strings.Contains(string(data), "address already in use") {
			return true
		}
	}
	return false
}

// freePorts returns n distinct loopback ports that were free a moment ago (all are held open
// together, then released).
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// tailFile returns the last n lines of a file (reading at most its last 64 KiB).
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	defer f.Close()
	const maxRead = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxRead {
		_, _ = f.Seek(st.Size()-maxRead, 0)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRead))
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func removeAll(dirs []string) {
	for _, d := range dirs {
		_ = os.RemoveAll(d)
	}
}
