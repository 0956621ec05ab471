package nodeemu

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/waldur/site-agent/internal/sim/ranchersim"
)

// RegisterWithRancher does what the system-agent install does for bootstrap rancher: it
// registers the node with the Rancher simulator (ranchersim.RegisterEndpoint) under the
// cluster registration token read from Vault, with its roles (server: etcd and control plane;
// agent: worker) and inventory labels.
func (b Boot) RegisterWithRancher(ctx context.Context, hc *http.Client, token string) error {
	if b.Mode != "rancher" || b.RancherURL == "" {
		return fmt.Errorf("%s: not a rancher-bootstrapped node", b.NodeName)
	}
	roles := []string{"worker"}
	if b.Role == "server" {
		roles = []string{"etcd", "controlplane"}
	}
	body, _ := json.Marshal(map[string]any{"nodeName": b.NodeName, "roles": roles, "labels": b.Labels, "cpu": 4, "memoryMiB": 8192})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.RancherURL+ranchersim.RegisterEndpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: register: %w", b.NodeName, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("%s: register: HTTP %d", b.NodeName, resp.StatusCode)
	}
	return nil
}
