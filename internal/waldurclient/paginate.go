package waldurclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
)

// PageSize is the page size used for "all" listings: Waldur's maximum (its
// LinkHeaderPagination.max_page_size). The incumbent asked for 100, three times the requests and
// count queries for a large offering; a server with a lower maximum serves smaller pages, and the
// next links keep the numbering consistent.
const PageSize = 300

// maxPages guards against a server whose Link header never ends.
const maxPages = 10000

var nextLink = regexp.MustCompile(`<([^>]+)>\s*;\s*rel="?next"?`)

// listAll reads every page of a listing. Pages are requested by number (taken from the next
// link, as the incumbent does) against our own base URL, so a proxy that rewrites hosts in Link
// headers cannot redirect the client elsewhere. Each page is decoded as a stream, item by item,
// and the listing is bounded in items and bytes (Options.MaxListItems, MaxListBytes): a page of
// 64 MiB and 10,000 pages no longer sit in memory.
func listAll[T any](ctx context.Context, c *Client, tmpl, id string, q url.Values) ([]T, error) {
	q = cloneValues(q)
	q.Set("page_size", strconv.Itoa(PageSize))
	l := &listing{bounds: c.bounds, what: "waldur GET " + tmpl}
	var all []T
	for page := 1; page <= maxPages; page++ {
		q.Set("page", strconv.Itoa(page))
		cl := call{method: http.MethodGet, tmpl: tmpl, id: id, query: q}
		resp, err := c.open(ctx, cl, c.url(cl), true)
		if err != nil {
			return nil, err
		}
		err = decodePage(l, resp.Body, &all)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		next, ok := nextPage(resp.Header)
		if !ok || next <= page {
			return all, nil
		}
		page = next - 1
	}
	return all, nil
}

// malformable is implemented by list items that can stand in for an item that failed to decode,
// so one bad object does not hide the others (it is handled, e.g. erred, on its own).
type malformable interface {
	markMalformed(raw []byte, err error)
}

func decodeItem[T any](r json.RawMessage) (T, error) {
	var item T
	if err := json.Unmarshal(r, &item); err != nil {
		item = *new(T)
		m, ok := any(&item).(malformable)
		if !ok {
			return item, err
		}
		m.markMalformed(r, err)
	}
	return item, nil
}

// first reads only the first page with the server's default page size.
func first[T any](ctx context.Context, c *Client, tmpl string, q url.Values) ([]T, error) {
	var items []T
	_, err := c.do(ctx, call{method: http.MethodGet, tmpl: tmpl, query: q}, &items)
	return items, err
}

func nextPage(h http.Header) (int, bool) {
	for _, link := range h.Values("Link") {
		m := nextLink.FindStringSubmatch(link)
		if m == nil {
			continue
		}
		u, err := url.Parse(m[1])
		if err != nil {
			return 0, false
		}
		n, err := strconv.Atoi(u.Query().Get("page"))
		return n, err == nil
	}
	return 0, false
}

func cloneValues(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// fields builds a field= sparse fieldset.
func fields(names ...string) url.Values {
	return url.Values{"field": names}
}
