package rancher

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"go.uber.org/zap"

	"github.com/waldur/site-agent/internal/failure"
)

// Links Rancher writes into its answers (pagination.next, a registration token's manifestUrl)
// are absolute URLs built from the request's Host and X-Forwarded-* headers or from its
// server-url setting, which need not be the URL the agent uses: a proxy in front may write
// http:// links, an installation may name its public host, a hostile server may name any
// host. The client never sends a request anywhere but the configured scheme, host and port:
// a link is reduced to its path and query and sent to the configured URL (a link that names
// the configured host keeps its path as is; another host's path is put below the configured
// path prefix). A link that does not parse, is not http(s), carries credentials or leads
// somewhere other than where it should (the next page of the same collection, an import
// manifest) is refused: a permanent error naming the link (without its query) — it is never
// fetched.

// maxPages bounds a listing whose pagination.next never ends.
const maxPages = 1000

// collection is a v3 list answer.
type collection[T any] struct {
	Data       []T `json:"data"`
	Pagination *struct {
		Next string `json:"next"`
	} `json:"pagination"`
}

// listAll reads a v3 collection with limit=-1 (unless q sets a limit), following
// pagination.next (pinned to the configured URL) in case the server pages anyway.
func listAll[T any](ctx context.Context, c *Client, path string, q url.Values) ([]T, error) {
	if q == nil {
		q = url.Values{}
	}
	if q.Get("limit") == "" {
		q.Set("limit", "-1")
	}
	k := call{method: http.MethodGet, path: path, rawQuery: q.Encode()}
	var out []T
	for n := 0; ; n++ {
		r, err := c.send(ctx, k)
		if err != nil {
			return nil, err
		}
		var page collection[T]
		if err := decode(k.method, path, r.body, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Data...)
		if page.Pagination == nil || page.Pagination.Next == "" {
			return out, nil
		}
		if n+1 >= maxPages {
			return nil, fmt.Errorf("rancher GET %s: more than %d pages", path, maxPages)
		}
		if k.path, k.rawQuery, err = c.pin(page.Pagination.Next, func(p string) bool { return p == path }, false); err != nil {
			return nil, err
		}
	}
}

// pin turns a link Rancher wrote into a path (escaped, below the configured prefix) and query
// on the configured URL. want says whether the path (below the prefix) is where the link
// should lead; redact keeps the link's path out of the error (a manifest URL holds a token).
func (c *Client) pin(link string, want func(path string) bool, redact bool) (path, rawQuery string, err error) {
	u, err := url.Parse(link)
	if err != nil || u.Opaque != "" || u.User != nil {
		return "", "", c.refuse(link, "it is not a plain http(s) URL", redact)
	}
	if !u.IsAbs() {
		if u.Host != "" {
			u.Scheme = c.base.Scheme // a scheme-relative link still names a host: judged below
		} else {
			u = c.base.ResolveReference(u)
		}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", "", c.refuse(link, "it is not an http(s) URL", redact)
	}
	if !sameOrigin(u, c.base) {
		c.log.Debug("rancher named another address in a link; it is followed on the configured URL",
			zap.String("link_origin", u.Scheme+"://"+u.Host), zap.String("configured", c.base.Scheme+"://"+c.base.Host))
	}
	p, escaped := u.Path, u.EscapedPath()
	if prefix := c.base.Path; prefix != "" {
		if rest, ok := strings.CutPrefix(p, prefix); ok && strings.HasPrefix(rest, "/") {
			p, escaped = rest, strings.TrimPrefix(escaped, c.base.EscapedPath())
		}
	}
	if !strings.HasPrefix(p, "/") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") || !want(p) {
		return "", "", c.refuse(link, "it does not lead where it should", redact)
	}
	return escaped, u.RawQuery, nil
}

// refuse is the error for a link that is not followed.
func (c *Client) refuse(link, why string, redact bool) error {
	shown, _, _ := strings.Cut(link, "?")
	if redact {
		shown = "(a link holding a credential)"
		if u, err := url.Parse(link); err == nil && u.Host != "" {
			shown = u.Scheme + "://" + u.Host + "/…"
		}
	}
	return failure.Errorf("rancher answered the link %q, which is not followed: %s (requests go only to %s)",
		shown, why, c.base.Scheme+"://"+c.base.Host)
}

// sameOrigin compares scheme, host and port (an omitted port is the scheme's default).
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if u.Scheme == "http" {
			return "80"
		}
		return "443"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}
