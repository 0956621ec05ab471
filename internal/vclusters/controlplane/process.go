package controlplane

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// Process is a child process logging to <dir>/<name>.log, in its own process group and killed
// when the tool dies (Linux).
type Process struct {
	Name, LogPath string
	cmd           *exec.Cmd
	done          chan struct{}
	err           error
}

// StartProcess starts bin with args and the tool's environment plus env, logging to
// <dir>/<name>.log.
func StartProcess(name, bin, dir string, args, env []string, log *zap.Logger) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = f, f, procAttr()
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
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

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

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
		p.Kill()
	}
}

// Kill sends SIGKILL to the process's group and waits (at most 10 s) for the process to end.
func (p *Process) Kill() {
	killGroup(p.cmd.Process)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// Tails is the last n lines of every log in dir, for failure messages.
func Tails(dir string, n int) string {
	var b strings.Builder
	for _, path := range logPaths(dir) {
		fmt.Fprintf(&b, "--- %s, last lines:\n%s\n", path, TailFile(path, n))
	}
	return b.String()
}

// TailFile is the last n lines of a file (of its last 64 KiB at most).
func TailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	defer f.Close()
	const maxRead = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxRead {
		_, _ = f.Seek(st.Size()-maxRead, io.SeekStart)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRead))
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// PortClash tells whether a log in dir says a process could not bind its port.
func PortClash(dir string) bool {
	for _, path := range logPaths(dir) {
		if strings.Contains(TailFile(path, 200), "address already in use") {
			return true
		}
	}
	return false
}
