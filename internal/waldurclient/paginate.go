package waldurclient

import (
	"context"
	"encoding/json"
	"fmt"
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
// headers cannot redirect the client elsewhere.
func listAll[T any](ctx context.Context, c *Client, tmpl, id string, q url.Values) ([]T, error) {
	q = cloneValues(q)
	q.Set("page_size", strconv.Itoa(PageSize))
	var all []T
	for page := 1; page <= maxPages; page++ {
		q.Set("page", strconv.Itoa(page))
		var raw []json.RawMessage
		h, err := c.do(ctx, call{method: http.MethodGet, tmpl: tmpl, id: id, query: q}, &raw)
		if err != nil {
			return nil, err
		}
		items, err := decodeItems[T](raw)
		if err != nil {
			return nil, fmt.Errorf("waldur GET %s: malformed item: %w", tmpl, err)
		}
		all = append(all, items...)
		next, ok := nextPage(h)
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

func decodeItems[T any](raw []json.RawMessage) ([]T, error) {
	out := make([]T, 0, len(raw))
	for _, r := range raw {
		var item T
		if err := json.Unmarshal(r, &item); err != nil {
			m, ok := any(&item).(malformable)
			if !ok {
				return nil, err
			}
			item = *new(T)
			m = any(&item).(malformable)
			m.markMalformed(r, err)
		}
		out = append(out, item)
	}
	return out, nil
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
