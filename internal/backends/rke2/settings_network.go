package rke2

import (
	"fmt"
	"net/netip"
)

// Network are the Kubernetes address ranges of every cluster (backend_settings cluster_cidr and
// service_cidr), passed to RKE2 in both bootstrap modes: with bootstrap rancher as the
// provisioning cluster's machineGlobalConfig cluster-cidr and service-cidr, with bootstrap rke2
// as those keys of each server's /etc/rancher/rke2/config.yaml. The defaults are RKE2's own.
// They must not overlap each other nor openstack.subnet_cidr, the nodes' network: a pod or
// service address equal to a node's would be routed into the cluster instead of to the node.
type Network struct {
	// ClusterCIDR is the pod network; RKE2 gives every node a /24 of it.
	ClusterCIDR string `mapstructure:"cluster_cidr"`
	// ServiceCIDR is the service network; its first address is the API server's service and
	// its tenth the cluster DNS.
	ServiceCIDR string `mapstructure:"service_cidr"`
}

// RKE2's defaults (docs.rke2.io, server configuration: cluster-cidr, service-cidr).
const (
	DefaultClusterCIDR = "10.42.0.0/16"
	DefaultServiceCIDR = "10.43.0.0/16"
)

// Annotations of the provisioning cluster recording the networks it was made with.
const (
	AnnotationClusterCIDR = labelPrefix + "cluster-cidr"
	AnnotationServiceCIDR = labelPrefix + "service-cidr"
)

func (n *Network) applyDefaults() {
	if n.ClusterCIDR == "" {
		n.ClusterCIDR = DefaultClusterCIDR
	}
	if n.ServiceCIDR == "" {
		n.ServiceCIDR = DefaultServiceCIDR
	}
}

// validate checks each range and that no two of the pod, service and node networks overlap.
func (n *Network) validate(subnetCIDR string) error {
	cluster, err := ipv4Network("backend_settings.cluster_cidr", n.ClusterCIDR, DefaultClusterCIDR, 8, 24,
		"RKE2 gives every node a /24 of it")
	if err != nil {
		return err
	}
	service, err := ipv4Network("backend_settings.service_cidr", n.ServiceCIDR, DefaultServiceCIDR, 12, 28,
		"Kubernetes takes at most a /12 and the cluster DNS is its tenth address")
	if err != nil {
		return err
	}
	nodes, err := netip.ParsePrefix(subnetCIDR)
	if err != nil {
		return nil // openstack.subnet_cidr reports its own error
	}
	ranges := []struct {
		key string
		p   netip.Prefix
	}{{"cluster_cidr", cluster}, {"service_cidr", service}, {"openstack.subnet_cidr", nodes}}
	for i := range ranges {
		for j := i + 1; j < len(ranges); j++ {
			a, b := ranges[i], ranges[j]
			if a.p.Overlaps(b.p) {
				return fmt.Errorf("backend_settings.%s: %s overlaps backend_settings.%s (%s); the pod, service and node "+
					"networks must not share addresses", a.key, a.p, b.key, b.p)
			}
		}
	}
	return nil
}

// ipv4Network parses a masked IPv4 network whose prefix length is between longest and shortest.
func ipv4Network(key, v, example string, shortest, longest int, why string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(v)
	if err != nil || !p.Addr().Is4() || p.Masked() != p {
		return p, fmt.Errorf("%s: want an IPv4 network such as %s, got %q", key, example, v)
	}
	if p.Bits() < shortest || p.Bits() > longest {
		return p, fmt.Errorf("%s: want a prefix between /%d and /%d (%s), got %s", key, shortest, longest, why, v)
	}
	return p, nil
}
