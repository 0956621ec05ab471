package novainfra

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"go.uber.org/zap"

	osc "github.com/waldur/site-agent/internal/clients/openstack"
)

// rule is one ingress rule of the cluster's group: from a network (remote, a CIDR) or, with
// fromGroup, from the group's own members.
type rule struct {
	proto     string
	min, max  int
	remote    string
	fromGroup bool
}

func (r rule) String() string {
	from := r.remote
	if r.fromGroup {
		from = "the cluster's nodes"
	}
	if r.proto == "" {
		return "any protocol from " + from
	}
	if r.min == 0 {
		return r.proto + " from " + from
	}
	return fmt.Sprintf("%s %d from %s", r.proto, r.min, from)
}

func (r rule) etherType() rules.RuleEtherType {
	if p, err := netip.ParsePrefix(r.remote); err == nil && p.Addr().Is6() {
		return rules.EtherType6
	}
	return rules.EtherType4
}

// ownedPorts are the TCP ports whose network-sourced rules the settings own: SSH and the
// Kubernetes API (ssh_allowed_cidrs, api_allowed_cidrs), and the supervisor and kubelet, which
// only the cluster's nodes may reach. A rule on them from a network the settings do not list
// is deleted, so a setting change takes effect on existing clusters.
var ownedPorts = [...]int{22, 6443, 9345, 10250}

// clusterRules are the group's rules: web (80/443) and ICMP from anywhere, the Kubernetes API
// from api_allowed_cidrs, SSH from ssh_allowed_cidrs, and the supervisor (9345), kubelet
// (10250) and everything else between the cluster's nodes.
func (in *Infra) clusterRules() []rule {
	o := in.settings.OpenStack
	rs := []rule{
		{proto: "tcp", min: 80, max: 80, remote: "0.0.0.0/0"},
		{proto: "tcp", min: 443, max: 443, remote: "0.0.0.0/0"},
		{proto: "icmp", remote: "0.0.0.0/0"},
		{proto: "tcp", min: 9345, max: 9345, fromGroup: true},
		{proto: "tcp", min: 10250, max: 10250, fromGroup: true},
		{proto: "", fromGroup: true},
	}
	for _, c := range o.APIAllowedCIDRs {
		rs = append(rs, rule{proto: "tcp", min: 6443, max: 6443, remote: c})
	}
	for _, c := range o.SSHAllowedCIDRs {
		rs = append(rs, rule{proto: "tcp", min: 22, max: 22, remote: c})
	}
	return rs
}

// findGroups lists the tenant's security groups of a name.
func findGroups(ctx context.Context, cl *conn, name string) ([]groups.SecGroup, error) {
	page, err := groups.List(cl.Network, groups.ListOpts{Name: name, ProjectID: cl.ProjectID}).AllPages(ctx)
	if err != nil {
		return nil, osc.NeutronErr("find security group "+name, err)
	}
	return groups.ExtractGroups(page)
}

// ensureGroup finds or makes the cluster's group and brings its rules in step with the
// settings: missing rules are made (addRules), rules on the owned ports from networks the
// settings no longer list are deleted. A group in step costs the one list.
func (in *Infra) ensureGroup(ctx context.Context, cl *conn, name string) (string, error) {
	found, err := findGroups(ctx, cl, name)
	if err != nil {
		return "", err
	}
	var g groups.SecGroup
	if len(found) > 0 {
		g = found[0]
	} else {
		made, err := groups.Create(ctx, cl.Network, groups.CreateOpts{Name: name, ProjectID: cl.ProjectID,
			Description: "site-agent rke2 cluster nodes"}).Extract()
		if err != nil {
			return "", osc.NeutronErr("create security group "+name, err)
		}
		g = *made
	}
	want := in.clusterRules()
	for _, h := range g.Rules {
		if stale(g, h, want) {
			err := rules.Delete(ctx, cl.Network, h.ID).ExtractErr()
			if err != nil && !osc.IsNotFound(err) {
				return "", osc.NeutronErr(fmt.Sprintf("delete rule %s %d from %s in %s", h.Protocol, h.PortRangeMin, h.RemoteIPPrefix, name), err)
			}
			in.log.Info("security group rule removed", zap.String("group", name), zap.String("protocol", h.Protocol),
				zap.Int("port", h.PortRangeMin), zap.String("from", h.RemoteIPPrefix))
		}
	}
	return g.ID, in.addRules(ctx, cl, g, name, want)
}

// addRules makes the wanted rules the group lacks: in one bulk request (Neutron makes all or
// none), and when that meets a rule made meanwhile (409), one at a time.
func (in *Infra) addRules(ctx context.Context, cl *conn, g groups.SecGroup, name string, want []rule) error {
	var missing []rule
	var opts []rules.CreateOpts
	for _, r := range want {
		if hasRule(g, r) {
			continue
		}
		o := rules.CreateOpts{Direction: rules.DirIngress, EtherType: r.etherType(), SecGroupID: g.ID,
			Protocol: rules.RuleProtocol(r.proto), PortRangeMin: r.min, PortRangeMax: r.max, ProjectID: cl.ProjectID}
		if r.fromGroup {
			o.RemoteGroupID = g.ID
		} else {
			o.RemoteIPPrefix = r.remote
		}
		missing, opts = append(missing, r), append(opts, o)
	}
	if len(opts) > 1 {
		_, err := rules.CreateBulk(ctx, cl.Network, opts).Extract()
		if err == nil || !gophercloud.ResponseCodeIs(err, 409) {
			if err != nil {
				return osc.NeutronErr(fmt.Sprintf("create %d rules in %s", len(opts), name), err)
			}
			return nil
		}
	}
	for i, o := range opts {
		_, err := rules.Create(ctx, cl.Network, o).Extract()
		if err != nil && !gophercloud.ResponseCodeIs(err, 409) { // 409: made meanwhile
			return osc.NeutronErr(fmt.Sprintf("create rule %s in %s", missing[i], name), err)
		}
	}
	return nil
}

// matches: the existing rule h is r.
func matches(g groups.SecGroup, h rules.SecGroupRule, r rule) bool {
	if h.Direction != "ingress" || h.EtherType != string(r.etherType()) || h.Protocol != r.proto || h.PortRangeMin != r.min || h.PortRangeMax != r.max {
		return false
	}
	if r.fromGroup {
		return h.RemoteGroupID == g.ID
	}
	return h.RemoteGroupID == "" && remoteOf(h) == r.remote
}

// remoteOf is the rule's source network; none means any address of its ether type.
func remoteOf(h rules.SecGroupRule) string {
	switch {
	case h.RemoteIPPrefix != "":
		return h.RemoteIPPrefix
	case h.EtherType == "IPv6":
		return "::/0"
	}
	return "0.0.0.0/0"
}

func hasRule(g groups.SecGroup, r rule) bool {
	for _, h := range g.Rules {
		if matches(g, h, r) {
			return true
		}
	}
	return false
}

// stale: h is a network-sourced ingress rule on one of the owned TCP ports that the settings
// do not ask for.
func stale(g groups.SecGroup, h rules.SecGroupRule, want []rule) bool {
	if h.Direction != "ingress" || h.Protocol != "tcp" || h.RemoteGroupID != "" || h.PortRangeMin != h.PortRangeMax || !slices.Contains(ownedPorts[:], h.PortRangeMin) {
		return false
	}
	for _, r := range want {
		if matches(g, h, r) {
			return false
		}
	}
	return true
}
