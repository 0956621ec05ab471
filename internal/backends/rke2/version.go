package rke2

import (
	"fmt"
	"strconv"

	"github.com/waldur/site-agent/internal/failure"
)

// Annotations of the provisioning cluster an operator or the agent writes.
const (
	// AnnotationK8sVersion records the release an imported cluster (bootstrap rke2) was last
	// upgraded to; a provisioned cluster's is its spec.kubernetesVersion.
	AnnotationK8sVersion = labelPrefix + "k8s-version"
	// AnnotationReconcile=paused stops the agent from changing the cluster (repairs, upgrades)
	// while an operator works on it — an etcd restore (docs/rke2.md); its health is still
	// reported.
	AnnotationReconcile = labelPrefix + "reconcile"
	ReconcilePaused     = "paused"
)

// Version is an RKE2 release, v1.MINOR.PATCH+rke2rREV.
type Version struct{ Minor, Patch, Rev int }

var versionRe = &lazyRegexp{pattern: `^v1\.(\d+)\.(\d+)\+rke2r(\d+)$`}

// ParseVersion reads an RKE2 release name.
func ParseVersion(s string) (Version, bool) {
	m := versionRe.get().FindStringSubmatch(s)
	if m == nil {
		return Version{}, false
	}
	var v Version
	for i, p := range []*int{&v.Minor, &v.Patch, &v.Rev} {
		n, err := strconv.Atoi(m[i+1])
		if err != nil {
			return Version{}, false
		}
		*p = n
	}
	return v, true
}

// Compare orders releases: -1, 0 or 1.
func (v Version) Compare(w Version) int {
	for _, d := range [][2]int{{v.Minor, w.Minor}, {v.Patch, w.Patch}, {v.Rev, w.Rev}} {
		switch {
		case d[0] < d[1]:
			return -1
		case d[0] > d[1]:
			return 1
		}
	}
	return 0
}

func (v Version) String() string { return fmt.Sprintf("v1.%d.%d+rke2r%d", v.Minor, v.Patch, v.Rev) }

// CheckUpgrade judges taking a cluster from release cur to next: a public error for a release
// name that is not one, a downgrade, or a step over a minor version (Kubernetes' version skew
// policy lets the control plane move one minor version at a time, and RKE2's upgrade docs ask
// that no intermediate minor version be skipped: docs.rke2.io/upgrades/automated). The same
// release is no change (nil).
func CheckUpgrade(cur, next string) error {
	to, ok := ParseVersion(next)
	if !ok {
		return failure.Errorf("%q is not an RKE2 release (want one such as %s)", next, DefaultK8sVersion)
	}
	from, ok := ParseVersion(cur)
	if !ok {
		return failure.Errorf("the cluster's Kubernetes version %q is not an RKE2 release; it cannot be upgraded from here", cur)
	}
	switch {
	case to.Compare(from) < 0:
		return failure.Errorf("Kubernetes cannot be downgraded: the cluster runs %s, the order asks for %s", cur, next)
	case to.Minor > from.Minor+1:
		return failure.Errorf("upgrading from %s to %s skips v1.%d: Kubernetes is upgraded one minor version at a time; "+
			"upgrade to a v1.%d release first", cur, next, from.Minor+1, from.Minor+1)
	}
	return nil
}

// requestedVersion is the Kubernetes version an order asks for: new_options.k8s_version (Waldur
// puts an Update order's changed resource options there, and merges them into the resource's
// options once the order is done: waldur-mastermind marketplace/callbacks.py
// resource_update_succeeded). "" when the order asks for none.
func requestedVersion(attrs map[string]any) (string, error) {
	opts, _ := attrs["new_options"].(map[string]any)
	v, present := opts["k8s_version"]
	if !present || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok || s == "" {
		return "", failure.Errorf("k8s_version must be an RKE2 release such as %s", DefaultK8sVersion)
	}
	return s, nil
}
