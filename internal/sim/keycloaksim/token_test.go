package keycloaksim

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

type tokenOut struct {
	AccessToken      string `json:"access_token"`
	RefreshToken     string `json:"refresh_token"`
	ExpiresIn        int    `json:"expires_in"`
	RefreshExpiresIn int    `json:"refresh_expires_in"`
	TokenType        string `json:"token_type"`
}

func TestTokenEndpoint(t *testing.T) {
	h := start(t, Options{})
	good := url.Values{"grant_type": {"password"}, "client_id": {"admin-cli"}, "username": {"admin"}, "password": {"admin"}}
	with := func(k, v string) url.Values {
		out := url.Values{}
		for kk, vv := range good {
			out[kk] = vv
		}
		if v == "" {
			out.Del(k)
		} else {
			out.Set(k, v)
		}
		return out
	}
	tests := []struct {
		name     string
		path     string
		form     url.Values
		want     int
		wantBody string
	}{
		{"password grant", "/realms/master/protocol/openid-connect/token", good, 200, `"token_type":"Bearer"`},
		{"username is case-insensitive", "/realms/master/protocol/openid-connect/token", with("username", "ADMIN"), 200, "access_token"},
		{"wrong password", "/realms/master/protocol/openid-connect/token", with("password", "x"), 401, `"error_description":"Invalid user credentials"`},
		{"admin lives in master, not waldur", "/realms/waldur/protocol/openid-connect/token", good, 401, "invalid_grant"},
		{"unknown client", "/realms/master/protocol/openid-connect/token", with("client_id", "other"), 401, "invalid_client"},
		{"missing grant type", "/realms/master/protocol/openid-connect/token", with("grant_type", ""), 400, "Missing form parameter: grant_type"},
		{"unsupported grant", "/realms/master/protocol/openid-connect/token", with("grant_type", "client_credentials"), 400, "unsupported_grant_type"},
		{"bad refresh token", "/realms/master/protocol/openid-connect/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {"admin-cli"}, "refresh_token": {"x"}}, 400, "Invalid refresh token"},
		{"unknown realm", "/realms/nosuch/protocol/openid-connect/token", good, 404, `{"error":"Realm does not exist"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := h.form(tt.path, tt.form)
			if status != tt.want || !strings.Contains(string(body), tt.wantBody) {
				t.Fatalf("HTTP %d %s, want %d %s", status, body, tt.want, tt.wantBody)
			}
		})
	}
	if got := h.sim.TokenFetches(); got != 3 { // start's login and the two successful grants
		t.Errorf("TokenFetches() = %d, want 3", got)
	}
}

func TestTokenExpiryAndRefresh(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h := start(t, Options{TokenTTL: 60 * time.Second, RefreshTTL: 5 * time.Minute, Now: clock.Now})
	_, body, _ := h.form("/realms/master/protocol/openid-connect/token", url.Values{
		"grant_type": {"password"}, "client_id": {"admin-cli"}, "username": {"admin"}, "password": {"admin"},
	})
	var tok tokenOut
	mustJSON(t, body, &tok)
	if tok.ExpiresIn != 60 || tok.RefreshExpiresIn != 300 || strings.Count(tok.AccessToken, ".") != 2 {
		t.Fatalf("token response: %s", body)
	}
	if status, _, _ := h.raw(http.MethodGet, "/admin/realms/waldur/groups", "", tok.AccessToken); status != 200 {
		t.Fatalf("fresh token: HTTP %d", status)
	}
	if status, _, _ := h.raw(http.MethodGet, "/admin/realms/waldur/groups", "", tok.RefreshToken); status != 401 {
		t.Errorf("a refresh token is not a bearer token: HTTP %d", status)
	}
	clock.Advance(61 * time.Second)
	if status, _, _ := h.raw(http.MethodGet, "/admin/realms/waldur/groups", "", tok.AccessToken); status != 401 {
		t.Fatalf("expired token: HTTP %d, want 401", status)
	}
	refresh := url.Values{"grant_type": {"refresh_token"}, "client_id": {"admin-cli"}, "refresh_token": {tok.RefreshToken}}
	status, body, _ := h.form("/realms/master/protocol/openid-connect/token", refresh)
	var next tokenOut
	mustJSON(t, body, &next)
	if status != 200 || next.AccessToken == tok.AccessToken {
		t.Fatalf("refresh: HTTP %d %s", status, body)
	}
	if status, _, _ := h.raw(http.MethodGet, "/admin/realms/waldur/groups", "", next.AccessToken); status != 200 {
		t.Errorf("refreshed token: HTTP %d", status)
	}
	clock.Advance(6 * time.Minute)
	if status, body, _ := h.form("/realms/master/protocol/openid-connect/token", refresh); status != 400 || !strings.Contains(string(body), "Token is not active") {
		t.Errorf("expired refresh token: HTTP %d %s", status, body)
	}
	h.sim.ExpireTokens()
	if got := h.sim.TokenGrants(); got["password"] != 2 || got["refresh_token"] != 1 {
		t.Errorf("TokenGrants() = %v", got)
	}
}

func TestExpireTokens(t *testing.T) {
	h := start(t, Options{})
	h.sim.ExpireTokens()
	if status, _, _ := h.do(http.MethodGet, "/groups", ""); status != 401 {
		t.Fatalf("revoked token: HTTP %d, want 401", status)
	}
}
