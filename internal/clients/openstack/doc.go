// Package openstack is the OpenStack connection shared by the backends that talk to it (the
// openstack tenant backend and the rke2 backend's novainfra): the Keystone connection keys of
// backend_settings and their validation (Connection), authentication and the service clients
// from the catalog (Connect, Clients), the retrying HTTP client gophercloud runs on
// (NewHTTPClient: idempotent requests retried, creates only when they cannot have been
// processed) and the classification of gophercloud errors into internal/failure kinds
// (Classify, IsNotFound).
package openstack
