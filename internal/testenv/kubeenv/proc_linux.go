//go:build linux

package kubeenv

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// RSSBytes is the resident set size of process pid, from /proc; 0 when unknown.
func RSSBytes(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// processAlive reports whether a process with the pid exists (used to sweep stale tmpfs dirs).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// errPlatform is nil: Linux is supported.
var errPlatform error
