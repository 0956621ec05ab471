package vclusters

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/waldur/site-agent/internal/kubeapi"
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

// applyManifest creates every object, or updates it when it exists. The objects every tenant's
// manifest shares (sharedObjects.key) count as applied for sharedRecheck after this process
// applied them.
func (a *mainAPI) applyManifest(ctx context.Context, m *importManifest) error {
	for _, obj := range m.objects {
		key, digest := a.shared.key(obj)
		if key != "" && a.shared.fresh(key, digest) {
			continue
		}
		if err := applyObject(ctx, a.kube, obj); err != nil {
			acc, _ := metaOf(obj)
			return fmt.Errorf("apply %T %s: %w", obj, acc.GetName(), err)
		}
		if key != "" {
			a.shared.applied(key, digest)
		}
	}
	return nil
}

// sharedRecheck is how long a shared object this process applied counts as in place: one
// deleted meanwhile comes back within that time, and a burst of imports applies each once.
const sharedRecheck = time.Minute

// sharedObjects remembers the shared objects of import manifests this process applied (every
// virtual cluster's manifest carries the same ClusterRoles and bindings to them): applied again
// for each of 1,000 clusters, each would cost a create refused as a conflict and a read.
type sharedObjects struct {
	mu sync.Mutex
	at map[string]sharedApply
}

type sharedApply struct {
	digest string
	at     time.Time
}

// key names obj when it is shared ("" when it is the tenant's own) and digests its content.
func (s *sharedObjects) key(obj runtime.Object) (key, digest string) {
	switch o := obj.(type) {
	case *rbacv1.ClusterRole:
		key = "ClusterRole/" + o.Name
	case *rbacv1.ClusterRoleBinding:
		if !strings.HasPrefix(o.Name, adminBindingName("")) {
			key = "ClusterRoleBinding/" + o.Name
		}
	}
	if key == "" {
		return "", ""
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return "", ""
	}
	return key, string(b)
}

func (s *sharedObjects) fresh(key, digest string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.at[key]
	return ok && e.digest == digest && time.Since(e.at) < sharedRecheck
}

func (s *sharedObjects) applied(key, digest string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = map[string]sharedApply{}
	}
	s.at[key] = sharedApply{digest: digest, at: time.Now()}
}

func applyObject(ctx context.Context, kube *Kube, obj runtime.Object) error {
	switch o := obj.(type) {
	case *corev1.ServiceAccount:
		return upsert(ctx, kube.CoreV1().ServiceAccounts(o.Namespace).Resource, o, func(cur *corev1.ServiceAccount) (bool, error) {
			return mergeLabels(&cur.Labels, o.Labels), nil
		})
	case *corev1.Secret:
		return upsert(ctx, kube.CoreV1().Secrets(o.Namespace), o, func(cur *corev1.Secret) (bool, error) {
			labels, data := mergeLabels(&cur.Labels, o.Labels), setIfChanged(&cur.Data, o.Data)
			cur.StringData = o.StringData
			return labels || data || len(o.StringData) > 0, nil
		})
	case *rbacv1.ClusterRole:
		return upsert(ctx, kube.RbacV1().ClusterRoles(), o, func(cur *rbacv1.ClusterRole) (bool, error) {
			return setIfChanged(&cur.Rules, o.Rules), nil
		})
	case *rbacv1.ClusterRoleBinding:
		c := kube.RbacV1().ClusterRoleBindings()
		return upsert(ctx, c, o, func(cur *rbacv1.ClusterRoleBinding) (bool, error) {
			if cur.RoleRef != o.RoleRef { // roleRef is immutable: replace the binding
				if err := c.Delete(ctx, cur.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return false, err
				}
				_, err := c.Create(ctx, o, metav1.CreateOptions{})
				return false, err
			}
			subjects, labels := setIfChanged(&cur.Subjects, o.Subjects), mergeLabels(&cur.Labels, o.Labels)
			return subjects || labels, nil
		})
	case *rbacv1.Role:
		return upsert(ctx, kube.RbacV1().Roles(o.Namespace), o, func(cur *rbacv1.Role) (bool, error) {
			return setIfChanged(&cur.Rules, o.Rules), nil
		})
	case *rbacv1.RoleBinding:
		return upsert(ctx, kube.RbacV1().RoleBindings(o.Namespace), o, func(cur *rbacv1.RoleBinding) (bool, error) {
			return setIfChanged(&cur.Subjects, o.Subjects), nil
		})
	}
	return fmt.Errorf("cannot apply %T", obj)
}

// upsert creates obj; if it exists, it reads the current object, lets change bring it to obj
// (reporting whether it had to) and writes it back when it did.
func upsert[T kubeapi.Object, L runtime.Object](ctx context.Context, r kubeapi.Resource[T, L], obj T,
	change func(cur T) (bool, error)) error {
	_, err := r.Create(ctx, obj, metav1.CreateOptions{})
	if err == nil || !apierrors.IsAlreadyExists(err) {
		return err
	}
	cur, err := r.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	if changed, err := change(cur); !changed || err != nil {
		return err
	}
	_, err = r.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

// setIfChanged sets *dst to want unless they are semantically equal, reporting whether it did.
func setIfChanged[V any](dst *V, want V) bool {
	if equality.Semantic.DeepEqual(*dst, want) {
		return false
	}
	*dst = want
	return true
}

// mergeLabels adds want to *labels unless they hold it already, reporting whether it did.
func mergeLabels(labels *map[string]string, want map[string]string) bool {
	if hasLabels(*labels, want) {
		return false
	}
	*labels = merged(*labels, want)
	return true
}
