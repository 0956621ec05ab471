package ranchersim

import (
	"context"
	"errors"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Deleting an imported cluster, as rancher v2.12 does it: the cluster stays listed in state
// "removing" (its finalizer wrangler.cattle.io/mgmt-cluster-remove) while Rancher's
// ClusterLifecycleCleanup (pkg/controllers/management/usercontrollers/controller.go Remove)
// deploys its cleanup into the downstream cluster through the agent's tunnel — a ClusterRole,
// a ServiceAccount and a ClusterRoleBinding named cattle-cleanup-*, and a Job cattle-cleanup-*
// in "default" that runs the agent image with CLUSTER_CLEANUP=true — trying three times,
// CleanupRetryInterval apart (Rancher's backoff: 3 s, factor 1, 3 steps), and then removes the
// cluster whether the cleanup got through or not ("moving on with removing cluster"). Only then
// are its tokens gone and its tunnels closed.

var errNoAgent = errors.New("cluster agent is not connected")

// CleanupResult is what the cleanup of a deleted imported cluster did.
type CleanupResult struct {
	Deployed bool   // the cleanup objects were created through the tunnel
	Job      string // the Job's name in "default"
	Error    string // the last attempt's error when not deployed
}

// removeImported runs the cleanup and then removes the cluster.
func (s *Server) removeImported(id string, link *agentLink) {
	var res CleanupResult
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			time.Sleep(s.opts.CleanupRetryInterval)
		}
		job, err := s.deployCleanup(id, link)
		if err == nil {
			res = CleanupResult{Deployed: true, Job: job}
			break
		}
		res.Error = err.Error()
	}
	s.mu.Lock()
	if s.st.clusters[id] != nil {
		s.removeClusterLocked(id)
	}
	s.cleanups[id] = res
	s.mu.Unlock()
	s.tun.drop(id)
}

// deployCleanup creates the cleanup objects through the cluster's agent session.
func (s *Server) deployCleanup(id string, link *agentLink) (string, error) {
	if !s.tun.HasSession(id) {
		return "", errNoAgent
	}
	s.tun.traffic.RLock()
	defer s.tun.traffic.RUnlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	meta := metav1.ObjectMeta{GenerateName: "cattle-cleanup-"}
	role, err := link.kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"list", "get", "update", "delete"}, APIGroups: []string{""}, Resources: []string{"namespaces"}},
		{Verbs: []string{"list", "get", "delete"}, APIGroups: []string{"rbac.authorization.k8s.io"},
			Resources: []string{"roles", "rolebindings", "clusterroles", "clusterrolebindings"}},
		{Verbs: []string{"list", "get", "delete"}, APIGroups: []string{"batch"}, Resources: []string{"jobs"}},
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"services"}, ResourceNames: []string{"rancher"}},
		{Verbs: []string{"delete"}, APIGroups: []string{"admissionregistration.k8s.io"},
			Resources: []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"}, ResourceNames: []string{"rancher.cattle.io"}},
	}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	meta.Namespace = "default"
	sa, err := link.kube.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	_, err = link.kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{GenerateName: "cattle-cleanup-"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: "default"}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	never := corev1.RestartPolicyNever
	job, err := link.kube.BatchV1().Jobs("default").Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "cattle-cleanup-", Namespace: "default", Labels: map[string]string{"cattle.io/creator": "norman"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{ServiceAccountName: sa.Name, RestartPolicy: never,
			Containers: []corev1.Container{{Name: "cleanup-agent", Image: "rancher/rancher-agent:head",
				Env: []corev1.EnvVar{{Name: "CLUSTER_CLEANUP", Value: "true"}, {Name: "SLEEP_FIRST", Value: "true"}}}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return job.Name, nil
}

// Cleanup reports what the cleanup of a deleted imported cluster did (false while none ran).
func (s *Server) Cleanup(id string) (CleanupResult, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, ok := s.cleanups[id]
	return res, ok
}
