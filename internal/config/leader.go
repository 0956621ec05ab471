package config

import (
	"strings"
	"time"
)

// LeaderElection is the top-level leader_election section: with enabled, of several replicas only
// the holder of a Kubernetes Lease works (the --leader-elect flags override these keys).
type LeaderElection struct {
	Enabled       bool
	Namespace     string // of the Lease; "" = the pod's own namespace (in a cluster)
	LeaseName     string
	Kubeconfig    string // "" = in-cluster service account
	Identity      string // "" = hostname plus a random suffix
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// Default leader election timing (the same as Kubernetes' own controllers).
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// leaderElection reads and validates the leader_election section; unknown keys are warnings.
func leaderElection(top *reader) (LeaderElection, []string) {
	le := LeaderElection{LeaseName: "site-agent", LeaseDuration: DefaultLeaseDuration,
		RenewDeadline: DefaultRenewDeadline, RetryPeriod: DefaultRetryPeriod}
	m := top.mapping("leader_election")
	if m == nil {
		return le, nil
	}
	r := newReader(m, "leader_election.", "")
	le.Enabled = r.boolean("enabled", false)
	le.Namespace = r.str("namespace", "")
	le.LeaseName = r.str("lease_name", le.LeaseName)
	le.Kubeconfig = r.str("kubeconfig", "")
	le.Identity = r.str("identity", "")
	le.LeaseDuration = duration(r, "lease_duration", le.LeaseDuration)
	le.RenewDeadline = duration(r, "renew_deadline", le.RenewDeadline)
	le.RetryPeriod = duration(r, "retry_period", le.RetryPeriod)
	if !r.failed() {
		validateLeader(r, le)
	}
	top.absorb(r.errs)
	return le, unknownWarnings(r.unknown())
}

// duration reads a Go duration ("15s") or a number of seconds.
func duration(r *reader, key string, def time.Duration) time.Duration {
	v, ok := r.get(key)
	if !ok {
		return def
	}
	switch t := v.(type) {
	case string:
		if d, err := time.ParseDuration(strings.TrimSpace(t)); err == nil && d > 0 {
			return d
		}
	case int, int64, float64:
		if s := r.float(key, 0); s > 0 {
			return time.Duration(s * float64(time.Second))
		}
	}
	r.fail(key, "expected a positive duration such as 15s, got %s", describe(v))
	return def
}

// validateLeader checks the names and the timing. A leader stops working at the latest
// renew_deadline + retry_period after its last renewal, and a standby takes over no earlier than
// lease_duration after it: the first must be shorter, or two replicas could work at once.
func validateLeader(r *reader, le LeaderElection) {
	if !dnsName(le.LeaseName) {
		r.fail("lease_name", "must be a lower-case DNS name (a-z, 0-9, '-', '.'), got %q", le.LeaseName)
	}
	if le.Namespace != "" && !dnsLabel(le.Namespace) {
		r.fail("namespace", "must be a lower-case DNS label, got %q", le.Namespace)
	}
	if le.RenewDeadline+le.RetryPeriod >= le.LeaseDuration {
		r.fail("lease_duration", "must be longer than renew_deadline + retry_period (%s + %s), got %s", le.RenewDeadline, le.RetryPeriod, le.LeaseDuration)
	}
	if float64(le.RenewDeadline) <= 1.2*float64(le.RetryPeriod) {
		r.fail("renew_deadline", "must be longer than 1.2 × retry_period (%s), got %s", le.RetryPeriod, le.RenewDeadline)
	}
}

func dnsLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func dnsName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if !dnsLabel(part) {
			return false
		}
	}
	return true
}
