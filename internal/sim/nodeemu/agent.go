package nodeemu

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/waldur/site-agent/internal/sim/ranchersim"
)

// agent is the cattle-cluster-agent an applied import manifest deploys: it reaches Rancher at
// server with the registration token from the manifest's cattle-credentials secret.
type agent struct {
	hc            *http.Client
	server, token string
	mu            sync.Mutex // one report at a time, in order
}

// BootRKE2 does what a bootstrap-rke2 node's cloud-init does, in the script's order: log in to
// Vault once and read the cluster's secret; a server fetches Rancher's import manifest into
// RKE2's auto-deploy directory; RKE2 starts and joins the cluster (its rules apply); on a server
// the deploy controller then applies the manifest, whose cluster agent reports the Nodes.
func (c *Cluster) BootRKE2(ctx context.Context, hc *http.Client, vaultAddr string, b Boot, addr string) error {
	if b.Mode != "rke2" {
		return fmt.Errorf("%s: not an rke2-bootstrapped node", b.NodeName)
	}
	sec, err := b.Read(ctx, hc, vaultAddr)
	if err != nil {
		return err
	}
	var manifest []byte
	if b.ImportManifest {
		if manifest, err = FetchManifest(ctx, hc, sec.ImportURL); err != nil {
			return fmt.Errorf("%s: %w", b.NodeName, err)
		}
	}
	if err := c.Join(b, sec.Token, addr); err != nil {
		return err
	}
	if manifest == nil {
		return nil
	}
	return c.Apply(manifest, hc)
}

// StartRKE2 starts RKE2 as a sandboxed bootstrap script installed it (Sandbox.CloudInit,
// Run.Installed): the node joins with config.yaml's token and server (RKE2's rules apply), and
// on a server the deploy controller then applies the import manifest the script fetched into
// the auto-deploy directory.
func (c *Cluster) StartRKE2(hc *http.Client, n Installed, addr string) error {
	if n.Mode != "rke2" {
		return fmt.Errorf("%s: not an rke2-bootstrapped node", n.NodeName)
	}
	if !c.joined(n.NodeName, addr) { // a start tried again after the join
		if err := c.Join(n.Boot, n.Token, addr); err != nil {
			return err
		}
	}
	if n.Manifest == nil {
		return nil
	}
	return c.Apply(n.Manifest, hc)
}

// FetchManifest GETs Rancher's import manifest as the node's curl -f --retry does.
func FetchManifest(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	var err error
	for attempt := range curlRetries + 1 {
		if attempt > 0 {
			time.Sleep(curlRetryDelay)
		}
		var b []byte
		if b, err = fetchOnce(ctx, hc, url); err == nil || ctx.Err() != nil {
			return b, err
		}
	}
	return nil, err
}

func fetchOnce(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, errors.New("import manifest: bad URL")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("import manifest: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("import manifest: HTTP %d", resp.StatusCode)
	}
	return body, nil
}

// Apply plays RKE2's deploy controller applying the import manifest: it must hold the
// cattle-credentials secret and the cattle-cluster-agent Deployment pointed at the same Rancher;
// the agent then reports the cluster's Nodes. Applying it again is a no-op unless the
// credentials changed.
func (c *Cluster) Apply(manifest []byte, hc *http.Client) error {
	server, token, err := agentCredentials(manifest)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.agent == nil || c.agent.server != server || c.agent.token != token {
		c.agent = &agent{hc: hc, server: server, token: token}
	}
	watch := c.kube != nil && c.stopWatch == nil
	if watch {
		var ctx context.Context
		ctx, c.stopWatch = context.WithCancel(context.Background())
		go c.watchNodes(ctx)
	}
	c.mu.Unlock()
	return c.report()
}

// agentCredentials reads the manifest's cattle-credentials secret and checks the agent
// Deployment uses it.
func agentCredentials(manifest []byte) (server, token string, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(manifest))
	var secretName, envServer, envCred string
	for {
		var doc struct {
			Kind     string
			Metadata struct{ Name, Namespace string }
			Data     map[string]string
			Spec     struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Env []struct{ Name, Value string }
						}
					}
				}
			}
		}
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", "", fmt.Errorf("import manifest is not YAML: %w", err)
		}
		switch {
		case doc.Kind == "Secret" && strings.HasPrefix(doc.Metadata.Name, "cattle-credentials-") && doc.Metadata.Namespace == "cattle-system":
			secretName = doc.Metadata.Name
			u, _ := base64.StdEncoding.DecodeString(doc.Data["url"])
			t, _ := base64.StdEncoding.DecodeString(doc.Data["token"])
			server, token = string(u), string(t)
		case doc.Kind == "Deployment" && doc.Metadata.Name == "cattle-cluster-agent":
			for _, ct := range doc.Spec.Template.Spec.Containers {
				for _, e := range ct.Env {
					switch e.Name {
					case "CATTLE_SERVER":
						envServer = e.Value
					case "CATTLE_CREDENTIAL_NAME":
						envCred = e.Value
					}
				}
			}
		}
	}
	if server == "" || token == "" || envServer != server || envCred != secretName {
		return "", "", errors.New("import manifest lacks the cattle-credentials secret or the cluster agent that uses it")
	}
	return server, token, nil
}

// report sends the cluster's Nodes to Rancher as its cluster agent does (none before Apply).
func (c *Cluster) report() error {
	c.mu.Lock()
	a := c.agent
	c.mu.Unlock()
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	nodes, err := c.nodeReport()
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"nodes": nodes})
	for attempt := range 5 { // the agent retries while Rancher does not answer
		if attempt > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		var refused bool
		if refused, err = a.post(body); err == nil || refused {
			return err
		}
	}
	return err
}

// nodeReport is the cluster's Nodes: the joined members, or with UseKube the Node objects.
func (c *Cluster) nodeReport() ([]map[string]any, error) {
	c.mu.Lock()
	kube, grace := c.kube, c.grace
	c.mu.Unlock()
	if kube != nil {
		return kubeNodeReport(kube, grace)
	}
	return c.memberReport(), nil
}

func (c *Cluster) memberReport() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.nodes))
	for n := range c.nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]map[string]any, 0, len(names))
	for _, n := range names {
		m := c.nodes[n]
		roles := []string{"worker"}
		if m.role == "server" {
			roles = []string{"etcd", "controlplane"}
		}
		node := map[string]any{"nodeName": n, "ready": m.up, "labels": m.labels, "roles": roles}
		if m.version != "" {
			node["kubeletVersion"] = m.version
		}
		out = append(out, node)
	}
	return out
}

// post sends one report; refused: Rancher answered with a 4xx (retrying will not help).
func (a *agent) post(body []byte) (refused bool, err error) {
	req, err := http.NewRequest(http.MethodPost, strings.TrimRight(a.server, "/")+ranchersim.ClusterAgentEndpoint, bytes.NewReader(body))
	if err != nil {
		return true, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return false, fmt.Errorf("cluster agent: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return resp.StatusCode < 500, fmt.Errorf("cluster agent: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	return false, nil
}
