//go:build !linux

package agent

// releaseStartupPages does nothing where /proc/self/maps and MADV_DONTNEED's semantics are not
// those of Linux.
func releaseStartupPages() (uint64, error) { return 0, nil }
