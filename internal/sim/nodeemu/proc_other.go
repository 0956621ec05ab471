//go:build !linux

package nodeemu

import (
	"errors"
	"os/exec"
)

func setGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// errPlatform: sandboxes and real etcd members need Linux (mount namespaces, process groups).
var errPlatform = errors.New("nodeemu: sandboxes and real etcd members need Linux")
