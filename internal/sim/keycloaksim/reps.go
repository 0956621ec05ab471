package keycloaksim

// groupRep is Keycloak's GroupRepresentation. Pointers distinguish "absent" from "empty":
// subGroups is always present (an empty list unless a search populates the path), attributes
// and the role maps appear only in full representations.
type groupRep struct {
	ID            string               `json:"id"`
	Name          string               `json:"name"`
	Path          string               `json:"path"`
	ParentID      string               `json:"parentId,omitempty"`
	SubGroupCount *int                 `json:"subGroupCount,omitempty"`
	SubGroups     []*groupRep          `json:"subGroups"`
	Attributes    *map[string][]string `json:"attributes,omitempty"`
	RealmRoles    *[]string            `json:"realmRoles,omitempty"`
	ClientRoles   *map[string][]string `json:"clientRoles,omitempty"`
	Access        *groupAccess         `json:"access,omitempty"`
}

// groupAccess is computed from the caller's rights, never from the group.
type groupAccess struct {
	View             bool `json:"view"`
	ViewMembers      bool `json:"viewMembers"`
	ManageMembers    bool `json:"manageMembers"`
	Manage           bool `json:"manage"`
	ManageMembership bool `json:"manageMembership"`
}

// repOpts selects one of Keycloak's group shapes.
type repOpts struct {
	full   bool // attributes, realmRoles, clientRoles
	count  bool // subGroupCount
	access bool
}

func (c *call) groupRep(g *group, o repOpts) *groupRep {
	rep := &groupRep{ID: g.id, Name: g.name, Path: c.realm.path(g), ParentID: g.parent, SubGroups: []*groupRep{}}
	if o.count {
		n := len(g.children)
		rep.SubGroupCount = &n
	}
	if o.full {
		attrs := copyAttrs(g.attrs)
		realmRoles := []string{}
		clientRoles := map[string][]string{}
		rep.Attributes, rep.RealmRoles, rep.ClientRoles = &attrs, &realmRoles, &clientRoles
	}
	if o.access {
		manage := c.can(RoleManageUsers)
		view := manage || c.can(RoleViewUsers)
		rep.Access = &groupAccess{View: view, ViewMembers: view, ManageMembers: manage, Manage: manage, ManageMembership: manage}
	}
	return rep
}

// userRep is Keycloak's UserRepresentation (the fields this simulator models).
type userRep struct {
	ID                         string    `json:"id"`
	Username                   string    `json:"username"`
	Enabled                    bool      `json:"enabled"`
	EmailVerified              bool      `json:"emailVerified"`
	CreatedTimestamp           int64     `json:"createdTimestamp"`
	Totp                       *bool     `json:"totp,omitempty"`
	DisableableCredentialTypes []string  `json:"disableableCredentialTypes,omitempty"`
	RequiredActions            *[]string `json:"requiredActions,omitempty"`
	NotBefore                  *int      `json:"notBefore,omitempty"`
}

func userRepOf(u *user, brief bool) userRep {
	rep := userRep{ID: u.id, Username: u.username, Enabled: true, CreatedTimestamp: u.created}
	if !brief {
		f, zero, actions := false, 0, []string{}
		rep.Totp, rep.NotBefore, rep.RequiredActions = &f, &zero, &actions
	}
	return rep
}

// realmRep is the realm representation: the name list view for callers without view-realm.
type realmRep struct {
	ID          string `json:"id"`
	Realm       string `json:"realm"`
	Enabled     *bool  `json:"enabled,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
}
