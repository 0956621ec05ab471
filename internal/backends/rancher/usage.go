package rancher

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/waldur/site-agent/internal/backends"
)

// Usage implements backends.UsageReporter. For each resource it sums, over the namespaces of
// its project, either the ResourceQuota status.used (usage_source: quota, the incumbent's
// source: limits of cpu/memory, requests of storage and extended resources, as counted by the
// quota controller) or the requests of non-terminal pods and the storage requests of PVCs
// (usage_source: pods). Amounts are backend units (cores, GiB, counts). They describe the
// allocation now, so only the current period has data. Two list requests serve the whole pass
// (three with pods).
func (b *Backend) Usage(ctx context.Context, resources []backends.Resource, _ backends.Period, current bool) (map[string]backends.Usage, error) {
	out := map[string]backends.Usage{}
	if !current || len(resources) == 0 || len(b.cfg.quotaKeys) == 0 {
		return out, nil
	}
	byProject, err := b.projectNamespaces(ctx)
	if err != nil {
		return nil, err
	}
	var used map[string]corev1.ResourceList // namespace → amounts under quota keys
	if b.cfg.usageSource == UsageFromPods {
		used, err = b.podUsage(ctx)
	} else {
		used, err = b.quotaUsage(ctx)
	}
	if err != nil {
		return nil, err
	}
	for _, r := range resources {
		nss := byProject[r.BackendID]
		if len(nss) == 0 {
			continue // no namespace (yet): no data rather than a misleading zero
		}
		total := b.cfg.quotaKeys.zeros()
		for _, ns := range nss {
			for k, v := range b.cfg.quotaKeys.read(used[ns.Name]) {
				total[k] += v
			}
		}
		out[r.BackendID] = backends.Usage{Total: total}
	}
	return out, nil
}

// quotaUsage merges status.used of every ResourceQuota per namespace.
func (b *Backend) quotaUsage(ctx context.Context) (map[string]corev1.ResourceList, error) {
	qs, err := b.kube.quotas(ctx, "")
	if err != nil {
		return nil, err
	}
	out := map[string]corev1.ResourceList{}
	for _, q := range qs {
		if out[q.Namespace] == nil {
			out[q.Namespace] = corev1.ResourceList{}
		}
		mergeUsed(out[q.Namespace], q.Status.Used)
	}
	return out, nil
}

// podUsage sums pod requests and PVC storage requests per namespace under the quota keys.
func (b *Backend) podUsage(ctx context.Context) (map[string]corev1.ResourceList, error) {
	pods, err := b.kube.activePods(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]corev1.ResourceList{}
	add := func(ns string, key corev1.ResourceName, q resource.Quantity) {
		if out[ns] == nil {
			out[ns] = corev1.ResourceList{}
		}
		sum := out[ns][key]
		sum.Add(q)
		out[ns][key] = sum
	}
	wantClaims := false
	for _, k := range b.cfg.quotaKeys {
		if k.PodResource == corev1.ResourceStorage {
			wantClaims = true
			continue
		}
		for i := range pods {
			add(pods[i].Namespace, k.Key, podRequest(&pods[i], k.PodResource))
		}
	}
	if !wantClaims {
		return out, nil
	}
	claims, err := b.kube.claims(ctx)
	if err != nil {
		return nil, err
	}
	for _, k := range b.cfg.quotaKeys {
		if k.PodResource != corev1.ResourceStorage {
			continue
		}
		for _, c := range claims {
			if q, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]; ok && c.DeletionTimestamp == nil {
				add(c.Namespace, k.Key, q)
			}
		}
	}
	return out, nil
}

// podRequest is a pod's effective request of one resource, the way the scheduler counts it:
// the containers plus the sidecar (restartable init) containers, or the largest classic init
// container with the sidecars started before it if that is more, plus the pod overhead.
func podRequest(p *corev1.Pod, name corev1.ResourceName) resource.Quantity {
	var sum, sidecars, initMax resource.Quantity
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Requests[name]; ok {
			sum.Add(q)
		}
	}
	for _, c := range p.Spec.InitContainers {
		q, ok := c.Resources.Requests[name]
		if !ok {
			continue
		}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.Add(q) // runs alongside everything started after it
			q = sidecars.DeepCopy()
		} else {
			q.Add(sidecars) // a classic init container runs with the sidecars started before it
		}
		if q.Cmp(initMax) > 0 {
			initMax = q.DeepCopy()
		}
	}
	sum.Add(sidecars)
	if initMax.Cmp(sum) > 0 {
		sum = initMax
	}
	if q, ok := p.Spec.Overhead[name]; ok {
		sum.Add(q)
	}
	return sum
}

// UsageIsGauge implements backends.GaugeUsage: both usage sources measure what is allocated now
// (quota status.used or the requests of live pods), which falls when pods end.
func (b *Backend) UsageIsGauge() bool { return true }
