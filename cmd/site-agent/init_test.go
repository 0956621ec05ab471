package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lazyPackages do no work at start-up: most agents have none of their offerings, and a
// package initialiser pages in the 64 KB of binary around it (the kernel's fault-around) and
// keeps what it builds on the heap, in every agent, for the life of the process. Their regexps
// and tables are built on first use instead (issue 20 item 7).
var lazyPackages = []string{
	"github.com/waldur/site-agent/internal/backends/rke2",
	"github.com/waldur/site-agent/internal/backends/rke2/novainfra",
	"github.com/waldur/site-agent/internal/backends/openstack",
	"github.com/waldur/site-agent/internal/clients/openstack/tenant",
}

// TestIdleBackendsHaveNoInitialiser links the release binary (with its symbol table) and fails
// on an initialiser of a lazy package: a package-level regexp.MustCompile, a map literal or a
// table filled from function calls gives the package one.
func TestIdleBackendsHaveNoInitialiser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the release binary is not linked")
	}
	bin := filepath.Join(t.TempDir(), "site-agent")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "nm", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool nm: %v\n%s", err, tailOf(string(out)))
	}
	syms := strings.Split(string(out), "\n")
	if len(syms) < 10000 {
		t.Fatalf("implausibly few symbols (%d): is the binary stripped?", len(syms))
	}
	for _, line := range syms {
		f := strings.Fields(line)
		if len(f) < 3 || f[1] != "T" {
			continue
		}
		for _, p := range lazyPackages {
			if f[2] == p+".init" || strings.HasPrefix(f[2], p+".init.") || strings.HasPrefix(f[2], p+".map.init.") {
				t.Errorf("%s: %s does work at start-up", f[2], p)
			}
		}
	}
}
