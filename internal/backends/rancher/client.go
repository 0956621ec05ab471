package rancher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/rancher/norman/clientbase"
	"github.com/rancher/norman/types"

	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/secret"
	"github.com/waldur/site-agent/internal/upstream"
)

// Rancher v3 schema ids used by the backend.
const (
	schemaProject = "project"
	schemaBinding = "projectRoleTemplateBinding"
	schemaCluster = "cluster"
	schemaToken   = "token"
)

// v3Client is a Rancher v3 API client on norman's clientbase. The schemas are fetched on first
// use (GET /v3, then the X-API-Schemas document), not in the constructor; every request
// carries "Authorization: Bearer <access>:<secret>" and runs through the retrying transport.
type v3Client struct {
	root    string // <backend_url>/v3
	opts    *clientbase.ClientOpts
	rt      http.RoundTripper
	timeout time.Duration

	mu  sync.Mutex
	api *clientbase.APIBaseClient
}

func newV3Client(baseURL, accessKey string, secretKey secret.Secret, rt http.RoundTripper, timeout time.Duration) *v3Client {
	opts := &clientbase.ClientOpts{URL: baseURL + "/v3", TokenKey: accessKey + ":" + secretKey.Reveal(), Timeout: timeout}
	return &v3Client{root: opts.URL, opts: opts, rt: rt, timeout: timeout}
}

// httpClient is a client bound to ctx.
func (c *v3Client) httpClient(ctx context.Context) *http.Client {
	return &http.Client{Transport: ctxTransport{ctx: ctx, next: c.rt}, CheckRedirect: upstream.NoRedirect}
}

// ops returns norman's operations bound to ctx, loading the schemas first if needed.
func (c *v3Client) ops(ctx context.Context) (*clientbase.APIOperations, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.api == nil {
		api, err := c.bootstrap(ctx)
		if err != nil {
			return nil, err
		}
		c.api = api
	}
	o := *c.api.Ops
	o.Client = c.httpClient(ctx)
	return &o, nil
}

// bootstrap does what clientbase.NewAPIClient does (root, then schemas) through our transport;
// NewAPIClient itself would replace the transport and lose retries and TLS settings.
func (c *v3Client) bootstrap(ctx context.Context) (*clientbase.APIBaseClient, error) {
	hc := c.httpClient(ctx)
	resp, err := c.get(hc, c.root)
	if err != nil {
		return nil, err
	}
	schemasURL := resp.Header.Get("X-API-Schemas")
	_ = resp.Body.Close()
	if schemasURL == "" {
		return nil, failure.Errorf("%s is not a Rancher v3 API (no X-API-Schemas header); check backend_url", c.root)
	}
	if resp, err = c.get(hc, schemasURL); err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var coll types.SchemaCollection
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&coll); err != nil {
		return nil, failure.Transient(fmt.Errorf("rancher: decode schemas: %w", err))
	}
	byID := map[string]types.Schema{}
	for _, s := range coll.Data {
		byID[s.ID] = s
	}
	for _, id := range []string{schemaProject, schemaBinding, schemaCluster} {
		if _, ok := byID[id]; !ok {
			return nil, failure.Errorf("the Rancher API at %s offers no %q schema to this token", c.root, id)
		}
	}
	ops := &clientbase.APIOperations{Opts: c.opts, Types: byID}
	return &clientbase.APIBaseClient{Ops: ops, Opts: c.opts, Types: byID}, nil
}

func (c *v3Client) get(hc *http.Client, target string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	(&clientbase.APIOperations{Opts: c.opts}).SetupRequest(req)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, classify(http.MethodGet, target, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, failure.StatusErr("rancher", http.MethodGet, pathOf(target), resp.StatusCode, body)
	}
	return resp, nil
}

// call runs fn with operations bound to ctx and classifies its error.
func (c *v3Client) call(ctx context.Context, method, what string, fn func(*clientbase.APIOperations) error) error {
	ops, err := c.ops(ctx)
	if err != nil {
		return err
	}
	if err := fn(ops); err != nil {
		return classify(method, what, err)
	}
	return nil
}

// classify turns norman and transport errors into backends errors: an *APIError becomes a
// StatusError (transient for 5xx/429; 404 also matches ErrNotFound), network failures are
// transient. Messages carry method and path, never the query or credentials.
func classify(method, what string, err error) error {
	var ae *clientbase.APIError
	if errors.As(err, &ae) {
		se := failure.StatusErr("rancher", method, pathOf(ae.URL), ae.StatusCode, []byte(ae.Body))
		if ae.StatusCode == http.StatusNotFound {
			return fmt.Errorf("%w (%w)", se, failure.ErrNotFound)
		}
		return se
	}
	var ue *url.Error
	if errors.As(err, &ue) || failure.IsTransient(err) {
		return failure.Transient(fmt.Errorf("rancher %s %s: %w", method, pathOf(what), unwrapURL(err)))
	}
	return fmt.Errorf("rancher %s %s: %w", method, pathOf(what), err)
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// pathOf returns the path of a URL (or the string itself when it is not one).
func pathOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Path != "" {
		return u.Path
	}
	return raw
}

// listAll lists a collection with limit=-1 and follows pagination.next in case the server
// pages anyway.
func listAll[T any](ctx context.Context, c *v3Client, schema string, filters map[string]any) ([]T, error) {
	f := map[string]any{"limit": "-1"}
	for k, v := range filters {
		f[k] = v
	}
	var out []T
	page := struct {
		types.Collection
		Data []T `json:"data"`
	}{}
	err := c.call(ctx, http.MethodGet, "/v3/"+schema, func(o *clientbase.APIOperations) error {
		if err := o.DoList(schema, &types.ListOpts{Filters: f}, &page); err != nil {
			return err
		}
		out = append(out, page.Data...)
		for n := 0; page.Pagination != nil && page.Pagination.Next != ""; n++ {
			if n > 1000 {
				return fmt.Errorf("more than 1000 pages of %s", schema)
			}
			next := page.Pagination.Next
			page.Data, page.Pagination = nil, nil
			if err := o.DoNext(next, &page); err != nil {
				return err
			}
			out = append(out, page.Data...)
		}
		return nil
	})
	return out, err
}
