package kubeenv

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"
)

// InstallCRD creates the CustomResourceDefinition of a YAML manifest (one already there is
// kept: tests sharing a control plane install it once) and waits until it is Established.
func (e *Env) InstallCRD(t testing.TB, manifest []byte) {
	t.Helper()
	raw, err := yaml.YAMLToJSON(manifest)
	if err != nil {
		t.Fatalf("kubeenv: CRD manifest: %v", err)
	}
	var meta struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil || meta.Metadata.Name == "" {
		t.Fatalf("kubeenv: CRD manifest has no name: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rc := e.Clientset.CoreV1().RESTClient()
	const base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	err = rc.Post().AbsPath(base).SetHeader("Content-Type", "application/json").Body(raw).Do(ctx).Error()
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("kubeenv: create CRD %s: %v", meta.Metadata.Name, err)
	}
	for ctx.Err() == nil {
		body, err := rc.Get().AbsPath(base, meta.Metadata.Name).Do(ctx).Raw()
		if err == nil && established(body) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("kubeenv: CRD %s not established in time", meta.Metadata.Name)
}

func established(body []byte) bool {
	var crd struct {
		Status struct {
			Conditions []struct{ Type, Status string } `json:"conditions"`
		} `json:"status"`
	}
	if json.Unmarshal(body, &crd) != nil {
		return false
	}
	for _, c := range crd.Status.Conditions {
		if c.Type == "Established" && c.Status == "True" {
			return true
		}
	}
	return false
}
