package ranchersim

import (
	"encoding/base64"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// Secrets of Rancher's local cluster through the v1 (Steve) API, in fleet-default, where the
// secrets a provisioning cluster refers to live (rancher v2.12 pkg/capr/planner/registry.go
// reads them from the control plane's namespace):
//
//   - POST /v1/secrets (or /v1/secrets/<namespace>) creates one. Steve hands the body to the
//     Kubernetes API as it is (rancher/apiserver pkg/parse/read_input.go, steve
//     pkg/stores/proxy/proxy_store.go Create), so its "type" is the Secret's type;
//   - GET /v1/secrets/<namespace>/<name> shows it the Steve way: "type" is the schema ("secret"),
//     the Secret's own type moves to "_type", "id" is "<namespace>/<name>" (steve
//     pkg/stores/partition/store.go moveToUnderscore);
//   - PUT replaces it: Steve drops "type" and makes "_type" the Secret's type (moveFromUnderscore),
//     so a PUT without "_type" asks for an Opaque secret, and the type is immutable (Kubernetes
//     ValidateSecretUpdate: 422); metadata.resourceVersion is required (Steve answers 500
//     without it) and a stale one is 409;
//   - DELETE removes it.
//
// Kubernetes' own checks (pkg/apis/core/validation ValidateSecret): the name is a DNS subdomain,
// data keys are [-._a-zA-Z0-9]+, data values are base64 (stringData is merged into data), and a
// kubernetes.io/basic-auth secret holds a username or a password key. Namespaces other than
// fleet-default do not exist here (404).

// simSecret is one Secret.
type simSecret struct {
	name, typ string
	labels    map[string]string
	data      map[string][]byte
	rv        int
	created   time.Time
}

const (
	secretBasicAuth = "kubernetes.io/basic-auth"
	secretOpaque    = "Opaque"
)

var (
	dnsSubdomain  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	secretKeyRe   = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
	secretTopKeys = map[string]bool{"type": true, "_type": true, "id": true, "metadata": true, "data": true, "stringData": true,
		"apiVersion": true, "kind": true, "immutable": true, "links": true}
)

// secretRoutes maps the path below /v1/secrets (nil: unknown path).
func (s *Server) secretRoutes(p []string) map[string]route {
	switch len(p) {
	case 0:
		return map[string]route{http.MethodPost: {"secret.create", func(w http.ResponseWriter, r *http.Request) { s.createSecret(w, r, "") }}}
	case 1:
		ns := p[0]
		return map[string]route{http.MethodPost: {"secret.create", func(w http.ResponseWriter, r *http.Request) { s.createSecret(w, r, ns) }}}
	case 2:
		ns, name := p[0], p[1]
		return map[string]route{
			http.MethodGet:    {"secret.get", func(w http.ResponseWriter, r *http.Request) { s.getSecret(w, ns, name) }},
			http.MethodPut:    {"secret.update", func(w http.ResponseWriter, r *http.Request) { s.updateSecret(w, r, ns, name) }},
			http.MethodDelete: {"secret.delete", func(w http.ResponseWriter, r *http.Request) { s.deleteSecret(w, ns, name) }},
		}
	}
	return nil
}

// decodeSecret checks a body and returns the Secret it asks for; it answers errors itself.
// typeKey is the body field holding the Secret's type ("type" on create, "_type" on update).
func (s *Server) decodeSecret(w http.ResponseWriter, r *http.Request, typeKey string) (*simSecret, map[string]any, bool) {
	body, ok := decodeBody(w, r)
	if !ok {
		return nil, nil, false
	}
	for k := range body {
		if !secretTopKeys[k] {
			s.violation("secret: unknown field %q", k)
		}
	}
	meta, _ := body["metadata"].(map[string]any)
	sec := &simSecret{labels: map[string]string{}, data: map[string][]byte{}}
	sec.name, _ = meta["name"].(string)
	sec.typ, _ = body[typeKey].(string)
	if sec.typ == "" {
		sec.typ = secretOpaque // Kubernetes' default (SetDefaults_Secret)
	}
	if lm, ok := meta["labels"].(map[string]any); ok {
		for k, v := range lm {
			sec.labels[k], _ = v.(string)
		}
	}
	if msg := sec.fill(body); msg != "" {
		writeStatus(w, http.StatusBadRequest, "BadRequest", msg)
		return nil, nil, false
	}
	if msg := sec.validate(); msg != "" {
		writeStatus(w, http.StatusUnprocessableEntity, "Invalid", `Secret "`+sec.name+`" is invalid: `+msg)
		return nil, nil, false
	}
	return sec, meta, true
}

// fill decodes data (base64, as JSON carries []byte) and merges stringData.
func (sec *simSecret) fill(body map[string]any) string {
	data, _ := body["data"].(map[string]any)
	for k, v := range data {
		str, _ := v.(string)
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			return "error decoding data[" + k + "]: illegal base64 data"
		}
		sec.data[k] = b
	}
	plain, _ := body["stringData"].(map[string]any)
	for k, v := range plain {
		str, _ := v.(string)
		sec.data[k] = []byte(str)
	}
	return ""
}

func (sec *simSecret) validate() string {
	if len(sec.name) > 253 || !dnsSubdomain.MatchString(sec.name) {
		return "metadata.name: Invalid value: " + strconv.Quote(sec.name) + ": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'"
	}
	for k := range sec.data {
		if !secretKeyRe.MatchString(k) {
			return "data[" + k + "]: Invalid value: " + strconv.Quote(k) + ": a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
		}
	}
	if sec.typ == secretBasicAuth {
		_, user := sec.data["username"]
		_, pass := sec.data["password"]
		if !user && !pass {
			return "[data[username]: Required value, data[password]: Required value]"
		}
	}
	return ""
}

func (s *Server) createSecret(w http.ResponseWriter, r *http.Request, pathNS string) {
	sec, meta, ok := s.decodeSecret(w, r, "type")
	if !ok {
		return
	}
	ns, _ := meta["namespace"].(string)
	if ns == "" {
		ns = pathNS
	}
	if ns != fleetNS {
		writeStatus(w, http.StatusNotFound, "NotFound", `namespaces "`+ns+`" not found`)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.secrets[sec.name] != nil {
		writeStatus(w, http.StatusConflict, "AlreadyExists", `secrets "`+sec.name+`" already exists`)
		return
	}
	sec.rv, sec.created = 1, time.Now()
	s.secrets[sec.name] = sec
	writeJSON(w, http.StatusCreated, renderSecret(sec))
}

func (s *Server) getSecret(w http.ResponseWriter, ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.secrets[name]
	if ns != fleetNS || sec == nil {
		writeStatus(w, http.StatusNotFound, "NotFound", `secrets "`+name+`" not found`)
		return
	}
	writeJSON(w, http.StatusOK, renderSecret(sec))
}

func (s *Server) updateSecret(w http.ResponseWriter, r *http.Request, ns, name string) {
	sec, meta, ok := s.decodeSecret(w, r, "_type")
	if !ok {
		return
	}
	rv, _ := meta["resourceVersion"].(string)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.secrets[name]
	switch {
	case rv == "":
		writeError(w, http.StatusInternalServerError, "ServerError", "metadata.resourceVersion is required for update")
	case ns != fleetNS || old == nil:
		writeStatus(w, http.StatusNotFound, "NotFound", `secrets "`+name+`" not found`)
	case sec.name != name:
		writeStatus(w, http.StatusBadRequest, "BadRequest", "the name of the object does not match the name on the URL")
	case rv != strconv.Itoa(old.rv):
		writeStatus(w, http.StatusConflict, "Conflict", `Operation cannot be fulfilled on secrets "`+name+`": the object has been modified`)
	case sec.typ != old.typ:
		writeStatus(w, http.StatusUnprocessableEntity, "Invalid", `Secret "`+name+`" is invalid: type: Invalid value: "`+sec.typ+`": field is immutable`)
	default:
		sec.rv, sec.created = old.rv+1, old.created
		s.secrets[name] = sec
		writeJSON(w, http.StatusOK, renderSecret(sec))
	}
}

func (s *Server) deleteSecret(w http.ResponseWriter, ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.secrets[name]
	if ns != fleetNS || sec == nil {
		writeStatus(w, http.StatusNotFound, "NotFound", `secrets "`+name+`" not found`)
		return
	}
	delete(s.secrets, name)
	writeJSON(w, http.StatusOK, renderSecret(sec))
}

func renderSecret(sec *simSecret) map[string]any {
	data := make(map[string]string, len(sec.data))
	for k, v := range sec.data {
		data[k] = base64.StdEncoding.EncodeToString(v)
	}
	return map[string]any{"id": fleetNS + "/" + sec.name, "type": "secret", "_type": sec.typ, "apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": sec.name, "namespace": fleetNS, "labels": nonNil(sec.labels),
			"resourceVersion": strconv.Itoa(sec.rv), "creationTimestamp": sec.created.UTC().Format(time.RFC3339),
			"uid": uuidOf("secret:" + sec.name)},
		"data": data}
}

// SecretInfo is a Secret of fleet-default as a test sees it.
type SecretInfo struct {
	Name, Type string
	Labels     map[string]string
	Data       map[string]string
}

// Secrets lists fleet-default's secrets by name.
func (s *Server) Secrets() []SecretInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SecretInfo, 0, len(s.secrets))
	for _, sec := range s.secrets {
		d := map[string]string{}
		for k, v := range sec.data {
			d[k] = string(v)
		}
		out = append(out, SecretInfo{Name: sec.name, Type: sec.typ, Labels: clonedMap(sec.labels), Data: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
