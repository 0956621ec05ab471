package e2e

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
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
// apart from the node emulator's, and the agent's per endpoint (upstream, method and path with
// its ids replaced by {id}) so a figure can say which calls repeat.
type upstreamRequests struct {
	mu          sync.Mutex
	agent, node map[string]int // by upstream: rancher, openstack, vault, keycloak, waldur
	endpoints   map[string]int // the agent's, by "upstream METHOD /path/{id}"
}

func newUpstreamRequests() *upstreamRequests {
	return &upstreamRequests{agent: map[string]int{}, node: map[string]int{}, endpoints: map[string]int{}}
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
			u.endpoints[name+" "+r.Method+" "+endpointPath(r.URL.Path)]++
		}
		u.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// idSegment is a path segment that names one object: a UUID, a long hex or numeric id, or a
// Rancher id (c-m-abc12345, machine-…), or one of the world's own names.
var idSegment = regexp.MustCompile(`^([0-9a-fA-F-]{16,}|[0-9]+|c-m-[a-z0-9]+|c-[a-z0-9]{5}|` +
	rke2Cluster + `[-a-z0-9]*|[a-z]+-[0-9a-f]{8,}[-a-z0-9]*|rancher-provisioning-[-a-z0-9]+)$`)

// endpointPath replaces the path's id segments by {id}.
func endpointPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if idSegment.MatchString(s) {
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}

// counts returns the agent's and the node emulator's requests per upstream so far.
func (u *upstreamRequests) counts() (agent, node map[string]int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return maps.Clone(u.agent), maps.Clone(u.node)
}

// breakdown lists the agent's requests per endpoint of the upstreams named (all when none),
// most first: "12 openstack GET /v2.0/ports".
func (u *upstreamRequests) breakdown(upstreams ...string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var lines []string
	for ep, n := range u.endpoints {
		up, _, _ := strings.Cut(ep, " ")
		if len(upstreams) == 0 || slices.Contains(upstreams, up) {
			lines = append(lines, fmt.Sprintf("%4d %s", n, ep))
		}
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i] > lines[j] })
	return lines
}

// reset zeroes the counters.
func (u *upstreamRequests) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.agent, u.node, u.endpoints = map[string]int{}, map[string]int{}, map[string]int{}
}
