//go:build linux

package controlplane

import "syscall"

// procAttr puts a child in its own process group and kills it when the tool dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
