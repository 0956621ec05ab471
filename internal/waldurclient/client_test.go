package waldurclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
)

func newTestClient(t *testing.T, h http.HandlerFunc, mod func(*Options)) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	o := Options{BaseURL: srv.URL, Token: secret.New("tok-abcdef"), Retry: RetryPolicy{Max: 3, WaitMin: time.Millisecond, WaitMax: 5 * time.Millisecond}}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMalformedItemIsIsolated(t *testing.T) {
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `[{"uuid":"a","type":"Create","state":"executing","limits":{"cpu":2}},
			{"uuid":"b","type":"Create","state":"pending-provider","limits":{"cpu":"lots"}}]`)
	}, nil)
	orders, err := c.ListOrders(context.Background(), "off")
	if err != nil {
		t.Fatal(err)
	}
	if len(orders) != 2 || orders[0].Malformed != "" || orders[1].UUID != "b" || orders[1].State != "pending-provider" ||
		!strings.Contains(orders[1].Malformed, "lots") {
		t.Fatalf("orders = %+v", orders)
	}
}

func TestMalformedResponsesGiveClearErrors(t *testing.T) {
	cases := map[string]string{
		"not json":      `<html>oops</html>`,
		"object":        `{"detail": "x"}`,
		"truncated":     `[{"uuid": "a"`,
		"wrong type me": `[]`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }, nil)
			var err error
			if name == "wrong type me" {
				_, err = c.Me(context.Background())
			} else {
				_, err = c.ListOrders(context.Background(), "off")
			}
			if err == nil || !strings.Contains(err.Error(), "malformed") {
				t.Fatalf("want a 'malformed' error, got %v", err)
			}
			if failure.IsTransient(err) {
				t.Fatal("a malformed response is not transient")
			}
		})
	}
}

func TestPaginationFollowsNextLink(t *testing.T) {
	var pages []string
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		page := r.URL.Query().Get("page")
		pages = append(pages, page+"/"+r.URL.Query().Get("page_size"))
		if page == "1" {
			w.Header().Set("Link", `<http://elsewhere.example/api/marketplace-orders/?page=2&page_size=300>; rel="next"`)
		}
		fmt.Fprintf(w, `[{"uuid":"p%s"}]`, page)
	}, nil)
	orders, err := c.ListOrders(context.Background(), "off")
	if err != nil {
		t.Fatal(err)
	}
	if len(orders) != 2 || strings.Join(pages, ",") != "1/300,2/300" {
		t.Fatalf("orders %v pages %v", orders, pages)
	}
}

func TestRetriesTransientThenSucceeds(t *testing.T) {
	var n atomic.Int32
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			w.WriteHeader(http.StatusBadGateway)
		case 2:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			w.WriteHeader(http.StatusCreated) // any 2xx is success
		}
	}, nil)
	if err := c.ApproveOrder(context.Background(), "o1"); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 3 {
		t.Fatalf("%d attempts", n.Load())
	}
}

func TestErrorsAreClassified(t *testing.T) {
	cases := []struct {
		status    int
		transient bool
	}{{500, true}, {503, true}, {429, true}, {400, false}, {404, false}, {409, false}}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			var n atomic.Int32
			cl := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				w.WriteHeader(c.status)
				fmt.Fprint(w, `{"detail":"because tok-abcdef said so"}`)
			}, nil)
			err := cl.SetOrderDone(context.Background(), "o1")
			if err == nil || failure.IsTransient(err) != c.transient || !failure.HasStatus(err, c.status) {
				t.Fatalf("err %v transient=%v", err, failure.IsTransient(err))
			}
			if strings.Contains(err.Error(), "tok-abcdef") {
				t.Fatal("error leaks the token echoed by the server")
			}
			want := int32(1)
			if c.transient {
				want = 4
			}
			if n.Load() != want {
				t.Fatalf("%d attempts, want %d", n.Load(), want)
			}
		})
	}
}

func TestNetworkFailureIsTransient(t *testing.T) {
	c, err := New(Options{BaseURL: "http://127.0.0.1:1", Token: secret.New("x-123456"), Retry: RetryPolicy{Max: 1, WaitMin: time.Millisecond, WaitMax: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListOrders(context.Background(), "off")
	if !failure.IsTransient(err) {
		t.Fatalf("connection refused must be transient: %v", err)
	}
}

func TestOIDCTokenCachedAndRefreshedOn401(t *testing.T) {
	var fetches atomic.Int32
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := fetches.Add(1)
		fmt.Fprintf(w, `{"access_token":"jwt-%d","expires_in":3600}`, n)
	}))
	defer idp.Close()
	var seen []string
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") == "Bearer jwt-1" && len(seen) > 2 {
			w.WriteHeader(http.StatusUnauthorized) // token revoked after two calls
			return
		}
		fmt.Fprint(w, `{"uuid":"u"}`)
	}, func(o *Options) {
		o.OIDC = &OIDCConfig{TokenURL: idp.URL, ClientID: "agent", ClientSecret: secret.New("s3cret-xyz")}
	})
	for i := 0; i < 3; i++ {
		if _, err := c.Me(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"Bearer jwt-1", "Bearer jwt-1", "Bearer jwt-1", "Bearer jwt-2"}
	if strings.Join(seen, ",") != strings.Join(want, ",") || fetches.Load() != 2 {
		t.Fatalf("auth headers %v, %d token fetches", seen, fetches.Load())
	}
	// The refreshed token is scrubbed from errors (short as it is); the replaced one left the
	// scrubber, so the set does not grow with every refresh.
	if got := secret.Scrub("token jwt-2 rejected; jwt-1 expired"); got != "token [REDACTED] rejected; jwt-1 expired" {
		t.Errorf("scrubbed %q", got)
	}
}

func TestDryRunSendsOnlyReads(t *testing.T) {
	var methods []string
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		methods = append(methods, r.Method)
		fmt.Fprint(w, `[]`)
	}, func(o *Options) { o.DryRun = true })
	ctx := context.Background()
	if err := c.ApproveOrder(ctx, "o"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetUsage(ctx, "r", "2026-01-01T00:00:00Z", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListOrders(ctx, "off"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(methods, ",") != "GET" {
		t.Fatalf("methods sent: %v", methods)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://evil.example/steal", http.StatusFound)
	}, nil)
	_, err := c.Me(context.Background())
	if err == nil || !failure.HasStatus(err, http.StatusFound) {
		t.Fatalf("want the 302 as an error, got %v", err)
	}
	var se *failure.StatusError
	if !errors.As(err, &se) {
		t.Fatal("want a StatusError")
	}
}

func TestBaseURLValidation(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "not a url", "http://"} {
		if _, err := New(Options{BaseURL: u, Token: secret.New("t-123456")}); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
	if _, err := New(Options{BaseURL: "https://w.example"}); err == nil {
		t.Error("no credentials accepted")
	}
}
