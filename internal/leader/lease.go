package leader

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/waldur/site-agent/internal/kubeapi"
)

// coordScheme holds coordination.k8s.io/v1 only.
var coordScheme = kubeapi.NewScheme(coordv1.AddToScheme)

// errHeld says another replica holds a lease that has not expired (on this replica's clock).
var errHeld = errors.New("lease held by another replica")

// lease reads and writes one Lease and remembers when its record last changed, on this
// replica's own clock: expiry is judged from that moment plus the holder's lease duration, never
// from the holder's timestamps, so clock skew between replicas cannot make a lease look expired.
type lease struct {
	leases   kubeapi.Resource[*coordv1.Lease, *coordv1.LeaseList]
	ns, name string
	identity string
	duration time.Duration

	observed   coordv1.LeaseSpec
	observedAt time.Time
}

func newLease(rc *rest.Config, ns, name, identity string, duration time.Duration) (*lease, error) {
	g, err := kubeapi.NewGroup(rc, nil, coordv1.SchemeGroupVersion, coordScheme)
	if err != nil {
		return nil, err
	}
	leases := kubeapi.NewResource[coordv1.Lease, coordv1.LeaseList](g, "leases", ns)
	return &lease{leases: leases, ns: ns, name: name, identity: identity, duration: duration}, nil
}

// tryAcquireOrRenew takes the lease when it is free, expired or already ours, and writes a
// fresh renewal. It returns the holder it saw (for "leader observed"), errHeld when another
// replica's lease is still valid, and false with no error when another replica won the same
// round (a write conflict).
func (l *lease) tryAcquireOrRenew(ctx context.Context) (holder string, ok bool, err error) {
	now := time.Now()
	cur, err := l.leases.Get(ctx, l.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		fresh := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: l.name}, Spec: l.next(nil, now)}
		created, err := l.leases.Create(ctx, fresh, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return "", false, nil
		}
		if err != nil {
			return "", false, fmt.Errorf("create lease: %w", err)
		}
		l.remember(created.Spec, now)
		return l.identity, true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read lease: %w", err)
	}
	if !equality.Semantic.DeepEqual(cur.Spec, l.observed) {
		l.remember(cur.Spec, now)
	}
	holder = deref(cur.Spec.HolderIdentity)
	if holder != "" && holder != l.identity && now.Before(l.observedAt.Add(seconds(cur.Spec.LeaseDurationSeconds))) {
		return holder, false, errHeld
	}
	update := cur.DeepCopy()
	update.Spec = l.next(&cur.Spec, now)
	stored, err := l.leases.Update(ctx, update, metav1.UpdateOptions{}) // optimistic: cur's resourceVersion
	if apierrors.IsConflict(err) {
		return holder, false, nil
	}
	if err != nil {
		return holder, false, fmt.Errorf("update lease: %w", err)
	}
	l.remember(stored.Spec, now)
	return l.identity, true, nil
}

// next is the record this replica writes: a renewal keeps the acquire time and transition
// count; taking the lease from another holder (or from none) counts a transition.
func (l *lease) next(prev *coordv1.LeaseSpec, now time.Time) coordv1.LeaseSpec {
	id, t := l.identity, metav1.NewMicroTime(now)
	dur := int32(math.Ceil(l.duration.Seconds()))
	spec := coordv1.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: &dur, AcquireTime: &t, RenewTime: &t, LeaseTransitions: new(int32)}
	if prev == nil {
		return spec
	}
	transitions := deref(prev.LeaseTransitions)
	if deref(prev.HolderIdentity) == l.identity {
		if prev.AcquireTime != nil {
			spec.AcquireTime = prev.AcquireTime
		}
	} else {
		transitions++
	}
	spec.LeaseTransitions = &transitions
	return spec
}

func (l *lease) remember(spec coordv1.LeaseSpec, at time.Time) {
	l.observed, l.observedAt = *spec.DeepCopy(), at
}

// release gives the lease up if this replica still holds it (holder cleared, one-second
// duration), so a standby takes it at its next retry rather than after a lease duration.
func (l *lease) release(ctx context.Context) (bool, error) {
	cur, err := l.leases.Get(ctx, l.name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	if deref(cur.Spec.HolderIdentity) != l.identity {
		return false, nil
	}
	empty, one, now := "", int32(1), metav1.NewMicroTime(time.Now())
	cur.Spec.HolderIdentity, cur.Spec.LeaseDurationSeconds, cur.Spec.RenewTime = &empty, &one, &now
	_, err = l.leases.Update(ctx, cur, metav1.UpdateOptions{})
	return err == nil, err
}

func seconds(s *int32) time.Duration { return time.Duration(deref(s)) * time.Second }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
