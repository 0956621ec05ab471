package assembly

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/backends/rke2"
	"github.com/waldur/site-agent/internal/secret"
)

// Issue 17 item 12, bootstrap rancher: the provisioning cluster carries the etcd snapshot
// schedule, retention and S3 target (rkeConfig.etcd), its S3 credential is a fleet-default
// secret the strict simulator's planner needs before any machine gets a plan, and the upgrade
// strategy (servers one at a time, agents in batches, drained) is set from the start; the
// credential goes with the cluster.
func TestProvisionedClusterEtcdSnapshots(t *testing.T) {
	ctx := context.Background()
	sim, c, base := newSim(t)
	ref := rke2.ClusterRef{UUID: uuid, Name: "snap"}
	s3 := &rke2.EtcdS3{Endpoint: "minio.example.com:9000", Bucket: "etcd-snapshots", Folder: "site-a", Region: "eu-west-1",
		AccessKey: "AKIAEXAMPLE", SecretKey: secret.New("s3-secret-key")}
	spec := rke2.ProvisionSpec{K8sVersion: "v1.31.7+rke2r1", CNI: "cilium", DataDir: "/opt/rke2_storage",
		Etcd:    rke2.EtcdSnapshots{ScheduleCron: "0 */6 * * *", Retention: 7, S3: s3},
		Upgrade: rke2.UpgradeStrategy{AgentBatch: 3, DrainTimeout: 15 * time.Minute}}
	if _, err := c.EnsureCluster(ctx, ref, spec); err != nil {
		t.Fatal(err)
	}
	p, _ := sim.ProvisionedCluster("snap")
	want := map[string]any{"snapshotScheduleCron": "0 */6 * * *", "snapshotRetention": float64(7)}
	for k, v := range want {
		if got := at(p.Spec, "rkeConfig", "etcd", k); got != v {
			t.Errorf("etcd.%s = %v, want %v", k, got, v)
		}
	}
	wantS3 := map[string]any{"endpoint": "minio.example.com:9000", "bucket": "etcd-snapshots", "folder": "site-a",
		"region": "eu-west-1", "cloudCredentialName": rke2.EtcdS3SecretName(uuid), "skipSSLVerify": false}
	for k, v := range wantS3 {
		if got := at(p.Spec, "rkeConfig", "etcd", "s3", k); got != v {
			t.Errorf("etcd.s3.%s = %v, want %v", k, got, v)
		}
	}
	if got := at(p.Spec, "rkeConfig", "upgradeStrategy", "workerConcurrency"); got != "3" {
		t.Errorf("workerConcurrency %v", got)
	}
	if got := at(p.Spec, "rkeConfig", "upgradeStrategy", "controlPlaneConcurrency"); got != "1" {
		t.Errorf("controlPlaneConcurrency %v", got)
	}
	if got := at(p.Spec, "rkeConfig", "upgradeStrategy", "workerDrainOptions", "timeout"); got != float64(900) {
		t.Errorf("drain timeout %v", got)
	}
	if raw, _ := json.Marshal(p); strings.Contains(string(raw), "s3-secret-key") {
		t.Fatal("the S3 secret key is in the cluster spec")
	}
	if ak, sk := sim.EtcdS3Credential(rke2.EtcdS3SecretName(uuid)); ak != "AKIAEXAMPLE" || sk != "s3-secret-key" {
		t.Fatalf("S3 credential %q %q", ak, sk)
	}
	// Without its credential the planner renders no plan: the machine stays registering.
	if err := c.c.DeleteSecret(ctx, fleetDefault, rke2.EtcdS3SecretName(uuid)); err != nil {
		t.Fatal(err)
	}
	rc := clusterWithID(t, c, ref, spec)
	register(t, base, registration(t, c, rc).Token, "snap-server-0", nil)
	time.Sleep(60 * time.Millisecond)
	if nodes, _ := c.Nodes(ctx, rc); len(nodes) != 1 || nodes[0].State != "registering" {
		t.Fatalf("a machine got a plan without the S3 credential: %+v", nodes)
	}
	if err := c.EnsureClusterSecrets(ctx, ref, spec); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the node to get its plan", func() bool {
		nodes, err := c.Nodes(ctx, rc)
		return err == nil && len(nodes) == 1 && nodes[0].State == "active"
	})
	waitFor(t, "the cluster to go", func() bool { return c.DeleteCluster(ctx, ref) == nil })
	if len(sim.Secrets()) != 0 {
		t.Fatalf("the S3 credential outlives its cluster: %+v", sim.Secrets())
	}
}
