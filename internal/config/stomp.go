package config

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// EventBroker is where an offering's Waldur events come from: RabbitMQ's Web-STOMP endpoint,
// by default on the Waldur host at /rmqws-stomp (stomp_ws_host, stomp_ws_port, stomp_ws_path,
// websocket_use_tls).
type EventBroker struct {
	Host string
	Port int
	Path string
	TLS  bool
}

// URL is the WebSocket URL of the broker.
func (e EventBroker) URL() string {
	scheme := "ws"
	if e.TLS {
		scheme = "wss"
	}
	return (&url.URL{Scheme: scheme, Host: net.JoinHostPort(e.Host, strconv.Itoa(e.Port)), Path: e.Path}).String()
}

// parseStompKeys reads the event-mode keys. They are validated whenever they are set, so that a
// typo is found before stomp_enabled is switched on. The incumbent's default port followed
// verify_ssl (443 when certificates are verified, else 80); here it follows the scheme: 443
// with TLS, 80 without.
func parseStompKeys(r *reader, o *Offering) {
	o.StompEnabled = r.boolean("stomp_enabled", false)
	o.StompMembershipSyncEnabled = r.optBool("stomp_membership_sync_enabled")
	e := EventBroker{TLS: r.boolean("websocket_use_tls", true), Path: "/rmqws-stomp"}
	if u, err := url.Parse(o.APIURL); err == nil {
		e.Host = u.Hostname()
	}
	if r.has("stomp_ws_host") {
		h := strings.TrimSpace(r.str("stomp_ws_host", ""))
		switch {
		case h == "":
			r.fail("stomp_ws_host", "must not be empty (leave it out to use the host of waldur_api_url)")
		case strings.ContainsAny(h, "/ \t?#@") || strings.Contains(h, "://"):
			r.fail("stomp_ws_host", "must be a host name or address only, such as rabbitmq.example.com, got %q", h)
		case strings.Count(h, ":") == 1:
			r.fail("stomp_ws_host", "must not contain a port; set stomp_ws_port, got %q", h)
		default:
			e.Host = strings.Trim(h, "[]")
		}
	}
	e.Port = 80
	if e.TLS {
		e.Port = 443
	}
	if r.has("stomp_ws_port") {
		p := r.integer("stomp_ws_port", e.Port)
		if p < 1 || p > 65535 {
			r.fail("stomp_ws_port", "must be a port number between 1 and 65535, got %d", p)
		}
		e.Port = p
	}
	if r.has("stomp_ws_path") {
		p := strings.TrimSpace(r.str("stomp_ws_path", ""))
		if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?# ") {
			r.fail("stomp_ws_path", "must be a URL path starting with /, such as /rmqws-stomp, got %q", p)
		}
		e.Path = p
	}
	o.EventBroker = e
}

// checkStompKeys rejects event settings that cannot work and warns about ones that do nothing.
func checkStompKeys(r *reader, o Offering) []string {
	if o.StompEnabled && o.OIDC != nil && o.Token.IsZero() {
		r.fail("waldur_api_token", "is required with stomp_enabled: the event broker takes the static token as the STOMP "+
			"passcode (with OIDC alone the incumbent sent an empty passcode, which the broker refuses)")
	}
	if !o.StompEnabled && o.StompMembershipSyncEnabled != nil && *o.StompMembershipSyncEnabled {
		return []string{r.prefix + "stomp_membership_sync_enabled: MISCONFIGURATION: true without stomp_enabled: " +
			"membership is synced neither by events nor by membership_sync polling"}
	}
	return nil
}
