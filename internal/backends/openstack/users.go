package openstack

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/clients/openstack/tenant"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

// findUser returns the user with that name in a domain, or nil.
func (c *clients) findUser(ctx context.Context, name, domainID string) (*users.User, error) {
	page, err := users.List(c.identity, users.ListOpts{Name: name, DomainID: domainID}).AllPages(ctx)
	if err != nil {
		return nil, classify("keystone", fmt.Errorf("find user %q: %w", name, err))
	}
	all, err := users.ExtractUsers(page)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return &all[0], nil
}

func (c *clients) assign(ctx context.Context, userID, projectID string) error {
	return tenant.Grant(ctx, c.identity, projectID, userID, c.roleID)
}

func (c *clients) unassign(ctx context.Context, userID, projectID string) error {
	err := roles.Unassign(ctx, c.identity, c.roleID, roles.UnassignOpts{UserID: userID, ProjectID: projectID}).ExtractErr()
	if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		return classify("keystone", fmt.Errorf("revoke role of user %s on project %s: %w", userID, projectID, err))
	}
	return nil
}

// ensureTenantUser makes the tenant's own user exist with the member role. The password is
// generated once and stored before the user is created, so the store always holds the
// password of the user; a user found without stored credentials gets a new password.
func (b *Backend) ensureTenantUser(ctx context.Context, c *clients, projectID string, n names) error {
	path := b.credentialsPath(n.project)
	creds, err := b.secrets.Get(ctx, path)
	fresh := false
	switch {
	case errors.Is(err, failure.ErrNotFound):
		var generated secret.Secret
		if creds, generated, err = b.newCredentials(projectID, n); err != nil {
			return err
		}
		defer generated.Forget()
		if err := b.secrets.Put(ctx, path, creds); err != nil {
			return fmt.Errorf("store tenant credentials at %s: %w", path, err)
		}
		fresh = true
	case err != nil:
		return fmt.Errorf("read tenant credentials at %s: %w", path, err)
	}
	password := secret.New(creds["password"]) // scrubbed while in use here, then forgotten
	defer password.Forget()
	u, err := c.findUser(ctx, n.user, c.domainID)
	if err != nil {
		return err
	}
	switch {
	case u == nil:
		u, err = users.Create(ctx, c.identity, users.CreateOpts{Name: n.user, DomainID: c.domainID, DefaultProjectID: projectID,
			Password: password.Reveal(), Description: "tenant user of " + n.project + " (site-agent)"}).Extract()
		if gophercloud.ResponseCodeIs(err, http.StatusConflict) {
			// created meanwhile (a retried POST or a concurrent pass): adopt it like any existing user
			return failure.Transient(fmt.Errorf("tenant user %q appeared while it was being created; the next pass adopts it", n.user))
		}
		if err != nil {
			return classify("keystone", fmt.Errorf("create tenant user %q: %w", n.user, err))
		}
		b.logger(ctx).Info("tenant user created", zap.String("user", n.user), zap.String("credentials_path", path))
	case u.DefaultProjectID != projectID:
		return failure.Errorf("Keystone user %q already exists for another project; cannot create the tenant user", n.user)
	case fresh:
		if _, err := users.Update(ctx, c.identity, u.ID, users.UpdateOpts{Password: password.Reveal()}).Extract(); err != nil {
			return classify("keystone", fmt.Errorf("reset password of tenant user %q: %w", n.user, err))
		}
	}
	return c.assign(ctx, u.ID, projectID)
}

// newCredentials generates a tenant user's credentials; the caller forgets the password
// Secret when done with it.
func (b *Backend) newCredentials(projectID string, n names) (map[string]string, secret.Secret, error) {
	pw, err := generatePassword(24)
	if err != nil {
		return nil, pw, err
	}
	s := b.settings
	return map[string]string{
		"username": n.user, "password": pw.Reveal(), "user_domain_name": s.Domain,
		"project_id": projectID, "project_name": n.project, "project_domain_name": s.Domain,
		"auth_url": s.AuthURL, "region_name": s.RegionName,
	}, pw, nil
}

const passwordAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"

// generatePassword returns a random password (registered with the scrubber).
func generatePassword(n int) (secret.Secret, error) {
	out := make([]byte, n)
	max := big.NewInt(int64(len(passwordAlphabet)))
	for i := range out {
		k, err := rand.Int(rand.Reader, max)
		if err != nil {
			return secret.Secret{}, fmt.Errorf("generate password: %w", err)
		}
		out[i] = passwordAlphabet[k.Int64()]
	}
	return secret.New(string(out)), nil
}

// deleteTenantUser removes the tenant user (only if it belongs to the project) and its
// stored credentials.
func (b *Backend) deleteTenantUser(ctx context.Context, c *clients, projectID string, n names) error {
	u, err := c.findUser(ctx, n.user, c.domainID)
	if err != nil {
		return err
	}
	if u != nil && u.DefaultProjectID == projectID {
		err := users.Delete(ctx, c.identity, u.ID).ExtractErr()
		if err != nil && !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return classify("keystone", fmt.Errorf("delete tenant user %q: %w", n.user, err))
		}
	}
	if b.secrets == nil || !b.settings.CreateTenantUser {
		return nil // credentials are only ever stored for tenant users this backend created
	}
	if err := b.secrets.Delete(ctx, b.credentialsPath(n.project)); err != nil {
		return fmt.Errorf("delete tenant credentials: %w", err)
	}
	return nil
}
