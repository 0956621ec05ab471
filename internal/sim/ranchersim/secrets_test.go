package ranchersim

import (
	"strings"
	"testing"
	"time"
)

// Secrets through Steve: the body's "type" is the Secret's type on create; reads show it as
// "_type"; a PUT keeps it only through "_type" (the type is immutable); Kubernetes' checks.
func TestSecretsTheSteveWay(t *testing.T) {
	s, c := newSim(t, Options{})
	create := `{"type":"kubernetes.io/basic-auth","metadata":{"name":"reg","namespace":"fleet-default","labels":{"a":"b"}},` +
		`"data":{"username":"cHVsbGVy","password":"czNjcjN0"}}`
	if code, body, _ := c.do("POST", "/v1/secrets", create); code != 201 || body["_type"] != "kubernetes.io/basic-auth" || body["type"] != "secret" {
		t.Fatalf("create: %d %v", code, body)
	}
	if code, body, _ := c.do("POST", "/v1/secrets", create); code != 409 || body["reason"] != "AlreadyExists" {
		t.Fatalf("second create: %d %v", code, body)
	}
	code, body, _ := c.do("GET", "/v1/secrets/fleet-default/reg", "")
	meta, _ := body["metadata"].(map[string]any)
	if code != 200 || body["id"] != "fleet-default/reg" || meta["resourceVersion"] != "1" || body["data"].(map[string]any)["password"] != "czNjcjN0" {
		t.Fatalf("get: %d %v", code, body)
	}
	cases := []struct {
		name, method, path, body string
		code                     int
		msg                      string
	}{
		{"put without _type", "PUT", "/v1/secrets/fleet-default/reg", `{"type":"secret","metadata":{"name":"reg","resourceVersion":"1"},"data":{"username":"eA=="}}`, 422, "field is immutable"},
		{"put without version", "PUT", "/v1/secrets/fleet-default/reg", `{"_type":"kubernetes.io/basic-auth","metadata":{"name":"reg"},"data":{"username":"eA=="}}`, 500, "resourceVersion is required"},
		{"put stale", "PUT", "/v1/secrets/fleet-default/reg", `{"_type":"kubernetes.io/basic-auth","metadata":{"name":"reg","resourceVersion":"7"},"data":{"username":"eA=="}}`, 409, "modified"},
		{"basic-auth without keys", "POST", "/v1/secrets", `{"type":"kubernetes.io/basic-auth","metadata":{"name":"x","namespace":"fleet-default"},"data":{"token":"eA=="}}`, 422, "data[username]: Required value"},
		{"not base64", "POST", "/v1/secrets/fleet-default", `{"type":"Opaque","metadata":{"name":"y"},"data":{"k":"%%%"}}`, 400, "illegal base64"},
		{"bad name", "POST", "/v1/secrets", `{"metadata":{"name":"Reg","namespace":"fleet-default"}}`, 422, "RFC 1123"},
		{"other namespace", "POST", "/v1/secrets", `{"metadata":{"name":"z","namespace":"default"}}`, 404, `namespaces "default" not found`},
		{"get absent", "GET", "/v1/secrets/fleet-default/none", "", 404, `secrets "none" not found`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := c.do(tc.method, tc.path, tc.body)
			if code != tc.code || !strings.Contains(body["message"].(string), tc.msg) {
				t.Fatalf("%d %v, want %d %q", code, body, tc.code, tc.msg)
			}
		})
	}
	put := `{"type":"secret","_type":"kubernetes.io/basic-auth","metadata":{"name":"reg","resourceVersion":"1"},"stringData":{"username":"u2","password":"p2"}}`
	if code, body, _ := c.do("PUT", "/v1/secrets/fleet-default/reg", put); code != 200 || body["metadata"].(map[string]any)["resourceVersion"] != "2" {
		t.Fatalf("put: %d %v", code, body)
	}
	if got := s.Secrets(); len(got) != 1 || got[0].Data["password"] != "p2" || got[0].Type != "kubernetes.io/basic-auth" {
		t.Fatalf("secrets %+v", got)
	}
	if code, _, _ := c.do("DELETE", "/v1/secrets/fleet-default/reg", ""); code != 200 || len(s.Secrets()) != 0 {
		t.Fatalf("delete: %d", code)
	}
	if code, _, _ := c.do("DELETE", "/v1/secrets/fleet-default/reg", ""); code != 404 {
		t.Fatalf("second delete: %d", code)
	}
	s.AssertNoViolations(t)
}

// A provisioned cluster whose registry config names a secret that fleet-default lacks (or of
// the wrong type) gets no plan: its machines stay registering and it is not ready, with the
// planner's message, until the secret is there.
func TestRegistrySecretGatesThePlan(t *testing.T) {
	s, c := newSim(t, Options{NodeActiveAfter: 10 * time.Millisecond})
	spec := `{"kubernetesVersion":"v1.31.7+rke2r1","rkeConfig":{"machineGlobalConfig":{"system-default-registry":"r.example.com:5000"},` +
		`"registries":{"mirrors":{"docker.io":{"endpoint":["https://r.example.com:5000"]}},"configs":{"r.example.com:5000":{"authConfigSecretName":"reg"}}}}}`
	code, body, _ := c.do("POST", "/v1/provisioning.cattle.io.clusters/fleet-default", `{"metadata":{"name":"air"},"spec":`+spec+`}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, body)
	}
	cid := managementID(t, c, "air")
	token := postToken(t, c, cid)["token"].(string)
	agent := &client{t: t, base: c.base, auth: "Bearer " + token}
	if code, _, _ := agent.do("POST", RegisterEndpoint, `{"nodeName":"air-server-0","roles":["etcd","controlplane"]}`); code != 201 {
		t.Fatalf("register: %d", code)
	}
	state := func() (string, map[string]any) {
		time.Sleep(30 * time.Millisecond)
		_, b, _ := c.do("GET", "/v1/provisioning.cattle.io.clusters/fleet-default/air", "")
		return nodeStates(s, cid)["air-server-0"], b["status"].(map[string]any)
	}
	if st, status := state(); !strings.HasPrefix(st, "registering") || status["ready"] != false ||
		!strings.Contains(status["conditions"].([]any)[0].(map[string]any)["message"].(string), `secret "reg" not found`) {
		t.Fatalf("without the secret: node %q, status %v", st, status)
	}
	c.do("POST", "/v1/secrets", `{"type":"Opaque","metadata":{"name":"reg","namespace":"fleet-default"},"data":{"username":"eA=="}}`)
	if st, status := state(); !strings.HasPrefix(st, "registering") || !strings.Contains(status["conditions"].([]any)[0].(map[string]any)["message"].(string), "must be of type") {
		t.Fatalf("with an Opaque secret: node %q, status %v", st, status)
	}
	c.do("DELETE", "/v1/secrets/fleet-default/reg", "")
	c.do("POST", "/v1/secrets", `{"type":"kubernetes.io/basic-auth","metadata":{"name":"reg","namespace":"fleet-default"},"data":{"username":"eA=="}}`)
	if st, status := state(); !strings.HasPrefix(st, "active") || status["ready"] != true {
		t.Fatalf("with the secret: node %q, status %v", st, status)
	}
	bad := `{"metadata":{"name":"typo"},"spec":{"kubernetesVersion":"v1.31.7+rke2r1","rkeConfig":{"registries":{"configs":{"r":{"authSecretName":"reg"}}}}}}`
	if code, body, _ := c.do("POST", "/v1/provisioning.cattle.io.clusters/fleet-default", bad); code != 422 || !strings.Contains(body["message"].(string), "authSecretName") {
		t.Fatalf("a misspelt registry field: %d %v", code, body)
	}
}
