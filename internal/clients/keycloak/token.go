package keycloak

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/Nerzal/gocloak/v13"
	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/upstream"
)

// maxSkew caps how long before expiry a token is renewed.
const maxSkew = 30 * time.Second

// tokenSource caches the admin access token. It renews it before expiry with the refresh
// token, falls back to a new password grant, and lets one goroutine fetch while the others wait.
type tokenSource struct {
	c   *Client
	now func() time.Time
	sem chan struct{} // one fetch at a time; waiting respects the context

	mu         sync.Mutex
	access     string
	accessExp  time.Time // renew after this
	refresh    string
	refreshExp time.Time
}

// get returns a valid access token, fetching one when needed.
func (t *tokenSource) get(ctx context.Context) (string, error) {
	if tok, ok := t.cached(); ok {
		return tok, nil
	}
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("%s log in: %w", service, ctx.Err())
	}
	defer func() { <-t.sem }()
	if tok, ok := t.cached(); ok {
		return tok, nil
	}
	return t.fetch(ctx)
}

func (t *tokenSource) cached() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.access, t.access != "" && t.now().Before(t.accessExp)
}

// invalidate drops the access token if it is still the one that was rejected.
func (t *tokenSource) invalidate(rejected string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.access == rejected {
		t.access, t.accessExp = "", time.Time{}
	}
}

func (t *tokenSource) fetch(ctx context.Context) (string, error) {
	cfg := t.c.cfg
	issued := t.now()
	t.mu.Lock()
	refresh, refreshOK := t.refresh, t.refresh != "" && issued.Before(t.refreshExp)
	t.mu.Unlock()
	var jwt *gocloak.JWT
	if refreshOK {
		var err error
		jwt, err = t.grant(ctx, fmt.Sprintf("refresh the token of %q", cfg.Username), func(ctx context.Context) (*gocloak.JWT, error) {
			return t.c.gc.RefreshToken(ctx, refresh, cfg.ClientID, "", url.PathEscape(cfg.UserRealm))
		})
		if err != nil {
			upstream.Log(ctx, t.c.log).Debug("keycloak token refresh failed; logging in again", zap.Error(err))
			jwt = nil
		}
	}
	if jwt == nil {
		grant, user, pass := "password", cfg.Username, cfg.Password.Reveal()
		var err error
		jwt, err = t.grant(ctx, fmt.Sprintf("log in as %q in realm %q", cfg.Username, cfg.UserRealm), func(ctx context.Context) (*gocloak.JWT, error) {
			return t.c.gc.GetToken(ctx, url.PathEscape(cfg.UserRealm), gocloak.TokenOptions{
				ClientID: &cfg.ClientID, GrantType: &grant, Username: &user, Password: &pass,
			})
		})
		if err != nil {
			return "", err
		}
	}
	t.store(jwt, issued)
	return jwt.AccessToken, nil
}

// grant runs one token request and classifies its outcome.
func (t *tokenSource) grant(ctx context.Context, op string, fn func(context.Context) (*gocloak.JWT, error)) (*gocloak.JWT, error) {
	cctx, info := withCallInfo(ctx)
	jwt, err := fn(cctx)
	if err := t.c.classify(ctx, op, info, err); err != nil {
		return nil, err
	}
	if jwt == nil || jwt.AccessToken == "" {
		return nil, fmt.Errorf("%s %s: the token response has no access_token", service, op)
	}
	return jwt, nil
}

// store keeps the tokens, measuring their lifetimes from the moment the request was sent and
// renewing a quarter of the lifetime (at most 30s) before expiry.
func (t *tokenSource) store(jwt *gocloak.JWT, issued time.Time) {
	life := time.Duration(jwt.ExpiresIn) * time.Second
	skew := min(life/4, maxSkew)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.access, t.accessExp = jwt.AccessToken, issued.Add(life-skew)
	t.refresh, t.refreshExp = "", time.Time{}
	if jwt.RefreshToken != "" && jwt.RefreshExpiresIn > 0 {
		rlife := time.Duration(jwt.RefreshExpiresIn) * time.Second
		t.refresh, t.refreshExp = jwt.RefreshToken, issued.Add(rlife-min(rlife/4, maxSkew))
	}
}
