package rancher

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

// Secrets of Rancher's local cluster through the v1 (Steve) API, such as the registry
// credentials a provisioning cluster's rkeConfig names in fleet-default. Steve passes a create
// body to Kubernetes as it is, so its "type" is the Secret's type; it shows that type back as
// "_type" ("type" being its schema, "secret"), and on a replace takes it from "_type" (rancher
// steve pkg/stores/proxy/proxy_store.go moveFromUnderscore): a PUT without it would ask for an
// Opaque secret, which Kubernetes refuses (the type is immutable).

// SecretSpec is a Secret as it should be.
type SecretSpec struct {
	Namespace, Name string
	Type            string // kubernetes.io/basic-auth, Opaque, …
	Labels          map[string]string
	Data            map[string]secret.Secret
}

// steveSecret is a Secret as Steve shows it (the fields compared).
type steveSecret struct {
	Type     string `json:"_type"`
	Metadata struct {
		Labels          map[string]string `json:"labels"`
		ResourceVersion string            `json:"resourceVersion"`
	} `json:"metadata"`
	Data map[string]string `json:"data"` // base64
}

func secretPath(ns, name string) string {
	return "/v1/secrets/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
}

// EnsureSecret makes the secret hold spec: created when absent, replaced when its data or
// labels differ, left alone otherwise (one GET). A create whose answer was lost answers 409
// when repeated; the secret is then read and compared. A secret of that name with another
// type is a failure naming it (Kubernetes cannot change a secret's type). Neither errors nor
// logs carry the data.
func (c *Client) EnsureSecret(ctx context.Context, spec SecretSpec) error {
	for attempt := 0; attempt < 2; attempt++ {
		var cur steveSecret
		err := c.do(ctx, http.MethodGet, secretPath(spec.Namespace, spec.Name), nil, nil, &cur)
		if errors.Is(err, failure.ErrNotFound) {
			err = c.do(ctx, http.MethodPost, "/v1/secrets", nil, spec.body("type", ""), nil)
			if isConflict(err) {
				continue // made meanwhile (or by a create whose answer was lost): compare it
			}
			return err
		}
		if err != nil {
			return err
		}
		if cur.Type != spec.Type {
			return failure.Errorf("rancher: secret %s/%s is of type %q, not %q; delete it and the next pass makes it again",
				spec.Namespace, spec.Name, cur.Type, spec.Type)
		}
		if spec.matches(cur) {
			return nil
		}
		return c.do(ctx, http.MethodPut, secretPath(spec.Namespace, spec.Name), nil, spec.body("_type", cur.Metadata.ResourceVersion), nil)
	}
	return fmt.Errorf("rancher: secret %s/%s: created and gone again: %w", spec.Namespace, spec.Name, failure.ErrNotReady)
}

// body is the create (typeKey "type") or replace ("_type", with the version read) body.
func (spec SecretSpec) body(typeKey, resourceVersion string) map[string]any {
	data := make(map[string]string, len(spec.Data))
	for k, v := range spec.Data {
		data[k] = base64.StdEncoding.EncodeToString([]byte(v.Reveal()))
	}
	meta := map[string]any{"name": spec.Name, "namespace": spec.Namespace, "labels": spec.Labels}
	if resourceVersion != "" {
		meta["resourceVersion"] = resourceVersion
	}
	return map[string]any{typeKey: spec.Type, "metadata": meta, "data": data}
}

// matches: the secret holds exactly spec's data and carries its labels.
func (spec SecretSpec) matches(cur steveSecret) bool {
	if len(cur.Data) != len(spec.Data) {
		return false
	}
	for k, v := range spec.Data {
		got, err := base64.StdEncoding.DecodeString(cur.Data[k])
		if err != nil || !bytes.Equal(got, []byte(v.Reveal())) {
			return false
		}
	}
	for k, v := range spec.Labels {
		if cur.Metadata.Labels[k] != v {
			return false
		}
	}
	return true
}

// DeleteSecret deletes a secret; an absent one is success.
func (c *Client) DeleteSecret(ctx context.Context, namespace, name string) error {
	err := c.do(ctx, http.MethodDelete, secretPath(namespace, name), nil, nil, nil)
	if errors.Is(err, failure.ErrNotFound) {
		return nil
	}
	return err
}
