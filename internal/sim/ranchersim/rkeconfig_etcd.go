package ranchersim

import (
	"fmt"
	"regexp"
	"strings"
)

// spec.rkeConfig.etcd and spec.rkeConfig.upgradeStrategy of a provisioning cluster, checked as
// the CRD's schema checks them, and what Rancher's planner does with etcd.s3.
//
// Shapes (rancher v2.12 pkg/apis/rke.cattle.io/v1): etcd is ETCD {disableSnapshots,
// snapshotScheduleCron, snapshotRetention, s3} with s3 an ETCDSnapshotS3 {endpoint, endpointCA,
// skipSSLVerify, bucket (at most 63 characters), region, cloudCredentialName, folder}
// (cluster_configuration_types.go, etcdsnapshot_types.go); upgradeStrategy is
// ClusterUpgradeStrategy {controlPlaneConcurrency, workerConcurrency: strings matching
// ^((([1-9]|[1-9][0-9]|100)%)|([1-9][0-9]*|0)|)$, at most 10 characters;
// controlPlaneDrainOptions, workerDrainOptions: DrainOptions}.
//
// Plan (pkg/capr/planner/s3args.go ToArgs): with S3 enabled (any of bucket, endpoint, folder,
// cloudCredentialName or region set) the planner reads the cloudCredentialName secret — a plain
// name from the cluster's namespace, "cattle-global-data:<name>" from the global one
// (pkg/controllers/capr/machineprovision/args.go GetCloudCredentialSecret) — and a missing
// secret fails the plan ("failed to lookup etcdSnapshotCloudCredentialName"), so no machine
// gets one. Its accessKey and secretKey become etcd-s3-access-key and etcd-s3-secret-key.

var (
	etcdKeys      = map[string]fieldKind{"disableSnapshots": kBool, "snapshotScheduleCron": kString, "snapshotRetention": kInt, "s3": kObject}
	etcdS3Keys    = map[string]fieldKind{"endpoint": kString, "endpointCA": kString, "skipSSLVerify": kBool, "bucket": kString, "region": kString, "cloudCredentialName": kString, "folder": kString}
	upgradeKeys   = map[string]fieldKind{"controlPlaneConcurrency": kString, "workerConcurrency": kString, "controlPlaneDrainOptions": kObject, "workerDrainOptions": kObject}
	drainOptKeys  = map[string]fieldKind{"enabled": kBool, "force": kBool, "ignoreDaemonSets": kBool, "ignoreErrors": kBool, "deleteEmptyDirData": kBool, "disableEviction": kBool, "gracePeriod": kInt, "timeout": kInt, "skipWaitForDeleteTimeoutSeconds": kInt, "preDrainHooks": kAny, "postDrainHooks": kAny}
	concurrencyRe = regexp.MustCompile(`^((([1-9]|[1-9][0-9]|100)%)|([1-9][0-9]*|0)|)$`)
)

// checkObject checks that v is an object whose fields are declared with the right kinds.
func checkObject(path string, v any, fields map[string]fieldKind) (map[string]any, string) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, path + ": must be an object"
	}
	for k, val := range m {
		kind, ok := fields[k]
		if !ok {
			return nil, path + "." + k + ": field not declared in schema"
		}
		if !kindMatches(kind, val) {
			return nil, fmt.Sprintf("%s.%s: wrong type", path, k)
		}
	}
	return m, ""
}

func kindMatches(kind fieldKind, v any) bool {
	switch kind {
	case kBool:
		_, ok := v.(bool)
		return ok
	case kString:
		_, ok := v.(string)
		return ok
	case kInt:
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case kObject:
		_, ok := v.(map[string]any)
		return ok
	}
	return true
}

// checkEtcdAndUpgrade answers "" for acceptable rkeConfig.etcd and upgradeStrategy, else the
// 422 message.
func checkEtcdAndUpgrade(rke map[string]any) string {
	if v, ok := rke["etcd"]; ok && v != nil {
		etcd, msg := checkObject("spec.rkeConfig.etcd", v, etcdKeys)
		if msg != "" {
			return msg
		}
		if s3, ok := etcd["s3"]; ok && s3 != nil {
			m, msg := checkObject("spec.rkeConfig.etcd.s3", s3, etcdS3Keys)
			if msg != "" {
				return msg
			}
			if b, _ := m["bucket"].(string); len(b) > 63 {
				return "spec.rkeConfig.etcd.s3.bucket: may not be longer than 63"
			}
		}
	}
	v, ok := rke["upgradeStrategy"]
	if !ok || v == nil {
		return ""
	}
	u, msg := checkObject("spec.rkeConfig.upgradeStrategy", v, upgradeKeys)
	if msg != "" {
		return msg
	}
	for _, k := range []string{"controlPlaneConcurrency", "workerConcurrency"} {
		if c, _ := u[k].(string); len(c) > 10 || !concurrencyRe.MatchString(c) {
			return "spec.rkeConfig.upgradeStrategy." + k + `: should match '^((([1-9]|[1-9][0-9]|100)%)|([1-9][0-9]*|0)|)$'`
		}
	}
	for _, k := range []string{"controlPlaneDrainOptions", "workerDrainOptions"} {
		if d, ok := u[k]; ok {
			if _, msg := checkObject("spec.rkeConfig.upgradeStrategy."+k, d, drainOptKeys); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// etcdS3BlockedLocked is the planner's error for a cluster whose S3 credential secret cannot be
// read ("" when none is named or it exists; s.mu held).
func (s *Server) etcdS3BlockedLocked(rke map[string]any) string {
	etcd, _ := rke["etcd"].(map[string]any)
	s3, _ := etcd["s3"].(map[string]any)
	enabled := false
	for _, k := range []string{"bucket", "endpoint", "folder", "cloudCredentialName", "region"} {
		v, _ := s3[k].(string)
		enabled = enabled || v != ""
	}
	name, _ := s3["cloudCredentialName"].(string)
	if !enabled || name == "" {
		return ""
	}
	ns, plain := fleetNS, name
	if global, n, ok := strings.Cut(name, ":"); ok && global == "cattle-global-data" && n != "" {
		ns, plain = global, n
	}
	if ns != fleetNS || s.secrets[plain] == nil {
		return fmt.Sprintf(`failed to lookup etcdSnapshotCloudCredentialName: secrets %q not found`, plain)
	}
	return ""
}

// EtcdS3Credential is what the planner would read from a cluster's S3 credential secret (test
// inspection): the access key and the secret key, "" when absent.
func (s *Server) EtcdS3Credential(name string) (accessKey, secretKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := s.secrets[name]
	if sec == nil {
		return "", ""
	}
	return string(sec.data["accessKey"]), string(sec.data["secretKey"])
}
