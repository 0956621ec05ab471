// Package openstack is the `openstack` backend: one Waldur resource is one OpenStack tenant
// (a Keystone project) with Nova, Cinder and Neutron quotas taken from the resource's limits,
// default security groups, an internal network, subnet and router to the external network, an
// optional tenant user whose password goes to the secret store, and Keystone role assignments
// for the Waldur team. It reports quota usage as component usage.
//
// It talks to OpenStack through gophercloud over a retrying HTTP transport. Every step finds
// its object by name inside the project before creating it, so a pass interrupted anywhere is
// finished by the next one without duplicates. The project carries tags that mark the Waldur
// resource owning it and its paused/downscaled state.
//
// It must never see Waldur types, log or return generated passwords, or delete a project that
// is not tagged for the resource being terminated. The strict simulator used by its hermetic
// tests lives in openstacksim; tests against real services use internal/testenv/osenv.
package openstack
