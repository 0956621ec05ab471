// Package osenv is test support for tests that talk to a real OpenStack
// (Keystone, Nova API, Neutron, Cinder API, Placement) started on loopback by
// scripts/openstack/up.sh.
//
// up.sh writes shell "export" lines to ${SITE_AGENT_OS_STATE}/env
// (default /var/tmp/site-agent-openstack/env); Load reads that file and skips
// the calling test when it is absent, unless SITE_AGENT_REQUIRE_REAL=1 asks
// for a hard failure (CI). LoadCompute also requires the compute part
// (up.sh --compute: real Nova servers with fake drivers). Admin holds admin
// clients for checking what code under test made (servers with their user
// data, objects mentioning a key, volumes) and cleaning up after a failed
// test. The package never starts or stops services and must not be imported
// by product code.
package osenv
