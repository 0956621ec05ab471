package ranchersim

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// agentLink is the way to an imported cluster's API: "https://<address>" dialled through the
// cluster's agent session, trusting the agent's CA, authenticated with the agent's token.
type agentLink struct {
	params    agentParams
	transport *http.Transport
	proxy     *httputil.ReverseProxy
	kube      kubernetes.Interface
}

// clusterStats are the totals Rancher shows for a cluster, from its Nodes.
type clusterStats struct {
	nodes, notReady                          int
	capacity, allocatable, requested, limits map[string]string
}

func (s *Server) newAgentLink(cid string, p agentParams) (*agentLink, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.caPEM)
	dial := s.tun.dialer(cid)
	dialCtx := func(ctx context.Context, network, addr string) (net.Conn, error) { return dial(ctx, network, addr) }
	tr := &http.Transport{DialContext: dialCtx, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 8,
		IdleConnTimeout: 90 * time.Second, TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "https", p.address
			pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, ""
			pr.Out.Host = p.address
			pr.Out.Header.Set("Authorization", "Bearer "+p.token)
		},
		Transport:     tr,
		FlushInterval: -1,
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "https://" + p.address, BearerToken: p.token, Dial: dialCtx,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.caPEM}, QPS: 200, Burst: 400, Timeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	return &agentLink{params: p, transport: tr, proxy: rp, kube: cs}, nil
}

// linkAgent records the agent's parameters at a handshake and starts activating the cluster.
func (s *Server) linkAgent(cid string, p agentParams) error {
	fresh, err := s.newAgentLink(cid, p)
	if err != nil {
		return err
	}
	s.mu.Lock()
	c := s.st.clusters[cid]
	if c == nil || c.imp == nil {
		s.mu.Unlock()
		return errors.New("cluster not found")
	}
	link := c.imp.agent
	if link == nil || link.params.address != p.address || link.params.token != p.token || !bytes.Equal(link.params.caPEM, p.caPEM) {
		if link != nil {
			link.transport.CloseIdleConnections()
		}
		link = fresh
		c.imp.agent = link
	}
	c.imp.gen++
	c.imp.unrecorded = false
	gen := c.imp.gen
	s.mu.Unlock()
	go s.watchAgent(cid, link, gen)
	return nil
}

func (s *Server) currentLink(cid string, link *agentLink) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.clusters[cid]
	return c != nil && c.imp != nil && c.imp.agent == link
}

func (s *Server) setState(cid, state string, st *clusterStats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.st.clusters[cid]; c != nil && c.imp != nil && c.State != "removing" {
		c.State = state
		if st != nil {
			c.imp.stats = *st
		}
	}
}

// agentGone marks a cluster whose last agent session ended "unavailable".
func (s *Server) agentGone(cid string) {
	if s.tun.HasSession(cid) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.st.clusters[cid]; c != nil && c.imp != nil && c.imp.agent != nil && c.State != "removing" {
		c.State, c.imp.connected = "unavailable", false
	}
}

// collectStats reads the cluster's Nodes as Rancher's statsaggregator
// (pkg/controllers/management/clusterstats) totals them: capacity and allocatable from the Nodes'
// status, requested and limits from the annotations management.cattle.io/pod-requests and
// pod-limits that the cluster agent's podresources controller writes on every Node
// (pkg/controllers/managementagent/podresources; nodesyncer copies them into the machine's
// Status.Requested/Limits) — Rancher never sums the Pods itself. Only pods, memory and cpu are
// totalled, as there. Nodes that are not Ready are counted in notReady.
func collectStats(ctx context.Context, kube kubernetes.Interface) (clusterStats, error) {
	// ResourceVersion "0" is served from the API server's watch cache, as informers list.
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return clusterStats{}, err
	}
	capacity, allocatable := corev1.ResourceList{}, corev1.ResourceList{}
	requested, limits := corev1.ResourceList{}, corev1.ResourceList{}
	st := clusterStats{nodes: len(nodes.Items)}
	for _, n := range nodes.Items {
		addList(capacity, totalled(n.Status.Capacity))
		addList(allocatable, totalled(n.Status.Allocatable))
		addList(requested, totalled(annotationList(n.Annotations[podRequestsAnnotation])))
		addList(limits, totalled(annotationList(n.Annotations[podLimitsAnnotation])))
		if !nodeReady(&n) {
			st.notReady++
		}
	}
	st.capacity, st.allocatable, st.requested, st.limits = render(capacity), render(allocatable), render(requested), render(limits)
	return st, nil
}

// The annotations of pkg/controllers/managementagent/podresources: JSON resource lists.
const (
	podRequestsAnnotation = "management.cattle.io/pod-requests"
	podLimitsAnnotation   = "management.cattle.io/pod-limits"
)

// annotationList decodes an annotation as nodesyncer's getResourceList does (nothing when
// absent or malformed).
func annotationList(v string) corev1.ResourceList {
	out := corev1.ResourceList{}
	if v != "" {
		_ = json.Unmarshal([]byte(v), &out)
	}
	return out
}

// totalled keeps the keys statsaggregator totals: pods, memory, cpu.
func totalled(l corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, k := range []corev1.ResourceName{corev1.ResourcePods, corev1.ResourceMemory, corev1.ResourceCPU} {
		if q, ok := l[k]; ok {
			out[k] = q
		}
	}
	return out
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func addList(dst, src corev1.ResourceList) {
	for k, v := range src {
		q := dst[k]
		q.Add(v)
		dst[k] = q
	}
}

func render(l corev1.ResourceList) map[string]string {
	out := make(map[string]string, len(l))
	for k, v := range l {
		out[string(k)] = v.String()
	}
	return out
}

// kubeClient is the client for a cluster's Kubernetes API: the downstream of a provisioning
// cluster, the agent's tunnel for an imported cluster (nil while it has none), else the shared
// upstream (nil without one).
func (s *Server) kubeClient(cid string) kubernetes.Interface {
	if d := s.downstreamFor(cid); d != nil {
		return d.kube
	}
	if link := s.tunnelLink(cid); link != nil {
		return link.kube
	}
	if s.isImported(cid) {
		return nil
	}
	return s.kube
}

// kubeProxy is kubeClient's reverse-proxy counterpart for /k8s/clusters/<id>/….
func (s *Server) kubeProxy(cid string) http.Handler {
	if d := s.downstreamFor(cid); d != nil {
		return d.proxy
	}
	if link := s.tunnelLink(cid); link != nil {
		return link.proxy
	}
	if s.isImported(cid) || s.proxy == nil {
		return nil
	}
	return s.proxy
}

// tunnelLink is the imported cluster's link while its agent session is up.
func (s *Server) tunnelLink(cid string) *agentLink {
	s.mu.Lock()
	c := s.st.clusters[cid]
	var link *agentLink
	if c != nil && c.imp != nil {
		link = c.imp.agent
	}
	s.mu.Unlock()
	if link == nil || !s.tun.HasSession(cid) {
		return nil
	}
	return link
}

func (s *Server) isImported(cid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.clusters[cid]
	return c != nil && c.imp != nil
}
