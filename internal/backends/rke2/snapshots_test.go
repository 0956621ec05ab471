package rke2

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/waldur/site-agent/internal/sim/nodeemu"
)

// Issue 17 item 12, bootstrap rke2: servers get the snapshot schedule and retention in
// config.yaml, and the S3 target with its secret key through the cluster's Vault secret, never
// in user data: the node reads it with its single-use secret id and writes it to
// config.yaml.d. Agents get none of it.
func TestEtcdS3ThroughVault(t *testing.T) {
	ctx := context.Background()
	s, sim, hc := vaultWorld(t, "bootstrap", "rke2", "etcd_snapshot_schedule_cron", "30 2 * * *", "etcd_snapshot_retention", 9,
		"etcd_s3", map[string]any{"endpoint": "minio.example.com:9000", "bucket": "etcd-snapshots", "folder": "prod",
			"access_key": "AKIAEXAMPLE", "secret_key": "the-s3-secret-key", "skip_ssl_verify": true})
	cv, err := flatClusterVault(s)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := EtcdS3YAML(s)
	if err != nil {
		t.Fatal(err)
	}
	js := joinSecret(importURL)
	js.EtcdS3 = conf
	if err := cv.EnsureJoin(ctx, testCluster, js, true); err != nil {
		t.Fatal(err)
	}
	stored, _ := sim.Secret("secret/" + VaultSecretPath(testCluster))[SecretKeyEtcdS3].(string)
	raw, _ := base64.StdEncoding.DecodeString(stored)
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil || doc["etcd-s3"] != true || doc["etcd-s3-secret-key"] != "the-s3-secret-key" ||
		doc["etcd-s3-bucket"] != "etcd-snapshots" || doc["etcd-s3-endpoint"] != "minio.example.com:9000" || doc["etcd-s3-skip-ssl-verify"] != true {
		t.Fatalf("etcd s3 configuration in vault: %v %s", err, raw)
	}
	for _, role := range []Role{RoleServer, RoleAgent} {
		creds, err := cv.NodeCredentials(ctx, testCluster)
		if err != nil {
			t.Fatal(err)
		}
		inv := Inventory{Cluster: testCluster, Role: role, Stage: StageInstall, Index: 1, Join: "prod-server-0"}
		ud, err := s.CloudInit().Render(NewNodeConfig(s, goldenSpec(t, s), NodeName("prod", role, 1), inv, creds, "10.0.0.11"))
		if err != nil {
			t.Fatal(err)
		}
		text := string(ud.Bytes())
		if strings.Contains(text, "the-s3-secret-key") || strings.Contains(text, "AKIAEXAMPLE") {
			t.Fatalf("%s: S3 credentials in the user data", role)
		}
		b, err := nodeemu.Parse(ud.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		wantSnap := role == RoleServer
		if got := strings.Contains(text, `etcd-snapshot-schedule-cron: "%s"\n' '30 2 * * *'`) &&
			strings.Contains(text, `etcd-snapshot-retention: %d\n' 9`); got != wantSnap || b.EtcdS3Config != wantSnap {
			t.Fatalf("%s: snapshot options %v, S3 from vault %v", role, got, b.EtcdS3Config)
		}
		got, err := b.Read(ctx, hc, s.VaultAddr())
		if err != nil {
			t.Fatal(err)
		}
		if wantSnap != (got.EtcdS3 == string(raw)) {
			t.Fatalf("%s read %q", role, got.EtcdS3)
		}
		creds.SecretID.Forget()
	}
	// A secret without the S3 configuration fails a server's bootstrap, as the script exits.
	if err := cv.EnsureJoin(ctx, testCluster, joinSecret(importURL), false); err != nil {
		t.Fatal(err)
	}
	creds, _ := cv.NodeCredentials(ctx, testCluster)
	inv := Inventory{Cluster: testCluster, Role: RoleServer, Stage: StageInstall, Index: 2, Join: "prod-server-0"}
	ud, _ := s.CloudInit().Render(NewNodeConfig(s, goldenSpec(t, s), "prod-server-2", inv, creds, "10.0.0.11"))
	b, _ := nodeemu.Parse(ud.Bytes())
	if _, err := b.Read(ctx, hc, s.VaultAddr()); err == nil || !strings.Contains(err.Error(), "etcd_s3_yaml_b64") {
		t.Fatalf("a server without its S3 configuration: %v", err)
	}
}
