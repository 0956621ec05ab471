package vclusters

import (
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels and annotations on everything the tool makes in the main API server.
const (
	LabelManagedBy      = "app.kubernetes.io/managed-by"
	ManagedBy           = "site-agent-virtual-clusters"
	LabelLogicalCluster = "logical-cluster"
	LabelClusterID      = "cluster-id"
	// The kwok marker: the label and annotation kwok puts on the Nodes it fakes.
	LabelKwokType      = "type"
	KwokType           = "kwok"
	AnnotationKwokNode = "kwok.x-k8s.io/node"
	roleControlPlane   = "node-role.kubernetes.io/control-plane"
	roleEtcd           = "node-role.kubernetes.io/etcd"
	roleWorker         = "node-role.kubernetes.io/worker"
)

// maxNameLen keeps "cluster-<name>" a valid namespace name (63 characters).
const maxNameLen = 63 - len("cluster-")

// validName says why name cannot name a virtual cluster (nil if it can).
func validName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("name is required")
	case len(name) > maxNameLen:
		return fmt.Errorf("name must be at most %d characters, got %d", maxNameLen, len(name))
	}
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("name %q is not a DNS-1123 label: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// TenantNamespace is the namespace of a virtual cluster in the main API server.
func TenantNamespace(name string) string { return "cluster-" + name }

// NodeSelector selects a virtual cluster's Nodes.
func NodeSelector(name string) string { return LabelLogicalCluster + "=" + name }

// identity labels a cluster's objects.
func identity(rec Record) map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelLogicalCluster: rec.Name, LabelClusterID: rec.ID}
}

func nodeName(cluster string, i int) string { return fmt.Sprintf("%s-node%d", cluster, i) }

func podName(cluster string, i int) string { return fmt.Sprintf("%s-pod-%d", cluster, i) }

// podNode is the Node template Pod i is bound to: round-robin over the cluster's Nodes.
func podNode(rec Record, i int) string { return nodeName(rec.Name, (i-1)%rec.Nodes+1) }

// templateNodes are the Nodes of a cluster, without status (see newNode).
func (t *TemplateConfig) templateNodes(rec Record) []*corev1.Node {
	out := make([]*corev1.Node, 0, rec.Nodes)
	for i := 1; i <= rec.Nodes; i++ {
		name := nodeName(rec.Name, i)
		labels := identity(rec)
		maps.Copy(labels, t.NodeLabels)
		labels[LabelKwokType] = KwokType
		labels["kubernetes.io/hostname"] = name
		labels["kubernetes.io/os"] = "linux"
		labels["kubernetes.io/arch"] = "amd64"
		if i <= t.ControlPlanes {
			labels[roleControlPlane], labels[roleEtcd] = "true", "true"
		} else {
			labels[roleWorker] = "true"
		}
		out = append(out, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels,
			Annotations: map[string]string{AnnotationKwokNode: "fake"}}})
	}
	return out
}

// newNode is template Node n as it is created: with the annotations of the resources of the
// template Pods bound to it, and with its status — with a kubelet stand-in only what KWOK's
// node-initialize keeps (capacity, allocatable, node info; it writes the conditions), else the
// whole template status.
func (t *TemplateConfig) newNode(n *corev1.Node, rec Record, kubelet bool) *corev1.Node {
	n = n.DeepCopy()
	var bound []*PodResources
	for _, p := range t.templatePods(rec) {
		if p.Spec.NodeName == n.Name {
			bound = append(bound, podResourcesOf(p))
		}
	}
	n.Annotations[AnnotationPodRequests], n.Annotations[AnnotationPodLimits] = podResourceAnnotations(bound)
	n.Status = t.nodeStatus()
	if kubelet {
		n.Status = corev1.NodeStatus{Capacity: n.Status.Capacity, Allocatable: n.Status.Allocatable, NodeInfo: n.Status.NodeInfo}
	}
	return n
}

// nodeStatus is the status every template Node carries: capacity, allocatable, Ready.
func (t *TemplateConfig) nodeStatus() corev1.NodeStatus {
	now := metav1.Now()
	return corev1.NodeStatus{
		Capacity: t.capacity.DeepCopy(), Allocatable: t.alloc.DeepCopy(), Phase: corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "kwok-style virtual node", LastHeartbeatTime: now, LastTransitionTime: now}},
		NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: t.KubeletVersion, OperatingSystem: "linux", Architecture: "amd64"},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
	}
}

// statusDrifted reports whether a Node's capacity or allocatable differs from the template.
func (t *TemplateConfig) statusDrifted(n *corev1.Node) bool {
	return !sameList(n.Status.Capacity, t.capacity) || !sameList(n.Status.Allocatable, t.alloc)
}

func sameList(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if q, ok := a[k]; !ok || q.Cmp(v) != 0 {
			return false
		}
	}
	return true
}

// templatePods are the Pods of a cluster, bound round-robin to its Nodes.
func (t *TemplateConfig) templatePods(rec Record) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, rec.Pods)
	noToken := false
	for i := 1; i <= rec.Pods; i++ {
		labels := identity(rec)
		labels["app"] = "virtual-cluster-template"
		out = append(out, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: podName(rec.Name, i), Namespace: TenantNamespace(rec.Name), Labels: labels},
			Spec: corev1.PodSpec{
				NodeName:                     podNode(rec, i),
				AutomountServiceAccountToken: &noToken,
				Tolerations:                  []corev1.Toleration{{Key: AnnotationKwokNode, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
				Containers: []corev1.Container{{Name: "app", Image: t.PodImage,
					Resources: corev1.ResourceRequirements{Requests: t.requests.DeepCopy(), Limits: t.limits.DeepCopy()}}},
			},
		})
	}
	return out
}
