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
	writes    atomic.Int64 // creates and updates sent
}

func newCRClient(cfg *rest.Config, ns string, retry upstream.RetryPolicy, log *zap.Logger) (*crClient, error) {
	cfg = rest.CopyConfig(cfg)
	timeout := cfg.Timeout
	cfg.Timeout = 0           // one attempt is bounded below, the retries by the caller's context
	wrap := cfg.WrapTransport // e.g. an exec credential plugin's, or a test's
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if wrap != nil {
			rt = wrap(rt)
		}
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
	return k.write(ctx, http.MethodPost, "create", obj)
}

func (k *crClient) update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return k.write(ctx, http.MethodPut, "update", obj)
}

// write sends obj with verb (POST to the collection, PUT to the object); op names it in errors.
func (k *crClient) write(ctx context.Context, verb, op string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	k.writes.Add(1)
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	q, err := k.request(verb)
	if err != nil {
		return nil, err
	}
	if verb == http.MethodPut {
		q = q.Name(obj.GetName())
	}
	raw, err := q.Body(body).Do(ctx).Raw()
	return decodeObject(raw, kubeErr(op+" "+crResource+"/"+obj.GetName(), err))
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
			return out, err
		}
		if err != nil {
			return nil, err
		}
		next, changed := merged(live, d, specMap)
		if !changed || dryRun {
			return live, nil
		}
		out, err := k.update(ctx, next)
		if isStatus(err, http.StatusConflict) {
			k.conflicts.Add(1)
			continue
		}
		return out, err
	}
	return nil, failure.Transient(fmt.Errorf("update %s/%s: changed by another writer %d times in a row", crResource, d.name, applyAttempts))
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
	if !matches(liveSpec, specMap) {
		changed = true
	}
	next.Object["spec"] = specMap
	delete(next.Object, "status")
	return next, changed
}

// matches reports whether a live value is what the agent wants: every wanted key has a matching
// value, and the live keys the agent does not write hold only zero values ("", false, 0, empty),
// which is what the API server fills in from the CRD's defaults. A live key with a value is
// someone's change: the spec is written again (and the key goes).
func matches(live, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, lv := range l {
			if wv, wanted := w[k]; wanted {
				if !matches(lv, wv) {
					return false
				}
			} else if !zero(lv) {
				return false
			}
		}
		for k := range w {
			if _, has := l[k]; !has {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(w) {
			return false
		}
		for i := range w {
			if !matches(l[i], w[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(live, want)
}

func zero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case float64:
		return x == 0
	case map[string]any:
		for _, e := range x {
			if !zero(e) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	}
	return false
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
