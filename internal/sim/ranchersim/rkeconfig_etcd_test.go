package ranchersim

import (
	"strings"
	"testing"
	"time"
)

// rkeConfig.etcd and upgradeStrategy are checked as the CRD schema does: misspelt fields, wrong
// types and concurrencies outside the pattern are 422 naming the field.
func TestEtcdAndUpgradeStrategyShapes(t *testing.T) {
	_, c := newSim(t, Options{})
	body := func(name, rke string) string {
		return `{"metadata":{"name":"` + name + `"},"spec":{"kubernetesVersion":"v1.31.7+rke2r1","rkeConfig":` + rke + `}}`
	}
	good := `{"etcd":{"snapshotScheduleCron":"0 */12 * * *","snapshotRetention":5,"s3":{"bucket":"b","endpoint":"minio:9000","skipSSLVerify":true}},` +
		`"upgradeStrategy":{"controlPlaneConcurrency":"1","workerConcurrency":"25%","workerDrainOptions":{"enabled":true,"timeout":900,"ignoreDaemonSets":true}}}`
	if code, b, _ := c.do("POST", "/v1/provisioning.cattle.io.clusters/fleet-default", body("good", good)); code != 201 {
		t.Fatalf("a valid spec: %d %v", code, b)
	}
	bad := map[string]string{
		`{"etcd":{"snapshotCron":"x"}}`:                                    "etcd.snapshotCron",
		`{"etcd":{"snapshotRetention":"5"}}`:                               "etcd.snapshotRetention",
		`{"etcd":{"snapshotRetention":2.5}}`:                               "etcd.snapshotRetention",
		`{"etcd":{"s3":{"bucket":"b","secretKey":"k"}}}`:                   "etcd.s3.secretKey",
		`{"etcd":{"s3":{"skipSSLVerify":"yes"}}}`:                          "etcd.s3.skipSSLVerify",
		`{"upgradeStrategy":{"workerConcurrency":2}}`:                      "upgradeStrategy.workerConcurrency",
		`{"upgradeStrategy":{"workerConcurrency":"-1"}}`:                   "upgradeStrategy.workerConcurrency",
		`{"upgradeStrategy":{"controlPlaneConcurrency":"101%"}}`:           "upgradeStrategy.controlPlaneConcurrency",
		`{"upgradeStrategy":{"workerDrainOptions":{"deleteLocalData":1}}}`: "workerDrainOptions.deleteLocalData",
	}
	for rke, field := range bad {
		code, b, _ := c.do("POST", "/v1/provisioning.cattle.io.clusters/fleet-default", body("bad", rke))
		if msg, _ := b["message"].(string); code != 422 || !strings.Contains(msg, field) {
			t.Errorf("%s: %d %v, want 422 naming %s", rke, code, b, field)
		}
	}
}

// A cluster whose etcd S3 target names a credential secret fleet-default lacks gets no plan
// (Rancher's planner cannot render the etcd-s3 arguments) until the secret is there.
func TestEtcdS3CredentialGatesThePlan(t *testing.T) {
	s, c := newSim(t, Options{NodeActiveAfter: 10 * time.Millisecond})
	spec := `{"kubernetesVersion":"v1.31.7+rke2r1","rkeConfig":{"etcd":{"s3":{"bucket":"b","cloudCredentialName":"s3cred"}}}}`
	code, body, _ := c.do("POST", "/v1/provisioning.cattle.io.clusters/fleet-default", `{"metadata":{"name":"bk"},"spec":`+spec+`}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, body)
	}
	cid := managementID(t, c, "bk")
	token := postToken(t, c, cid)["token"].(string)
	agent := &client{t: t, base: c.base, auth: "Bearer " + token}
	if code, _, _ := agent.do("POST", RegisterEndpoint, `{"nodeName":"bk-server-0","roles":["etcd","controlplane"]}`); code != 201 {
		t.Fatalf("register: %d", code)
	}
	time.Sleep(30 * time.Millisecond)
	_, b, _ := c.do("GET", "/v1/provisioning.cattle.io.clusters/fleet-default/bk", "")
	status := b["status"].(map[string]any)
	if st := nodeStates(s, cid)["bk-server-0"]; !strings.HasPrefix(st, "registering") ||
		!strings.Contains(status["conditions"].([]any)[0].(map[string]any)["message"].(string), "etcdSnapshotCloudCredentialName") {
		t.Fatalf("without the credential: node %q, status %v", st, status)
	}
	c.do("POST", "/v1/secrets", `{"type":"Opaque","metadata":{"name":"s3cred","namespace":"fleet-default"},"data":{"accessKey":"YQ==","secretKey":"Yg=="}}`)
	time.Sleep(30 * time.Millisecond)
	if st := nodeStates(s, cid)["bk-server-0"]; !strings.HasPrefix(st, "active") {
		t.Fatalf("with the credential: node %q", st)
	}
	if ak, sk := s.EtcdS3Credential("s3cred"); ak != "a" || sk != "b" {
		t.Fatalf("credential %q %q", ak, sk)
	}
}
