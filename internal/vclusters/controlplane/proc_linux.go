//go:build linux

package controlplane

import (
	"os"
	"syscall"
)

// procAttr puts a child in its own process group and kills it when the tool dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the process's group (the child and anything it started).
func killGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
