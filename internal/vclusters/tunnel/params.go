package tunnel

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
)

// Header names and constants of Rancher's tunnel protocol (rancher/rancher cmd/agent/main.go,
// pkg/tunnelserver/mcmauthorizer/tunnel.go, pkg/api/steve/proxy).
const (
	TokenHeader  = "X-API-Tunnel-Token"
	ParamsHeader = "X-API-Tunnel-Params"
	// StevePrefix prefixes the registration token in the steve session's bearer token and the
	// session's client key on the server.
	StevePrefix = "stv-cluster-"
	// SteveAddress is what Rancher's steve proxy dials through the steve session.
	SteveAddress = "127.0.0.1:6080"
)

// Kind names a session.
type Kind string

// Session kinds.
const (
	Agent Kind = "agent"
	Steve Kind = "steve"
)

// ClusterParams is the "cluster" object of X-API-Tunnel-Params: where Rancher reaches the
// cluster's API through the tunnel ("https://" + Address), the service-account token it uses
// there, and the CA (PEM) that signed the serving certificate at Address.
type ClusterParams struct {
	Address string
	Token   string
	CAPEM   []byte
}

type wireCluster struct {
	Address string `json:"address"`
	Token   string `json:"token"`
	CACert  string `json:"caCert"`
}

// EncodeParams renders the X-API-Tunnel-Params value: base64 of {"cluster":{…}} with caCert
// base64-encoded, as the cattle cluster agent sends it.
func EncodeParams(p ClusterParams) (string, error) {
	if p.Address == "" || p.Token == "" || len(p.CAPEM) == 0 {
		return "", errors.New("tunnel parameters need an address, a token and a CA")
	}
	raw, err := json.Marshal(map[string]wireCluster{"cluster": {
		Address: p.Address, Token: p.Token, CACert: base64.StdEncoding.EncodeToString(p.CAPEM)}})
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// ConnectURL is the websocket URL of a session for a Rancher server URL (the url key of the
// cattle-credentials Secret): the agent registers first, then connects.
func ConnectURL(server string, kind Kind, registered bool) (string, error) {
	u, err := url.Parse(strings.TrimSpace(server))
	if err != nil || u.Host == "" {
		return "", errors.New("rancher server URL is not an absolute URL")
	}
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	case "http":
		u.Scheme = "ws"
	default:
		return "", errors.New("rancher server URL must be http or https")
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = "/v3/connect", "", "", ""
	if kind == Agent && !registered {
		u.Path += "/register"
	}
	return u.String(), nil
}
