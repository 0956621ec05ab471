package ranchersim

import (
	"net/http"
	"strings"
	"testing"
)

// TestGenerateKubeconfig: each call makes a new token in a kubeconfig of the cluster proxy;
// an unknown action is 404, a body 422, an unknown cluster 404.
func TestGenerateKubeconfig(t *testing.T) {
	s, c := newSim(t, Options{})
	for range 2 {
		code, body, _ := c.do(http.MethodPost, "/v3/clusters/"+cluster+"?action=generateKubeconfig", "")
		cfg, _ := body["config"].(string)
		if code != http.StatusOK || !strings.Contains(cfg, "/k8s/clusters/"+cluster) || !strings.Contains(cfg, "token: ") {
			t.Fatalf("generateKubeconfig: %d %v", code, body)
		}
	}
	if got := s.KubeconfigTokens(cluster); len(got) != 2 || got[0] == got[1] {
		t.Fatalf("tokens %v, want two different", got)
	}
	for _, tc := range []struct {
		path, body string
		code       int
	}{
		{"/v3/clusters/" + cluster + "?action=explode", "", http.StatusNotFound},
		{"/v3/clusters/" + cluster + "?action=generateKubeconfig", `{"ttl": 5}`, http.StatusUnprocessableEntity},
		{"/v3/clusters/c-m-none?action=generateKubeconfig", "", http.StatusNotFound},
	} {
		if code, body, _ := c.do(http.MethodPost, tc.path, tc.body); code != tc.code {
			t.Errorf("POST %s %s: %d %v, want %d", tc.path, tc.body, code, body, tc.code)
		}
	}
}
