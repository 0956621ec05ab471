package vclusters

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// agentNamespace is where Rancher's import manifest puts the agent; each virtual cluster's
// copy goes into its tenant namespace instead.
const agentNamespace = "cattle-system"

func adminBindingName(cluster string) string { return "cattle-admin-binding-" + cluster }

// importManifest is Rancher's import manifest rewritten for one tenant.
type importManifest struct {
	objects     []runtime.Object // in manifest order
	credentials string           // name of the cattle-credentials Secret
	skipped     []string         // "Kind/name" left out
}

// transformManifest scopes an import manifest to a virtual cluster: namespaced objects move
// from cattle-system to the tenant namespace, the cattle-admin ClusterRoleBinding gets a
// per-cluster name and points at the tenant's service account, cluster roles stay shared,
// and the agent's own workloads (Deployment, DaemonSet, Service) and the cattle-system
// Namespace are left out: this tool is the agent.
func transformManifest(data []byte, rec Record) (*importManifest, error) {
	out := &importManifest{}
	tenant := TenantNamespace(rec.Name)
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	dec := kubeScheme.Codecs().UniversalDeserializer()
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("import manifest: %w", err)
		}
		if len(bytes.TrimSpace(doc)) == 0 || isComment(doc) {
			continue
		}
		var meta metav1.PartialObjectMetadata
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("import manifest: %w", err)
		}
		if gvk := meta.GroupVersionKind(); !kubeScheme.Runtime().Recognizes(gvk) { // e.g. the agent's Deployment
			out.skipped = append(out.skipped, gvk.Kind+"/"+meta.Name)
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("import manifest: %w", err)
		}
		if keep := out.scope(obj, rec, tenant); !keep {
			continue
		}
		out.objects = append(out.objects, obj)
	}
	if out.credentials == "" {
		return nil, errors.New("import manifest has no cattle-credentials Secret")
	}
	return out, nil
}

func isComment(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") && l != "---" {
			return false
		}
	}
	return true
}

// scope rewrites one object for the tenant and reports whether it is applied.
func (m *importManifest) scope(obj runtime.Object, rec Record, tenant string) bool {
	mine := identity(rec)
	switch o := obj.(type) {
	case *corev1.Namespace, *corev1.Service:
		m.skip(obj)
		return false
	case *corev1.ServiceAccount:
		o.Namespace, o.Labels = tenant, merged(o.Labels, mine)
	case *corev1.Secret:
		o.Namespace, o.Labels = tenant, merged(o.Labels, mine)
		if strings.HasPrefix(o.Name, "cattle-credentials-") {
			m.credentials = o.Name
		}
	case *rbacv1.Role:
		o.Namespace = tenant
	case *rbacv1.RoleBinding:
		o.Namespace = tenant
		retarget(o.Subjects, tenant)
	case *rbacv1.ClusterRole:
	case *rbacv1.ClusterRoleBinding:
		o.Namespace = ""
		if o.Name == "cattle-admin-binding" {
			o.Name, o.Labels = adminBindingName(rec.Name), merged(o.Labels, mine)
			retarget(o.Subjects, tenant)
		}
	default:
		m.skip(obj)
		return false
	}
	return true
}

func (m *importManifest) skip(obj runtime.Object) {
	acc, err := metaOf(obj)
	name := ""
	if err == nil {
		name = "/" + acc.GetName()
	}
	m.skipped = append(m.skipped, fmt.Sprintf("%T%s", obj, name))
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	if o, ok := obj.(metav1.Object); ok {
		return o, nil
	}
	return nil, errors.New("no object metadata")
}

func retarget(subjects []rbacv1.Subject, tenant string) {
	for i := range subjects {
		if subjects[i].Kind == rbacv1.ServiceAccountKind && subjects[i].Namespace == agentNamespace {
			subjects[i].Namespace = tenant
		}
	}
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func merged(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

// applyManifest creates every object, or updates it when it exists.
func applyManifest(ctx context.Context, kube *Kube, m *importManifest) error {
	for _, obj := range m.objects {
		if err := applyObject(ctx, kube, obj); err != nil {
			acc, _ := metaOf(obj)
			return fmt.Errorf("apply %T %s: %w", obj, acc.GetName(), err)
		}
	}
	return nil
}

func applyObject(ctx context.Context, kube *Kube, obj runtime.Object) error {
	switch obj.(type) {
	case *corev1.ServiceAccount, *corev1.Secret:
		return applyCore(ctx, kube, obj)
	}
	return applyRBAC(ctx, kube, obj)
}

func applyCore(ctx context.Context, kube *Kube, obj runtime.Object) error {
	switch o := obj.(type) {
	case *corev1.ServiceAccount:
		c := kube.CoreV1().ServiceAccounts(o.Namespace)
		return upsert(ctx, o, c.Create, c.Get, func(ctx context.Context, cur *corev1.ServiceAccount) error {
			if hasLabels(cur.Labels, o.Labels) {
				return nil
			}
			cur.Labels = merged(cur.Labels, o.Labels)
			_, err := c.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
	case *corev1.Secret:
		c := kube.CoreV1().Secrets(o.Namespace)
		return upsert(ctx, o, c.Create, c.Get, func(ctx context.Context, cur *corev1.Secret) error {
			if hasLabels(cur.Labels, o.Labels) && equality.Semantic.DeepEqual(cur.Data, o.Data) && len(o.StringData) == 0 {
				return nil
			}
			cur.Labels, cur.Data, cur.StringData = merged(cur.Labels, o.Labels), o.Data, o.StringData
			_, err := c.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
	}
	return fmt.Errorf("cannot apply %T", obj)
}

func applyRBAC(ctx context.Context, kube *Kube, obj runtime.Object) error {
	switch o := obj.(type) {
	case *rbacv1.ClusterRole:
		c := kube.RbacV1().ClusterRoles()
		return upsert(ctx, o, c.Create, c.Get, func(ctx context.Context, cur *rbacv1.ClusterRole) error {
			if equality.Semantic.DeepEqual(cur.Rules, o.Rules) {
				return nil
			}
			cur.Rules = o.Rules
			_, err := c.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
	case *rbacv1.ClusterRoleBinding:
		c := kube.RbacV1().ClusterRoleBindings()
		return upsert(ctx, o, c.Create, c.Get, func(ctx context.Context, cur *rbacv1.ClusterRoleBinding) error {
			if cur.RoleRef != o.RoleRef { // roleRef is immutable: replace the binding
				if err := c.Delete(ctx, cur.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return err
				}
				_, err := c.Create(ctx, o, metav1.CreateOptions{})
				return err
			}
			if equality.Semantic.DeepEqual(cur.Subjects, o.Subjects) && hasLabels(cur.Labels, o.Labels) {
				return nil
			}
			cur.Subjects, cur.Labels = o.Subjects, merged(cur.Labels, o.Labels)
			_, err := c.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
	case *rbacv1.Role:
		c := kube.RbacV1().Roles(o.Namespace)
		return upsert(ctx, o, c.Create, c.Get, func(ctx context.Context, cur *rbacv1.Role) error {
			if equality.Semantic.DeepEqual(cur.Rules, o.Rules) {
				return nil
			}
			cur.Rules = o.Rules
			_, err := c.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
	case *rbacv1.RoleBinding:
		c := kube.RbacV1().RoleBindings(o.Namespace)
		return upsert(ctx, o, c.Create, c.Get, func(ctx context.Context, cur *rbacv1.RoleBinding) error {
			if equality.Semantic.DeepEqual(cur.Subjects, o.Subjects) {
				return nil
			}
			cur.Subjects = o.Subjects
			_, err := c.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
	}
	return fmt.Errorf("cannot apply %T", obj)
}

// upsert creates obj; if it exists, it reads the current object and hands it to update.
func upsert[T metav1.Object](ctx context.Context, obj T,
	create func(context.Context, T, metav1.CreateOptions) (T, error),
	get func(context.Context, string, metav1.GetOptions) (T, error),
	update func(context.Context, T) error) error {
	_, err := create(ctx, obj, metav1.CreateOptions{})
	if err == nil || !apierrors.IsAlreadyExists(err) {
		return err
	}
	cur, err := get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	return update(ctx, cur)
}
