package rancherkccrd

import (
	"encoding/json"
	"sort"
	"strings"
)

// Phases of status.phase (the operator's enum).
const (
	phasePending  = "Pending"
	phaseCreating = "Creating"
	phaseReady    = "Ready"
	phaseUpdating = "Updating"
	phaseDeleting = "Deleting"
	phaseError    = "Error"
)

// status is the part of a ManagedRancherProject's status the agent reads (spec/rancher.md §3.5).
type status struct {
	Phase                       string          `json:"phase"`
	RancherProjectID            string          `json:"rancherProjectId"`
	KeycloakParentGroupID       string          `json:"keycloakParentGroupId"`
	KeycloakRoleBindings        []statusBinding `json:"keycloakRoleBindings"`
	ClusterKeycloakRoleBindings []statusBinding `json:"clusterKeycloakRoleBindings"`
	Conditions                  []condition     `json:"conditions"`
	LastReconcileTime           string          `json:"lastReconcileTime"`
	ObservedGeneration          *int64          `json:"observedGeneration"`
}

type statusBinding struct {
	GroupName        string         `json:"groupName"`
	KeycloakGroupID  string         `json:"keycloakGroupId"`
	RancherBindingID string         `json:"rancherBindingId"`
	MemberCount      *int64         `json:"memberCount"`
	SyncedMembers    []syncedMember `json:"syncedMembers"`
}

// syncedMember is a member the operator found in the Keycloak group: a bare string, or an
// object with userIdentifier (both forms occur).
type syncedMember string

func (m *syncedMember) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*m = syncedMember(s)
		return nil
	}
	var o struct {
		UserIdentifier string `json:"userIdentifier"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	*m = syncedMember(o.UserIdentifier)
	return nil
}

type condition struct {
	Type    string     `json:"type"`
	Status  condStatus `json:"status"`
	Reason  string     `json:"reason"`
	Message string     `json:"message"`
}

// condStatus is "True", "False" or "Unknown"; a JSON boolean is accepted too.
type condStatus string

func (s *condStatus) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case bool:
		*s = condStatus(map[bool]string{true: "True", false: "False"}[x])
	case string:
		*s = condStatus(x)
	}
	return nil
}

func (s condStatus) isTrue() bool { return s == "True" }

// observed is one custom resource as read back after the write.
type observed struct {
	present bool   // the object exists
	stale   bool   // status.observedGeneration is behind metadata.generation
	status  status // zero when absent or unreadable
}

// readStatus decodes a custom resource's status; a status the agent cannot read counts as no
// status yet (in progress), and ok says so.
func readStatus(raw any, generation int64) (st status, stale, ok bool) {
	if raw == nil {
		return status{}, false, true
	}
	b, err := json.Marshal(raw)
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil {
		return status{}, false, false
	}
	stale = st.ObservedGeneration != nil && generation > 0 && *st.ObservedGeneration < generation
	return st, stale, true
}

// phase is the status phase the agent acts on: "" while the status describes an older spec.
func (o observed) phase() string {
	if !o.present || o.stale {
		return ""
	}
	return o.status.Phase
}

// confirmed is the union of the members the operator found, over the project or the cluster
// bindings.
func (st status) confirmed(cluster bool) map[string]bool {
	bindings := st.KeycloakRoleBindings
	if cluster {
		bindings = st.ClusterKeycloakRoleBindings
	}
	out := map[string]bool{}
	for _, b := range bindings {
		for _, m := range b.SyncedMembers {
			if m != "" {
				out[string(m)] = true
			}
		}
	}
	return out
}

// failure is the operator's reason for phase Error: the messages of the conditions that are
// not True, joined with "; ".
func (st status) failure() string {
	var msgs []string
	for _, c := range st.Conditions {
		if !c.Status.isTrue() && c.Message != "" {
			msgs = append(msgs, c.Message)
		}
	}
	if len(msgs) == 0 {
		return "Operator reports Error phase"
	}
	return strings.Join(msgs, "; ")
}

// metadata is one custom resource's entry of the resource's backend_metadata; empty values
// are left out.
func (o observed) metadata(name, projectUUID string) map[string]any {
	st := o.status
	md := map[string]any{"name": name, "resource_project_uuid": projectUUID}
	put := func(k string, v string) {
		if v != "" {
			md[k] = v
		}
	}
	put("phase", st.Phase)
	put("rancher_project_id", st.RancherProjectID)
	put("keycloak_parent_group_id", st.KeycloakParentGroupID)
	put("last_reconcile_time", st.LastReconcileTime)
	if st.ObservedGeneration != nil {
		md["observed_generation"] = *st.ObservedGeneration
	}
	var failing []any
	for _, c := range st.Conditions {
		if !c.Status.isTrue() {
			failing = append(failing, dropEmpty(map[string]any{"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message}))
		}
	}
	if len(failing) > 0 {
		md["failing_conditions"] = failing
	}
	var bindings []any
	for _, b := range st.KeycloakRoleBindings {
		e := dropEmpty(map[string]any{"group_name": b.GroupName, "keycloak_group_id": b.KeycloakGroupID, "rancher_binding_id": b.RancherBindingID})
		if b.MemberCount != nil {
			e["member_count"] = *b.MemberCount
		}
		bindings = append(bindings, e)
	}
	if len(bindings) > 0 {
		md["role_bindings"] = bindings
	}
	return md
}

func dropEmpty(m map[string]any) map[string]any {
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	return m
}

// sortedEntries sorts backend_metadata entries by resource project.
func sortedEntries(entries []map[string]any) []any {
	sort.Slice(entries, func(i, j int) bool {
		return entries[i]["resource_project_uuid"].(string) < entries[j]["resource_project_uuid"].(string)
	})
	out := make([]any, len(entries))
	for i, e := range entries {
		out[i] = e
	}
	return out
}
