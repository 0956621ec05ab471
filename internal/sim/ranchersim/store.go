package ranchersim

import (
	"fmt"
	"maps"
	"math/rand"
	"sort"
	"strings"
	"time"
)

// Project is a simulated Rancher project.
type Project struct {
	ID          string // <cluster>:p-xxxxx
	Name        string
	ClusterID   string
	Description string
	Annotations map[string]string
	Labels      map[string]string
	Created     time.Time

	builtin  bool      // the cluster's Default or System project (removal.go)
	removing time.Time // when it was deleted (removal.go); zero while it lives
}

// Binding is a simulated projectRoleTemplateBinding.
type Binding struct {
	ID               string // p-xxxxx:prtb-xxxxx
	Name             string
	ProjectID        string
	RoleTemplateID   string
	GroupPrincipalID string
	GroupID          string
	UserID           string
	UserPrincipalID  string
	Created          time.Time

	rancherMade bool      // made by Rancher itself: the creator's binding (removal.go)
	removing    time.Time // when it was deleted (removal.go); zero while it lives
}

// Cluster is a simulated downstream cluster.
type Cluster struct {
	ID, Name, State string
	imp             *imported // clusters created through the API (import.go)
	rke2Version     string    // rke2Config.kubernetesVersion of an imported cluster (upgrade.go)
}

type state struct {
	projects map[string]*Project
	bindings map[string]*Binding
	clusters map[string]*Cluster
	roles    map[string]bool
	rng      *rand.Rand
}

func newState(o Options) *state {
	st := &state{projects: map[string]*Project{}, bindings: map[string]*Binding{}, clusters: map[string]*Cluster{},
		roles: map[string]bool{}, rng: rand.New(rand.NewSource(o.Seed))}
	for _, id := range o.Clusters {
		st.clusters[id] = &Cluster{ID: id, Name: "cluster-" + strings.TrimPrefix(id, "c-"), State: "active"}
		st.addClusterProjects(id)
	}
	for _, r := range o.RoleTemplates {
		st.roles[r] = true
	}
	return st
}

const idChars = "abcdefghijklmnopqrstuvwxyz0123456789"

// newName returns prefix + 5 random characters not used by taken.
func (st *state) newName(prefix string, taken func(string) bool) string {
	for {
		b := make([]byte, 5)
		for i := range b {
			b[i] = idChars[st.rng.Intn(len(idChars))]
		}
		if name := prefix + string(b); !taken(name) {
			return name
		}
	}
}

func (st *state) sortedProjects() []*Project {
	out := make([]*Project, 0, len(st.projects))
	for _, p := range st.projects {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (st *state) sortedBindings() []*Binding {
	out := make([]*Binding, 0, len(st.bindings))
	for _, b := range st.bindings {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func clone(p *Project) Project {
	c := *p
	c.Annotations = maps.Clone(p.Annotations)
	c.Labels = maps.Clone(p.Labels)
	return c
}

// renderProject is the project as the v3 API shows it (v2.12.0: namespaceId null; a project
// being deleted has state "removing" and `removed`, removal.go).
func renderProject(base string, p *Project) map[string]any {
	self := base + "/v3/projects/" + p.ID
	out := map[string]any{
		"id": p.ID, "type": "project", "baseType": "project", "name": p.Name, "clusterId": p.ClusterID,
		"namespaceId": nil, "description": p.Description, "annotations": nonNil(p.Annotations),
		"labels": nonNil(p.Labels), "state": "active", "transitioning": "no", "uuid": uuidOf(p.ID),
		"created": p.Created.UTC().Format(time.RFC3339), "createdTS": p.Created.UnixMilli(), "resourceQuota": nil,
		"links": map[string]string{"self": self, "update": self, "remove": self,
			"projectRoleTemplateBindings": base + "/v3/projects/" + p.ID + "/projectroletemplatebindings"},
		"actions": map[string]string{},
	}
	if !p.removing.IsZero() {
		out["state"], out["transitioning"], out["removed"] = "removing", "yes", p.removing.UTC().Format(time.RFC3339)
	}
	return out
}

func renderBinding(base string, b *Binding) map[string]any {
	self := base + "/v3/projectroletemplatebindings/" + b.ID
	out := map[string]any{
		"id": b.ID, "type": "projectRoleTemplateBinding", "baseType": "projectRoleTemplateBinding", "name": b.Name,
		"namespaceId": strings.SplitN(b.ID, ":", 2)[0], "projectId": b.ProjectID, "roleTemplateId": b.RoleTemplateID,
		"groupPrincipalId": nilIfEmpty(b.GroupPrincipalID), "groupId": nilIfEmpty(b.GroupID), "userId": nilIfEmpty(b.UserID),
		"userPrincipalId": nilIfEmpty(b.UserPrincipalID), "created": b.Created.UTC().Format(time.RFC3339),
		"uuid":  uuidOf(b.ID),
		"links": map[string]string{"self": self, "remove": self}, "actions": map[string]string{},
	}
	// v2.12.0 renders no state for bindings; one being deleted has `removed` (removal.go).
	if !b.removing.IsZero() {
		out["removed"] = b.removing.UTC().Format(time.RFC3339)
	}
	return out
}

func renderCluster(base string, c *Cluster) map[string]any {
	self := base + "/v3/clusters/" + c.ID
	out := map[string]any{"id": c.ID, "type": "cluster", "baseType": "cluster", "name": c.Name, "state": c.State,
		"links": map[string]string{"self": self, "namespaces": self + "/namespaces"}, "actions": map[string]string{}}
	c.renderImported(out)
	if c.rke2Version != "" {
		out["rke2Config"] = map[string]any{"kubernetesVersion": c.rke2Version}
	}
	return out
}

// nonNil copies m for a response body: bodies are rendered under s.mu and encoded after it is
// released, while a handler may be writing the live map (a cluster agent's node report).
func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// uuidOf makes a stable UUID-shaped string from an id.
func uuidOf(id string) string {
	var h uint64 = 1469598103934665603
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * 1099511628211
	}
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(h), uint16(h>>32), uint16(h>>48)&0xfff, uint16(h>>8)&0xfff, h&0xffffffffffff)
}
