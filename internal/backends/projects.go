package backends

import "context"

// ProjectSyncer is implemented by membership backends whose unit of access is a resource's
// resource projects (Waldur's sub-projects, each with its own role grants) rather than the
// resource project's team: rancher-kc-crd writes one custom resource per resource project and
// an operator on the provider's side grants the access. The agent reads the resource projects
// and their grants from Waldur, calls SyncProjects, and reports back what it returns: each
// project's outcome, each grant's status and the backend metadata. SyncProjects is idempotent;
// it also removes what belongs to resource projects no longer listed.
type ProjectSyncer interface {
	// WantsResourceGrants reports whether SyncProjects uses the roles granted on the resource
	// itself (ProjectSync.ResourceGrants); the agent fetches them only then.
	WantsResourceGrants() bool
	SyncProjects(ctx context.Context, req ProjectSync) (ProjectReport, error)
}

// ProjectSync is one resource with its resource projects, as Waldur has them now.
type ProjectSync struct {
	Resource Resource
	Projects []ResourceProject
	// ResourceGrants are the roles granted on the resource itself; nil when not fetched.
	ResourceGrants []Grant
	// DryRun asks the backend to read and report without writing (set by the DryRun decorator).
	DryRun bool
}

// ResourceProject is a sub-project of a resource.
type ResourceProject struct {
	UUID        string // hex, no dashes
	Name        string
	Description string
	Limits      map[string]any // as Waldur holds them (component type → quota)
	Grants      []Grant
}

// Grant is one user's role in a resource or a resource project.
type Grant struct {
	Role     string // the Waldur role name
	Username string // the Waldur username
	UserUUID string // hex, no dashes
}

// ProjectPhase is where the provider is with one resource project.
type ProjectPhase int

// Project phases.
const (
	ProjectInProgress ProjectPhase = iota // not done yet, or not known yet
	ProjectReady
	ProjectFailed
)

// ProjectOutcome is the provider's state of one resource project.
type ProjectOutcome struct {
	UUID    string
	Phase   ProjectPhase
	Message string // why it failed (ProjectFailed)
}

// Grant states and scopes reported to Waldur, in its vocabulary.
const (
	GrantSynced       = "synced"
	GrantPending      = "pending"
	GrantMissingInIdP = "missing_in_idp"
	GrantError        = "error"

	ScopeResourceProject = "resource_project"
	ScopeResource        = "resource"
)

// GrantStatus is how one grant reached the provider's identity provider. The member is named
// by Username or, when the backend identifies members by UUID, by UserUUID (the other is empty).
type GrantStatus struct {
	Scope       string
	ProjectUUID string // for ScopeResourceProject
	Role        string
	State       string
	Message     string
	Username    string
	UserUUID    string
}

// ProjectReport is what SyncProjects found.
type ProjectReport struct {
	Projects []ProjectOutcome // one per requested resource project, in order
	Grants   []GrantStatus
	Metadata map[string]any // backend_metadata of the resource (nil: leave it as it is)
}
