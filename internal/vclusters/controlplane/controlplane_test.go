package controlplane_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/waldur/site-agent/internal/testenv"
	"github.com/waldur/site-agent/internal/testenv/kubeenv"
	"github.com/waldur/site-agent/internal/vclusters/controlplane"
)

// options finds the binaries scripts/kube/build.sh caches (tier 2 only).
func options(t *testing.T, dir string) controlplane.Options {
	t.Helper()
	if err := testenv.Gate(); err != nil {
		t.Skip(err)
	}
	bin, ok := kubeenv.BinDir()
	etcd, err := exec.LookPath("etcd")
	if !ok || err != nil {
		t.Fatalf("kube-apiserver/kube-controller-manager in %s (%v) or etcd in PATH (%v) missing: run scripts/kube/build.sh", bin, ok, err)
	}
	return controlplane.Options{Dir: dir, APIServer: filepath.Join(bin, "kube-apiserver"), Etcd: etcd,
		ControllerManager: filepath.Join(bin, "kube-controller-manager"), EtcdNoFsync: true, Logger: zaptest.NewLogger(t)}
}

func TestRealStartsAndRestartsWithItsData(t *testing.T) {
	dir := t.TempDir()
	o := options(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "kept"}}
	if _, err := kube.CoreV1().ServiceAccounts("kept").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "agent-token", Namespace: "kept",
		Annotations: map[string]string{corev1.ServiceAccountNameKey: "agent"}}, Type: corev1.SecretTypeServiceAccountToken}
	if _, err := kube.CoreV1().Secrets("kept").Create(ctx, tok, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The controller manager's token controller fills the Secret in.
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := kube.CoreV1().Secrets("kept").Get(ctx, "agent-token", metav1.GetOptions{})
		if err == nil && len(s.Data[corev1.ServiceAccountTokenKey]) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("service-account token secret not filled in: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The API server runs with GOGC=200 (unless the test's environment sets GOGC); the others
	// with the environment as it is.
	_, envGOGC := os.LookupEnv("GOGC")
	for _, p := range cp.Processes() {
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.Pid()))
		if err != nil {
			t.Fatal(err)
		}
		has := strings.Contains("\x00"+string(environ), "\x00GOGC=200\x00")
		if want := p.Name == "kube-apiserver" && !envGOGC; has != want {
			t.Errorf("%s: GOGC=200 in its environment: %v, want %v", p.Name, has, want)
		}
	}
	host := cp.Host
	cp.Stop()

	cp, err = controlplane.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	if cp.Host != host {
		t.Errorf("restarted on %s, was %s", cp.Host, host)
	}
	kube, _ = kubernetes.NewForConfig(cp.RESTConfig())
	if _, err := kube.CoreV1().Namespaces().Get(ctx, "kept", metav1.GetOptions{}); err != nil {
		t.Errorf("namespace lost over a restart: %v", err)
	}
}

// A port taken by someone else is reported as such (kubeenv retries on new ports then), with
// the end of the failed process's log, and nothing is left running.
func TestRealTakenPortIsReported(t *testing.T) {
	o := options(t, t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	o.Port = ln.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, o)
	if err == nil {
		cp.Stop()
		t.Fatal("started on a taken port")
	}
	if !errors.Is(err, controlplane.ErrPortTaken) || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("error %v, want ErrPortTaken with the log's line", err)
	}
}

// etcd holds every Secret of the main API server (the agents' cattle-credentials among them):
// another local user reaches neither its client nor its peer port, in plain text or over TLS
// without the control plane's client certificate; the API server, which has it, works.
func TestRealEtcdServesOnlyTheAPIServer(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, options(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	kube, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cattle-credentials-x", Namespace: "default"}, StringData: map[string]string{"token": "s3cr3t"}}
	if _, err := kube.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "ports.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ports struct{ EtcdClient, EtcdPeer int }
	if err := json.Unmarshal(data, &ports); err != nil {
		t.Fatal(err)
	}
	// etcd's gRPC gateway: every key under /registry/secrets/.
	rangeBody := fmt.Sprintf(`{"key":%q,"range_end":%q}`, base64.StdEncoding.EncodeToString([]byte("/registry/secrets/")),
		base64.StdEncoding.EncodeToString([]byte("/registry/secrets0")))
	noCert := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for _, port := range []int{ports.EtcdClient, ports.EtcdPeer} {
		for _, scheme := range []string{"http", "https"} {
			url := fmt.Sprintf("%s://127.0.0.1:%d/v3/kv/range", scheme, port)
			resp, err := noCert.Post(url, "application/json", strings.NewReader(rangeBody))
			if err != nil {
				continue // refused: what we want
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Errorf("%s answered %s without a client certificate: %.200s", url, resp.Status, body)
		}
	}
	if _, err := kube.CoreV1().Secrets("default").Get(ctx, secret.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the API server lost etcd: %v", err)
	}
}
