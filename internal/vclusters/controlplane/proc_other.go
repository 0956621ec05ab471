//go:build !linux

package controlplane

import "syscall"

// procAttr is nil off Linux: children may outlive a crashed tool there.
func procAttr() *syscall.SysProcAttr { return nil }
