package ranchersim

import (
	"context"
	"hash/fnv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// How Rancher v2.12.0 removes projects and bindings, as observed on the real server and read in
// its source:
//
//   - Deleting a projectRoleTemplateBinding or a project only sets its deletionTimestamp: both
//     carry lifecycle finalizers (pkg/controllers/management/auth/register.go adds the
//     mgmt-auth-prtb-controller lifecycle to bindings, RegisterLate the project-remove one to
//     projects; pkg/controllers/managementuser adds its cluster-scoped ones), so they stay in
//     v3 listings, with `removed` set (norman's rendering of the deletionTimestamp) and, for a
//     project, state "removing", until the controllers have run. Options.RemoveDelay is that
//     while (observed: ~0.5 s for a binding, up to seconds for a project with namespaces).
//   - A removed project's bindings live in its backing namespace and go with it.
//   - The project's namespaces (pkg/controllers/managementuser/rbac/project_handler.go, Remove):
//     those Rancher made itself (annotated field.cattle.io/creatorId, e.g. through
//     /v3/clusters/<id>/namespaces) are deleted; the others — made through the /k8s proxy, as
//     site-agent does — stay, with the field.cattle.io/projectId annotation removed (the label
//     stays: pkg/controllers/managementagent/nslabels only writes it from the annotation).
//     Rancher does this asynchronously; the simulator at once.
//   - Every cluster has a "Default" and a "System" project, labelled
//     authz.management.cattle.io/default-project and …/system-project
//     (pkg/controllers/management/auth/project_cluster/cluster_handler.go).

// Labels of Rancher's own projects, and the annotation norman's proxy store puts on every
// object it creates (norman v0.6.1 store/proxy/proxy_store.go).
const (
	defaultProjectLabel = "authz.management.cattle.io/default-project"
	systemProjectLabel  = "authz.management.cattle.io/system-project"
	creatorIDKey        = "field.cattle.io/creatorId"
	// simUserID is the user the simulator's API key acts for.
	simUserID = "user-sim01"
)

// addClusterProjects makes the cluster's Default and System projects (ids derived from the
// cluster id, so seeded ids elsewhere do not shift).
func (st *state) addClusterProjects(clusterID string) {
	for _, p := range []struct{ name, label, desc string }{
		{"Default", defaultProjectLabel, "Default project created for the cluster"},
		{"System", systemProjectLabel, "System project created for the cluster"},
	} {
		h := fnv.New64a()
		h.Write([]byte(clusterID + "/" + p.name))
		sum := h.Sum64()
		b := make([]byte, 5)
		for i := range b {
			b[i] = idChars[sum%uint64(len(idChars))]
			sum /= uint64(len(idChars))
		}
		id := clusterID + ":p-" + string(b)
		st.projects[id] = &Project{ID: id, Name: p.name, ClusterID: clusterID, Description: p.desc,
			Labels: map[string]string{p.label: "true"}, Created: time.Now(), builtin: true}
	}
}

// addCreatorBinding gives the creator of a project made through the API the project-owner
// role, as Rancher does (pkg/controllers/management/auth/project_cluster/project_handler.go,
// reconcileProjectCreatorRTB: a PRTB "creator-project-owner" with the creator's user id).
func (st *state) addCreatorBinding(p *Project) {
	ns := projectPart(p.ID)
	b := &Binding{ID: ns + ":creator-project-owner", Name: "creator-project-owner", ProjectID: p.ID, RoleTemplateID: "project-owner",
		UserID: simUserID, UserPrincipalID: "local://" + simUserID, Created: time.Now(), rancherMade: true}
	st.bindings[b.ID] = b
}

// reapLocked forgets the projects and bindings whose removal has finished (s.mu held).
func (s *Server) reapLocked() {
	now := time.Now()
	done := func(t time.Time) bool { return !t.IsZero() && now.Sub(t) >= s.opts.RemoveDelay }
	for id, p := range s.st.projects {
		if done(p.removing) {
			delete(s.st.projects, id)
			for bid, b := range s.st.bindings {
				if b.ProjectID == id {
					delete(s.st.bindings, bid)
				}
			}
		}
	}
	for id, b := range s.st.bindings {
		if done(b.removing) {
			delete(s.st.bindings, id)
		}
	}
}

// releaseProjectNamespaces does to project id's namespaces what Rancher's project Remove handler
// does: the ones Rancher made are deleted, the others lose their project annotation.
func (s *Server) releaseProjectNamespaces(ctx context.Context, id string) error {
	kube := s.kubeClient(clusterOfProject(id))
	if kube == nil {
		return nil
	}
	list, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: projectIDKey + "=" + projectPart(id)})
	if err != nil {
		return err
	}
	for _, ns := range list.Items {
		if ns.Annotations[projectIDKey] != id {
			continue
		}
		if _, made := ns.Annotations[creatorIDKey]; made {
			if err := kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !isNotFound(err) {
				return err
			}
			continue
		}
		err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			cur, err := kube.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			delete(cur.Annotations, projectIDKey)
			_, err = kube.CoreV1().Namespaces().Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil && !isNotFound(err) {
			return err
		}
	}
	return nil
}
