package ranchersim

import (
	"net/http"
	"sort"
	"strings"
)

// route is one operation: its name (for counting and faults) and its handler.
type route struct {
	op      string
	handler http.HandlerFunc
}

type match struct {
	found, methodOK bool
	allow           []string
}

// route resolves a request to an operation.
func (s *Server) route(r *http.Request) (route, match) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/k8s/clusters/"); ok {
		cid, tail, _ := strings.Cut(rest, "/")
		return route{op: "k8s." + r.Method, handler: s.k8sProxy(cid, "/"+tail)}, match{found: true, methodOK: true}
	}
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var methods map[string]route
	switch segs[0] {
	case "v3":
		methods = s.v3Routes(segs[1:])
	case "v1":
		methods = s.v1Routes(segs[1:])
	}
	if methods == nil {
		return route{}, match{}
	}
	if rt, ok := methods[r.Method]; ok {
		return rt, match{found: true, methodOK: true}
	}
	allow := make([]string, 0, len(methods))
	for m := range methods {
		allow = append(allow, m)
	}
	sort.Strings(allow)
	return route{}, match{found: true, allow: allow}
}

// v3Routes maps the path below /v3 to its operations by method (nil: unknown path).
func (s *Server) v3Routes(p []string) map[string]route {
	if m := s.importRoutes(p); m != nil {
		return m
	}
	if m := s.nodeRoutes(p); m != nil {
		return m
	}
	get := http.MethodGet
	switch {
	case len(p) == 0 || (len(p) == 1 && p[0] == ""):
		return map[string]route{get: {"root", s.handleRoot}}
	case len(p) == 1 && p[0] == "schemas":
		return map[string]route{get: {"schemas.list", s.handleSchemas}}
	case len(p) == 2 && p[0] == "schemas":
		return map[string]route{get: {"schema.get", func(w http.ResponseWriter, r *http.Request) { s.handleSchema(w, r, p[1]) }}}
	case len(p) == 3 && p[0] == "clusters" && p[2] == "namespaces":
		return map[string]route{
			get:             {"namespaces.list", func(w http.ResponseWriter, r *http.Request) { s.listNamespaces(w, r, p[1]) }},
			http.MethodPost: {"namespace.create", func(w http.ResponseWriter, r *http.Request) { s.createNamespace(w, r, p[1]) }},
		}
	case len(p) == 4 && p[0] == "clusters" && p[2] == "namespaces":
		return map[string]route{
			get:               {"namespace.get", func(w http.ResponseWriter, r *http.Request) { s.getNamespace(w, r, p[1], p[3]) }},
			http.MethodDelete: {"namespace.delete", func(w http.ResponseWriter, r *http.Request) { s.deleteNamespace(w, r, p[1], p[3]) }},
		}
	case len(p) == 1 && p[0] == "projects":
		return map[string]route{get: {"projects.list", s.listProjects}, http.MethodPost: {"project.create", s.createProject}}
	case len(p) == 2 && p[0] == "projects":
		id := p[1]
		return map[string]route{
			get:               {"project.get", func(w http.ResponseWriter, r *http.Request) { s.getProject(w, r, id) }},
			http.MethodPut:    {"project.update", func(w http.ResponseWriter, r *http.Request) { s.updateProject(w, r, id) }},
			http.MethodDelete: {"project.delete", func(w http.ResponseWriter, r *http.Request) { s.deleteProject(w, r, id) }},
		}
	case len(p) == 1 && p[0] == "projectroletemplatebindings":
		return map[string]route{get: {"bindings.list", s.listBindings}, http.MethodPost: {"binding.create", s.createBinding}}
	case len(p) == 2 && p[0] == "projectroletemplatebindings":
		id := p[1]
		return map[string]route{
			get:               {"binding.get", func(w http.ResponseWriter, r *http.Request) { s.getBinding(w, r, id) }},
			http.MethodDelete: {"binding.delete", func(w http.ResponseWriter, r *http.Request) { s.deleteBinding(w, r, id) }},
		}
	case len(p) == 1 && p[0] == "tokens":
		return map[string]route{get: {"tokens.list", s.listTokens}}
	case len(p) == 2 && p[0] == "tokens":
		return map[string]route{get: {"token.get", func(w http.ResponseWriter, r *http.Request) { s.handleToken(w, r, p[1]) }}}
	}
	return nil
}
