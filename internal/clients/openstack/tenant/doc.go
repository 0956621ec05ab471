// Package tenant is the OpenStack project ("tenant") code shared by the backends that own
// projects: the openstack backend (one resource = one project) and the rke2 backend's
// novainfra with backend_settings.openstack.tenant: per_cluster (one cluster = one project).
//
// It finds or creates a project by name so that a repeated call after a crash finds the one
// made before (EnsureProject), looks up domains and roles by name, grants a user a role on a
// project, reads and writes Nova, Cinder and Neutron quotas generically by key (quota.go),
// and finds and deletes what a project's users made besides what the agent made
// ("leftovers": load balancers, servers, server groups, images, snapshots, backups, volumes;
// leftovers.go, clear.go). It imports only gophercloud and the shared client package: the
// backends import it, never the other way round.
package tenant
