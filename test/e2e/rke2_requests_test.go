package e2e

import (
	"maps"
	"net/http"
	"strings"
	"sync"
)

// nodeHeader marks every request the node emulator sends (nodeTransport). The agent never sends
// it, so a simulator's wrapper (upstreamRequests.wrap) tells the agent's requests from the
// emulated VMs' exactly, one request at a time, whatever each of them answered.
const nodeHeader = "X-E2e-Node-Emulator"

// nodeTransport is the node emulator's RoundTripper: it marks each request with nodeHeader.
type nodeTransport struct{ base http.RoundTripper }

func (n nodeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(nodeHeader, "1")
	return n.base.RoundTrip(r)
}

// upstreamRequests counts the requests each simulator of an rke2World received, the agent's
// apart from the node emulator's.
type upstreamRequests struct {
	mu          sync.Mutex
	agent, node map[string]int // by upstream: rancher, openstack, vault, keycloak, waldur
}

func newUpstreamRequests() *upstreamRequests {
	return &upstreamRequests{agent: map[string]int{}, node: map[string]int{}}
}

// wrap counts each request to h under name before h serves it (the marker taken off).
func (u *upstreamRequests) wrap(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// the sandboxed bootstrap scripts (tier 2) are the only curl
		fromNode := r.Header.Get(nodeHeader) != "" || strings.HasPrefix(r.UserAgent(), "curl/")
		r.Header.Del(nodeHeader)
		u.mu.Lock()
		if fromNode {
			u.node[name]++
		} else {
			u.agent[name]++
		}
		u.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// counts returns the agent's and the node emulator's requests per upstream so far.
func (u *upstreamRequests) counts() (agent, node map[string]int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return maps.Clone(u.agent), maps.Clone(u.node)
}

// reset zeroes the counters.
func (u *upstreamRequests) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.agent, u.node = map[string]int{}, map[string]int{}
}
