package ranchersim

import (
	"encoding/base64"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Rancher's v1 provisioning API (Steve) for RKE2 custom clusters, as the managed-cluster backend
// uses it:
//
//   - /v1/provisioning.cattle.io.clusters/fleet-default lists and creates clusters; a body
//     names metadata.name (a DNS label), metadata.labels, metadata.annotations and spec (kubernetesVersion required;
//     rkeConfig, localClusterAuthEndpoint, agentEnvVars, defaultPodSecurityAdmissionConfiguration-
//     TemplateName accepted); other spec keys or metadata.namespace ≠ fleet-default are 422;
//   - on create the management cluster c-m-<8> appears (status.clusterName), in state
//     "provisioning" until a node is active;
//   - .../fleet-default/<name> is read, replaced (PUT, with metadata.resourceVersion: a stale
//     one is 409) and deleted: the object shows metadata.deletionTimestamp for
//     Options.ProvisionDeleteDelay (default 100 ms), then goes with its management cluster,
//     nodes, registration tokens and bindings.

// provCluster is one provisioning.cattle.io/v1 Cluster.
type provCluster struct {
	name      string
	labels    map[string]string
	notes     map[string]string // metadata.annotations
	spec      map[string]any
	rv        int
	created   time.Time
	deleteAt  time.Time // zero: not being deleted
	managedID string
}

const fleetNS = "fleet-default"

var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	provSpecKeys = map[string]bool{"kubernetesVersion": true, "rkeConfig": true, "localClusterAuthEndpoint": true, "agentEnvVars": true, "defaultPodSecurityAdmissionConfigurationTemplateName": true}
	provMetaKeys = map[string]bool{"name": true, "namespace": true, "labels": true, "annotations": true, "resourceVersion": true}
)

// v1Routes maps the path below /v1 to its operations (nil: unknown path).
func (s *Server) v1Routes(p []string) map[string]route {
	if len(p) > 0 && p[0] == "secrets" {
		return s.secretRoutes(p[1:])
	}
	if len(p) < 2 || p[0] != "provisioning.cattle.io.clusters" || p[1] != fleetNS {
		return nil
	}
	switch len(p) {
	case 2:
		return map[string]route{http.MethodGet: {"prov.list", s.listProv}, http.MethodPost: {"prov.create", s.createProv}}
	case 3:
		name := p[2]
		return map[string]route{
			http.MethodGet:    {"prov.get", func(w http.ResponseWriter, r *http.Request) { s.getProv(w, r, name) }},
			http.MethodPut:    {"prov.update", func(w http.ResponseWriter, r *http.Request) { s.updateProv(w, r, name) }},
			http.MethodDelete: {"prov.delete", func(w http.ResponseWriter, r *http.Request) { s.deleteProv(w, r, name) }},
		}
	}
	return nil
}

// expireLocked finishes deletions whose time has come (s.mu held).
func (s *Server) expireLocked() {
	now := time.Now()
	for name, pc := range s.prov {
		if !pc.deleteAt.IsZero() && now.After(pc.deleteAt) {
			s.removeClusterLocked(pc.managedID)
			delete(s.prov, name)
		}
	}
}

// listProv lists the clusters; ?labelSelector= (equality requirements, "k=v,k2=v2", as Steve
// hands it to the Kubernetes API) keeps those whose labels match. ?limit=N pages as Steve does
// (rancher/apiserver v0.6.3 pkg/writer/encoding.go newCollection): the page's "continue" token,
// and "pagination" {limit, first, next, partial} whenever a token was given or is returned,
// next being the same URL with continue= set. The token is opaque to clients; an unknown one
// is refused (400), as the Kubernetes API refuses a malformed continue.
func (s *Server) listProv(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sel, ok := parseSelector(q.Get("labelSelector"))
	if !ok {
		writeStatus(w, http.StatusBadRequest, "BadRequest", "unable to parse requirement: "+q.Get("labelSelector"))
		return
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	from, err := base64.RawURLEncoding.DecodeString(q.Get("continue"))
	if err != nil {
		writeStatus(w, http.StatusBadRequest, "BadRequest", "continue key is not valid")
		return
	}
	s.mu.Lock()
	s.expireLocked()
	names := make([]string, 0, len(s.prov))
	for n, pc := range s.prov {
		if labelsMatch(pc.labels, sel) && n >= string(from) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	next := ""
	if limit > 0 && len(names) > limit {
		next, names = base64.RawURLEncoding.EncodeToString([]byte(names[limit])), names[:limit]
	}
	items := make([]map[string]any, 0, len(names))
	for _, n := range names {
		items = append(items, s.renderProv(s.prov[n]))
	}
	s.mu.Unlock()
	body := map[string]any{"type": "collection", "resourceType": "provisioning.cattle.io.cluster", "data": items}
	if next != "" || q.Get("continue") != "" {
		self := baseURL(r) + r.URL.Path
		page := map[string]any{"limit": limit, "first": self + "?" + r.URL.RawQuery, "partial": true}
		if next != "" {
			q.Set("continue", next)
			page["next"] = self + "?" + q.Encode()
			body["continue"] = next
		}
		body["pagination"] = page
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) getProv(w http.ResponseWriter, _ *http.Request, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	pc := s.prov[name]
	if pc == nil {
		writeStatus(w, http.StatusNotFound, "NotFound", `clusters.provisioning.cattle.io "`+name+`" not found`)
		return
	}
	writeJSON(w, http.StatusOK, s.renderProv(pc))
}

// provBody is a decoded create or update body.
type provBody struct {
	name          string
	labels, notes map[string]string
	spec          map[string]any
	rv            string
}

// decodeProv checks a create or update body; it answers the error itself.
func (s *Server) decodeProv(w http.ResponseWriter, r *http.Request) (provBody, bool) {
	body, ok := decodeBody(w, r)
	if !ok {
		return provBody{}, false
	}
	meta, _ := body["metadata"].(map[string]any)
	spec, _ := body["spec"].(map[string]any)
	bad := func(msg string) (provBody, bool) {
		writeStatus(w, http.StatusUnprocessableEntity, "Invalid", msg)
		return provBody{}, false
	}
	if meta == nil || spec == nil {
		return bad("metadata and spec are required")
	}
	for k := range meta {
		if !provMetaKeys[k] {
			return bad("metadata." + k + ": field not declared in schema")
		}
	}
	for k := range spec {
		if !provSpecKeys[k] {
			return bad("spec." + k + ": field not declared in schema")
		}
	}
	if ns, _ := meta["namespace"].(string); ns != "" && ns != fleetNS {
		return bad("metadata.namespace: clusters are created in " + fleetNS)
	}
	pb := provBody{spec: spec, labels: map[string]string{}, notes: map[string]string{}}
	pb.name, _ = meta["name"].(string)
	if !dnsLabel.MatchString(pb.name) {
		return bad("metadata.name: " + strconv.Quote(pb.name) + " is not a DNS label")
	}
	if v, _ := spec["kubernetesVersion"].(string); v == "" {
		return bad("spec.kubernetesVersion: Required value")
	}
	for field, into := range map[string]map[string]string{"labels": pb.labels, "annotations": pb.notes} {
		m, _ := meta[field].(map[string]any)
		for k, v := range m {
			str, isStr := v.(string)
			if !isStr {
				return bad("metadata." + field + "." + k + ": must be a string")
			}
			into[k] = str
		}
	}
	if msg := checkRKEConfig(spec); msg != "" {
		return bad(msg)
	}
	pb.rv, _ = meta["resourceVersion"].(string)
	return pb, true
}

func (s *Server) createProv(w http.ResponseWriter, r *http.Request) {
	pb, ok := s.decodeProv(w, r)
	if !ok {
		return
	}
	name := pb.name
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	if s.prov[name] != nil {
		writeStatus(w, http.StatusConflict, "AlreadyExists", `clusters.provisioning.cattle.io "`+name+`" already exists`)
		return
	}
	id := s.st.newName("c-m-", func(n string) bool { return s.st.clusters[n] != nil })
	id += s.st.newName("", func(string) bool { return false })[:3]
	s.st.clusters[id] = &Cluster{ID: id, Name: name, State: "provisioning", imp: &imported{created: time.Now()}}
	s.st.addClusterProjects(id)
	pc := &provCluster{name: name, labels: pb.labels, notes: pb.notes, spec: pb.spec, rv: 1, created: time.Now(), managedID: id}
	s.prov[name] = pc
	out := s.renderProv(pc)
	out["status"] = map[string]any{} // the controllers have not run yet (controllers.go)
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) updateProv(w http.ResponseWriter, r *http.Request, name string) {
	pb, ok := s.decodeProv(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	pc := s.prov[name]
	switch {
	case pc == nil:
		writeStatus(w, http.StatusNotFound, "NotFound", `clusters.provisioning.cattle.io "`+name+`" not found`)
	case pb.name != name:
		writeStatus(w, http.StatusBadRequest, "BadRequest", "the name of the object does not match the name on the URL")
	case pb.rv != strconv.Itoa(pc.rv):
		writeStatus(w, http.StatusConflict, "Conflict", `Operation cannot be fulfilled on clusters.provisioning.cattle.io "`+name+`": the object has been modified`)
	default:
		old := pc.spec
		pc.labels, pc.notes, pc.spec = pb.labels, pb.notes, pb.spec
		pc.rv++
		s.provUpgradeLocked(pc, old)
		writeJSON(w, http.StatusOK, s.renderProv(pc))
	}
}

func (s *Server) deleteProv(w http.ResponseWriter, _ *http.Request, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	pc := s.prov[name]
	if pc == nil {
		writeStatus(w, http.StatusNotFound, "NotFound", `clusters.provisioning.cattle.io "`+name+`" not found`)
		return
	}
	if pc.deleteAt.IsZero() {
		pc.deleteAt = time.Now().Add(s.opts.ProvisionDeleteDelay)
		pc.rv++
	}
	writeJSON(w, http.StatusOK, s.renderProv(pc))
}

// renderProv is the object as Steve shows it (s.mu held).
func (s *Server) renderProv(pc *provCluster) map[string]any {
	meta := map[string]any{"name": pc.name, "namespace": fleetNS, "labels": nonNil(pc.labels), "annotations": nonNil(pc.notes),
		"resourceVersion": strconv.Itoa(pc.rv), "creationTimestamp": pc.created.UTC().Format(time.RFC3339),
		"uid": uuidOf("prov:" + pc.name)}
	if !pc.deleteAt.IsZero() {
		meta["deletionTimestamp"] = pc.deleteAt.UTC().Format(time.RFC3339)
	}
	ready := false
	if c := s.st.clusters[pc.managedID]; c != nil {
		ready = c.State == "active"
	}
	status := map[string]any{"clusterName": pc.managedID, "ready": ready}
	if msg := s.planBlockedLocked(pc.managedID); msg != "" {
		status["ready"] = false
		status["conditions"] = []map[string]any{{"type": "Provisioned", "status": "False", "reason": "Error", "message": msg}}
	}
	if !s.settled(pc.created) {
		status = map[string]any{} // the management cluster is not made yet (controllers.go)
	}
	return map[string]any{"id": fleetNS + "/" + pc.name, "type": "provisioning.cattle.io.cluster",
		"apiVersion": "provisioning.cattle.io/v1", "kind": "Cluster", "metadata": meta, "spec": pc.spec, "status": status}
}

// writeStatus answers like the Kubernetes API behind Steve: a metav1.Status document.
func writeStatus(w http.ResponseWriter, code int, reason, msg string) {
	writeJSON(w, code, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": msg, "reason": reason, "code": code})
}

// parseSelector reads equality requirements (k=v or k==v, comma-separated); set-based and
// inequality forms are beyond what the simulator models and are refused.
func parseSelector(v string) (map[string]string, bool) {
	out := map[string]string{}
	if v == "" {
		return out, true
	}
	for _, req := range strings.Split(v, ",") {
		k, val, found := strings.Cut(req, "=")
		val = strings.TrimPrefix(val, "=")
		if !found || k == "" || strings.ContainsAny(k, "!() ") || strings.ContainsAny(val, "!() ") {
			return nil, false
		}
		out[k] = val
	}
	return out, true
}

func labelsMatch(labels, sel map[string]string) bool {
	for k, v := range sel {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
