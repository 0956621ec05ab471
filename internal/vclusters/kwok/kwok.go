package kwok

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.uber.org/zap"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/waldur/site-agent/internal/vclusters/controlplane"
)

// NodeSelector is the annotation selector of the Nodes KWOK manages (kwokctl's convention: its
// controller manages kwok.x-k8s.io/node=fake).
const NodeSelector = "kwok.x-k8s.io/node=fake"

// Options say how to run the controller.
type Options struct {
	Binary string // the kwok binary (scripts/kwok/build.sh)
	Dir    string // stage files, kubeconfig and kwok.log
	// Main is the API server KWOK works against (as an administrator).
	Main *rest.Config
	// NodeLeaseDuration is the Leases' duration; KWOK renews them every quarter of it.
	NodeLeaseDuration time.Duration
	// PodCIDR is where Pod IPs come from (KWOK's --cidr, "IP/prefix").
	PodCIDR string
	Stages  Stages
	Logger  *zap.Logger
}

// Controller is a running KWOK.
type Controller struct {
	proc *controlplane.Process
}

// Start writes the stage files and a kubeconfig into Dir and starts KWOK; it returns at once
// (KWOK is ready within a second or two and catches up on the Nodes that exist).
func Start(o Options) (*Controller, error) {
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	stages, err := Render(o.Stages)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(o.Dir, "kubeconfig")
	if err := writeKubeconfig(o.Main, kubeconfig); err != nil {
		return nil, fmt.Errorf("kwok kubeconfig: %w", err)
	}
	lease := int(o.NodeLeaseDuration / time.Second)
	if lease < 1 {
		return nil, errors.New("node lease duration must be at least 1s")
	}
	args := []string{"--kubeconfig=" + kubeconfig, "--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + NodeSelector,
		"--node-lease-duration-seconds=" + strconv.Itoa(lease), "--cidr=" + o.PodCIDR}
	for _, name := range StageFiles {
		path := filepath.Join(o.Dir, name)
		if err := os.WriteFile(path, stages[name], 0o600); err != nil {
			return nil, err
		}
		args = append(args, "--config="+path)
	}
	// KWOK's informers (client-go v0.36) ask for watch streams; on an API server whose etcd
	// lacks progress requests (Debian's 3.4) they must be refused (--feature-gates=WatchList=false,
	// as the started main API server has it), else KWOK's caches never catch up, its Lease
	// renewals conflict and new Nodes are never managed.
	p, err := controlplane.StartProcess("kwok", o.Binary, o.Dir, args, nil, o.Logger)
	if err != nil {
		return nil, err
	}
	o.Logger.Info("kwok manages the virtual nodes", zap.String("selector", NodeSelector),
		zap.Duration("node_lease_duration", o.NodeLeaseDuration), zap.Duration("node_status_interval", o.Stages.NodeStatusInterval),
		zap.Duration("pod_start_latency", o.Stages.PodStartLatency))
	return &Controller{proc: p}, nil
}

// Exited says why KWOK ended (nil while it runs).
func (c *Controller) Exited() error { return c.proc.Exited() }

// Stop stops KWOK.
func (c *Controller) Stop() { c.proc.Stop() }

// writeKubeconfig renders rc (an administrator's configuration) as a kubeconfig file.
func writeKubeconfig(rc *rest.Config, path string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["main"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthority: rc.CAFile,
		CertificateAuthorityData: rc.CAData, InsecureSkipTLSVerify: rc.Insecure, TLSServerName: rc.ServerName}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: rc.BearerToken, TokenFile: rc.BearerTokenFile,
		ClientCertificate: rc.CertFile, ClientCertificateData: rc.CertData, ClientKey: rc.KeyFile, ClientKeyData: rc.KeyData,
		Username: rc.Username, Password: rc.Password}
	cfg.Contexts["main"] = &clientcmdapi.Context{Cluster: "main", AuthInfo: "admin"}
	cfg.CurrentContext = "main"
	return clientcmd.WriteToFile(*cfg, path)
}
