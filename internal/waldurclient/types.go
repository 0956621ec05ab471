package waldurclient

import (
	"encoding/json"
	"time"
)

// Order states and types as Waldur names them.
const (
	OrderPendingProvider = "pending-provider"
	OrderExecuting       = "executing"
	OrderDone            = "done"
	OrderErred           = "erred"
	OrderRejected        = "rejected"

	OrderCreate    = "Create"
	OrderUpdate    = "Update"
	OrderTerminate = "Terminate"
	OrderRestore   = "Restore"
)

// Resource states.
const (
	ResourceCreating    = "Creating"
	ResourceOK          = "OK"
	ResourceErred       = "Erred"
	ResourceTerminating = "Terminating"
	ResourceTerminated  = "Terminated"
)

// Order is a marketplace order (the fields the agent reads of OrderDetails).
type Order struct {
	UUID         string         `json:"uuid"`
	Type         string         `json:"type"`
	State        string         `json:"state"`
	ResourceUUID string         `json:"marketplace_resource_uuid"`
	ResourceName string         `json:"resource_name"`
	BackendID    string         `json:"backend_id"`
	Limits       Quantities     `json:"limits"`
	Attributes   map[string]any `json:"attributes"`
	PlanUUID     string         `json:"plan_uuid"`
	OfferingUUID string         `json:"offering_uuid"`
	ProjectUUID  string         `json:"project_uuid"`
	ProjectSlug  string         `json:"project_slug"`
	ProjectName  string         `json:"project_name"`
	CustomerUUID string         `json:"customer_uuid"`
	CustomerSlug string         `json:"customer_slug"`
	CustomerName string         `json:"customer_name"`
	Created      time.Time      `json:"created"`
	Modified     time.Time      `json:"modified"`

	// Malformed is set when the order could not be decoded; only UUID, Type and State are then
	// known (as far as they could be read).
	Malformed string `json:"-"`
}

func (o *Order) markMalformed(raw []byte, err error) {
	var id struct {
		UUID  string `json:"uuid"`
		Type  string `json:"type"`
		State string `json:"state"`
	}
	_ = json.Unmarshal(raw, &id)
	*o = Order{UUID: id.UUID, Type: id.Type, State: id.State, Malformed: err.Error()}
}

// Resource is a provider resource.
type Resource struct {
	UUID                 string         `json:"uuid"`
	Name                 string         `json:"name"`
	Slug                 string         `json:"slug"`
	BackendID            string         `json:"backend_id"`
	State                string         `json:"state"`
	OfferingUUID         string         `json:"offering_uuid"`
	PlanUUID             string         `json:"plan_uuid"`
	ProjectUUID          string         `json:"project_uuid"`
	ProjectSlug          string         `json:"project_slug"`
	ProjectName          string         `json:"project_name"`
	CustomerUUID         string         `json:"customer_uuid"`
	CustomerSlug         string         `json:"customer_slug"`
	CustomerName         string         `json:"customer_name"`
	Limits               Quantities     `json:"limits"`
	Attributes           map[string]any `json:"attributes"`
	BackendMetadata      map[string]any `json:"backend_metadata"`
	Paused               bool           `json:"paused"`
	Downscaled           bool           `json:"downscaled"`
	RestrictMemberAccess bool           `json:"restrict_member_access"`
	LastSync             *time.Time     `json:"last_sync"`

	// Malformed is set when the resource could not be decoded (only UUID and State are known).
	Malformed string `json:"-"`
}

func (r *Resource) markMalformed(raw []byte, err error) {
	var id struct {
		UUID  string `json:"uuid"`
		State string `json:"state"`
	}
	_ = json.Unmarshal(raw, &id)
	*r = Resource{UUID: id.UUID, State: id.State, Malformed: err.Error()}
}

// TeamMember is a user with a role in the resource's project (ProjectUser).
type TeamMember struct {
	UUID                 string `json:"uuid"`
	Username             string `json:"username"`
	FullName             string `json:"full_name"`
	Email                string `json:"email"`
	Role                 string `json:"role"`
	OfferingUserUsername string `json:"offering_user_username"`
	OfferingUserState    string `json:"offering_user_state"`
}

// OfferingUser is a user's account on the offering.
type OfferingUser struct {
	UUID         string `json:"uuid"`
	URL          string `json:"url"`
	UserUUID     string `json:"user_uuid"`
	Username     string `json:"username"`
	State        string `json:"state"`
	UserUsername string `json:"user_username"`
	UserEmail    string `json:"user_email"`
	UserFullName string `json:"user_full_name"`
}

// OfferingComponent is one component of an offering as Waldur knows it.
type OfferingComponent struct {
	UUID         string  `json:"uuid,omitempty"`
	Type         string  `json:"type"`
	Name         string  `json:"name"`
	MeasuredUnit string  `json:"measured_unit"`
	BillingType  string  `json:"billing_type"`
	LimitAmount  *Number `json:"limit_amount,omitempty"`
	LimitPeriod  *string `json:"limit_period,omitempty"`
	UnitFactor   *Number `json:"unit_factor,omitempty"`
}

// Offering is the provider's view of an offering (ProviderOfferingDetails).
type Offering struct {
	UUID          string              `json:"uuid"`
	Name          string              `json:"name"`
	State         string              `json:"state"`
	CustomerUUID  string              `json:"customer_uuid"`
	CustomerName  string              `json:"customer_name"`
	BackendID     string              `json:"backend_id"`
	Components    []OfferingComponent `json:"components"`
	PluginOptions map[string]any      `json:"plugin_options"`
}

// User is the authenticated user (users/me).
type User struct {
	UUID        string       `json:"uuid"`
	Username    string       `json:"username"`
	FullName    string       `json:"full_name"`
	IsStaff     bool         `json:"is_staff"`
	Permissions []Permission `json:"permissions"`
}

// Permission is one role grant of the user.
type Permission struct {
	RoleName       string `json:"role_name"`
	ScopeType      string `json:"scope_type"`
	ScopeUUID      string `json:"scope_uuid"`
	ScopeName      string `json:"scope_name"`
	ExpirationTime string `json:"expiration_time"`
}

// ServiceProvider is the provider organisation record.
type ServiceProvider struct {
	UUID string `json:"uuid"`
}

// Plan is an offering plan; Quotas are the default limits it grants.
type Plan struct {
	UUID   string     `json:"uuid"`
	Name   string     `json:"name"`
	Quotas Quantities `json:"quotas"`
}

// ComponentUsage is the usage of one component of a resource in one billing period.
type ComponentUsage struct {
	UUID         string `json:"uuid"`
	Type         string `json:"type"`
	Usage        Number `json:"usage"`
	ResourceUUID string `json:"resource_uuid"`
}

// ComponentUserUsage is one user's share of a ComponentUsage.
type ComponentUserUsage struct {
	ComponentUsage string `json:"component_usage"` // URL of the parent ComponentUsage
	ComponentType  string `json:"component_type"`
	ResourceUUID   string `json:"resource_uuid"`
	Username       string `json:"username"`
	Usage          Number `json:"usage"`
}

// UsageItem is one line of a set_usage call.
type UsageItem struct {
	Type   string `json:"type"`
	Amount string `json:"amount"`
}

// UserUsageItem is one line of a set_user_usages call.
type UserUsageItem struct {
	Username string `json:"username"`
	Usage    string `json:"usage"`
	Date     string `json:"date,omitempty"`
	User     string `json:"user,omitempty"`
}

// Identity is the agent's registration record (AgentIdentity).
type Identity struct {
	UUID string `json:"uuid"`
	Name string `json:"name"`
}

// IdentityRequest registers or updates an agent identity.
type IdentityRequest struct {
	Offering          string       `json:"offering"`
	Name              string       `json:"name"`
	Version           string       `json:"version"`
	LastRestarted     string       `json:"last_restarted"`
	Dependencies      []Dependency `json:"dependencies"`
	ConfigFilePath    string       `json:"config_file_path"`
	ConfigFileContent string       `json:"config_file_content"`
}

// Dependency is one component version reported with the identity.
type Dependency struct {
	Package string `json:"package"`
	Version string `json:"version"`
}

// Service is a registered agent service (one per mode).
type Service struct {
	UUID string `json:"uuid"`
	Name string `json:"name"`
}
