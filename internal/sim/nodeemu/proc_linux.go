//go:build linux

package nodeemu

import (
	"os/exec"
	"syscall"
)

// setGroup runs cmd in a process group of its own that gets SIGKILL when the test binary dies
// and, for a command made with a context, is killed whole when the context ends.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if cmd.Cancel != nil {
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	}
}

// killGroup kills the process group of a command started with setGroup.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// errPlatform is nil: Linux is supported.
var errPlatform error
