package argocd

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/kubeapi"
	"github.com/waldur/site-agent/internal/secret"
)

// Labels of a cluster secret.
const (
	LabelSecretType = "argocd.argoproj.io/secret-type"
	LabelLonghorn   = "k8s.waldur.com/longhorn-enabled"
	LabelManagedBy  = "app.kubernetes.io/managed-by"
	managedBy       = "site-agent"
)

var _ rke2.ArgoCD = (*Registry)(nil)

var coreScheme = kubeapi.NewScheme(corev1.AddToScheme)

// Registry implements rke2.ArgoCD.
type Registry struct {
	ns      string
	server  string
	secrets kubeapi.Resource[*corev1.Secret, *corev1.SecretList]
}

// New connects to the ArgoCD cluster (no network call yet). kubeconfig is the setting's value:
// a kubeconfig document, or the path of a file holding one. Errors name the setting.
func New(kubeconfig secret.Secret, namespace string, timeout time.Duration) (*Registry, error) {
	raw := []byte(kubeconfig.Reveal())
	if path := strings.TrimSpace(string(raw)); path != "" && !strings.ContainsAny(path, "\n:") {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("backend_settings.argocd_k8s_kubeconfig: not a kubeconfig, and no file %q to read one from", path)
		}
		raw = b
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("backend_settings.argocd_k8s_kubeconfig: not a usable kubeconfig: %s", firstLine(err))
	}
	cfg.Timeout = timeout
	g, err := kubeapi.NewGroup(cfg, nil, corev1.SchemeGroupVersion, coreScheme)
	if err != nil {
		return nil, fmt.Errorf("backend_settings.argocd_k8s_kubeconfig: %w", err)
	}
	secrets := kubeapi.CoreV1{G: g}.Secrets(namespace)
	return &Registry{ns: namespace, server: cfg.Host, secrets: secrets}, nil
}

// firstLine keeps an error's first line (client-go's kubeconfig errors may quote the document).
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// SecretName is the cluster's secret in ArgoCD's namespace.
func SecretName(uuid string) string { return "cluster-" + uuid }

func labels(c rke2.ArgoCluster) map[string]string {
	l := map[string]string{LabelSecretType: "cluster", LabelManagedBy: managedBy}
	if c.Longhorn {
		l[LabelLonghorn] = "true"
	}
	return l
}

// Ensure implements rke2.ArgoCD.
func (r *Registry) Ensure(ctx context.Context, c rke2.ArgoCluster, mint func(context.Context) (rke2.Kubeconfig, error)) error {
	name := SecretName(c.UUID)
	cur, err := r.secrets.Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		return r.relabel(ctx, cur, c)
	case !apierrors.IsNotFound(err):
		return classify("read", name, err)
	}
	kc, err := mint(ctx)
	if err != nil {
		return fmt.Errorf("argocd: kubeconfig for %s: %w", c.Name, err)
	}
	defer kc.Token.Forget()
	data, err := secretData(c, kc)
	if err != nil {
		return err
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.ns, Labels: labels(c)}, Type: corev1.SecretTypeOpaque, StringData: data}
	if _, err := r.secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return classify("create", name, err)
	}
	return nil
}

// secretData is ArgoCD's cluster secret: name, server and config (bearer token, Rancher's CA).
func secretData(c rke2.ArgoCluster, kc rke2.Kubeconfig) (map[string]string, error) {
	type tlsConfig struct {
		CAData string `json:"caData,omitempty"`
	}
	conf := struct {
		BearerToken string     `json:"bearerToken"`
		TLS         *tlsConfig `json:"tlsClientConfig,omitempty"`
	}{BearerToken: kc.Token.Reveal()}
	if len(kc.CAData) > 0 {
		conf.TLS = &tlsConfig{CAData: base64.StdEncoding.EncodeToString(kc.CAData)}
	}
	b, err := json.Marshal(conf)
	if err != nil {
		return nil, err
	}
	return map[string]string{"name": c.Name, "server": kc.Server, "config": string(b)}, nil
}

// relabel brings an existing secret's labels in step (Longhorn may be added later).
func (r *Registry) relabel(ctx context.Context, cur *corev1.Secret, c rke2.ArgoCluster) error {
	want := labels(c)
	same := cur.Labels[LabelLonghorn] == want[LabelLonghorn] && cur.Labels[LabelSecretType] == "cluster"
	if same {
		return nil
	}
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	for k, v := range want {
		cur.Labels[k] = v
	}
	if !c.Longhorn {
		delete(cur.Labels, LabelLonghorn)
	}
	if _, err := r.secrets.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return classify("update", cur.Name, err)
	}
	return nil
}

// Remove implements rke2.ArgoCD.
func (r *Registry) Remove(ctx context.Context, uuid string) error {
	err := r.secrets.Delete(ctx, SecretName(uuid), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return classify("delete", SecretName(uuid), err)
	}
	return nil
}

// Check implements rke2.ArgoCD: a server-side dry run of creating a cluster secret proves the
// namespace exists and the account may create secrets there, and changes nothing.
func (r *Registry) Check(ctx context.Context) backends.Check {
	c := backends.Check{Name: "argocd"}
	probe := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: SecretName("site-agent-probe"), Namespace: r.ns,
		Labels: map[string]string{LabelManagedBy: managedBy}}, Type: corev1.SecretTypeOpaque}
	_, err := r.secrets.Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		c.Detail = classify("create (dry run)", probe.Name, err).Error()
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("%s, namespace %s: cluster secrets can be created", r.server, r.ns)
	return c
}

// classify marks what retrying can fix: server errors, throttling, timeouts and network
// failures are transient; refusals (forbidden, invalid) are permanent.
func classify(op, name string, err error) error {
	err = fmt.Errorf("argocd: %s secret %s: %w", op, name, err)
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return err
	}
	return failure.Transient(err)
}
