package openstacksim

import (
	"encoding/json"
	"net/netip"
	"time"
)

type token struct {
	id, userID, projectID string
	admin                 bool
	expires               time.Time
}

type domain struct{ ID, Name string }

type project struct {
	ID, Name, DomainID, Description string
	Enabled                         bool
	Tags                            []string
	Extra                           map[string]json.RawMessage
}

type user struct {
	ID, Name, DomainID, DefaultProjectID, Password, Description string
	Enabled                                                     bool
	Extra                                                       map[string]json.RawMessage
}

type role struct{ ID, Name string }

type assignment struct{ userID, projectID, roleID string }

type network struct {
	ID, Name, ProjectID string
	External            bool
}

type subnet struct {
	ID, Name, ProjectID, NetworkID string
	CIDR                           netip.Prefix
	Gateway                        netip.Addr
	Pools                          [][2]netip.Addr
	DNS                            []string
	EnableDHCP                     bool
	next                           netip.Addr // next address handed out
}

type router struct {
	ID, Name, ProjectID string
	GatewayNet          string // external network id, "" for none
	gatewayPort         string
}

type fixedIP struct {
	SubnetID  string `json:"subnet_id"`
	IPAddress string `json:"ip_address"`
}

type port struct {
	ID, Name, ProjectID, NetworkID, DeviceID, DeviceOwner string
	FixedIPs                                              []fixedIP
	SecurityGroups                                        []string
	Description                                           string
}

type secGroup struct {
	ID, Name, Description, ProjectID string
}

type secRule struct {
	ID, GroupID, ProjectID, Direction, Ethertype, Protocol, RemoteIPPrefix, RemoteGroupID, Description string
	PortMin, PortMax                                                                                   *int
}

type floatingIP struct {
	ID, ProjectID, NetworkID, Address string
	PortID, FixedIP, Description      string // PortID "" when not associated
}

// deleting marks an object whose deletion was accepted but has not finished (see
// Server.SetAsyncDeletes); it still counts against quotas until CompleteDeletes.
type server struct {
	ID, Name, ProjectID string
	VCPUs, RAM          int
	deleting            bool
	// Booted through the API (servers added with AddServer leave these empty and are ACTIVE).
	Status, UserID, FlavorID, KeyName, UserData string
	readyAt, Created, goneAt                    time.Time // goneAt: end of a DeleteDelay
	Metadata                                    map[string]string
	Tags, SecurityGroups, Ports                 []string // Ports: port ids in network order
	NovaPorts                                   []string // ports Nova made (deleted with the server)
}

type volume struct {
	ID, Name, ProjectID string
	Size                int
	AttachedTo          string // server id, "" when available
	deleting            bool
	Type, ImageID       string
	Bootable            bool
	deleteOnTermination bool // block_device_mapping_v2 delete_on_termination
}

type snapshot struct {
	ID, Name, ProjectID, VolumeID string
	Size                          int
	deleting                      bool
}

type backup struct {
	ID, Name, ProjectID, VolumeID, ParentID string
	Size                                    int
	deleting                                bool
}

type image struct {
	ID, Name, Owner, Visibility string
	Protected                   bool
}

type serverGroup struct {
	ID, Name, ProjectID, UserID, Policy string
}

type loadBalancer struct {
	ID, Name, ProjectID string
	Listeners           int // children: delete needs cascade
	deleting            bool
}

type state struct {
	tokens      map[string]*token
	domains     map[string]*domain
	projects    map[string]*project
	users       map[string]*user
	roles       map[string]*role
	assignments map[assignment]bool

	networks   map[string]*network
	subnets    map[string]*subnet
	routers    map[string]*router
	ports      map[string]*port
	groups     map[string]*secGroup
	rules      map[string]*secRule
	floatingIP map[string]*floatingIP
	servers    map[string]*server
	volumes    map[string]*volume
	snapshots  map[string]*snapshot
	backups    map[string]*backup
	images     map[string]*image
	svGroups   map[string]*serverGroup
	lbs        map[string]*loadBalancer
	flavors    map[string]*Flavor
	keypairs   map[string]*keypair // by user id + "/" + name

	// quotas[service][project][key] overrides the service defaults.
	quotas map[string]map[string]map[string]int
}

func newState() *state {
	return &state{
		tokens: map[string]*token{}, domains: map[string]*domain{}, projects: map[string]*project{},
		users: map[string]*user{}, roles: map[string]*role{}, assignments: map[assignment]bool{},
		networks: map[string]*network{}, subnets: map[string]*subnet{}, routers: map[string]*router{},
		ports: map[string]*port{}, groups: map[string]*secGroup{}, rules: map[string]*secRule{},
		floatingIP: map[string]*floatingIP{}, servers: map[string]*server{}, volumes: map[string]*volume{},
		snapshots: map[string]*snapshot{}, backups: map[string]*backup{}, images: map[string]*image{},
		svGroups: map[string]*serverGroup{}, lbs: map[string]*loadBalancer{}, flavors: map[string]*Flavor{}, keypairs: map[string]*keypair{},
		quotas: map[string]map[string]map[string]int{"nova": {}, "cinder": {}, "neutron": {}},
	}
}

// seed creates the Default domain, roles, the admin user and project, team users and the
// external network with its subnet.
func (s *Server) seed() {
	st := s.st
	st.domains["default"] = &domain{ID: "default", Name: "Default"}
	for _, d := range s.opts.ExtraDomains {
		id := lower(d)
		st.domains[id] = &domain{ID: id, Name: d}
	}
	for _, name := range []string{"admin", "member", "reader"} {
		id := newID(false)
		st.roles[id] = &role{ID: id, Name: name}
	}
	admin := &project{ID: newID(false), Name: s.opts.AdminProject, DomainID: "default", Enabled: true}
	st.projects[admin.ID] = admin
	u := &user{ID: newID(false), Name: s.opts.AdminUser, DomainID: "default", Password: s.opts.AdminPassword, Enabled: true}
	st.users[u.ID] = u
	st.assignments[assignment{u.ID, admin.ID, st.roleByName("admin").ID}] = true
	for _, name := range s.opts.Users {
		m := &user{ID: newID(false), Name: name, DomainID: "default", Password: newID(false), Enabled: true}
		st.users[m.ID] = m
	}
	ext := &network{ID: newID(true), Name: s.opts.ExternalNetwork, ProjectID: admin.ID, External: true}
	st.networks[ext.ID] = ext
	cidr := netip.MustParsePrefix("203.0.113.0/24")
	sn := &subnet{ID: newID(true), Name: s.opts.ExternalNetwork + "-subnet", ProjectID: admin.ID, NetworkID: ext.ID,
		CIDR: cidr, Gateway: cidr.Addr().Next(),
		Pools: [][2]netip.Addr{{netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("203.0.113.250")}}}
	st.subnets[sn.ID] = sn
	s.seedFlavors()
}

func (st *state) roleByName(name string) *role {
	for _, r := range st.roles {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}
