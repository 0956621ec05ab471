package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// agentProc is a long-running agent process whose VmRSS is sampled every 10 ms while it runs.
type agentProc struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	mu     sync.Mutex
	rss    float64 // MiB, the highest VmRSS sampled
	quit   chan struct{}
	exited chan struct{}
}

// startAgent starts the binary; the benchmark's cleanup kills it if stop did not.
func startAgent(b *testing.B, bin string, args ...string) *agentProc {
	b.Helper()
	p := &agentProc{cmd: exec.Command(bin, args...), out: &syncBuffer{}, quit: make(chan struct{}), exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if v, ok := statusMiB(p.cmd.Process.Pid, "VmRSS"); ok {
				p.mu.Lock()
				p.rss = max(p.rss, v)
				p.mu.Unlock()
			}
			select {
			case <-p.quit:
				return
			case <-p.exited:
				return
			case <-tick.C:
			}
		}
	}()
	b.Cleanup(func() { p.kill() })
	return p
}

// maxRSS is the highest VmRSS sampled so far, in MiB.
func (p *agentProc) maxRSS() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rss
}

// cpu is the user + system time the process has used so far (/proc/PID/stat, clock ticks of
// 10 ms: USER_HZ is 100 on Linux).
func (p *agentProc) cpu(b *testing.B) time.Duration {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		b.Fatalf("the agent is gone: %v\n%s", err, tail(p.out.String()))
	}
	_, rest, _ := strings.Cut(string(data), ") ") // after the command name, which may hold spaces
	f := strings.Fields(rest)                     // f[0] is field 3 (state): utime is f[11], stime f[12]
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// stop reads the peak RSS (VmHWM, MiB) and kills the process.
func (p *agentProc) stop(b *testing.B) float64 {
	b.Helper()
	hwm, ok := statusMiB(p.cmd.Process.Pid, "VmHWM")
	if !ok {
		b.Fatalf("the agent is gone\n%s", tail(p.out.String()))
	}
	p.kill()
	return hwm
}

func (p *agentProc) kill() {
	select {
	case <-p.quit:
	default:
		close(p.quit)
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// statusMiB reads one "Key: N kB" line of /proc/PID/status in MiB.
func statusMiB(pid int, key string) (float64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return n / 1024, err == nil
		}
	}
	return 0, false
}
