package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends/inmemory"
	"github.com/waldur/site-agent/internal/sim/scenario"
	"github.com/waldur/site-agent/internal/sim/waldursim"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "site-agent-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "site-agent")
	build := exec.Command("go", "build", "-o", binary, "github.com/waldur/site-agent/cmd/site-agent")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building site-agent:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one test's world: a simulator on loopback, a config file and a backend state file.
type env struct {
	t      testing.TB
	world  *scenario.World
	sim    *waldursim.Server
	url    string
	dir    string
	config string
	state  string
}

func newEnv(t testing.TB, opts waldursim.Options, settings ...string) *env {
	t.Helper()
	opts.Token = scenario.Token
	sim := waldursim.New(opts)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	e := &env{t: t, sim: sim, url: srv.URL, dir: t.TempDir(), world: scenario.New(sim, scenario.Options{Users: 3})}
	e.state = filepath.Join(e.dir, "backend.json")
	e.writeConfig(append([]string{"state_file: " + e.state}, settings...)...)
	t.Cleanup(func() {
		if !t.Failed() {
			sim.AssertNoViolations(t)
		}
	})
	return e
}

func (e *env) writeConfig(settings ...string) {
	e.config = filepath.Join(e.dir, "config.yaml")
	text := "heartbeat_file: " + filepath.Join(e.dir, "heartbeat") + "\n" + e.world.Config(e.url, settings...)
	if err := os.WriteFile(e.config, []byte(text), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// result of one run of the binary.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, tail(r.stdout), tail(r.stderr))
}

func tail(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 40 {
		lines = append([]string{"…"}, lines[len(lines)-40:]...)
	}
	return strings.Join(lines, "\n")
}

// run runs the binary to completion (bounded by a minute).
func (e *env) run(args ...string) result {
	e.t.Helper()
	return e.runEnv(nil, args...)
}

// runEnv is run with extra environment variables.
func (e *env) runEnv(extraEnv []string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(append(os.Environ(), "SITE_AGENT_CYCLE_TIMEOUT=50s"), extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running %v: %v", args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// once runs one cycle of a mode and requires success.
func (e *env) once(mode string, extra ...string) result {
	e.t.Helper()
	r := e.run(append([]string{"-m", mode, "-c", e.config, "--once"}, extra...)...)
	if r.code != 0 {
		e.t.Fatalf("%s --once failed: %s", mode, r)
	}
	return r
}

// proc is a long-running agent process.
type proc struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	done   chan error    // receives Wait's result once
	exited chan struct{} // closed when the process is gone
}

// syncBuffer collects a process's output while tests read it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (e *env) start(args ...string) *proc {
	e.t.Helper()
	cmd := exec.Command(binary, args...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	p := &proc{cmd: cmd, out: out, done: make(chan error, 1), exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		close(p.exited)
		p.done <- err
	}()
	e.t.Cleanup(func() { p.kill() })
	return p
}

func (p *proc) kill() {
	select {
	case <-p.exited:
	default:
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// backend opens the state file the agent wrote (the same package reads it, under its lock).
func (e *env) backend() *inmemory.Backend {
	return inmemory.NewBackend(inmemory.Settings{StateFile: e.state}, nil, nil)
}

func (e *env) objects() []inmemory.Object {
	e.t.Helper()
	objs, err := e.backend().Objects()
	if err != nil {
		e.t.Fatal(err)
	}
	return objs
}

func (e *env) ops() []inmemory.Op {
	e.t.Helper()
	ops, err := e.backend().Ops()
	if err != nil {
		e.t.Fatal(err)
	}
	return ops
}

func (e *env) orderStates() map[string]int {
	states := map[string]int{}
	for _, o := range e.sim.Orders() {
		states[o.State]++
	}
	return states
}
