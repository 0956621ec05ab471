package cli

import (
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// leaderFlags are the --leader-elect flags (named as in Kubernetes' own components); each
// overrides its key of the leader_election section when given.
type leaderFlags struct {
	enabled                     optBool
	namespace, name, kubeconfig string
	identity                    string
	lease, renew, retry         time.Duration
}

func (l *leaderFlags) register(fs *pflag.FlagSet) {
	fs.Var(&l.enabled, "leader-elect", "work only while holding a Kubernetes Lease, so that several replicas never work at once")
	fs.Lookup("leader-elect").NoOptDefVal = "true" // --leader-elect alone, or --leader-elect=false
	fs.StringVar(&l.namespace, "leader-elect-resource-namespace", "", "namespace of the Lease (default: the pod's own)")
	fs.StringVar(&l.name, "leader-elect-resource-name", "", "name of the Lease (default site-agent)")
	fs.StringVar(&l.identity, "leader-elect-identity", "", "this replica's identity in the Lease (default: host name and a random suffix)")
	fs.StringVar(&l.kubeconfig, "kubeconfig", "", "kubeconfig for leader election (default: the pod's service account)")
	fs.DurationVar(&l.lease, "leader-elect-lease-duration", 0, "how long standbys wait after the last renewal before taking over (default 15s)")
	fs.DurationVar(&l.renew, "leader-elect-renew-deadline", 0, "how long the leader keeps trying to renew before it stops working (default 10s)")
	fs.DurationVar(&l.retry, "leader-elect-retry-period", 0, "how often candidates try to acquire and the leader renews (default 2s)")
}

// requested reports whether leader election was asked for on the command line.
func (l *leaderFlags) requested() bool { return l.enabled.set && l.enabled.value }

// overrides are the leader_election keys given as flags.
func (l *leaderFlags) overrides() map[string]any {
	o := map[string]any{}
	if l.enabled.set {
		o["enabled"] = l.enabled.value
	}
	for key, v := range map[string]string{"namespace": l.namespace, "lease_name": l.name, "kubeconfig": l.kubeconfig, "identity": l.identity} {
		if v != "" {
			o[key] = v
		}
	}
	for key, d := range map[string]time.Duration{"lease_duration": l.lease, "renew_deadline": l.renew, "retry_period": l.retry} {
		if d != 0 {
			o[key] = d.String()
		}
	}
	return o
}

// optBool is a boolean flag that remembers whether it was given.
type optBool struct{ set, value bool }

func (b *optBool) String() string { return strconv.FormatBool(b.value) }
func (b *optBool) Type() string   { return "bool" }
func (b *optBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.set, b.value = true, v
	return nil
}
