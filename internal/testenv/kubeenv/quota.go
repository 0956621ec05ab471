package kubeenv

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WaitQuotaSynced polls (bounded by timeout) until the resourcequota controller has processed
// the current spec of the ResourceQuota namespace/name: status.hard equals spec.hard and every
// hard key has a status.used entry. Create pods only after this: quota admission charges a pod
// to a quota the apiserver already knows, and the controller recounts only every 2 s here.
func (e *Env) WaitQuotaSynced(ctx context.Context, namespace, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	what := fmt.Sprintf("ResourceQuota %s/%s status", namespace, name)
	return e.cluster.poll(ctx, what, 50*time.Millisecond, func(ctx context.Context) error {
		q, err := e.Clientset.CoreV1().ResourceQuotas(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !equality.Semantic.DeepEqual(q.Spec.Hard, q.Status.Hard) {
			return fmt.Errorf("status.hard %v does not match spec.hard %v yet", q.Status.Hard, q.Spec.Hard)
		}
		for k := range q.Spec.Hard {
			if _, ok := q.Status.Used[k]; !ok {
				return fmt.Errorf("status.used lacks %s yet", k)
			}
		}
		return nil
	})
}
