package waldursim

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// AddendumVersion is the Waldur release the contract addendum documents. The addendum adds the
// operations the 8.0.5 contract lacks (resource projects, the users of a resource, membership
// sync statuses); its header names its sources and each operation its first release.
const AddendumVersion = "8.1.0"

//go:embed contract/waldur-openapi-8.1.0-addendum-2026-11-26.yaml
var addendumYAML []byte

// mergeAddendum adds the addendum's paths and components to doc. A path or schema both
// documents define is an error: the addendum only adds what the contract lacks.
func mergeAddendum(doc *openapi3.T, raw []byte) error {
	add, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return fmt.Errorf("load contract addendum: %w", err)
	}
	for name, ref := range add.Components.Schemas {
		if _, dup := doc.Components.Schemas[name]; dup {
			return fmt.Errorf("contract addendum redefines schema %s", name)
		}
		doc.Components.Schemas[name] = ref
	}
	for path, item := range add.Paths.Map() {
		if doc.Paths.Value(path) != nil {
			return fmt.Errorf("contract addendum redefines path %s", path)
		}
		for _, op := range item.Operations() {
			if since(op) == "" {
				return fmt.Errorf("contract addendum: %s has no x-waldur-since", op.OperationID)
			}
		}
		doc.Paths.Set(path, item)
	}
	return nil
}

// since is an operation's x-waldur-since ("" for the 8.0.5 contract's own operations).
func since(op *openapi3.Operation) string {
	v, _ := op.Extensions["x-waldur-since"].(string)
	return v
}

// versionAtLeast compares Waldur release numbers (major.minor.patch, as /api/version/ reports
// them). A pre-release (8.1.0rc19, 8.1.0.dev3) sorts before its release, as in PEP 440; a
// version that is not a release number (a development build) is taken to be new enough.
func versionAtLeast(have, want string) bool {
	h, hpre, ok := releaseOf(have)
	if !ok {
		return true
	}
	w, wpre, _ := releaseOf(want)
	for i := range h {
		if h[i] != w[i] {
			return h[i] > w[i]
		}
	}
	return !hpre || wpre
}

func releaseOf(v string) (nums [3]int, pre, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	end := 0
	for end < len(v) && (v[end] == '.' || v[end] >= '0' && v[end] <= '9') {
		end++
	}
	parts := strings.Split(strings.TrimRight(v[:end], "."), ".")
	if len(parts) == 0 || len(parts) > 3 || parts[0] == "" {
		return nums, false, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nums, false, false
		}
		nums[i] = n
	}
	return nums, end < len(v) || strings.HasSuffix(v[:end], "."), true
}
