package ranchersim

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
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

// clusterStats are the totals Rancher shows for a cluster, from its Nodes and their Pods.
type clusterStats struct {
	nodes                                    int
	capacity, allocatable, requested, limits map[string]string
}

func (s *Server) newAgentLink(cid string, p agentParams) (*agentLink, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.caPEM)
	dial := s.tun.rd.Dialer(cid)
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
	s.mu.Unlock()
	go s.activate(cid, link)
	return nil
}

// activate waits for the session the handshake opens, then reads the cluster's Nodes through it:
// the cluster is "waiting" while none is visible and "active" once one is, with its totals.
func (s *Server) activate(cid string, link *agentLink) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for waited := time.Duration(0); !s.tun.rd.HasSession(cid); waited += 20 * time.Millisecond {
		if waited > 10*time.Second || !s.currentLink(cid, link) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.setState(cid, "waiting", nil)
	for ctx.Err() == nil && s.currentLink(cid, link) && s.tun.rd.HasSession(cid) {
		st, err := collectStats(ctx, link.kube)
		if err == nil && st.nodes > 0 {
			s.setState(cid, "active", &st)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
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
	if c := s.st.clusters[cid]; c != nil && c.imp != nil {
		c.State = state
		if st != nil {
			c.imp.stats = *st
		}
	}
}

// agentGone marks a cluster whose last agent session ended "unavailable".
func (s *Server) agentGone(cid string) {
	if s.tun.rd.HasSession(cid) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.st.clusters[cid]; c != nil && c.imp != nil && c.imp.agent != nil {
		c.State = "unavailable"
	}
}

// collectStats sums the Nodes' capacity and allocatable and the requests and limits of the
// non-terminal Pods bound to them.
func collectStats(ctx context.Context, kube kubernetes.Interface) (clusterStats, error) {
	// ResourceVersion "0" is served from the API server's watch cache, as informers list; the
	// cache indexes Pods by node, so the per-node lists stay cheap with thousands of Pods.
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return clusterStats{}, err
	}
	capacity, allocatable := corev1.ResourceList{}, corev1.ResourceList{}
	requested, limits := corev1.ResourceList{}, corev1.ResourceList{}
	for _, n := range nodes.Items {
		addList(capacity, n.Status.Capacity)
		addList(allocatable, n.Status.Allocatable)
		pods, err := kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n.Name, ResourceVersion: "0"})
		if err != nil {
			return clusterStats{}, err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			for _, c := range p.Spec.Containers {
				addList(requested, c.Resources.Requests)
				addList(limits, c.Resources.Limits)
			}
		}
	}
	return clusterStats{nodes: len(nodes.Items), capacity: render(capacity), allocatable: render(allocatable),
		requested: render(requested), limits: render(limits)}, nil
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
	if link == nil || !s.tun.rd.HasSession(cid) {
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
