package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
)

// tb is the testing.TB that vault.NewTestCluster asks for, in a program: a failure ends the
// process (status 1), cleanups run at the end, temporary directories are removed with them.
// The embedded interface is never called (nil): every method Vault's test cluster uses is
// defined here.
type tb struct {
	testing.TB

	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

func newTB() *tb { return &tb{} }

func (t *tb) Helper()      {}
func (t *tb) Name() string { return "vaultserver" }

func (t *tb) Log(args ...any)                 { fmt.Fprintln(os.Stderr, args...) }
func (t *tb) Logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func (t *tb) Fail() {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
}

func (t *tb) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *tb) Error(args ...any)                 { t.Log(args...); t.Fail() }
func (t *tb) Errorf(format string, args ...any) { t.Logf(format, args...); t.Fail() }

// FailNow ends the process after the cleanups (the core's listeners and temporary files).
func (t *tb) FailNow() {
	t.cleanup()
	os.Exit(1)
}

func (t *tb) Fatal(args ...any)                 { t.Log(args...); t.FailNow() }
func (t *tb) Fatalf(format string, args ...any) { t.Logf(format, args...); t.FailNow() }

func (t *tb) Skip(args ...any)                 { t.Fatal(append([]any{"skip:"}, args...)...) }
func (t *tb) Skipf(format string, args ...any) { t.Fatalf("skip: "+format, args...) }
func (t *tb) SkipNow()                         { t.FailNow() }
func (t *tb) Skipped() bool                    { return false }

func (t *tb) Setenv(key, value string) { _ = os.Setenv(key, value) }

func (t *tb) Context() context.Context { return context.Background() }

func (t *tb) Cleanup(f func()) {
	t.mu.Lock()
	t.cleanups = append(t.cleanups, f)
	t.mu.Unlock()
}

// TempDir makes a directory removed at the end.
func (t *tb) TempDir() string {
	dir, err := os.MkdirTemp("", "vaultserver")
	if err != nil {
		t.Fatalf("TempDir: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// cleanup runs the cleanups, last first, once.
func (t *tb) cleanup() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}
