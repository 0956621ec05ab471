//go:build linux

package agent

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// written lives in the writable data segment (initialised, so not .bss): a release that
// wrongly advised that segment would drop the private copy and read 1 again.
var written = [8192]byte{1}

func TestReleaseStartupPagesKeepsDataAndDropsText(t *testing.T) {
	written[4096] = 42
	before := rssFileKiB(t)
	n, err := releaseStartupPages()
	if err != nil {
		t.Fatal(err)
	}
	after := rssFileKiB(t)
	if n == 0 {
		t.Fatal("no read-only mapping of the executable was found in /proc/self/maps")
	}
	if written[4096] != 42 || written[0] != 1 {
		t.Fatalf("the data segment lost a write: %d %d", written[4096], written[0])
	}
	// The test binary has touched far more than a megabyte of its text by now.
	if before-after < 1024 {
		t.Fatalf("RssFile %d KiB before, %d KiB after: nothing was released", before, after)
	}
	// What runs next faults its pages back in.
	if got := strconv.Itoa(12345); got != "12345" {
		t.Fatal(got)
	}
}

func TestReadOnlyMapping(t *testing.T) {
	exe := "/usr/bin/site agent" // a space in the path
	for _, c := range []struct {
		line   string
		ok     bool
		lo, hi uint64
	}{
		{"00400000-00eac000 r-xp 00000000 fe:00 11272368   /usr/bin/site agent", true, 0x400000, 0xeac000},
		{"00eac000-01996000 r--p 00aac000 fe:00 11272368   /usr/bin/site agent", true, 0xeac000, 0x1996000},
		{"01996000-01a21000 rw-p 01596000 fe:00 11272368   /usr/bin/site agent", false, 0, 0},
		{"01a21000-03a67000 rw-p 00000000 00:00 0", false, 0, 0},
		{"7f00-7f10 r--p 00000000 fe:00 1   /usr/lib/libc.so", false, 0, 0},
		{"7f10-7f00 r--p 00000000 fe:00 1   /usr/bin/site agent", false, 0, 0},
		{"zz-7f00 r--p 00000000 fe:00 1   /usr/bin/site agent", false, 0, 0},
	} {
		lo, hi, ok := readOnlyMapping(c.line, exe)
		if ok != c.ok || lo != c.lo || hi != c.hi {
			t.Errorf("%q: %x-%x %v, want %x-%x %v", c.line, lo, hi, ok, c.lo, c.hi, c.ok)
		}
	}
}

func rssFileKiB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
