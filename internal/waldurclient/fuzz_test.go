package waldurclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/waldur/site-agent/internal/secret"
)

// FuzzDecodeOrders feeds arbitrary bytes where a page of orders is expected: decoding must
// never panic, and what decodes must re-encode.
func FuzzDecodeOrders(f *testing.F) {
	f.Add([]byte(`[{"uuid":"a","type":"Create","state":"executing","limits":{"cpu":"2.5","ram":4},"attributes":{"name":"x"}}]`))
	f.Add([]byte(`[{"limits":null,"created":"2026-01-01T00:00:00Z"}]`))
	f.Add([]byte(`[{"limits":{"cpu":"NaN"}}]`))
	f.Add([]byte(`{"detail":"Not found."}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var orders []Order
		if err := json.Unmarshal(data, &orders); err != nil {
			return
		}
		var resources []Resource
		_ = json.Unmarshal(data, &resources)
		if _, err := json.Marshal(orders); err != nil {
			t.Fatalf("decoded orders do not re-encode: %v", err)
		}
	})
}

// FuzzLinkHeader answers a listing's first page with an arbitrary Link header: the client
// asks its own server only (by page number, never the link's host), moves forward only, and
// stops.
func FuzzLinkHeader(f *testing.F) {
	for _, s := range []string{
		`<https://waldur.example.com/api/marketplace-orders/?page=2&page_size=300>; rel="next"`,
		`<http://evil.example/steal?page=2>; rel=next, <https://w/?page=1>; rel="prev"`,
		`<?page=0>; rel="next"`, `<?page=-5>; rel="next"`, `<?page=99999999999999999999>; rel="next"`,
		`<%zz>; rel="next"`, `<?page=3&page=2>; rel="next"`, `<>; rel="next"`, `garbage`,
	} {
		f.Add(s)
	}
	var (
		link  atomic.Value // this iteration's header
		calls atomic.Int32
		pages = make(chan string, 16)
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		page := r.URL.Query().Get("page")
		select {
		case pages <- page:
		default:
		}
		if page == "1" {
			w.Header()["Link"] = []string{link.Load().(string)}
		}
		fmt.Fprintf(w, `[{"uuid":%q}]`, page)
	}))
	f.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL, Token: secret.New("tok-fuzz-1"), Retry: RetryPolicy{Max: -1}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, header string) {
		if strings.IndexFunc(header, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) >= 0 {
			return // not a header value (the client refuses the answer, rightly)
		}
		link.Store(header)
		calls.Store(0)
		for len(pages) > 0 {
			<-pages
		}
		orders, err := c.ListOrders(context.Background(), "off")
		if err != nil {
			t.Fatalf("link %q: %v", header, err)
		}
		n := int(calls.Load())
		if n > 2 || len(orders) != n || orders[0].UUID != "1" {
			t.Fatalf("link %q: %d requests, orders %+v; only page 1 links onward", header, n, orders)
		}
		if n == 2 {
			<-pages
			if next := <-pages; next == "1" || strings.HasPrefix(next, "-") || next == "0" {
				t.Fatalf("link %q was followed to page %q: not forward", header, next)
			}
		}
	})
}
