package waldursim

import "time"

// Order types and states (Waldur spec §9).
const (
	OrderCreate    = "Create"
	OrderUpdate    = "Update"
	OrderTerminate = "Terminate"
	OrderRestore   = "Restore"

	OrderPendingConsumer = "pending-consumer"
	OrderPendingProvider = "pending-provider"
	OrderPendingProject  = "pending-project"
	OrderPendingStart    = "pending-start-date"
	OrderExecuting       = "executing"
	OrderDone            = "done"
	OrderErred           = "erred"
	OrderCanceled        = "canceled"
	OrderRejected        = "rejected"
)

// Resource states.
const (
	ResourceCreating    = "Creating"
	ResourceOK          = "OK"
	ResourceErred       = "Erred"
	ResourceUpdating    = "Updating"
	ResourceTerminating = "Terminating"
	ResourceTerminated  = "Terminated"
)

// Offering-user states.
const (
	OURequested                   = "Requested"
	OUCreating                    = "Creating"
	OUPendingAccountLinking       = "Pending account linking"
	OUPendingAdditionalValidation = "Pending additional validation"
	OUOK                          = "OK"
	OURequestedDeletion           = "Requested deletion"
	OUDeleting                    = "Deleting"
	OUDeleted                     = "Deleted"
	OUErrorCreating               = "Error creating"
	OUErrorDeleting               = "Error deleting"
)

// Customer is an organization; service providers and projects belong to one.
type Customer struct {
	UUID, Name, Slug string
}

// Project belongs to a customer; its members form a resource's team.
type Project struct {
	UUID, Name, Slug, Description, CustomerUUID string
	EndDate                                     string // YYYY-MM-DD or empty
}

// User is a Waldur user.
type User struct {
	UUID, Username, FullName, Email string
}

// Permission is one role of the current user, as listed by users/me.
type Permission struct {
	RoleName, ScopeType, ScopeUUID, ScopeName string
}

// Component is an offering component (accounting unit).
type Component struct {
	UUID, Type, Name, MeasuredUnit, BillingType string
	LimitAmount                                 *float64
	UnitFactor                                  float64 // 0 renders as 1
	LimitPeriod                                 string
	Description                                 string
	IsPrepaid                                   bool
}

// Plan is an offering plan; Quotas maps component type to amount.
type Plan struct {
	UUID, Name string
	Quotas     map[string]float64
}

// Offering is a provider offering. CustomerUUID is the service provider's customer.
type Offering struct {
	UUID, Name, Slug, CustomerUUID, Type, BackendID string
	Components                                      []Component
	PluginOptions                                   map[string]any
	Plans                                           []Plan
	Partitions                                      []string
	// ExposedFields of the user-attribute config; nil means Waldur's default
	// (username, full_name, email) with is_default true.
	ExposedFields []string
}

// ServiceProvider is the provider registration of a customer.
type ServiceProvider struct {
	UUID, CustomerUUID string
}

// SSHKey is a public key of a user.
type SSHKey struct {
	UUID, Name, PublicKey, UserUUID string
}

// OfferingUser links a user to an offering with an offering-specific username.
type OfferingUser struct {
	UUID, OfferingUUID, UserUUID, Username string
	State                                  string // default OK
	IsRestricted                           bool
	Comment, CommentURL                    string
	Created, Modified                      time.Time
}

// Resource is a marketplace resource.
type Resource struct {
	UUID, Name, Slug, OfferingUUID, ProjectUUID, PlanUUID string
	State                                                 string // default OK
	BackendID                                             string
	Limits                                                map[string]float64
	Attributes                                            map[string]any
	Paused, Downscaled, RestrictMemberAccess              bool
	BackendMetadata                                       map[string]any
	EndDate                                               string // YYYY-MM-DD or empty
	ErrorMessage, ErrorTraceback                          string
	LastSync, Created, Modified                           time.Time
}

// Order is a marketplace order. ResourceName names the resource of a Create order.
type Order struct {
	UUID, Type, State, OfferingUUID, ProjectUUID, ResourceUUID string
	ResourceName, PlanUUID, BackendID                          string
	Limits                                                     map[string]float64
	Attributes                                                 map[string]any
	ErrorMessage, ErrorTraceback, ProviderRejectionComment     string
	Created, Modified                                          time.Time
}

// ComponentUsage is the usage of one component of a resource in one billing period.
type ComponentUsage struct {
	UUID, ResourceUUID, Type, Description string
	BillingPeriod                         string // YYYY-MM-01
	Amount                                float64
	Date                                  time.Time
	UserUsages                            []UserUsage
	Created, Modified                     time.Time
}

// UserUsage is the share of one user in a ComponentUsage. UserURL is the offering-user URL the
// client sent (empty when none); OfferingUserUUID is the offering user it resolved to.
type UserUsage struct {
	UUID, Username, UserURL, OfferingUserUUID string
	Usage                                     float64
}

// UserUsageLimit is a per-user limit of one component of a resource.
type UserUsageLimit struct {
	UUID, ResourceUUID, OfferingUserUUID, ComponentType string
	Limit                                               float64
}

// ServiceAccount is a project service account (listed per offering).
type ServiceAccount struct {
	UUID, ProjectUUID, Username, State, Email string
}

// CourseAccount is a course account of a project (listed per offering).
type CourseAccount struct {
	UUID, ProjectUUID, UserUUID, Username, State, Email string
}

// Identity is a site-agent identity with its services.
type Identity struct {
	UUID, Name, OfferingUUID, Version string
	Dependencies                      any
	LastRestarted                     string
	ConfigFilePath, ConfigFileContent string
	Services                          []Service
	Created, Modified                 time.Time
}

// Service is a site-agent service; Processors are the registered processor names.
type Service struct {
	UUID, Name, Mode, State string
	Processors              []string
}

// EventSubscription is an event subscription registered by an identity, with its queues.
type EventSubscription struct {
	UUID, IdentityUUID, ObjectType, Description string
	Queues                                      []EventQueue
}

// EventQueue is a RabbitMQ queue created for an event subscription.
type EventQueue struct {
	UUID, OfferingUUID, ObjectType, QueueName, VHost string
}

// BackendResource is a backend resource reported for import.
type BackendResource struct {
	UUID, Name, ProjectUUID, OfferingUUID, BackendID string
	BackendMetadata                                  any
	Created, Modified                                time.Time
}
