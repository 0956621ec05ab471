package vclusters

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/waldur/site-agent/internal/secret"
)

// agentServiceAccount is the service account of the import manifest; its token is what Rancher
// uses to reach the cluster's API through the tunnel.
const (
	agentServiceAccount = "cattle"
	agentTokenSecret    = "cattle-token"
)

// agentCreds are what a cattle cluster agent reads before it connects: the server URL and
// registration token from the cattle-credentials Secret (mounted at /cattle-credentials in the
// real agent) and a token of the cattle service account.
type agentCreds struct {
	server   string
	regToken secret.Secret
	saToken  secret.Secret
}

// credentialsSecret finds the cattle-credentials Secret an earlier apply left in the tenant
// namespace ("" if there is none).
func (a *mainAPI) credentialsSecret(ctx context.Context, rec Record) (string, error) {
	list, err := a.kube.CoreV1().Secrets(TenantNamespace(rec.Name)).List(ctx, metav1.ListOptions{LabelSelector: NodeSelector(rec.Name)})
	if err != nil {
		return "", err
	}
	for _, s := range list.Items {
		if strings.HasPrefix(s.Name, "cattle-credentials-") {
			return s.Name, nil
		}
	}
	return "", nil
}

// agentCredentials waits (up to 30 s) for the credentials Secret, then gets a service-account
// token: from a service-account token Secret, as Rancher's agent does, once the token controller
// has filled it in (up to tokenWait), or else from the TokenRequest API.
func (a *mainAPI) agentCredentials(ctx context.Context, rec Record, credName string, tokenWait time.Duration) (agentCreds, error) {
	ns := TenantNamespace(rec.Name)
	var creds agentCreds
	err := poll(ctx, 30*time.Second, 200*time.Millisecond, func() (bool, error) {
		s, err := a.kube.CoreV1().Secrets(ns).Get(ctx, credName, cached)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		url, tok := strings.TrimSpace(string(s.Data["url"])), strings.TrimSpace(string(s.Data["token"]))
		if url == "" || tok == "" {
			return false, nil
		}
		creds.server, creds.regToken = url, secret.New(tok)
		return true, nil
	})
	if err != nil {
		return creds, fmt.Errorf("credentials secret %s/%s: %w", ns, credName, err)
	}
	creds.saToken, err = a.serviceAccountToken(ctx, ns, tokenWait)
	return creds, err
}

func (a *mainAPI) serviceAccountToken(ctx context.Context, ns string, wait time.Duration) (secret.Secret, error) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: agentTokenSecret, Namespace: ns,
		Annotations: map[string]string{corev1.ServiceAccountNameKey: agentServiceAccount}},
		Type: corev1.SecretTypeServiceAccountToken}
	if _, err := a.kube.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return secret.Secret{}, fmt.Errorf("create %s/%s: %w", ns, agentTokenSecret, err)
	}
	var token string
	err := poll(ctx, wait, 100*time.Millisecond, func() (bool, error) {
		got, err := a.kube.CoreV1().Secrets(ns).Get(ctx, agentTokenSecret, cached)
		if apierrors.IsNotFound(err) {
			return false, nil // not in the watch cache yet
		}
		if err != nil {
			return false, err
		}
		token = string(got.Data[corev1.ServiceAccountTokenKey])
		return token != "", nil
	})
	if err == nil {
		return secret.New(token), nil
	}
	if ctx.Err() != nil {
		return secret.Secret{}, ctx.Err()
	}
	a.log.Warn("service account token secret not filled in, using the token request api",
		zap.String("namespace", ns), zap.Duration("waited", wait))
	year := int64(365 * 24 * 3600)
	tr, err := a.kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, agentServiceAccount,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &year}}, metav1.CreateOptions{})
	if err != nil {
		return secret.Secret{}, fmt.Errorf("token request for %s/%s: %w", ns, agentServiceAccount, err)
	}
	return secret.New(tr.Status.Token), nil
}

// cached reads from the API server's watch cache (resourceVersion 0), not from etcd: what the
// setup polls for is written by others, and a cache a moment behind costs one more poll.
var cached = metav1.GetOptions{ResourceVersion: "0"}

// poll calls check every interval until it reports done, fails, or timeout passes.
func poll(ctx context.Context, timeout, interval time.Duration, check func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still not there after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}
