package openstacksim

import "strings"

// table lists every operation the simulator serves. Operation names are "<service> <METHOD>
// <path as the service documents it>", e.g. "neutron POST /v2.0/routers".
func (s *Server) table() []route {
	var rs []route
	add := func(service, method, prefix, path string, query []string, h func(*call)) {
		full := strings.Trim(prefix+path, "/")
		pattern := strings.Split(full, "/")
		for i, p := range pattern {
			if strings.HasPrefix(p, "{") {
				pattern[i] = "{}"
			}
		}
		rs = append(rs, route{service: service, method: method, pattern: pattern, op: service + " " + method + " " + path,
			query: query, handle: h})
	}
	id := "/identity"
	add("keystone", "POST", id, "/v3/auth/tokens", nil, (*call).issueToken)
	add("keystone", "HEAD", id, "/v3/auth/tokens", nil, (*call).validateToken)
	add("keystone", "GET", id, "/v3/domains", []string{"name"}, (*call).listDomains)
	add("keystone", "GET", id, "/v3/projects", []string{"name", "domain_id", "tags"}, (*call).listProjects)
	add("keystone", "POST", id, "/v3/projects", nil, (*call).createProject)
	add("keystone", "GET", id, "/v3/projects/{id}", nil, (*call).getProject)
	add("keystone", "PATCH", id, "/v3/projects/{id}", nil, (*call).updateProject)
	add("keystone", "DELETE", id, "/v3/projects/{id}", nil, (*call).deleteProject)
	add("keystone", "GET", id, "/v3/users", []string{"name", "domain_id"}, (*call).listUsers)
	add("keystone", "POST", id, "/v3/users", nil, (*call).createUser)
	add("keystone", "GET", id, "/v3/users/{id}", nil, (*call).getUser)
	add("keystone", "PATCH", id, "/v3/users/{id}", nil, (*call).updateUser)
	add("keystone", "DELETE", id, "/v3/users/{id}", nil, (*call).deleteUser)
	add("keystone", "GET", id, "/v3/roles", []string{"name"}, (*call).listRoles)
	add("keystone", "GET", id, "/v3/role_assignments", []string{"scope.project.id", "role.id", "user.id", "include_names", "effective"}, (*call).listAssignments)
	add("keystone", "PUT", id, "/v3/projects/{project}/users/{user}/roles/{role}", nil, (*call).grant)
	add("keystone", "DELETE", id, "/v3/projects/{project}/users/{user}/roles/{role}", nil, (*call).revoke)

	nv := "/compute/v2.1"
	add("nova", "GET", nv, "/os-quota-sets/{project}", nil, (*call).getQuota)
	add("nova", "GET", nv, "/limits", []string{"tenant_id"}, (*call).novaLimits)
	add("nova", "PUT", nv, "/os-quota-sets/{project}", nil, (*call).putQuota)
	add("nova", "DELETE", nv, "/os-quota-sets/{project}", nil, (*call).deleteQuota)
	add("nova", "GET", nv, "/servers/detail", []string{"all_tenants", "tenant_id", "tags", "name"}, (*call).listServers)
	add("nova", "GET", nv, "/servers", []string{"all_tenants", "tenant_id", "tags", "name"}, (*call).listServersBrief)
	add("nova", "POST", nv, "/servers", nil, (*call).createServer)
	add("nova", "GET", nv, "/servers/{id}", nil, (*call).getServer)
	add("nova", "DELETE", nv, "/servers/{id}", nil, (*call).deleteServer)
	add("nova", "GET", nv, "/flavors", nil, (*call).listFlavors)
	add("nova", "GET", nv, "/flavors/detail", nil, (*call).listFlavorsDetail)
	add("nova", "GET", nv, "/flavors/{id}", nil, (*call).getFlavor)
	add("nova", "GET", nv, "/os-keypairs", nil, (*call).listKeypairs)
	add("nova", "POST", nv, "/os-keypairs", nil, (*call).createKeypair)
	add("nova", "GET", nv, "/os-keypairs/{name}", nil, (*call).getKeypair)
	add("nova", "DELETE", nv, "/os-keypairs/{name}", nil, (*call).deleteKeypair)
	add("nova", "GET", nv, "/os-server-groups", []string{"all_projects", "limit", "offset"}, (*call).listServerGroups)
	add("nova", "DELETE", nv, "/os-server-groups/{id}", nil, (*call).deleteServerGroup)

	cv := "/volume/v3/{token_project}"
	add("cinder", "GET", cv, "/os-quota-sets/{project}", []string{"usage"}, (*call).getQuota)
	add("cinder", "PUT", cv, "/os-quota-sets/{project}", nil, (*call).putQuota)
	add("cinder", "DELETE", cv, "/os-quota-sets/{project}", nil, (*call).deleteQuota)
	add("cinder", "GET", cv, "/volumes/detail", []string{"all_tenants", "project_id"}, (*call).listVolumes)
	add("cinder", "GET", cv, "/volumes/{id}", nil, (*call).getVolume)
	add("cinder", "POST", cv, "/volumes/{id}/action", nil, (*call).volumeAction)
	add("cinder", "GET", cv, "/snapshots/detail", []string{"all_tenants", "project_id"}, (*call).listSnapshots)
	add("cinder", "POST", cv, "/snapshots/{id}/action", nil, (*call).snapshotAction)
	add("cinder", "GET", cv, "/backups/detail", []string{"all_tenants", "project_id"}, (*call).listBackups)
	add("cinder", "POST", cv, "/backups/{id}/action", nil, (*call).backupAction)

	imageAndLoadBalancerRoutes(add)
	s.neutronRoutes(add)
	for i := range rs {
		rs[i].public = rs[i].op == opToken || strings.HasSuffix(rs[i].op, " GET /") // version documents
	}
	return rs
}

func (s *Server) neutronRoutes(add func(service, method, prefix, path string, query []string, h func(*call))) {
	nt := "/network"
	add("neutron", "GET", nt, "/", nil, (*call).neutronVersions)
	add("neutron", "GET", nt, "/v2.0/quotas/{project}", nil, (*call).getQuota)
	add("neutron", "GET", nt, "/v2.0/quotas/{project}/details.json", nil, (*call).getQuota)
	add("neutron", "PUT", nt, "/v2.0/quotas/{project}", nil, (*call).putQuota)
	add("neutron", "DELETE", nt, "/v2.0/quotas/{project}", nil, (*call).deleteQuota)
	add("neutron", "GET", nt, "/v2.0/networks", []string{"name", "project_id", "id"}, (*call).listNetworks)
	add("neutron", "POST", nt, "/v2.0/networks", nil, (*call).createNetwork)
	add("neutron", "GET", nt, "/v2.0/networks/{id}", nil, (*call).getNetwork)
	add("neutron", "DELETE", nt, "/v2.0/networks/{id}", nil, (*call).deleteNetwork)
	add("neutron", "GET", nt, "/v2.0/subnets", []string{"name", "network_id", "project_id", "id"}, (*call).listSubnets)
	add("neutron", "POST", nt, "/v2.0/subnets", nil, (*call).createSubnet)
	add("neutron", "DELETE", nt, "/v2.0/subnets/{id}", nil, (*call).deleteSubnet)
	add("neutron", "GET", nt, "/v2.0/routers", []string{"name", "project_id", "id"}, (*call).listRouters)
	add("neutron", "POST", nt, "/v2.0/routers", nil, (*call).createRouter)
	add("neutron", "PUT", nt, "/v2.0/routers/{id}", nil, (*call).updateRouter)
	add("neutron", "DELETE", nt, "/v2.0/routers/{id}", nil, (*call).deleteRouter)
	add("neutron", "PUT", nt, "/v2.0/routers/{id}/add_router_interface", nil, (*call).addInterface)
	add("neutron", "PUT", nt, "/v2.0/routers/{id}/remove_router_interface", nil, (*call).removeInterface)
	add("neutron", "GET", nt, "/v2.0/ports", []string{"device_id", "device_owner", "project_id", "network_id", "name", "description"}, (*call).listPorts)
	add("neutron", "POST", nt, "/v2.0/ports", nil, (*call).createPort)
	add("neutron", "DELETE", nt, "/v2.0/ports/{id}", nil, (*call).deletePort)
	add("neutron", "GET", nt, "/v2.0/security-groups", []string{"name", "project_id", "id"}, (*call).listGroups)
	add("neutron", "POST", nt, "/v2.0/security-groups", nil, (*call).createGroup)
	add("neutron", "DELETE", nt, "/v2.0/security-groups/{id}", nil, (*call).deleteGroup)
	add("neutron", "POST", nt, "/v2.0/security-group-rules", nil, (*call).createRule)
	add("neutron", "DELETE", nt, "/v2.0/security-group-rules/{id}", nil, (*call).deleteRule)
	add("neutron", "GET", nt, "/v2.0/floatingips", []string{"project_id", "floating_network_id", "port_id", "description"}, (*call).listFloatingIPs)
	add("neutron", "POST", nt, "/v2.0/floatingips", nil, (*call).createFloatingIP)
	add("neutron", "DELETE", nt, "/v2.0/floatingips/{id}", nil, (*call).deleteFloatingIP)
}

// imageAndLoadBalancerRoutes are Glance's and Octavia's (what terminate cleans up).
func imageAndLoadBalancerRoutes(add func(service, method, prefix, path string, query []string, h func(*call))) {
	add("glance", "GET", "/image", "/", nil, (*call).glanceVersions)
	add("glance", "GET", "/image", "/v2/images", []string{"owner", "visibility", "limit", "marker", "name"}, (*call).listImages)
	add("glance", "PATCH", "/image", "/v2/images/{id}", nil, (*call).patchImage)
	add("glance", "DELETE", "/image", "/v2/images/{id}", nil, (*call).deleteImage)
	lb := "/load-balancer"
	add("octavia", "GET", lb, "/", nil, (*call).octaviaVersions)
	add("octavia", "GET", lb, "/v2.0/lbaas/loadbalancers", []string{"project_id", "limit", "marker"}, (*call).listLoadBalancers)
	add("octavia", "DELETE", lb, "/v2.0/lbaas/loadbalancers/{id}", []string{"cascade"}, (*call).deleteLoadBalancer)
}
