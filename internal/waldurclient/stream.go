package waldurclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/waldur/site-agent/internal/failure"
)

// Defaults of Options.MaxListItems and MaxListBytes: far above what one offering lists (a page
// holds PageSize items), far below what would exhaust the agent's memory.
const (
	DefaultMaxListItems = 100_000
	DefaultMaxListBytes = 256 << 20
)

// listBounds bound one listing, all its pages together.
type listBounds struct {
	items int
	bytes int64
}

func (b listBounds) orDefaults() listBounds {
	if b.items <= 0 {
		b.items = DefaultMaxListItems
	}
	if b.bytes <= 0 {
		b.bytes = DefaultMaxListBytes
	}
	return b
}

// listing counts what one listing has read so far.
type listing struct {
	bounds listBounds
	what   string // "waldur GET /api/…", for messages
	items  int
	bytes  int64
}

// errTooLarge is a listing or page past its bound: permanent (Waldur will not send less next
// time), and named so an operator can tell which bound.
type errTooLarge struct{ msg string }

func (e *errTooLarge) Error() string { return e.msg }

// body counts the bytes a page's decoder reads against the page and listing bounds, and keeps
// the transport's read error apart from the JSON's (a cut connection is transient, a
// malformed page is not). Past a bound it reads nothing more and keeps saying why (a decoder
// may look past an error that came with data).
type body struct {
	r     io.Reader
	l     *listing
	page  int64
	stop  error
	netEr error
}

func (b *body) Read(p []byte) (int, error) {
	if b.stop != nil {
		return 0, b.stop
	}
	n, err := b.r.Read(p)
	b.page += int64(n)
	b.l.bytes += int64(n)
	switch {
	case b.page > maxBody:
		b.stop = &errTooLarge{fmt.Sprintf("%s: a page is larger than %d MiB", b.l.what, maxBody>>20)}
	case b.l.bytes > b.l.bounds.bytes:
		b.stop = &errTooLarge{fmt.Sprintf("%s: the listing is larger than %d MiB (the most one listing may hold)", b.l.what, b.l.bounds.bytes>>20)}
	case err != nil && !errors.Is(err, io.EOF):
		b.netEr = err
	}
	if b.stop != nil {
		return 0, b.stop
	}
	return n, err
}

// decodePage streams one page (a JSON array) into all, item by item.
func decodePage[T any](l *listing, r io.Reader, all *[]T) error {
	b := &body{r: r, l: l}
	err := decodeArray(l, json.NewDecoder(b), all)
	var big *errTooLarge
	switch {
	case err == nil:
		return nil
	case errors.As(err, &big):
		return big
	case b.netEr != nil:
		return failure.Transient(fmt.Errorf("%s: reading response: %w", l.what, b.netEr))
	}
	// %v: a JSON error that ends early says io.ErrUnexpectedEOF, which is not a network failure
	return fmt.Errorf("%s: malformed response: %v", l.what, err)
}

func decodeArray[T any](l *listing, dec *json.Decoder, all *[]T) error {
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil // an empty body: no items
	}
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("want a JSON list, got %v", tok)
	}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if l.items++; l.items > l.bounds.items {
			return &errTooLarge{fmt.Sprintf("%s: the listing has more than %d items (the most one listing may hold)", l.what, l.bounds.items)}
		}
		item, err := decodeItem[T](raw)
		if err != nil {
			return fmt.Errorf("malformed item: %w", err)
		}
		*all = append(*all, item)
	}
	if _, err := dec.Token(); err != nil { // the closing ]
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("data after the list")
	}
	return nil
}
