package config

import (
	"time"

	"github.com/waldur/site-agent/internal/backends"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// Config is the validated agent configuration.
type Config struct {
	Path                      string // the file it came from
	Offerings                 []Offering
	Location                  *time.Location // from timezone, default UTC
	LogLevel                  string         // debug, info, warn, error
	LogFormat                 string         // json (default) or text
	ReportingPeriods          int            // months reported per cycle, 1..12
	ExposeBackendErrorDetails bool
	GlobalProxy               string

	// Vault is the raw top-level vault section (address, auth …), read by the secrets store.
	Vault map[string]any

	// Go-native extras.
	ListenAddress string // metrics/health listener; empty = off
	HeartbeatFile string // liveness file touched by the runner
	// HeartbeatInterval is how often the runner beats the heartbeat file, independent of cycles.
	HeartbeatInterval time.Duration
	Concurrency       int           // orders or resources worked on at once per offering
	CycleTimeout      time.Duration // bound on one offering's cycle

	LeaderElection LeaderElection // leader_election: one working replica of several
	// Upstreams are per-upstream timeouts and retries (waldur, rancher, kubernetes, keycloak,
	// openstack, vault); missing names and zero fields keep each client's defaults.
	Upstreams upstream.Upstreams
}

// Offering is one configured Waldur offering.
type Offering struct {
	Index       int    // position in the offerings list, for messages
	Name        string // display name
	APIURL      string // Waldur base URL without the /api/ suffix, ending in "/"
	UUID        string // offering UUID as configured
	Token       secret.Secret
	OIDC        *OIDC // set when client credentials are used instead of a static token
	BackendType string
	VerifySSL   bool

	OrderBackend      string
	MembershipBackend string
	ReportingBackend  string

	BackendSettings backends.Settings
	Components      backends.Components

	StompEnabled               bool  // event_process serves this offering
	StompMembershipSyncEnabled *bool // nil: follows StompEnabled
	EventBroker                EventBroker

	// Core keys from backend_settings.
	AllocationPrefix         string
	ProjectPrefix            string
	CustomerPrefix           string
	CheckBackendIDUniqueness bool
	CheckAllOfferings        bool
	BackendIDMaxRetries      int
	ClusterName              string
}

// OIDC holds client-credentials settings for Waldur authentication.
type OIDC struct {
	TokenURL     string
	ClientID     string
	ClientSecret secret.Secret
}

// Label names the offering in messages: `offering "HPC" (offerings[0])`.
func (o Offering) Label() string {
	return offeringLabel(o.Index, o.Name)
}

// MembershipPolling reports whether membership sync runs by polling for this offering.
func (o Offering) MembershipPolling() bool {
	if o.StompMembershipSyncEnabled != nil {
		return !*o.StompMembershipSyncEnabled
	}
	return !o.StompEnabled
}
