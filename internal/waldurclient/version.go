package waldurclient

import (
	"strconv"
	"strings"
)

// Release is a Waldur release number as /api/version/ reports it (8.1.0, 8.1.0rc19,
// 8.1.0.dev3). A pre-release sorts before its release, as in PEP 440 (Waldur is a Python
// project).
type Release struct {
	Major, Minor, Patch int
	Pre                 string // "rc19", "dev3", … ("" for a release)
}

// ParseRelease reads a release number; ok is false for anything else (e.g. a development
// build that reports a branch name).
func ParseRelease(v string) (r Release, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	end := 0
	for end < len(v) && (v[end] == '.' || v[end] >= '0' && v[end] <= '9') {
		end++
	}
	head := strings.TrimRight(v[:end], ".")
	parts := strings.Split(head, ".")
	if len(parts) > 3 || parts[0] == "" {
		return Release{}, false
	}
	nums := [3]int{}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return Release{}, false
		}
		nums[i] = n
	}
	pre := strings.TrimLeft(v[len(head):], ".-")
	return Release{Major: nums[0], Minor: nums[1], Patch: nums[2], Pre: pre}, true
}

// AtLeast reports whether r is the same release as min or a later one; a pre-release of min
// is earlier than min.
func (r Release) AtLeast(min Release) bool {
	a := [3]int{r.Major, r.Minor, r.Patch}
	b := [3]int{min.Major, min.Minor, min.Patch}
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return r.Pre == "" || min.Pre != ""
}

// VersionAtLeast reports whether Waldur version have is at least release want; known is false
// when have is not a release number (the caller cannot tell).
func VersionAtLeast(have, want string) (atLeast, known bool) {
	h, ok := ParseRelease(have)
	if !ok {
		return false, false
	}
	w, _ := ParseRelease(want)
	return h.AtLeast(w), true
}
