package ranchersim

import (
	"crypto/rand"
	"math/big"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Cluster import, as Rancher's v3 API offers it for a generic ("imported") cluster:
//
//   - POST /v3/clusters {"name"} creates a cluster in state "pending" (names are unique,
//     case-insensitively: 422 NotUnique on "Cluster name", as pkg/api/norman/store/cluster does);
//   - DELETE /v3/clusters/<id> removes it with its projects, bindings and registration tokens and
//     drops its tunnels;
//   - /v3/clusterregistrationtokens (list with clusterId/id/name filters, create, get) hands out
//     the registration token, whose manifestUrl is <server>/v3/import/<token>_<clusterId>.yaml;
//     for Options.NamespaceDelay after a cluster's create, a create is 404 (the namespace is
//     not there yet);
//   - GET /v3/import/<token>_<clusterId>.yaml (no authentication, like Rancher's) renders the
//     import manifest: the cattle-system namespace, the cattle service account bound to the
//     cattle-admin cluster role, the cattle-credentials-<hash> Secret with the server URL and
//     the token, and the cattle-cluster-agent Deployment and Service.

// imported is what a cluster created through the API carries beyond id, name and state.
type imported struct {
	created   time.Time
	agent     *agentLink // set by the first agent handshake
	gen       int        // counts agent handshakes: the newest one's watchAgent is the live one
	connected bool       // the Connected condition (clusterconnected.go)
	stats     clusterStats
	// unrecorded: the record lost the agent's parameters (LoseRegistration) until the next
	// handshake records them again.
	unrecorded bool
}

// Token is a simulated clusterRegistrationToken.
type Token struct {
	ID, Name, ClusterID, Token string
	Created                    time.Time
}

// tokenChars and tokenLen are those of wrangler's randomtoken.Generate, which Rancher uses.
const (
	tokenChars = "bcdfghjklmnpqrstvwxz2456789"
	tokenLen   = 54
)

func newRegistrationToken() string {
	b := make([]byte, tokenLen)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(tokenChars))))
		if err != nil {
			panic("ranchersim: random: " + err.Error())
		}
		b[i] = tokenChars[n.Int64()]
	}
	return string(b)
}

// importRoutes are the routes this file adds below /v3 (nil: not one of them).
func (s *Server) importRoutes(p []string) map[string]route {
	get, post, del := http.MethodGet, http.MethodPost, http.MethodDelete
	switch {
	case len(p) == 1 && p[0] == "clusters":
		return map[string]route{get: {"clusters.list", s.handleClusters}, post: {"cluster.create", s.createCluster}}
	case len(p) == 2 && p[0] == "clusters":
		id := p[1]
		return map[string]route{
			get:            {"cluster.get", func(w http.ResponseWriter, r *http.Request) { s.handleDownstreamCluster(w, r, id) }},
			http.MethodPut: {"cluster.update", func(w http.ResponseWriter, r *http.Request) { s.updateCluster(w, r, id) }},
			del:            {"cluster.delete", func(w http.ResponseWriter, r *http.Request) { s.deleteCluster(w, r, id) }},
			post:           {"cluster.action", func(w http.ResponseWriter, r *http.Request) { s.clusterAction(w, r, id) }},
		}
	case len(p) == 1 && p[0] == "clusterregistrationtokens":
		return map[string]route{get: {"crts.list", s.listTokensCRT}, post: {"crt.create", s.createTokenCRT}}
	case len(p) == 2 && p[0] == "clusterregistrationtokens":
		id := p[1]
		return map[string]route{get: {"crt.get", func(w http.ResponseWriter, r *http.Request) { s.getTokenCRT(w, r, id) }}}
	}
	return nil
}

var clusterCreateFields = map[string]fieldKind{"name": kString, "description": kString, "labels": kStringMap, "annotations": kStringMap}

func (s *Server) createCluster(w http.ResponseWriter, r *http.Request) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	in, ok := s.input(w, "cluster.create", body, clusterCreateFields)
	if !ok {
		return
	}
	name, _ := in["name"].(string)
	if strings.TrimSpace(name) == "" {
		fieldError(w, "MissingRequired", "name", "")
		return
	}
	s.mu.Lock()
	for _, c := range s.st.clusters {
		if strings.EqualFold(c.Name, name) {
			s.mu.Unlock()
			fieldError(w, "NotUnique", "Cluster name", "")
			return
		}
	}
	id := s.st.newName("c-", func(n string) bool { return s.st.clusters[n] != nil })
	c := &Cluster{ID: id, Name: name, State: "pending", imp: &imported{created: time.Now()}}
	s.st.clusters[id] = c
	s.st.addClusterProjects(id)
	out := renderCluster(baseURL(r), c)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

// deleteCluster removes a cluster as Rancher does: its projects, bindings and registration
// tokens go with it, and its agent's tunnels are closed (a reconnect is then refused) — for an
// imported cluster only after the cleanup Rancher deploys through them (cleanup.go).
func (s *Server) deleteCluster(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	c := s.st.clusters[id]
	if c == nil {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "NotFound", "clusters.management.cattle.io \""+id+"\" not found")
		return
	}
	s.startRemovalLocked(c)
	out := renderCluster(baseURL(r), c)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// startRemovalLocked deletes a cluster as Rancher does (s.mu held): an imported cluster whose
// agent connected is "removing" until Rancher's cleanup through its tunnel is done (cleanup.go);
// any other cluster goes at once.
func (s *Server) startRemovalLocked(c *Cluster) {
	if c.State == "removing" {
		return
	}
	if c.imp != nil && c.imp.agent != nil {
		c.State = "removing"
		go s.removeImported(c.ID, c.imp.agent)
		return
	}
	c.State = "removing"
	s.removeClusterLocked(c.ID)
	go s.tun.drop(c.ID)
}

// removeClusterLocked deletes the cluster and everything that belongs to it (s.mu held).
func (s *Server) removeClusterLocked(id string) {
	delete(s.st.clusters, id)
	s.removeClusterObjectsLocked(id)
	for pid, p := range s.st.projects {
		if p.ClusterID == id {
			delete(s.st.projects, pid)
		}
	}
	for bid, b := range s.st.bindings {
		if strings.HasPrefix(b.ProjectID, id+":") {
			delete(s.st.bindings, bid)
		}
	}
	for tid, t := range s.tokens {
		if t.ClusterID == id {
			delete(s.tokens, tid)
		}
	}
}

var crtFilters = map[string]bool{"clusterId": true, "id": true, "name": true, "state": true, "token": true}

func (s *Server) listTokensCRT(w http.ResponseWriter, r *http.Request) {
	f := s.filters(r, "crts.list", crtFilters)
	base := baseURL(r)
	s.mu.Lock()
	s.defaultTokensLocked()
	ids := make([]string, 0, len(s.tokens))
	for id := range s.tokens {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var items []map[string]any
	for _, id := range ids {
		if item := s.renderCRT(base, s.tokens[id]); matches(item, f) {
			items = append(items, item)
		}
	}
	s.mu.Unlock()
	s.writeCollection(w, r, "clusterRegistrationToken", items)
}

func (s *Server) createTokenCRT(w http.ResponseWriter, r *http.Request) {
	body, ok := decodeBody(w, r)
	if !ok {
		return
	}
	in, ok := s.input(w, "crt.create", body, map[string]fieldKind{"clusterId": kReference, "name": kString})
	if !ok {
		return
	}
	cid, _ := in["clusterId"].(string)
	if cid == "" {
		fieldError(w, "MissingRequired", "clusterId", "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.st.clusters[cid]
	if c == nil {
		fieldError(w, "InvalidReference", "clusterId", "cluster "+cid+" not found")
		return
	}
	// Registration tokens live in the cluster's namespace, which Rancher's controllers make a
	// moment after the cluster: on v2.12.0 a token POSTed right after POST /v3/clusters (or a
	// v1 provisioning cluster's create) was answered 404 `namespaces "c-xxxxx" not found`
	// (shared/recipes/rancher-server, issue 16). Clusters given in Options exist from the start.
	if c.imp != nil && time.Since(c.imp.created) < s.opts.NamespaceDelay {
		writeError(w, http.StatusNotFound, "NotFound", `namespaces "`+cid+`" not found`)
		return
	}
	name := s.st.newName("crt-", func(n string) bool { return s.tokens[cid+":"+n] != nil })
	t := &Token{ID: cid + ":" + name, Name: name, ClusterID: cid, Token: newRegistrationToken(), Created: time.Now()}
	s.tokens[t.ID] = t
	writeJSON(w, http.StatusCreated, s.renderCRT(baseURL(r), t))
}

func (s *Server) getTokenCRT(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.defaultTokensLocked()
	t := s.tokens[id]
	if t == nil {
		writeError(w, http.StatusNotFound, "NotFound", "clusterregistrationtokens.management.cattle.io \""+id+"\" not found")
		return
	}
	writeJSON(w, http.StatusOK, s.renderCRT(baseURL(r), t))
}

// renderCRT is the token as v3 shows it; the manifest URL and the commands only once Rancher's
// status controller has run (controllers.go).
func (s *Server) renderCRT(base string, t *Token) map[string]any {
	self := base + "/v3/clusterregistrationtokens/" + t.ID
	out := map[string]any{"id": t.ID, "type": "clusterRegistrationToken", "baseType": "clusterRegistrationToken",
		"name": t.Name, "namespaceId": nil, "clusterId": t.ClusterID, "token": t.Token, "state": "active",
		"manifestUrl": "", "command": "", "insecureCommand": "",
		"created": t.Created.UTC().Format(time.RFC3339), "uuid": uuidOf(t.ID),
		"links": map[string]string{"self": self}, "actions": map[string]string{}}
	if s.settled(t.Created) {
		manifest := base + "/v3/import/" + t.Token + "_" + t.ClusterID + ".yaml"
		out["manifestUrl"], out["command"] = manifest, "kubectl apply -f "+manifest
		out["insecureCommand"] = "curl --insecure -sfL " + manifest + " | kubectl apply -f -"
		for k, v := range nodeCommands(base, t.Token) {
			out[k] = v
		}
	}
	return out
}

// clusterByToken returns the id of the cluster a registration token belongs to ("" if none).
func (s *Server) clusterByToken(token string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tokens {
		if t.Token == token && s.st.clusters[t.ClusterID] != nil {
			return t.ClusterID
		}
	}
	return ""
}

// renderImported adds what an imported cluster shows: driver, API endpoint, node count and
// the capacity, allocatable, requested and limits summed from its Nodes and Pods.
func (c *Cluster) renderImported(out map[string]any) {
	if c.imp == nil {
		return
	}
	out["driver"] = ""
	out["created"] = c.imp.created.UTC().Format(time.RFC3339)
	if c.imp.agent != nil {
		out["driver"] = "imported"
		out["apiEndpoint"] = "https://" + c.imp.agent.params.address
		if c.imp.unrecorded {
			out["driver"], out["state"] = "", "pending"
			delete(out, "apiEndpoint")
		}
		status, message := "True", ""
		if !c.imp.connected {
			status, message = "False", "Cluster agent is not connected"
		}
		out["conditions"] = []map[string]any{{"type": "Connected", "status": status, "message": message}}
	}
	st := c.imp.stats
	out["nodeCount"] = st.nodes
	out["capacity"], out["allocatable"] = nonNil(st.capacity), nonNil(st.allocatable)
	out["requested"], out["limits"] = nonNil(st.requested), nonNil(st.limits)
}
