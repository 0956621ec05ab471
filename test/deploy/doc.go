// Package deploy tests the ways the agent is deployed, for real, in the real-server tier:
// the OCI image (built by scripts/container/build.sh, named by SITE_AGENT_IMAGE) run read-only
// and non-root with podman against the Waldur simulator, and the Helm chart (charts/site-agent,
// helm from SITE_AGENT_HELM) linted, rendered and applied with a server-side dry run to a real
// kube-apiserver. Outside tier 2 the tests skip; with SITE_AGENT_REQUIRE_REAL=1 a missing tool
// fails them.
package deploy
