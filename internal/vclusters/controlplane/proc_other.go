//go:build !linux

package controlplane

import (
	"os"
	"syscall"
)

// procAttr is nil off Linux: children may outlive a crashed tool there.
func procAttr() *syscall.SysProcAttr { return nil }

// killGroup kills the process (it has no group of its own off Linux).
func killGroup(p *os.Process) { _ = p.Kill() }
