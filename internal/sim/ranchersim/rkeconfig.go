package ranchersim

import (
	"fmt"
	"sort"
)

// The parts of a provisioning cluster's spec.rkeConfig the simulator checks, and what Rancher's
// planner does with them once machines register.
//
// Shape (rancher v2.12 pkg/apis/rke.cattle.io/v1/cluster_configuration_types.go): registries is
// {mirrors: {<host>: {endpoint: [..], rewrite: {..}}}, configs: {<host>: {authConfigSecretName,
// tlsSecretName, caBundle, insecureSkipVerify}}}; machineGlobalConfig is a map of RKE2
// configuration keys (cni, cluster-cidr, service-cidr, system-default-registry, …), copied into
// every machine's config and filtered per role by the release's arguments (pkg/capr/planner
// config.go addUserConfig, filter.go). A field outside these is refused here; the real API
// server prunes it silently, which would hide a typo.
//
// Plan (pkg/capr/planner/registry.go renderRegistries): for each registries.configs entry the
// planner reads authConfigSecretName and tlsSecretName from the cluster's namespace; a missing
// secret, or one of another type (auth: rke.cattle.io/auth-config or kubernetes.io/basic-auth;
// TLS: kubernetes.io/tls), fails the plan, so no machine gets one: its node stays
// "registering" and the cluster never becomes ready (planBlockedLocked).

var (
	rkeConfigKeys = map[string]bool{"machineGlobalConfig": true, "dataDirectories": true, "registries": true, "machinePools": true,
		"machineSelectorConfig": true, "machineSelectorFiles": true, "etcd": true, "chartValues": true, "upgradeStrategy": true,
		"additionalManifest": true, "networking": true, "provisionGeneration": true, "machinePoolDefaults": true}
	mirrorKeys         = map[string]bool{"endpoint": true, "rewrite": true}
	registryConfigKeys = map[string]bool{"authConfigSecretName": true, "tlsSecretName": true, "caBundle": true, "insecureSkipVerify": true}
)

// checkRKEConfig answers "" for an acceptable spec.rkeConfig, else the 422 message.
func checkRKEConfig(spec map[string]any) string {
	raw, present := spec["rkeConfig"]
	if !present || raw == nil {
		return ""
	}
	rke, ok := raw.(map[string]any)
	if !ok {
		return "spec.rkeConfig: must be an object"
	}
	for k := range rke {
		if !rkeConfigKeys[k] {
			return "spec.rkeConfig." + k + ": field not declared in schema"
		}
	}
	if g, ok := rke["machineGlobalConfig"]; ok {
		if _, isMap := g.(map[string]any); !isMap {
			return "spec.rkeConfig.machineGlobalConfig: must be an object"
		}
	}
	reg, ok := rke["registries"]
	if !ok {
		return ""
	}
	regs, ok := reg.(map[string]any)
	if !ok {
		return "spec.rkeConfig.registries: must be an object"
	}
	for k := range regs {
		if k != "mirrors" && k != "configs" {
			return "spec.rkeConfig.registries." + k + ": field not declared in schema"
		}
	}
	if msg := checkEntries(regs["mirrors"], "mirrors", mirrorKeys); msg != "" {
		return msg
	}
	return checkEntries(regs["configs"], "configs", registryConfigKeys)
}

// checkEntries checks registries.<what>: a map of hosts to objects with the given fields.
func checkEntries(v any, what string, fields map[string]bool) string {
	if v == nil {
		return ""
	}
	m, ok := v.(map[string]any)
	if !ok {
		return "spec.rkeConfig.registries." + what + ": must be an object"
	}
	for host, e := range m {
		entry, ok := e.(map[string]any)
		if !ok {
			return fmt.Sprintf("spec.rkeConfig.registries.%s[%s]: must be an object", what, host)
		}
		for k, val := range entry {
			if !fields[k] {
				return fmt.Sprintf("spec.rkeConfig.registries.%s[%s].%s: field not declared in schema", what, host, k)
			}
			if _, isStr := val.(string); (k == "authConfigSecretName" || k == "tlsSecretName") && !isStr {
				return fmt.Sprintf("spec.rkeConfig.registries.%s[%s].%s: must be a string", what, host, k)
			}
		}
	}
	return ""
}

// planBlockedLocked is the planner's error for the cluster's machines ("" when a plan renders):
// a registry secret that is missing or of the wrong type (s.mu held).
func (s *Server) planBlockedLocked(managedID string) string {
	pc := s.provOfLocked(managedID)
	if pc == nil {
		return ""
	}
	rke, _ := pc.spec["rkeConfig"].(map[string]any)
	regs, _ := rke["registries"].(map[string]any)
	configs, _ := regs["configs"].(map[string]any)
	hosts := make([]string, 0, len(configs))
	for h := range configs {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		entry, _ := configs[h].(map[string]any)
		if name, _ := entry["authConfigSecretName"].(string); name != "" {
			if msg := s.secretOfTypeLocked(name, "rke.cattle.io/auth-config", secretBasicAuth); msg != "" {
				return msg
			}
		}
		if name, _ := entry["tlsSecretName"].(string); name != "" {
			if msg := s.secretOfTypeLocked(name, "kubernetes.io/tls"); msg != "" {
				return msg
			}
		}
	}
	return ""
}

func (s *Server) secretOfTypeLocked(name string, types ...string) string {
	sec := s.secrets[name]
	if sec == nil {
		return `secret "` + name + `" not found`
	}
	for _, t := range types {
		if sec.typ == t {
			return ""
		}
	}
	if len(types) == 1 {
		return fmt.Sprintf("secret [%s] must be of type [%s]", name, types[0])
	}
	return fmt.Sprintf("secret [%s] must be of type [%s] or [%s]", name, types[0], types[1])
}
