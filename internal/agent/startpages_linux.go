//go:build linux

package agent

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// releaseStartupPages unmaps the executable's read-only pages from this process once start-up
// is over: the text and read-only data that package initialisers, itab registration and the
// first cycle paged in (with the kernel's fault-around, 64 KB at each fault). They are clean
// file pages: MADV_DONTNEED only drops this process's mappings; the pages stay in the page cache
// (shared with a second replica, reclaimable under pressure) and whatever a later cycle runs
// faults back in from there (a minor fault, no disk read). What stays resident afterwards is
// the idle loop's own working set. The writable data segment is never touched (its private
// copies would be lost), nor is anything while a debugger is attached (its breakpoints are
// private copies of text pages). It returns how many bytes of mappings it advised.
func releaseStartupPages() (uint64, error) {
	if traced() {
		return 0, nil
	}
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var total uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		start, end, ok := readOnlyMapping(sc.Text(), exe)
		if !ok {
			continue
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED); errno != 0 {
			return total, errno
		}
		total += end - start
	}
	return total, sc.Err()
}

// readOnlyMapping parses one line of /proc/self/maps ("start-end perms offset dev inode path")
// and says whether it maps exe without write permission.
func readOnlyMapping(line, exe string) (start, end uint64, ok bool) {
	fields := strings.Fields(line)
	if len(fields) < 6 || fields[1][1] == 'w' || strings.Join(fields[5:], " ") != exe {
		return 0, 0, false
	}
	lo, hi, found := strings.Cut(fields[0], "-")
	if !found {
		return 0, 0, false
	}
	s, err1 := strconv.ParseUint(lo, 16, 64)
	e, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || e <= s {
		return 0, 0, false
	}
	return s, e, true
}

// traced says whether a debugger is attached (/proc/self/status TracerPid).
func traced() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return true // unknown: leave the pages alone
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			return strings.TrimSpace(v) != "0"
		}
	}
	return true
}
