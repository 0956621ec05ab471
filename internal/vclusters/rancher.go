package vclusters

import (
	"context"
	"os"

	"go.uber.org/zap"

	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/upstream"
)

// newRancherClient is the shared Rancher client with the operator's API key: clusters,
// registration tokens and import manifests (internal/clients/rancher), with rancher.timeout per
// attempt and the client's retry policy.
func newRancherClient(c RancherConfig, log *zap.Logger) (*rancherapi.Client, error) {
	var ca []byte
	if c.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(c.CAFile); err != nil {
			return nil, &ConfigError{Key: "rancher.ca_file", Problem: err.Error()}
		}
	}
	rc, err := rancherapi.New(rancherapi.Config{URL: c.URL, Token: c.Token, TLS: rancherapi.TLS{Insecure: c.Insecure, CAData: ca},
		Upstream: upstream.Settings{Timeout: c.Timeout}}, log)
	if err != nil && ca != nil {
		return nil, &ConfigError{Key: "rancher.ca_file", Problem: "no PEM certificate in it"}
	}
	if err != nil {
		return nil, &ConfigError{Key: "rancher.url", Problem: err.Error()}
	}
	return rc, nil
}

// rancherClusters returns every cluster Rancher knows, by id.
func rancherClusters(ctx context.Context, rc *rancherapi.Client) (map[string]rancherapi.Cluster, error) {
	list, err := rc.Clusters(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]rancherapi.Cluster, len(list))
	for _, c := range list {
		out[c.ID] = c
	}
	return out, nil
}

// registrationLost reports whether Rancher lists a cluster without the agent's parameters and
// has not made it active: the only state a new handshake repairs (watch.go reregisterLocked).
// An active cluster is never reconnected for a missing apiEndpoint: Rancher reaches it through
// its tunnels already, and a reconnect would drop their sessions for nothing.
func registrationLost(rc rancherapi.Cluster) bool {
	return rc.APIEndpoint == "" && rc.State != "active"
}
