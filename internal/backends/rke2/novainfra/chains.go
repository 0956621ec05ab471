package novainfra

import (
	"time"

	"github.com/waldur/site-agent/internal/backends/rke2"
)

// chainTTL is how long a network chain EnsureNetwork found or made stands without being looked
// at again. A Create or scale order calls EnsureNetwork on every call (a cycle apart), and
// the chain does not change within an order; five Neutron requests per call were most of the
// order's OpenStack requests. Anything that could show the chain broken — a failed server
// create or repair, a teardown — forgets it, so the next call looks again.
const chainTTL = 10 * time.Minute

// chain is a network chain ensured in this process.
type chain struct {
	ni rke2.NetworkInfo
	at time.Time
}

// knownChain is the cluster's chain ensured less than chainTTL ago.
func (in *Infra) knownChain(uuid string) (rke2.NetworkInfo, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	ch, ok := in.chains[uuid]
	if !ok || time.Since(ch.at) >= chainTTL {
		return rke2.NetworkInfo{}, false
	}
	return cloneNetwork(ch.ni), true
}

// rememberChain records the cluster's chain as ensured now.
func (in *Infra) rememberChain(uuid string, ni rke2.NetworkInfo) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.chains[uuid] = chain{ni: cloneNetwork(ni), at: time.Now()}
}

// forgetChain makes the next EnsureNetwork of the cluster look at OpenStack again.
func (in *Infra) forgetChain(uuid string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.chains, uuid)
}

func cloneNetwork(ni rke2.NetworkInfo) rke2.NetworkInfo {
	ni.SecurityGroups = append([]string(nil), ni.SecurityGroups...)
	return ni
}
