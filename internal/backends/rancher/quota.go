package rancher

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/waldur/site-agent/internal/backends"
	rancherapi "github.com/waldur/site-agent/internal/clients/rancher"
	"github.com/waldur/site-agent/internal/failure"
	"github.com/waldur/site-agent/internal/usage"
)

// unitKind is the backend unit of a component. The convention (documented in docs/rancher.md,
// the same in quotas written, quotas read and usage):
//
//	cores — CPU cores; quantities in millicores ("1500m" = 1.5)
//	gib   — memory and storage in GB meaning GiB (2^30 bytes), written as Mi ("8Gi" = 8)
//	count — GPUs and other extended resources, whole numbers
type unitKind int

const (
	kindCores unitKind = iota
	kindGiB
	kindCount
)

func (k unitKind) String() string {
	return [...]string{"cores", "GiB", "count"}[k]
}

const gib = float64(1 << 30)

// quotaKey maps one offering component to a ResourceQuota key.
type quotaKey struct {
	Component string
	Key       corev1.ResourceName // spec.hard key, e.g. limits.cpu or requests.nvidia.com/gpu-h100
	Kind      unitKind
	// PodResource is the container resource summed by usage_source: pods ("cpu", "memory",
	// "nvidia.com/gpu"); "storage" means PVC requests.
	PodResource corev1.ResourceName
}

// quotaMap lists the quota keys of an offering, sorted by component name.
type quotaMap []quotaKey

// buildQuotaMap derives the quota keys from backend_components: `k8s_resource: X` gives
// requests.X, else the component `type` (defaulting to the component name) gives cpu →
// limits.cpu, ram/memory → limits.memory, storage → requests.storage, gpu →
// requests.nvidia.com/gpu. Other components (e.g. pods) are not quotas.
func buildQuotaMap(comps backends.Components) (quotaMap, error) {
	var out quotaMap
	seen := map[corev1.ResourceName]string{}
	for _, c := range comps.Sorted() {
		typ := strings.ToLower(strings.TrimSpace(c.String("type")))
		if typ == "" {
			typ = strings.ToLower(c.Name)
		}
		k, ok, err := keyFor(c, typ)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if prev, dup := seen[k.Key]; dup {
			return nil, fmt.Errorf("backend_components.%s: maps to the quota key %s, like component %s; give one of them another type or k8s_resource",
				c.Name, k.Key, prev)
		}
		seen[k.Key] = c.Name
		out = append(out, k)
	}
	return out, nil
}

func keyFor(c backends.Component, typ string) (quotaKey, bool, error) {
	k := quotaKey{Component: c.Name, Kind: kindCount}
	switch typ {
	case "cpu":
		k.Key, k.Kind, k.PodResource = "limits.cpu", kindCores, corev1.ResourceCPU
	case "ram", "memory":
		k.Key, k.Kind, k.PodResource = "limits.memory", kindGiB, corev1.ResourceMemory
	case "storage":
		k.Key, k.Kind, k.PodResource = "requests.storage", kindGiB, corev1.ResourceStorage
	case "gpu":
		k.Key, k.PodResource = "requests.nvidia.com/gpu", "nvidia.com/gpu"
	}
	if raw, set := c.Settings["k8s_resource"]; set {
		res, ok := raw.(string)
		res = strings.TrimSpace(res)
		if !ok || res == "" {
			return k, false, fmt.Errorf("backend_components.%s.k8s_resource: must be a resource name such as nvidia.com/gpu-h100", c.Name)
		}
		if errs := validation.IsQualifiedName(res); len(errs) > 0 || strings.HasPrefix(res, "requests.") || strings.HasPrefix(res, "limits.") {
			return k, false, fmt.Errorf("backend_components.%s.k8s_resource: %q is not a resource name such as nvidia.com/gpu-h100 "+
				"(without a requests. prefix)", c.Name, res)
		}
		k.Key, k.PodResource = corev1.ResourceName("requests."+res), corev1.ResourceName(res)
	}
	return k, k.Key != "", nil
}

// hard builds spec.hard from limits in backend units; components without a quota key are
// ignored. An amount the key cannot hold (negative, fractional GPUs) is a user-facing error.
func (m quotaMap) hard(limits backends.Quantities) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for _, k := range m {
		v, ok := limits[k.Component]
		if !ok {
			continue
		}
		q, err := toQuantity(k.Kind, v)
		if err != nil {
			return nil, failure.Errorf("limit %s=%v (%s): %v", k.Component, v, k.Kind, err)
		}
		out[k.Key] = q
	}
	return out, nil
}

// read converts quota amounts (spec.hard or status.used) back to components in backend units.
func (m quotaMap) read(list corev1.ResourceList) backends.Quantities {
	out := backends.Quantities{}
	for _, k := range m {
		if q, ok := list[k.Key]; ok {
			out[k.Component] = fromQuantity(k.Kind, q)
		}
	}
	return out
}

// zeros returns every quota component at 0.
func (m quotaMap) zeros() backends.Quantities {
	out := backends.Quantities{}
	for _, k := range m {
		out[k.Component] = 0
	}
	return out
}

// toQuantity formats an amount in backend units. Amounts a quantity cannot hold (negative, not
// a number, more than an int64 of millicores or bytes, fractional counts) are refused, never
// wrapped: 17179869184 GB in bytes would be 2^64, which int64 holds as 0.
func toQuantity(kind unitKind, v float64) (resource.Quantity, error) {
	switch kind {
	case kindCores:
		m, err := usage.Whole(v, 1000, math.MaxInt64)
		if err != nil {
			return resource.Quantity{}, err
		}
		return *resource.NewMilliQuantity(m, resource.DecimalSI), nil
	case kindGiB:
		mi, err := usage.Whole(v, 1024, math.MaxInt64>>20)
		if err != nil {
			return resource.Quantity{}, err
		}
		return *resource.NewQuantity(mi<<20, resource.BinarySI), nil
	}
	n, err := usage.Whole(v, 1, math.MaxInt64)
	if err != nil {
		return resource.Quantity{}, err
	}
	if v != math.Trunc(v) {
		return resource.Quantity{}, fmt.Errorf("must be a whole number (Kubernetes counts GPUs and extended resources in units)")
	}
	return *resource.NewQuantity(n, resource.DecimalSI), nil
}

// fromQuantity converts a quantity to backend units: cores = MilliValue/1000, GiB =
// Value/2^30, counts as they are; an amount beyond int64 in those units (or beyond float64) as
// the nearest float64 (the largest finite one). Quantities come from an upstream: any exponent
// is valid text, and reading one costs no more than its digits (see rancherapi.Scaled).
func fromQuantity(kind unitKind, q resource.Quantity) float64 {
	switch kind {
	case kindCores:
		if m, ok := rancherapi.Scaled(q, resource.Milli); ok {
			return float64(m) / 1000
		}
	case kindGiB:
		if b, ok := rancherapi.Scaled(q, 0); ok {
			return float64(b) / gib
		}
		return rancherapi.Float(q) / gib
	}
	return rancherapi.Float(q)
}

// sameHard reports whether two spec.hard lists hold the same keys and amounts.
func sameHard(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		o, ok := b[k]
		if !ok || q.Cmp(o) != 0 {
			return false
		}
	}
	return true
}

// mergeUsed merges status.used of several quotas of one namespace. The same key in two quotas
// counts the same pods, so the larger amount is kept (the incumbent kept the last one listed).
func mergeUsed(dst, src corev1.ResourceList) {
	for k, q := range src {
		if o, ok := dst[k]; !ok || q.Cmp(o) > 0 {
			dst[k] = q.DeepCopy()
		}
	}
}
