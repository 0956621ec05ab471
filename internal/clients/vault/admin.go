package vault

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/hashicorp/vault/api"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

// Admin manages Vault objects with an operator's token: ACL policies, AppRoles with their role
// ids and secret ids, and KV secrets (Store's methods, with KV v1/v2 detection). The rke2
// backend uses it to hand each cluster's nodes single-use credentials. Every method is
// idempotent (writes replace, deletes of absent objects succeed) and makes its errors the way
// Store does (transient for 5xx, 429 and network failures; never a secret in the text).
type Admin struct {
	Store
}

// AppRole is an AppRole's settings (Vault durations, e.g. "60m").
type AppRole struct {
	TokenPolicies   []string
	SecretIDTTL     string
	SecretIDNumUses int
	TokenNumUses    int
	TokenTTL        string
	TokenMaxTTL     string
}

// NewAdmin builds an Admin from the configuration's `vault` section; like NewStore, it validates
// the section and makes no network call. The agent builds its one Vault client so: as a
// secret store for every backend, and as an Admin for the rke2 backend.
func NewAdmin(section map[string]any) (*Admin, error) { return adminOf(NewStore(section)) }

// NewAdminFromConfig builds an Admin; it makes no network call.
func NewAdminFromConfig(cfg Config) (*Admin, error) { return adminOf(NewStoreFromConfig(cfg)) }

// adminOf is the Admin over the store NewStore or NewStoreFromConfig built.
func adminOf(st *Store, err error) (*Admin, error) {
	if err != nil {
		return nil, err
	}
	return &Admin{*st}, nil
}

var objectNameRe = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`)

func checkNames(names ...string) error {
	for _, n := range names {
		if !objectNameRe.MatchString(n) {
			return fmt.Errorf("vault: %q is not a valid policy, mount or role name", n)
		}
	}
	return nil
}

// PutPolicy creates or replaces an ACL policy (HCL or JSON rules).
func (a *Admin) PutPolicy(ctx context.Context, name, rules string) error {
	if err := checkNames(name); err != nil {
		return err
	}
	err := a.s.do(ctx, func(c *api.Client) error { return c.Sys().PutPolicyWithContext(ctx, name, rules) })
	if err != nil {
		return wrapErr(err, "writing policy %s", name)
	}
	return nil
}

// DeletePolicy removes an ACL policy; an absent one is not an error.
func (a *Admin) DeletePolicy(ctx context.Context, name string) error {
	if err := checkNames(name); err != nil {
		return err
	}
	err := a.s.do(ctx, func(c *api.Client) error { return c.Sys().DeletePolicyWithContext(ctx, name) })
	if err != nil && !isStatus(err, 404) {
		return wrapErr(err, "deleting policy %s", name)
	}
	return nil
}

// PutAppRole creates or replaces the AppRole auth/<mount>/role/<name>.
func (a *Admin) PutAppRole(ctx context.Context, mount, name string, r AppRole) error {
	if err := checkNames(mount, name); err != nil {
		return err
	}
	body := map[string]any{"token_policies": r.TokenPolicies, "secret_id_num_uses": r.SecretIDNumUses, "token_num_uses": r.TokenNumUses}
	for k, v := range map[string]string{"secret_id_ttl": r.SecretIDTTL, "token_ttl": r.TokenTTL, "token_max_ttl": r.TokenMaxTTL} {
		if v != "" {
			body[k] = v
		}
	}
	path := "auth/" + mount + "/role/" + name
	err := a.s.do(ctx, func(c *api.Client) error { _, err := c.Logical().WriteWithContext(ctx, path, body); return err })
	if err != nil {
		return wrapErr(err, "writing AppRole %s", path)
	}
	return nil
}

// DeleteAppRole removes an AppRole (and with it every secret id); absent is not an error.
func (a *Admin) DeleteAppRole(ctx context.Context, mount, name string) error {
	if err := checkNames(mount, name); err != nil {
		return err
	}
	path := "auth/" + mount + "/role/" + name
	err := a.s.do(ctx, func(c *api.Client) error { _, err := c.Logical().DeleteWithContext(ctx, path); return err })
	if err != nil && !isStatus(err, 404) {
		return wrapErr(err, "deleting AppRole %s", path)
	}
	return nil
}

// RoleID returns an AppRole's role id; a missing role is an error wrapping failure.ErrNotFound.
func (a *Admin) RoleID(ctx context.Context, mount, name string) (string, error) {
	if err := checkNames(mount, name); err != nil {
		return "", err
	}
	path := "auth/" + mount + "/role/" + name + "/role-id"
	var sec *api.Secret
	err := a.s.do(ctx, func(c *api.Client) error {
		var err error
		sec, err = c.Logical().ReadWithContext(ctx, path)
		return err
	})
	if err != nil {
		return "", wrapErr(err, "reading %s", path)
	}
	id, _ := dataString(sec, "role_id")
	if id == "" {
		return "", &opError{msg: "AppRole auth/" + mount + "/role/" + name + " not found", cause: failure.ErrNotFound}
	}
	return id, nil
}

// NewSecretID issues a fresh secret id for an AppRole. A request retried after a lost answer
// may leave one unused secret id behind; it expires with the role's secret_id_ttl.
func (a *Admin) NewSecretID(ctx context.Context, mount, name string) (secret.Secret, error) {
	if err := checkNames(mount, name); err != nil {
		return secret.Secret{}, err
	}
	path := "auth/" + mount + "/role/" + name + "/secret-id"
	var sec *api.Secret
	err := a.s.do(ctx, func(c *api.Client) error {
		var err error
		sec, err = c.Logical().WriteWithContext(ctx, path, map[string]any{})
		return err
	})
	if err != nil {
		return secret.Secret{}, wrapErr(err, "issuing a secret id at %s", path)
	}
	id, _ := dataString(sec, "secret_id")
	if id == "" {
		return secret.Secret{}, fmt.Errorf("vault: no secret id in the answer from %s", path)
	}
	return secret.New(id), nil
}

// AuthMount reads the type of the auth method at auth/<mount> (e.g. "approle") from
// sys/internal/ui/mounts, which answers any token with some capability under the mount — an
// operator token rarely may read sys/auth. visible is false when there is no such mount or the
// token may do nothing under it (Vault does not tell the two apart).
func (a *Admin) AuthMount(ctx context.Context, mount string) (typ string, visible bool, err error) {
	path := "sys/internal/ui/mounts/auth/" + strings.Trim(mount, "/")
	var sec *api.Secret
	err = a.s.do(ctx, func(c *api.Client) error {
		var err error
		sec, err = c.Logical().ReadWithContext(ctx, path)
		return err
	})
	var re *api.ResponseError
	switch {
	case errors.As(err, &re) && (re.StatusCode == http.StatusBadRequest || re.StatusCode == http.StatusForbidden || re.StatusCode == http.StatusNotFound):
		return "", false, nil
	case err != nil:
		return "", false, wrapErr(err, "reading the auth method at auth/%s", mount)
	}
	typ, _ = dataString(sec, "type")
	return typ, typ != "", nil
}

func dataString(sec *api.Secret, key string) (string, bool) {
	if sec == nil || sec.Data == nil {
		return "", false
	}
	s, ok := sec.Data[key].(string)
	return s, ok
}

// Capabilities lists what the Admin's own token may do on path (sys/capabilities-self):
// "create", "read", "update", "delete", "list", "sudo", "deny", or "root" for a root token.
func (a *Admin) Capabilities(ctx context.Context, path string) ([]string, error) {
	var caps []string
	err := a.s.do(ctx, func(c *api.Client) error {
		var err error
		caps, err = c.Sys().CapabilitiesSelfWithContext(ctx, path)
		return err
	})
	if err != nil {
		return nil, wrapErr(err, "reading the token's capabilities on %s", path)
	}
	return caps, nil
}
