package rancher

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"

	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/kubeapi"
	"github.com/waldur/site-agent/internal/upstream"
)

// kubeClient reaches the downstream cluster through Rancher's /k8s/clusters/<id> proxy with
// the Rancher API token, as kubectl does with a Rancher-generated kubeconfig.
type kubeClient struct {
	cs *kubeAPI
}

// newKubeClient is the client of clusterID through the proxy of the Rancher client v3, with the
// upstreams.kubernetes settings kube.
func newKubeClient(v3 *rancherapi.Client, clusterID string, kube upstream.Settings) (*kubeClient, error) {
	rc := v3.ClusterProxy(clusterID, kube)
	cs, err := newKubeAPI(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client for %s: %w", rc.Host, err)
	}
	return &kubeClient{cs: cs}, nil
}

// kubeErr classifies a client-go error (op is "<verb> <object>"): 404 also matches ErrNotFound;
// timeouts, throttling, update conflicts, 5xx and network failures are transient.
func kubeErr(op string, err error) error {
	if err == nil {
		return nil
	}
	verb, object, _ := strings.Cut(op, " ")
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		e := &failure.StatusError{Service: "kubernetes", Method: verb, Path: object, Code: int(st.Code), Body: st.Message}
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("%w (%w)", e, failure.ErrNotFound)
		case e.Temporary() || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsConflict(err):
			return failure.Transient(e)
		}
		return e
	}
	return failure.Transient(fmt.Errorf("kubernetes %s: %w", op, err))
}

func (k *kubeClient) namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns, err := k.cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	return ns, kubeErr("get namespace "+name, err)
}

func (k *kubeClient) createNamespace(ctx context.Context, ns *corev1.Namespace) (*corev1.Namespace, error) {
	out, err := k.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil, errExists
	}
	return out, kubeErr("create namespace "+ns.Name, err)
}

// updateNamespace writes what fix makes of the namespace cur and reports whether it wrote. When
// another writer changed the namespace in between (an update conflict) it reads it again and
// re-applies fix: Rancher's namespace controllers (namespace-auth's finalizer and lifecycle
// annotation, the quota controller's status) write a namespace moments after it is made. fix
// returns nil when nothing is left to write; its error ends the update and is returned as is.
func (k *kubeClient) updateNamespace(ctx context.Context, cur *corev1.Namespace,
	fix func(*corev1.Namespace) (*corev1.Namespace, error)) (bool, error) {
	var fixErr error
	wrote := false
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		next, err := fix(cur)
		if err != nil || next == nil {
			fixErr = err
			return nil
		}
		_, err = k.cs.CoreV1().Namespaces().Update(ctx, next, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			fresh, gerr := k.cs.CoreV1().Namespaces().Get(ctx, cur.Name, metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			cur = fresh
		}
		wrote = err == nil
		return err
	})
	if fixErr != nil {
		return false, fixErr
	}
	return wrote, kubeErr("update namespace "+cur.Name, err)
}

func (k *kubeClient) deleteNamespace(ctx context.Context, name string) error {
	err := k.cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return kubeErr("delete namespace "+name, err)
}

// projectNamespaces lists every namespace assigned to some Rancher project.
func (k *kubeClient) projectNamespaces(ctx context.Context) ([]corev1.Namespace, error) {
	var out []corev1.Namespace
	err := k.pages(ctx, func(opts metav1.ListOptions) (string, error) {
		opts.LabelSelector = projectIDKey
		l, err := k.cs.CoreV1().Namespaces().List(ctx, opts)
		if err != nil {
			return "", kubeErr("list namespaces", err)
		}
		out = append(out, l.Items...)
		return l.Continue, nil
	})
	return out, err
}

func (k *kubeClient) quota(ctx context.Context, ns string) (*corev1.ResourceQuota, error) {
	q, err := k.cs.CoreV1().ResourceQuotas(ns).Get(ctx, quotaName, metav1.GetOptions{})
	return q, kubeErr("get resourcequota "+ns+"/"+quotaName, err)
}

func (k *kubeClient) createQuota(ctx context.Context, q *corev1.ResourceQuota) error {
	_, err := k.cs.CoreV1().ResourceQuotas(q.Namespace).Create(ctx, q, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return errExists
	}
	return kubeErr("create resourcequota "+q.Namespace+"/"+q.Name, err)
}

// setQuota writes spec.hard of q and its waldur/status annotation ("" removes it), re-reading
// and retrying when the quota controller (which writes status) changed the object in between.
func (k *kubeClient) setQuota(ctx context.Context, q *corev1.ResourceQuota, hard corev1.ResourceList, status string) error {
	cur := q.DeepCopy()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur.Spec.Hard = hard
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		if status == "" {
			delete(cur.Annotations, annStatus)
		} else {
			cur.Annotations[annStatus] = status
		}
		_, err := k.cs.CoreV1().ResourceQuotas(cur.Namespace).Update(ctx, cur, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			fresh, gerr := k.cs.CoreV1().ResourceQuotas(cur.Namespace).Get(ctx, cur.Name, metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			cur = fresh
		}
		return err
	})
	return kubeErr("update resourcequota "+q.Namespace+"/"+q.Name, err)
}

// quotas lists ResourceQuotas in all namespaces; name limits them to one name ("" = all).
func (k *kubeClient) quotas(ctx context.Context, name string) ([]corev1.ResourceQuota, error) {
	sel := ""
	if name != "" {
		sel = "metadata.name=" + name
	}
	return listAll(ctx, k, k.cs.CoreV1().ResourceQuotas(""), "resourcequotas", sel,
		func(l *corev1.ResourceQuotaList) []corev1.ResourceQuota { return l.Items })
}

// activePods lists the pods of all namespaces that are not Succeeded or Failed.
func (k *kubeClient) activePods(ctx context.Context) ([]corev1.Pod, error) {
	return listAll(ctx, k, k.cs.CoreV1().Pods(""), "pods", "status.phase!=Succeeded,status.phase!=Failed",
		func(l *corev1.PodList) []corev1.Pod { return l.Items })
}

// claims lists the PersistentVolumeClaims of all namespaces.
func (k *kubeClient) claims(ctx context.Context) ([]corev1.PersistentVolumeClaim, error) {
	return listAll(ctx, k, k.cs.CoreV1().PersistentVolumeClaims(""), "persistentvolumeclaims", "",
		func(l *corev1.PersistentVolumeClaimList) []corev1.PersistentVolumeClaim { return l.Items })
}

// pagedList is a list object with a continue token (metav1.ListInterface's part listAll needs).
type pagedList interface {
	runtime.Object
	GetContinue() string
}

// listAll lists every page of r (named what in errors) with the field selector sel ("" =
// none); items picks a page's items.
func listAll[T kubeapi.Object, L pagedList, I any](ctx context.Context, k *kubeClient, r kubeapi.Resource[T, L], what, sel string, items func(L) []I) ([]I, error) {
	var out []I
	err := k.pages(ctx, func(opts metav1.ListOptions) (string, error) {
		opts.FieldSelector = sel
		l, err := r.List(ctx, opts)
		if err != nil {
			return "", kubeErr("list "+what, err)
		}
		out = append(out, items(l)...)
		return l.GetContinue(), nil
	})
	return out, err
}

// pages calls list with Limit/Continue until the server has no more.
func (k *kubeClient) pages(ctx context.Context, list func(metav1.ListOptions) (string, error)) error {
	cont := ""
	deadline := time.Now().Add(10 * time.Minute)
	for {
		next, err := list(metav1.ListOptions{Limit: 500, Continue: cont})
		if err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return failure.Transient(fmt.Errorf("kubernetes list did not finish in time"))
		}
		cont = next
	}
}

// errExists reports a create of an object that already exists.
var errExists = errors.New("already exists")
