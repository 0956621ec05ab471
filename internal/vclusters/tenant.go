package vclusters

import (
	"context"
	"encoding/json"
	"fmt"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// mainAPI makes and removes virtual clusters' objects in the main API server.
type mainAPI struct {
	kube *Kube
	tmpl *TemplateConfig
	log  *zap.Logger
}

// ensureTenant makes sure the cluster's namespace, Nodes (with their status) and Pods exist,
// creating whatever is missing (after a crash or a restart, too).
func (a *mainAPI) ensureTenant(ctx context.Context, rec Record) error {
	ns := TenantNamespace(rec.Name)
	a.log.Info("populate tenant from template", zap.String("cluster", rec.Name), zap.String("namespace", ns))
	if err := a.ensureNamespace(ctx, rec); err != nil {
		return err
	}
	if err := a.ensureNodes(ctx, rec); err != nil {
		return err
	}
	return a.ensurePods(ctx, rec)
}

func (a *mainAPI) ensureNamespace(ctx context.Context, rec Record) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: TenantNamespace(rec.Name), Labels: identity(rec)}}
	_, err := a.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns.Name, err)
	}
	// Pod admission needs the namespace's "default" service account, which only a running
	// serviceaccount controller would create.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns.Name}}
	_, err = a.kube.CoreV1().ServiceAccounts(ns.Name).Create(ctx, sa, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s/default: %w", ns.Name, err)
	}
	return nil
}

// ensureNodes creates missing Nodes and patches the status of any whose capacity or
// allocatable is not the template's (a new Node has none: status is not settable on create).
func (a *mainAPI) ensureNodes(ctx context.Context, rec Record) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, n := range a.tmpl.templateNodes(rec) {
		g.Go(func() error {
			got, err := a.kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				a.log.Info("applying node", zap.String("cluster", rec.Name), zap.String("node", n.Name),
					zap.Stringer("capacity", resources(a.tmpl.capacity)), zap.Stringer("allocatable", resources(a.tmpl.alloc)))
				got, err = a.kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
				if apierrors.IsAlreadyExists(err) {
					got, err = a.kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
				}
			}
			if err != nil {
				return fmt.Errorf("node %s: %w", n.Name, err)
			}
			if !a.tmpl.statusDrifted(got) {
				return nil
			}
			return a.patchNodeStatus(ctx, rec.Name, n.Name)
		})
	}
	return g.Wait()
}

// patchNodeStatus writes the template status into a Node's status subresource.
func (a *mainAPI) patchNodeStatus(ctx context.Context, cluster, name string) error {
	body, err := json.Marshal(map[string]any{"status": a.tmpl.nodeStatus()})
	if err != nil {
		return err
	}
	_, err = a.kube.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("patch status of node %s: %w", name, err)
	}
	a.log.Info("patched node status", zap.String("cluster", cluster), zap.String("node", name))
	return nil
}

// ensurePods creates the template Pods that are missing.
func (a *mainAPI) ensurePods(ctx context.Context, rec Record) error {
	ns := TenantNamespace(rec.Name)
	have, err := a.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: NodeSelector(rec.Name)})
	if err != nil {
		return fmt.Errorf("list pods in %s: %w", ns, err)
	}
	exists := map[string]bool{}
	for _, p := range have.Items {
		exists[p.Name] = true
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, p := range a.tmpl.templatePods(rec) {
		if exists[p.Name] {
			continue
		}
		g.Go(func() error {
			_, err := a.kube.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create pod %s/%s: %w", ns, p.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// removeTenant deletes the cluster's Nodes, its cluster-wide binding and its namespace (the
// namespace controller removes what is inside).
func (a *mainAPI) removeTenant(ctx context.Context, rec Record) error {
	err := a.kube.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: NodeSelector(rec.Name)})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete nodes of %s: %w", rec.Name, err)
	}
	err = a.kube.RbacV1().ClusterRoleBindings().Delete(ctx, adminBindingName(rec.Name), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete cluster role binding of %s: %w", rec.Name, err)
	}
	err = a.kube.CoreV1().Namespaces().Delete(ctx, TenantNamespace(rec.Name), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", TenantNamespace(rec.Name), err)
	}
	return nil
}

// resources prints a resource list compactly for log lines.
type resources corev1.ResourceList

func (r resources) String() string {
	out := ""
	for _, k := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
		if q, ok := r[k]; ok {
			if out != "" {
				out += ","
			}
			out += fmt.Sprintf("%s=%s", k, q.String())
		}
	}
	return out
}
