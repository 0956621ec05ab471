package waldursim

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// ContractVersion is the Waldur version of the embedded contract.
const ContractVersion = "8.0.5"

//go:embed contract/waldur-openapi-8.0.5-trimmed.yaml
var contractYAML []byte

// opInfo is what the simulator knows about one contract operation.
type opInfo struct {
	ID, Method, Path string
	Op               *openapi3.Operation
	Route            *routers.Route
	Query            map[string]*openapi3.Parameter // declared query parameters
	Paginated        bool                           // declares page/page_size
	HasBody          bool                           // declares a request body
	// Since is the first Waldur release serving the operation: set for the addendum's
	// operations, which a simulator reporting an older version answers with 404.
	Since string
}

// contract is the parsed, errata-corrected contract shared by all servers.
type contract struct {
	doc     *openapi3.T
	router  routers.Router
	ops     map[string]*opInfo // by operationId
	options *openapi3filter.Options
	formats map[string]openapi3.StringFormatValidator
	schemas sync.Map // field-subset response schemas, see fieldSchema
}

var (
	contractOnce   sync.Once
	sharedContract *contract
	contractErr    error
)

// loadContract parses the embedded contract once per process: tests create many servers.
func loadContract() (*contract, error) {
	contractOnce.Do(func() { sharedContract, contractErr = parseContract(contractYAML, addendumYAML) })
	return sharedContract, contractErr
}

func parseContract(raw, addendum []byte) (*contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("load contract: %w", err)
	}
	if err := applyErrata(doc); err != nil {
		return nil, err
	}
	if err := mergeAddendum(doc, addendum); err != nil {
		return nil, err
	}
	router, err := legacy.NewRouter(doc, openapi3.DisableExamplesValidation())
	if err != nil {
		return nil, fmt.Errorf("route contract: %w", err)
	}
	c := &contract{doc: doc, router: router, ops: map[string]*opInfo{}, formats: formatValidators()}
	c.options = &openapi3filter.Options{
		AuthenticationFunc:                openapi3filter.NoopAuthenticationFunc,
		RejectWhenRequestBodyNotSpecified: true,
		SkipSettingDefaults:               true,
		SchemaValidationOptions: []openapi3.SchemaValidationOption{
			openapi3.WithStringFormatValidators(c.formats),
		},
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			info := &opInfo{ID: op.OperationID, Method: method, Path: path, Op: op,
				Query: map[string]*openapi3.Parameter{}, HasBody: op.RequestBody != nil, Since: since(op)}
			info.Route = &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: op}
			for _, p := range append(item.Parameters, op.Parameters...) {
				if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
					info.Query[p.Value.Name] = p.Value
				}
			}
			_, info.Paginated = info.Query["page"]
			c.ops[info.ID] = info
		}
	}
	return c, nil
}

// formatValidators make the string formats the contract uses strict. Django accepts UUIDs with
// or without dashes, so both are valid; decimals are what DRF's DecimalField accepts.
func formatValidators() map[string]openapi3.StringFormatValidator {
	decimal := regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	return map[string]openapi3.StringFormatValidator{
		"uuid": openapi3.NewCallbackValidator(func(s string) error {
			if _, ok := normUUID(s); !ok {
				return errors.New("not a UUID")
			}
			return nil
		}),
		"decimal": openapi3.NewCallbackValidator(func(s string) error {
			if !decimal.MatchString(s) {
				return errors.New("not a decimal number")
			}
			return nil
		}),
		"uri": openapi3.NewCallbackValidator(func(s string) error {
			if s == "" {
				return nil // DRF renders a blank URLField as ""
			}
			u, err := url.Parse(s)
			if err != nil || u.Scheme == "" || u.Host == "" {
				return errors.New("not an absolute URL")
			}
			return nil
		}),
	}
}

// errMethodNotAllowed and errPathNotFound classify routing failures.
var (
	errMethodNotAllowed = errors.New("method not allowed")
	errPathNotFound     = errors.New("path not found")
)

// findRoute maps a request to its operation and path parameters.
func (c *contract) findRoute(r *http.Request) (*opInfo, map[string]string, error) {
	route, params, err := c.router.FindRoute(r)
	if err == nil {
		// Waldur paths end with "/"; the router would also match them without it.
		if strings.HasSuffix(route.Path, "/") != strings.HasSuffix(r.URL.Path, "/") {
			return nil, nil, errPathNotFound
		}
		return c.ops[route.Operation.OperationID], params, nil
	}
	// The legacy router reports templated paths with a wrong method as not found: probe.
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(context.Background())
		probe.Method = m
		if _, _, err := c.router.FindRoute(probe); err == nil {
			return nil, nil, errMethodNotAllowed
		}
	}
	return nil, nil, errPathNotFound
}

// operationIDs lists every operation of the contract, sorted.
func (c *contract) operationIDs() []string {
	ids := make([]string, 0, len(c.ops))
	for id := range c.ops {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// fieldSchema derives, once per field set, the response schema of op restricted to fields:
// only those properties, each of them required (DRF renders every requested field).
func (c *contract) fieldSchema(op *opInfo, status int, fields []string) (*openapi3.Schema, error) {
	sorted := append([]string(nil), fields...)
	sort.Strings(sorted)
	key := fmt.Sprintf("%s|%d|%s", op.ID, status, strings.Join(sorted, ","))
	if v, ok := c.schemas.Load(key); ok {
		return v.(*openapi3.Schema), nil
	}
	full, err := responseSchema(op, status)
	if err != nil {
		return nil, err
	}
	item, isArray := full, false
	if full.Type.Is(openapi3.TypeArray) && full.Items != nil {
		item, isArray = full.Items.Value, true
	}
	subset := &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeObject}, Properties: openapi3.Schemas{}}
	for _, f := range sorted {
		if p, ok := item.Properties[f]; ok {
			subset.Properties[f] = p
			subset.Required = append(subset.Required, f)
		}
	}
	out := subset
	if isArray {
		out = &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: &openapi3.SchemaRef{Value: subset}}
	}
	c.schemas.Store(key, out)
	return out, nil
}

// responseSchema is the JSON schema op declares for status.
func responseSchema(op *opInfo, status int) (*openapi3.Schema, error) {
	resp := op.Op.Responses.Status(status)
	if resp == nil || resp.Value == nil {
		return nil, fmt.Errorf("status %d is not documented", status)
	}
	mt := resp.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil, fmt.Errorf("status %d has no JSON body in the contract", status)
	}
	return mt.Schema.Value, nil
}

// unknownProperties lists body properties that the request schema does not declare (DRF
// would silently ignore them, so a misspelt field would do nothing on real Waldur).
func unknownProperties(schema *openapi3.Schema, value any, at string) []string {
	if schema == nil {
		return nil
	}
	var out []string
	for _, sub := range schema.AllOf {
		if sub.Value != nil && len(sub.Value.Properties) > 0 {
			out = append(out, unknownProperties(sub.Value, value, at)...)
		}
	}
	switch v := value.(type) {
	case map[string]any:
		if len(schema.Properties) == 0 {
			return out
		}
		closed := schema.AdditionalProperties.Has == nil && schema.AdditionalProperties.Schema == nil
		for key, child := range v {
			prop, declared := schema.Properties[key]
			switch {
			case declared && prop.Value != nil:
				out = append(out, unknownProperties(prop.Value, child, at+"/"+key)...)
			case !declared && closed:
				out = append(out, at+"/"+key)
			}
		}
	case []any:
		if schema.Items != nil {
			for i, child := range v {
				out = append(out, unknownProperties(schema.Items.Value, child, fmt.Sprintf("%s/%d", at, i))...)
			}
		}
	}
	sort.Strings(out)
	return out
}

// requestSchema is the JSON schema of op's request body, or nil.
func requestSchema(op *opInfo) *openapi3.Schema {
	if op.Op.RequestBody == nil || op.Op.RequestBody.Value == nil {
		return nil
	}
	mt := op.Op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	return mt.Schema.Value
}
