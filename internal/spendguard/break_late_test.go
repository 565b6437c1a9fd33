/*
Copyright 2026 The video-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package spendguard

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// reservedLongAgo moves every reservation of the harness's budget 2 minutes back (older than the
// one minute of grace reconcileOnce uses), as the VideoBudget controller would see it 2 minutes on.
func reservedLongAgo(t *testing.T, h *batchHarness) {
	t.Helper()
	b := h.budget(t)
	for i := range b.Status.Reservations {
		b.Status.Reservations[i].ReservedAt = metav1.NewTime(time.Now().Add(-2 * time.Minute))
	}
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}
}

// holdsUnsent reports whether the budget on the API server holds an unsent reservation of vr for
// the attempt gatherWritten queued ahead ("a1").
func holdsUnsent(t *testing.T, h *batchHarness, vr *videov1alpha1.VideoRender) bool {
	const attempt = "a1"
	t.Helper()
	for _, r := range h.budget(t).Status.Reservations {
		if r.UID == string(vr.UID) && r.AttemptID == attempt && r.JobID == "" {
			return true
		}
	}
	return false
}

// duringTakeGrantsRead runs step once, in the render's goroutine, while takeGrant reads the
// budget from the cache: after its first look at the grant (under the grants' lock) and before it
// takes it (under the lock again). That is what the VideoBudget controller, reconciling the
// budget on another worker, may do at that moment.
func duringTakeGrantsRead(h *batchHarness, step func()) *atomic.Bool {
	armed := &atomic.Bool{}
	h.g.client = interceptor.NewClient(h.g.client.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*videov1alpha1.VideoBudget); ok && armed.CompareAndSwap(true, false) {
				step()
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	return armed
}

// break-late: the VideoBudget controller, on another worker, looks at the budget while the render
// that gathered goes on to pay on its reservation written ahead. A render back late (2 minutes:
// past the controller's grace) must not pay on a reservation the controller releases meanwhile:
// past takeWithin it reserves the ordinary way, which decides again.
//
// With maxRenders 1, a render paying with no reservation would let another be admitted beside it.
func TestBreakLateControllerReleasesBetweenTakeGrantsLookAndItsTake(t *testing.T) {
	vr := batchRender(1)
	other := batchRender(2)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr, other)
	reservedLongAgo(t, h)
	h.g.clock.(*clocktesting.FakeClock).SetTime(time.Now()) // back late: 2 minutes after its time

	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	// The controller looks before the render's in-flight record lands: a reservation older than
	// grace with no submission of its attempt is released.
	reconcileBudget(t, h, 1)
	assertPaysWithReservation(t, h, vr, other, d)
}

// break-late, the same race at the last moment a render may pay on its reservation written ahead:
// it reads the budget just before takeWithin ends, and the controller looks meanwhile, a status
// write's time later. The controller releases only past its grace, two status writes after.
func TestBreakLateControllerReleasesAtDueBetweenTakeGrantsLookAndItsTake(t *testing.T) {
	vr := batchRender(1)
	other := batchRender(2)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr, other)
	var at time.Time
	for _, r := range h.budget(t).Status.Reservations {
		at = r.ReservedAt.Time
	}
	clk := h.g.clock.(*clocktesting.FakeClock)
	clk.SetTime(at.Add(time.Minute - 2*h.g.writers.timeout - time.Millisecond))
	armed := duringTakeGrantsRead(h, func() {
		if err := reconcileAt(t, h, clk.Now().Add(h.g.writers.timeout)); err != nil {
			t.Error(err)
		}
	})
	armed.Store(true)
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if armed.Load() {
		t.Fatal("control: the render did not read the budget to pay on its reservation")
	}
	if err := reconcileAt(t, h, clk.Now().Add(h.g.writers.timeout)); err != nil {
		t.Fatal(err)
	}
	assertPaysWithReservation(t, h, vr, other, d)
}

// assertPaysWithReservation checks, for a render admitted by d, that the budget holds its
// reservation and that maxRenders 1 refuses other.
func assertPaysWithReservation(t *testing.T, h *batchHarness, vr, other *videov1alpha1.VideoRender, d Decision) {
	t.Helper()
	if d.Wait {
		return // refused: nothing paid, nothing to check
	}
	if !holdsUnsent(t, h, vr) {
		t.Errorf("the render is admitted to pay attempt a1 (%+v) while the budget holds no reservation for it", d)
	}
	d2, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: other, Attempt: "b1", Est: bound.Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !d2.Wait {
		t.Errorf("maxRenders 1: a second render is admitted (%+v) beside the one paying: 2 paid", d2)
	}
}

// reconcileConflicting runs the VideoBudget controller once over the harness's budget with its
// status write answered 409 Conflict (a guard write landed between its read and its write: on a
// busy budget, every write wakes it).
// gone are the objects whose delete event the controller saw first.
func reconcileConflicting(t *testing.T, h *batchHarness, gone ...client.Object) {
	t.Helper()
	var conflicts atomic.Int32
	c := interceptor.NewClient(h.server.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*videov1alpha1.VideoBudget); ok {
				conflicts.Add(1)
				return apierrors.NewConflict(schema.GroupResource{Group: videov1alpha1.GroupVersion.Group, Resource: "videobudgets"},
					videov1alpha1.VideoBudgetName, fmt.Errorf("the object has been modified"))
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	r := NewReconciler(ReconcilerOptions{Client: c, Reader: h.server, Clock: clocktesting.NewFakeClock(time.Now()),
		Grace: time.Minute, Recheck: time.Hour, Retry: time.Second, Ledgers: h.g.ledgers, Guard: h.g})
	for _, obj := range gone {
		r.objectGone(obj, false)
	}
	_ = reconcileWith(t, r)
	if conflicts.Load() == 0 {
		t.Fatal("the controller wrote nothing: it did not decide the release")
	}
}

// reconcileGone runs the VideoBudget controller once over the harness's budget, after the delete
// events of gone, as the manager's informer delivers them.
func reconcileGone(t *testing.T, h *batchHarness, gone ...client.Object) {
	t.Helper()
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clocktesting.NewFakeClock(time.Now()),
		Grace: time.Minute, Recheck: time.Hour, Retry: time.Second, Ledgers: h.g.ledgers, Guard: h.g})
	for _, obj := range gone {
		r.objectGone(obj, false)
	}
	_ = reconcileWith(t, r)
}
