package rancher

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/waldur/site-agent/internal/failure"
)

// maxBody bounds an answer read into memory (Rancher's largest, a listing of every binding of a
// big installation, stays well below it).
const maxBody = 32 << 20

// call is one request below the configured URL.
type call struct {
	method    string
	path      string // escaped, below the base: "/v3/projects/c-m-1:p-2"
	rawQuery  string // encoded query ("" none)
	in        any    // JSON body (nil: none)
	inType    string // the body's Content-Type ("" = application/json)
	anonymous bool   // no API key (the import manifest, whose URL is itself the credential)
	label     string // shown in errors and instead of path ("" = path): a path holding a credential is never shown
}

// reply is a 2xx answer.
type reply struct {
	header http.Header
	body   []byte
}

// send is the one way a request leaves the client: to the configured scheme, host and port, with
// the API key, through the retrying transport; the answer is classified here. A status of 300
// or more is a *failure.StatusError (5xx, 429 and 408 transient; 404 also matches
// failure.ErrNotFound); a request that got no answer is transient. Messages carry the method
// and the path, never the query, the host's answer headers or the key.
func (c *Client) send(ctx context.Context, k call) (reply, error) {
	label := k.label
	if label == "" {
		label = k.path
	}
	var body io.Reader
	if k.in != nil {
		b, err := json.Marshal(k.in)
		if err != nil {
			return reply{}, fmt.Errorf("rancher %s %s: encode: %w", k.method, label, err)
		}
		body = bytes.NewReader(b)
	}
	target := c.base.Scheme + "://" + c.base.Host + c.base.EscapedPath() + k.path
	if k.rawQuery != "" {
		target += "?" + k.rawQuery
	}
	req, err := http.NewRequestWithContext(ctx, k.method, target, body)
	if err != nil {
		return reply{}, fmt.Errorf("rancher %s %s: %w", k.method, label, unwrapURL(err))
	}
	req.Header.Set("Accept", "application/json")
	if k.in != nil {
		ct := k.inType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	hc := c.quiet
	if !k.anonymous {
		req.Header.Set("Authorization", "Bearer "+c.token.Reveal())
		hc = c.hc
	}
	resp, err := hc.Do(req)
	if err != nil {
		return reply{}, failure.Transient(fmt.Errorf("rancher %s %s: %w", k.method, label, unwrapURL(err)))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return reply{}, failure.Transient(fmt.Errorf("rancher %s %s: read: %w", k.method, label, err))
	}
	if len(data) > maxBody {
		return reply{}, fmt.Errorf("rancher %s %s: the answer exceeds %d MiB", k.method, label, maxBody>>20)
	}
	if resp.StatusCode >= 300 {
		err := failure.StatusErr("rancher", k.method, label, resp.StatusCode, data)
		if resp.StatusCode == http.StatusNotFound {
			return reply{}, fmt.Errorf("%w (%w)", err, failure.ErrNotFound)
		}
		return reply{}, err
	}
	if !k.anonymous {
		c.answered.Store(time.Now().UnixNano())
	}
	return reply{header: resp.Header, body: data}, nil
}

// do sends a request with the API key and decodes a JSON answer into out (nil: discarded).
func (c *Client) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	r, err := c.send(ctx, call{method: method, path: path, rawQuery: q.Encode(), in: in})
	if err != nil {
		return err
	}
	return decode(method, path, r.body, out)
}

func decode(method, path string, data []byte, out any) error {
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("rancher %s %s: unexpected answer: %w", method, path, err)
	}
	return nil
}

// unwrapURL drops net/url's wrapper, whose message repeats the whole URL.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// query builds a query from key/value pairs.
func query(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// isConflict reports a 409 answer.
func isConflict(err error) bool { return failure.HasStatus(err, http.StatusConflict) }
