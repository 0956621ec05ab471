package rancherkccrd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/kubeapi"
	"github.com/waldur/site-agent/internal/upstream"
)

// applyAttempts bounds the read-and-replace attempts of one custom resource when another
// writer (the operator writing status bumps resourceVersion) changed it in between.
const applyAttempts = 5

var crGV = schema.GroupVersion{Group: crGroup, Version: crVersion}

// crScheme holds only the meta/v1 types (options, Status) under waldur.io/v1alpha1: the custom
// resources themselves travel as JSON and are read as unstructured objects.
var crScheme = kubeapi.NewScheme(func(s *runtime.Scheme) error {
	metav1.AddToGroupVersion(s, crGV)
	return nil
})

// crClient reads and writes ManagedRancherProjects of one namespace through internal/kubeapi.
type crClient struct {
	g         *kubeapi.Group
	ns        string
	conflicts atomic.Int64 // 409 answers to updates, for tests and logs
	// written remembers, per name, the spec last written and the spec the API server stored
	// for it (it adds the CRD's defaults), so a spec that only differs by those defaults is not
	// written again on every pass.
	written sync.Map
}

// writtenSpec is a spec the agent wrote and the spec stored, as canonical JSON.
type writtenSpec struct{ sent, stored string }

func newCRClient(cfg *rest.Config, ns string, retry upstream.RetryPolicy, log *zap.Logger) (*crClient, error) {
	cfg = rest.CopyConfig(cfg)
	timeout := cfg.Timeout
	cfg.Timeout = 0 // one attempt is bounded below, the retries by the caller's context
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return upstream.NewRetryTransport(upstream.Attempt(rt, timeout), upstream.RetryOptions{Policy: retry, Name: "kubernetes", Logger: log})
	}
	cfg.WarningHandler = rest.NoWarnings{}
	g, err := kubeapi.NewGroup(cfg, nil, crGV, crScheme)
	if err != nil {
		return nil, err
	}
	return &crClient{g: g, ns: ns}, nil
}

func (k *crClient) request(verb string) (*rest.Request, error) {
	rc, err := k.g.REST()
	if err != nil {
		return nil, err
	}
	return rc.Verb(verb).Namespace(k.ns).Resource(crResource), nil
}

func (k *crClient) get(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	q, err := k.request(http.MethodGet)
	if err != nil {
		return nil, err
	}
	raw, err := q.Name(name).Do(ctx).Raw()
	return decodeObject(raw, kubeErr("get "+crResource+"/"+name, err))
}

func (k *crClient) create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	q, err := k.request(http.MethodPost)
	if err != nil {
		return nil, err
	}
	raw, err := q.Body(body).Do(ctx).Raw()
	return decodeObject(raw, kubeErr("create "+crResource+"/"+obj.GetName(), err))
}

func (k *crClient) update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	q, err := k.request(http.MethodPut)
	if err != nil {
		return nil, err
	}
	raw, err := q.Name(obj.GetName()).Body(body).Do(ctx).Raw()
	return decodeObject(raw, kubeErr("update "+crResource+"/"+obj.GetName(), err))
}

// list returns the custom resources of the namespace that the label selector selects, all pages.
func (k *crClient) list(ctx context.Context, selector string, limit int) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	cont := ""
	for page := 0; page < 1000; page++ {
		q, err := k.request(http.MethodGet)
		if err != nil {
			return nil, err
		}
		q = q.Param("limit", strconv.Itoa(limit))
		if selector != "" {
			q = q.Param("labelSelector", selector)
		}
		if cont != "" {
			q = q.Param("continue", cont)
		}
		raw, err := q.Do(ctx).Raw()
		if err != nil {
			return nil, kubeErr("list "+crResource, err)
		}
		var l unstructured.UnstructuredList
		if err := l.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("list %s: %w", crResource, err)
		}
		out = append(out, l.Items...)
		if cont = l.GetContinue(); cont == "" || limit <= 1 {
			return out, nil
		}
	}
	return nil, failure.Transient(errors.New("list " + crResource + ": too many pages"))
}

// delete removes one custom resource, only if it is still the object with uid (a resource
// re-created under the same name in between is left alone). Absent is not an error.
func (k *crClient) delete(ctx context.Context, name string, uid types.UID) error {
	opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"},
		Preconditions: &metav1.Preconditions{UID: &uid}}
	body, err := json.Marshal(opts)
	if err != nil {
		return err
	}
	q, err := k.request(http.MethodDelete)
	if err != nil {
		return err
	}
	err = q.Name(name).Body(body).Do(ctx).Error()
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return kubeErr("delete "+crResource+"/"+name, err)
}

// apply makes the custom resource carry d's spec and labels, keeping everything else of the
// live object (annotations, finalizers, owner references, other labels). It replaces the object
// with the live resourceVersion (a replace, so keys removed from the spec really go) and, on 409,
// reads it again and retries. status is a subresource: the replace never writes it. A live
// object that already matches is not written. In a dry run nothing is written and the live
// object (nil when absent) is returned.
func (k *crClient) apply(ctx context.Context, d desired, dryRun bool) (*unstructured.Unstructured, error) {
	specMap, err := jsonMap(d.spec)
	if err != nil {
		return nil, err
	}
	for range applyAttempts {
		live, err := k.get(ctx, d.name)
		if errors.Is(err, failure.ErrNotFound) {
			if dryRun {
				return nil, nil
			}
			out, err := k.create(ctx, newObject(d, specMap))
			if isStatus(err, http.StatusConflict) {
				continue // created by someone else meanwhile: read it and replace
			}
			k.remember(d.name, specMap, out)
			return out, err
		}
		if err != nil {
			return nil, err
		}
		next, changed := merged(live, d, specMap)
		if changed && hasLabels(live, d.labels) && k.storedAsWritten(d.name, specMap, live) {
			changed = false
		}
		if !changed || dryRun {
			return live, nil
		}
		out, err := k.update(ctx, next)
		if isStatus(err, http.StatusConflict) {
			k.conflicts.Add(1)
			continue
		}
		k.remember(d.name, specMap, out)
		return out, err
	}
	return nil, failure.Transient(fmt.Errorf("update %s/%s: changed by another writer %d times in a row", crResource, d.name, applyAttempts))
}

// remember records what the API server stored for the spec just written.
func (k *crClient) remember(name string, sent map[string]any, out *unstructured.Unstructured) {
	if out == nil {
		return
	}
	k.written.Store(name, writtenSpec{sent: canonical(sent), stored: canonical(out.Object["spec"])})
}

// storedAsWritten reports whether the live spec is what the API server stored for the same
// desired spec the last time this process wrote it: nothing to write.
func (k *crClient) storedAsWritten(name string, sent map[string]any, live *unstructured.Unstructured) bool {
	w, ok := k.written.Load(name)
	return ok && w.(writtenSpec).sent == canonical(sent) && w.(writtenSpec).stored == canonical(live.Object["spec"])
}

func hasLabels(obj *unstructured.Unstructured, want map[string]string) bool {
	have := obj.GetLabels()
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// canonical is v as JSON with sorted keys ("" when it cannot be encoded).
func canonical(v any) string {
	m, err := jsonMap(map[string]any{"v": v})
	if err != nil {
		return ""
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func newObject(d desired, specMap map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": specMap}}
	obj.SetAPIVersion(crGV.String())
	obj.SetKind(crKind)
	obj.SetName(d.name)
	obj.SetLabels(d.labels)
	return obj
}

// merged is live with d's spec and labels; changed is false when live already has them.
func merged(live *unstructured.Unstructured, d desired, specMap map[string]any) (*unstructured.Unstructured, bool) {
	next := live.DeepCopy()
	labels := next.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	changed := false
	for k, v := range d.labels {
		if labels[k] != v {
			labels[k], changed = v, true
		}
	}
	next.SetLabels(labels)
	liveSpec, _ := jsonMap(live.Object["spec"])
	if !reflect.DeepEqual(liveSpec, specMap) {
		changed = true
	}
	next.Object["spec"] = specMap
	delete(next.Object, "status")
	return next, changed
}

// jsonMap is v as a JSON object decoded the way the agent compares objects (numbers float64).
func jsonMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	err = json.Unmarshal(b, &m)
	return m, err
}

func decodeObject(raw []byte, err error) (*unstructured.Unstructured, error) {
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("decode %s: %w", crKind, err)
	}
	return obj, nil
}

// kubeErr classifies an API error (op is "<verb> <object>"): 404 also matches ErrNotFound;
// timeouts, throttling, 5xx and network failures are transient; the API status is kept.
func kubeErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		verb, object, _ := strings.Cut(op, " ")
		e := &failure.StatusError{Service: "kubernetes", Method: verb, Path: object, Code: int(st.Code), Body: st.Message}
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("%w (%w)", e, failure.ErrNotFound)
		case e.Temporary() || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err):
			return failure.Transient(fmt.Errorf("%w", e))
		}
		return fmt.Errorf("%w", e)
	}
	return failure.Transient(fmt.Errorf("kubernetes %s: %w", op, err))
}

func isStatus(err error, code int) bool { return failure.HasStatus(err, code) }
