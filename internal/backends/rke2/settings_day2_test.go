package rke2

import (
	"strings"
	"testing"
	"time"
)

func TestDayTwoSettingsDefaults(t *testing.T) {
	s, _, err := DecodeSettings(baseSettings())
	if err != nil {
		t.Fatal(err)
	}
	d := s.DayTwo
	if d.NodeRepairAfter != 10*time.Minute || d.UpgradeAgentBatch != 1 || d.EtcdSnapshotScheduleCron != "0 */12 * * *" ||
		d.EtcdSnapshotRetention != 5 || d.EtcdS3 != nil {
		t.Fatalf("defaults %+v", d)
	}
	s, warnings, err := DecodeSettings(with(baseSettings(), "node_repair_after", "90s", "upgrade_agent_batch", 3,
		"etcd_snapshot_schedule_cron", "15 3 * * 1-5", "etcd_snapshot_retention", 14,
		"etcd_s3", map[string]any{"endpoint": "minio.example.com:9000", "bucket": "etcd-snapshots", "folder": "site/a",
			"region": "eu-west-1", "access_key": "AKIAEXAMPLE", "secret_key": "s3-secret/key+1", "skip_ssl_verify": true}))
	if err != nil || len(warnings) > 0 {
		t.Fatalf("%v %v", err, warnings)
	}
	if s.NodeRepairAfter != 90*time.Second || s.UpgradeAgentBatch != 3 || s.EtcdSnapshotRetention != 14 ||
		s.EtcdS3 == nil || s.EtcdS3.Bucket != "etcd-snapshots" || s.EtcdS3.SecretKey.Reveal() != "s3-secret/key+1" || !s.EtcdS3.SkipSSLVerify {
		t.Fatalf("decoded %+v %+v", s.DayTwo, s.EtcdS3)
	}
}

// Every bad day-two setting is refused naming its key, and the S3 secret key never shows.
func TestDayTwoSettingsRefused(t *testing.T) {
	s3 := func(kv ...any) map[string]any {
		m := map[string]any{"bucket": "etcd-snapshots", "access_key": "AKIA", "secret_key": "hidden-secret-value"}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	cases := []struct {
		kv   []any
		want string
	}{
		{[]any{"node_repair_after", "1s"}, "backend_settings.node_repair_after"},
		{[]any{"node_repair_after", "48h"}, "backend_settings.node_repair_after"},
		{[]any{"upgrade_agent_batch", -1}, "backend_settings.upgrade_agent_batch"},
		{[]any{"upgrade_agent_batch", 101}, "backend_settings.upgrade_agent_batch"},
		{[]any{"etcd_snapshot_schedule_cron", "every day"}, "backend_settings.etcd_snapshot_schedule_cron"},
		{[]any{"etcd_snapshot_schedule_cron", "0 */12 * *"}, "backend_settings.etcd_snapshot_schedule_cron"},
		{[]any{"etcd_snapshot_schedule_cron", "0 0 * * * ; rm"}, "backend_settings.etcd_snapshot_schedule_cron"},
		{[]any{"etcd_snapshot_retention", -3}, "backend_settings.etcd_snapshot_retention"},
		{[]any{"etcd_s3", s3("bucket", nil)}, "backend_settings.etcd_s3.bucket"},
		{[]any{"etcd_s3", s3("bucket", "Bad_Bucket")}, "backend_settings.etcd_s3.bucket"},
		{[]any{"etcd_s3", s3("endpoint", "https://s3.example.com")}, "backend_settings.etcd_s3.endpoint"},
		{[]any{"etcd_s3", s3("folder", "a b")}, "backend_settings.etcd_s3.folder"},
		{[]any{"etcd_s3", s3("region", "EU West")}, "backend_settings.etcd_s3.region"},
		{[]any{"etcd_s3", s3("secret_key", nil)}, "backend_settings.etcd_s3.access_key"},
		{[]any{"etcd_s3", s3("access_key", nil)}, "backend_settings.etcd_s3.access_key"},
		{[]any{"etcd_s3", s3("secret_key", "has space hidden")}, "backend_settings.etcd_s3.secret_key"},
		{[]any{"etcd_s3", s3("unknown", 1)}, ""}, // a warning, not an error
	}
	for _, c := range cases {
		_, warnings, err := DecodeSettings(with(baseSettings(), c.kv...))
		if c.want == "" {
			if err != nil || len(warnings) != 1 || warnings[0] != "backend_settings.etcd_s3.unknown" {
				t.Errorf("%v: %v %v", c.kv, err, warnings)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want an error naming %s", c.kv, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "hidden") {
			t.Errorf("%v: the secret key leaked: %v", c.kv, err)
		}
	}
}
