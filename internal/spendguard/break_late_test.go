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
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// reservedLongAgo moves every reservation of the harness's budget 2 minutes back (older than the
// one minute of grace reconcileOnce uses), as the VideoBudget controller would see it 2 minutes on.
func reservedLongAgo(t *testing.T, h *batchHarness) {
	t.Helper()
	b := h.budget(t)
	for i := range b.Status.Reservations {
		b.Status.Reservations[i].ReservedAt = metav1.NewTime(time.Now().Add(-2 * time.Minute))
	}
	if err := h.server.Status().Update(t.Context(), b); err != nil {
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

// break-late: takeGrant looks at its grant under the grants' lock (usable: not taken, within
// grantTTL), lets the lock go to read the budget from the cache and to check the room, then takes
// the lock again and sets taken, takenAt = now WITHOUT looking whether the grant is still not
// taken. granted() spends the grant "under the lock takeGrant takes, before the release is
// written" (9f28e8d), but takeGrant does not look again: when the VideoBudget controller's look
// falls in that window, it decides the release (the grant is late: it no longer protects), spends
// the grant and writes the release; the render then marks the grant taken again (takenAt now,
// undoing the spend) and pays. Its `held` check does not save it either: even with the cache
// already showing the release, `written == b.UID` counts the reservation as held.
//
// Before 9f28e8d a grant past due was not usable, so a late render reserved the ordinary way; only
// a render whose due passed within that window could race (see the next test). Now every render
// back late (87% at N=10,000) reaches takeGrant with a grant the controller releases at its next look.
//
// With maxRenders 1 the late render pays with no reservation, and another render is admitted beside it.
func TestBreakLateControllerReleasesBetweenTakeGrantsLookAndItsTake(t *testing.T) {
	vr := batchRender(1)
	other := batchRender(2)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr, other)
	reservedLongAgo(t, h)
	ageGrant(h, vr, 2*time.Minute) // back late: due was 1m44s ago

	armed := duringTakeGrantsRead(h, func() {
		// The controller's look: older than grace, no submission of a1, the grant late: released.
		reconcileBudget(t, h, 1)
	})
	armed.Store(true)
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if armed.CompareAndSwap(true, false) {
		// takeGrant did not read the budget (the grant was not usable: the render reserved the
		// ordinary way): the controller's look comes right after.
		reconcileBudget(t, h, 1)
	}
	if d.Wait {
		// Refused: nothing paid, nothing to check.
		return
	}
	if !holdsUnsent(t, h, vr) {
		t.Errorf("the render is admitted to pay attempt a1 (%+v) while the budget on the API server holds no reservation for it: "+
			"the VideoBudget controller released it between takeGrant's look at the grant and its take", d)
	}
	d2, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: other, Attempt: "b1", Est: Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !d2.Wait {
		t.Errorf("maxRenders 1: a second render is admitted (%+v) beside the one paying on its released grant: 2 paid", d2)
	}
}

// break-late, the same race at due: the render looks at its grant just before its due (usable
// before and after 9f28e8d), and the controller looks just after (the grant no longer protects).
// This one is not new: before 9f28e8d takeGrant did not look again either. It fails on both; the
// change widened it from the instant of due to the whole time a render is late.
func TestBreakLateControllerReleasesAtDueBetweenTakeGrantsLookAndItsTake(t *testing.T) {
	vr := batchRender(1)
	other := batchRender(2)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr, other)
	reservedLongAgo(t, h)
	// Just before its due: usable under either rule.
	h.g.grants.mu.Lock()
	gr := h.g.grants.byUID[vr.UID]
	gr.due = time.Now().Add(time.Second)
	h.g.grants.mu.Unlock()

	armed := duringTakeGrantsRead(h, func() {
		// Due passes meanwhile; the controller looks.
		h.g.grants.mu.Lock()
		gr.due = time.Now().Add(-time.Millisecond)
		h.g.grants.mu.Unlock()
		reconcileBudget(t, h, 1)
	})
	armed.Store(true)
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if armed.CompareAndSwap(true, false) {
		reconcileBudget(t, h, 1)
	}
	if d.Wait {
		return
	}
	if !holdsUnsent(t, h, vr) {
		t.Errorf("the render is admitted to pay attempt a1 (%+v) while the budget holds no reservation for it", d)
	}
	d2, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: other, Attempt: "b1", Est: Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !d2.Wait {
		t.Errorf("maxRenders 1: a second render is admitted (%+v): 2 paid", d2)
	}
}

// reconcileConflicting runs the VideoBudget controller once over the harness's budget with its
// status write answered 409 Conflict (a guard write landed between its read and its write: on a
// busy budget, every write wakes it).
func reconcileConflicting(t *testing.T, h *batchHarness) {
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
	if _, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}); err != nil {
		t.Fatal(err)
	}
	if conflicts.Load() == 0 {
		t.Fatal("the controller wrote nothing: it did not decide the release")
	}
}

// break-late: granted() now spends the grant (taken, takenAt zero) when it answers false, but the
// controller's release is only a decision: its write may fail (409 on a busy budget, any error
// later in the reconcile) and the reservation stays. The spent grant then reads to forgetUnsent
// exactly like one its render took (usedAttempt / takeGrant), so when the render is deleted
// before the retry, the controller no longer releases the reservation written ahead for it, but
// charges it ("it may have been submitted"): a render that never reached the service counts as
// one paid. With maxRenders 1 the namespace is closed for the period by a render that paid nothing.
// Before 9f28e8d granted() changed nothing; forgetUnsent found the grant untaken and released it.
func TestBreakLateSpentByAFailedReleaseChargesADeletedRenderThatNeverPaid(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr)
	reservedLongAgo(t, h)
	ageGrant(h, vr, 2*time.Minute) // its render never came back (stalled at an earlier gate)

	reconcileConflicting(t, h)
	if !holdsUnsent(t, h, vr) {
		t.Fatal("control: the release's write failed, the reservation should still be there")
	}
	// The render is deleted (no job, no finalizer yet): it never paid.
	if err := h.server.Delete(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	reconcileBudget(t, h, 1)
	b := h.budget(t)
	if len(b.Status.Reservations) != 0 {
		t.Fatalf("the reservation of a deleted render is still held: %+v", b.Status.Reservations)
	}
	if b.Status.Used.Renders != 0 {
		t.Errorf("a render deleted before it ever came back to pay is charged as used (%d render(s)): "+
			"the grant spent by the failed release reads as taken, so forgetUnsent no longer releases it", b.Status.Used.Renders)
	}
}
