package waldurclient

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/waldur/site-agent/internal/failure"
)

// A listing is bounded in items, all pages together (DefaultMaxListItems): a Waldur, or a
// proxy in its place, that keeps sending pages gets an error naming the bound, not the agent's
// memory.
func TestListingItemsAreBounded(t *testing.T) {
	var pages atomic.Int32
	item := `{"uuid":"00000000000000000000000000000001","type":"Create","state":"pending-provider"}`
	page := "[" + strings.TrimSuffix(strings.Repeat(item+",", PageSize), ",") + "]"
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("page"))
		pages.Add(1)
		if n < 400 { // 120,000 items in all
			w.Header().Set("Link", fmt.Sprintf(`<%s?page=%d>; rel="next"`, r.URL.Path, n+1))
		}
		fmt.Fprint(w, page)
	}, nil)
	orders, err := c.ListOrders(context.Background(), "off")
	if err == nil || !strings.Contains(err.Error(), "waldur GET /api/marketplace-orders/: the listing has more than 100000 items") {
		t.Fatalf("listed %d orders over %d pages, err %v; want the item bound named", len(orders), pages.Load(), err)
	}
	if failure.IsTransient(err) || orders != nil {
		t.Fatalf("a listing past its bound is not transient and returns nothing: %v, %d orders", err, len(orders))
	}
	if n := pages.Load(); n != 334 {
		t.Fatalf("%d pages read, want 334 (the bound reached on the page that passes it)", n)
	}
}

// A listing is bounded in bytes, and pages are decoded as a stream: a page far larger than the
// bound is cut off once the bound is passed, not read whole first.
func TestListingBytesAreBoundedWhileStreaming(t *testing.T) {
	const bound = 4 << 20
	var written atomic.Int64
	filler := strings.Repeat("x", 64<<10)
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "[")
		for i := 0; i < 800; i++ { // 50 MiB of orders with a large attribute each
			n, err := fmt.Fprintf(w, `{"uuid":"u%d","attributes":{"note":"%s"}},`, i, filler)
			written.Add(int64(n))
			if err != nil {
				return // the client stopped reading
			}
		}
		fmt.Fprint(w, `{"uuid":"last"}]`)
	}, func(o *Options) { o.MaxListBytes = bound })
	orders, err := c.ListOrders(context.Background(), "off")
	if err == nil || !strings.Contains(err.Error(), "waldur GET /api/marketplace-orders/: the listing is larger than 4 MiB") {
		t.Fatalf("listed %d orders, err %v; want the byte bound named", len(orders), err)
	}
	if n := written.Load(); n > 24<<20 {
		t.Fatalf("the server wrote %d MiB before the client stopped: the page was read whole, not streamed", n>>20)
	}
}

// Streaming keeps what reading whole pages did: one malformed item stands alone, a cut
// connection is transient, data after the list is malformed.
func TestStreamedPagesKeepTheirErrors(t *testing.T) {
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `[{"uuid":"a"}] [{"uuid":"b"}]`)
	}, nil)
	if _, err := c.ListOrders(context.Background(), "off"); err == nil || !strings.Contains(err.Error(), "malformed response: data after the list") {
		t.Fatalf("two lists in one page: %v", err)
	}
	c = newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		fmt.Fprint(w, `[{"uuid":"a"},`) // the connection ends 986 bytes early
	}, func(o *Options) { o.Retry = RetryPolicy{Max: -1} })
	if _, err := c.ListOrders(context.Background(), "off"); err == nil || !failure.IsTransient(err) {
		t.Fatalf("a cut connection: %v, want a transient error", err)
	}
	c = newTestClient(t, func(w http.ResponseWriter, r *http.Request) {}, nil)
	if orders, err := c.ListOrders(context.Background(), "off"); err != nil || len(orders) != 0 {
		t.Fatalf("an empty body: %v %v", orders, err)
	}
}
