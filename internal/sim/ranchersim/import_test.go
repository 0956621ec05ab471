package ranchersim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"
)

// importCluster creates a cluster and a registration token through the API.
func importCluster(t *testing.T, c *client, name string) (id string, token map[string]any) {
	t.Helper()
	code, body, _ := c.do("POST", "/v3/clusters", `{"type":"cluster","name":"`+name+`"}`)
	if code != 201 || body["state"] != "pending" {
		t.Fatalf("create cluster: %d %v", code, body)
	}
	id = body["id"].(string)
	return id, postToken(t, c, id)
}

// postToken creates a registration token for cluster id, posting again while the cluster's
// namespace is missing (404), as clients must.
func postToken(t *testing.T, c *client, id string) map[string]any {
	t.Helper()
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		code, token, _ := c.do("POST", "/v3/clusterregistrationtokens", `{"type":"clusterRegistrationToken","clusterId":"`+id+`"}`)
		switch {
		case code == 201:
			if token["manifestUrl"] != "" {
				t.Fatalf("the create answer has the manifest URL, which Rancher's status controller fills later: %v", token)
			}
			for ; token["manifestUrl"] == "" && time.Since(start) < 5*time.Second; time.Sleep(5 * time.Millisecond) {
				_, token, _ = c.do("GET", "/v3/clusterregistrationtokens/"+token["id"].(string), "")
			}
			return token
		case code != 404 || token["message"] != `namespaces "`+id+`" not found` || time.Since(start) > 5*time.Second:
			t.Fatalf("create token: %d %v", code, token)
		}
	}
}

// A registration token POSTed before Rancher made the cluster's namespace is 404 (nothing is
// made); once the namespace is there it is created. Clusters that exist from the start have
// their namespace.
func TestRegistrationTokenWaitsForTheNamespace(t *testing.T) {
	_, c := newSim(t, Options{NamespaceDelay: 40 * time.Millisecond})
	code, body, _ := c.do("POST", "/v3/clusters", `{"type":"cluster","name":"fresh"}`)
	if code != 201 {
		t.Fatalf("create cluster: %d %v", code, body)
	}
	id, start := body["id"].(string), time.Now()
	code, tok, _ := c.do("POST", "/v3/clusterregistrationtokens", `{"type":"clusterRegistrationToken","clusterId":"`+id+`"}`)
	if code != 404 || tok["code"] != "NotFound" || tok["message"] != `namespaces "`+id+`" not found` {
		t.Fatalf("token right after the cluster: %d %v, want 404 for the namespace", code, tok)
	}
	if _, list, _ := c.do("GET", "/v3/clusterregistrationtokens?clusterId="+id, ""); len(list["data"].([]any)) != 0 {
		t.Fatalf("the 404 made a token: %v", list)
	}
	postToken(t, c, id)
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Fatalf("token made after %s, before the namespace", waited)
	}
	if code, tok, _ := c.do("POST", "/v3/clusterregistrationtokens", `{"clusterId":"c-m-sim00001"}`); code != 201 {
		t.Fatalf("token of a configured cluster: %d %v", code, tok)
	}
	_, c2 := newSim(t, Options{NamespaceDelay: -1})
	_, body, _ = c2.do("POST", "/v3/clusters", `{"type":"cluster","name":"fresh"}`)
	if code, tok, _ := c2.do("POST", "/v3/clusterregistrationtokens", `{"clusterId":"`+body["id"].(string)+`"}`); code != 201 {
		t.Fatalf("NamespaceDelay -1: %d %v", code, tok)
	}
}

func TestClusterImportAPI(t *testing.T) {
	s, c := newSim(t, Options{})
	id, tok := importCluster(t, c, "vc-one")
	if !strings.HasPrefix(id, "c-") {
		t.Errorf("cluster id %q", id)
	}
	value := tok["token"].(string)
	if len(value) != tokenLen || strings.Trim(value, tokenChars) != "" {
		t.Errorf("token %q is not 54 characters of Rancher's alphabet", value)
	}
	wantURL := c.base + "/v3/import/" + value + "_" + id + ".yaml"
	if tok["manifestUrl"] != wantURL || tok["clusterId"] != id {
		t.Errorf("token %v, want manifestUrl %s", tok, wantURL)
	}

	for _, tc := range []struct {
		body, code string
		want       int
	}{
		{`{"type":"cluster","name":"VC-ONE"}`, "NotUnique", 422}, // names are unique, case-insensitively
		{`{"type":"cluster"}`, "MissingRequired", 422},
		{`{"type":"cluster","name":7}`, "InvalidFormat", 422},
	} {
		if code, body, _ := c.do("POST", "/v3/clusters", tc.body); code != tc.want || body["code"] != tc.code {
			t.Errorf("POST /v3/clusters %s: %d %v, want %d %s", tc.body, code, body, tc.want, tc.code)
		}
	}
	if code, body, _ := c.do("POST", "/v3/clusterregistrationtokens", `{"clusterId":"c-nope"}`); code != 422 || body["code"] != "InvalidReference" {
		t.Errorf("token for unknown cluster: %d %v", code, body)
	}
	_, list, _ := c.do("GET", "/v3/clusterregistrationtokens?clusterId="+id, "")
	if data := list["data"].([]any); len(data) != 1 {
		t.Errorf("tokens of %s: %v", id, data)
	}
	if code, body, _ := c.do("GET", "/v3/clusters/"+id, ""); code != 200 || body["nodeCount"] != float64(0) || body["driver"] != "" {
		t.Errorf("imported cluster before its agent: %d %v", code, body)
	}

	// Deleting takes the tokens along: the manifest and the connect endpoint refuse them.
	if code, body, _ := c.do("DELETE", "/v3/clusters/"+id, ""); code != 200 || body["state"] != "removing" {
		t.Fatalf("delete: %d %v", code, body)
	}
	if code, _, _ := c.do("GET", "/v3/clusters/"+id, ""); code != 404 {
		t.Errorf("deleted cluster answers %d", code)
	}
	if got := get(t, wantURL, nil); got.code != 400 {
		t.Errorf("manifest of a deleted cluster: %d", got.code)
	}
	if len(s.ImportedClusters()) != 0 {
		t.Errorf("imported clusters left: %v", s.ImportedClusters())
	}
}

type answer struct {
	code int
	body string
}

func get(t *testing.T, url string, hdr http.Header) answer {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, string(b)}
}

func TestImportManifestNeedsNoAPIKeyButTheToken(t *testing.T) {
	_, c := newSim(t, Options{})
	id, tok := importCluster(t, c, "vc-manifest")
	m := get(t, tok["manifestUrl"].(string), nil) // no Authorization header
	if m.code != 200 {
		t.Fatalf("manifest: %d %s", m.code, m.body)
	}
	for _, want := range []string{"kind: ServiceAccount", "name: cattle-admin-binding", "kind: Deployment",
		"url: \"" + base64.StdEncoding.EncodeToString([]byte(c.base)) + "\"",
		"token: \"" + base64.StdEncoding.EncodeToString([]byte(tok["token"].(string))) + "\""} {
		if !strings.Contains(m.body, want) {
			t.Errorf("manifest lacks %q", want)
		}
	}
	for _, bad := range []string{"/v3/import/" + "wrong_" + id + ".yaml", "/v3/import/" + tok["token"].(string) + "_c-other.yaml",
		"/v3/import/notokenfile.yaml"} {
		if got := get(t, c.base+bad, nil); got.code != 400 {
			t.Errorf("GET %s: %d %s", bad, got.code, got.body)
		}
	}
}

// The connect endpoint authenticates before upgrading, so plain GETs show its answers.
func TestConnectEndpointAuthentication(t *testing.T) {
	_, c := newSim(t, Options{})
	_, tok := importCluster(t, c, "vc-auth")
	token := tok["token"].(string)
	params := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.StdEncoding.EncodeToString(b)
	}
	ca := base64.StdEncoding.EncodeToString([]byte(selfSignedPEM(t)))
	good := params(map[string]any{"cluster": map[string]string{"address": "127.0.0.1:1", "token": "t", "caCert": ca}})
	for _, tc := range []struct {
		name string
		hdr  http.Header
		want int
		body string
	}{
		{"no credentials", http.Header{}, 401, "failed authentication"},
		{"unknown registration token", http.Header{"X-Api-Tunnel-Token": {"nope"}, "X-Api-Tunnel-Params": {good}}, 400, "cluster not found"},
		{"no parameters", http.Header{"X-Api-Tunnel-Token": {token}}, 400, "not JSON"},
		{"no cluster object", http.Header{"X-Api-Tunnel-Token": {token}, "X-Api-Tunnel-Params": {params(map[string]any{})}}, 400, "missing node or cluster registration info"},
		{"caCert not PEM", http.Header{"X-Api-Tunnel-Token": {token}, "X-Api-Tunnel-Params": {params(map[string]any{"cluster": map[string]string{"address": "a:1", "token": "t", "caCert": "Y2E="}})}}, 400, "not a PEM certificate"},
		{"no caCert", http.Header{"X-Api-Tunnel-Token": {token}, "X-Api-Tunnel-Params": {params(map[string]any{"cluster": map[string]string{"address": "a:1", "token": "t"}})}}, 400, "caCert empty"},
		{"steve with a wrong token", http.Header{"Authorization": {"Bearer stv-cluster-nope"}}, 401, "failed authentication"},
		{"api key is not a tunnel credential", http.Header{"Authorization": {c.auth}}, 401, "failed authentication"},
		{"authenticated but not a websocket", http.Header{"X-Api-Tunnel-Token": {token}, "X-Api-Tunnel-Params": {good}}, 400, "not using the websocket protocol"},
	} {
		got := get(t, c.base+"/v3/connect", tc.hdr)
		if got.code != tc.want || !strings.Contains(got.body, tc.body) {
			t.Errorf("%s: %d %q, want %d %q", tc.name, got.code, got.body, tc.want, tc.body)
		}
	}
}

// selfSignedPEM is a throwaway CA certificate.
func selfSignedPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
