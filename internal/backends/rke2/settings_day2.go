package rke2

import (
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/waldur/site-agent/internal/secret"
)

// DayTwo are the settings of a cluster's life after it is made (docs/rke2.md: health,
// upgrades, snapshots): when a NotReady node is replaced, how many agents an upgrade rolls at
// once, and the etcd snapshots RKE2 takes.
type DayTwo struct {
	// NodeRepairAfter: a node NotReady for less than this is only reported; past it, and
	// while the cluster keeps etcd quorum, it is replaced like a VM in ERROR.
	NodeRepairAfter time.Duration `mapstructure:"node_repair_after"`
	// UpgradeAgentBatch is how many agents a Kubernetes upgrade drains and upgrades at once
	// (servers always go one at a time).
	UpgradeAgentBatch int `mapstructure:"upgrade_agent_batch"`
	// EtcdSnapshotScheduleCron and EtcdSnapshotRetention: RKE2's etcd-snapshot-schedule-cron
	// and etcd-snapshot-retention (RKE2's defaults: every 12 hours, 5 kept).
	EtcdSnapshotScheduleCron string `mapstructure:"etcd_snapshot_schedule_cron"`
	EtcdSnapshotRetention    int    `mapstructure:"etcd_snapshot_retention"`
	// EtcdS3, when set, has every snapshot uploaded to S3 too.
	EtcdS3 *EtcdS3 `mapstructure:"etcd_s3"`
}

// EtcdS3 is where RKE2 uploads etcd snapshots (its etcd-s3-* options).
type EtcdS3 struct {
	Endpoint      string        `mapstructure:"endpoint"` // host[:port], no scheme; RKE2's default s3.amazonaws.com
	Bucket        string        `mapstructure:"bucket"`
	Folder        string        `mapstructure:"folder"`
	Region        string        `mapstructure:"region"`
	AccessKey     string        `mapstructure:"access_key"`
	SecretKey     secret.Secret `mapstructure:"secret_key"`
	SkipSSLVerify bool          `mapstructure:"skip_ssl_verify"`
}

// Defaults (RKE2's own for the snapshots: docs.rke2.io, etcd snapshots).
const (
	DefaultNodeRepairAfter          = 10 * time.Minute
	DefaultUpgradeAgentBatch        = 1
	DefaultEtcdSnapshotScheduleCron = "0 */12 * * *"
	DefaultEtcdSnapshotRetention    = 5
	maxUpgradeAgentBatch            = 100
)

var (
	cronFieldRe = &lazyRegexp{pattern: `^[0-9A-Za-z*/,?LW#-]+$`}
	s3BucketRe  = &lazyRegexp{pattern: `^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`}
	s3FolderRe  = &lazyRegexp{pattern: `^[A-Za-z0-9!_.*'()/-]*$`}
	s3RegionRe  = &lazyRegexp{pattern: `^[a-z0-9-]*$`}
	s3KeyRe     = &lazyRegexp{pattern: `^[\x21-\x7e]*$`} // printable ASCII, no space
)

func (d *DayTwo) applyDefaults() {
	if d.NodeRepairAfter == 0 {
		d.NodeRepairAfter = DefaultNodeRepairAfter
	}
	if d.UpgradeAgentBatch == 0 {
		d.UpgradeAgentBatch = DefaultUpgradeAgentBatch
	}
	if d.EtcdSnapshotScheduleCron == "" {
		d.EtcdSnapshotScheduleCron = DefaultEtcdSnapshotScheduleCron
	}
	if d.EtcdSnapshotRetention == 0 {
		d.EtcdSnapshotRetention = DefaultEtcdSnapshotRetention
	}
}

func (d *DayTwo) validate() error {
	if d.NodeRepairAfter < 5*time.Second || d.NodeRepairAfter > 24*time.Hour {
		return fmt.Errorf("backend_settings.node_repair_after: want a duration between 5s and 24h, got %s", d.NodeRepairAfter)
	}
	if d.UpgradeAgentBatch < 1 || d.UpgradeAgentBatch > maxUpgradeAgentBatch {
		return fmt.Errorf("backend_settings.upgrade_agent_batch: must be between 1 and %d, got %d", maxUpgradeAgentBatch, d.UpgradeAgentBatch)
	}
	if f := strings.Fields(d.EtcdSnapshotScheduleCron); len(f) != 5 || !allMatch(cronFieldRe.get(), f) {
		return fmt.Errorf("backend_settings.etcd_snapshot_schedule_cron: want a cron expression of five fields such as %q, got %q",
			DefaultEtcdSnapshotScheduleCron, d.EtcdSnapshotScheduleCron)
	}
	if d.EtcdSnapshotRetention < 1 || d.EtcdSnapshotRetention > 1000 {
		return fmt.Errorf("backend_settings.etcd_snapshot_retention: must be between 1 and 1000, got %d", d.EtcdSnapshotRetention)
	}
	if d.EtcdS3 != nil {
		return d.EtcdS3.validate()
	}
	return nil
}

func (s *EtcdS3) validate() error {
	key := func(k string) string { return "backend_settings.etcd_s3." + k }
	if s.Endpoint != "" {
		if strings.Contains(s.Endpoint, "://") || strings.ContainsAny(s.Endpoint, "/ ") {
			return fmt.Errorf("%s: want host[:port] without a scheme or path (RKE2's etcd-s3-endpoint), got %q", key("endpoint"), s.Endpoint)
		}
		if _, _, err := net.SplitHostPort(s.Endpoint); err != nil && strings.Contains(s.Endpoint, ":") {
			return fmt.Errorf("%s: want host[:port], got %q", key("endpoint"), s.Endpoint)
		}
	}
	switch {
	case !s3BucketRe.get().MatchString(s.Bucket):
		return fmt.Errorf("%s: is required: an S3 bucket name (3-63 lower-case letters, digits, '.' and '-'), got %q", key("bucket"), s.Bucket)
	case !s3FolderRe.get().MatchString(s.Folder):
		return fmt.Errorf("%s: want a key prefix of letters, digits and !_.*'()/-, got %q", key("folder"), s.Folder)
	case !s3RegionRe.get().MatchString(s.Region):
		return fmt.Errorf("%s: want a region such as us-east-1, got %q", key("region"), s.Region)
	case (s.AccessKey == "") != s.SecretKey.IsZero():
		return fmt.Errorf("%s: access_key and secret_key go together (neither: the nodes' own IAM role)", key("access_key"))
	case !s3KeyRe.get().MatchString(s.AccessKey):
		return fmt.Errorf("%s: must be printable ASCII without spaces", key("access_key"))
	case !s3KeyRe.get().MatchString(s.SecretKey.Reveal()):
		return fmt.Errorf("%s: must be printable ASCII without spaces", key("secret_key"))
	}
	return nil
}

func allMatch(re *regexp.Regexp, l []string) bool {
	for _, s := range l {
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}
