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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// gatheredHarness is a harness whose guard writes freely, over a budget of spec and objs, where
// the render vr (one of objs) gathered: its reservation of attempt a1 is written ahead
// (gatherWritten).
func gatheredHarness(t *testing.T, spec videov1alpha1.VideoBudgetSpec, vr *videov1alpha1.VideoRender, others ...client.Object) *batchHarness {
	t.Helper()
	h := newBatchHarness(t, spec, append([]client.Object{vr}, others...)...)
	close(h.hold)
	h.pump(t)
	h.g.setGrace(time.Minute) // the grace of this harness's controller (reconcileOnce)
	gatherWritten(t, h, vr)
	return h
}

// gatherWritten queues the reservation of attempt a1 for vr as gatherReservation does (Reserve with
// CallIn = the manager's BudgetGather, 1 s) and waits until the budget holds it and the guard has
// learnt that its write is done (its render may pay on it from then on).
func gatherWritten(t *testing.T, h *batchHarness, vr *videov1alpha1.VideoRender) {
	t.Helper()
	const attempt = "a1"
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: attempt, Est: bound.Estimate{Seconds: 10}, CallIn: time.Second})
	if err != nil || !d.Budgeted {
		t.Fatalf("gather: %+v %v", d, err)
	}
	// A busy machine may take long: the bound is the test's, not the write's.
	deadline := time.Now().Add(time.Minute)
	for {
		h.g.grants.mu.Lock()
		done := h.g.grants.byUID[vr.UID].ended
		h.g.grants.mu.Unlock()
		if done {
			for _, r := range h.budget(t).Status.Reservations {
				if r.UID == string(vr.UID) && r.AttemptID == attempt {
					// Its call's time comes: the render is back to pay.
					h.g.clock.(*clocktesting.FakeClock).Step(time.Second)
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the reservation gathered was never written")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// break-gather: the decision of a gathered render is taken when its reservation is written, at
// the start of the window, and never again. A person lowers maxRenders to 0 ("stop paying in
// this namespace") while the render, which has sent nothing, waits out its second; it comes back
// and pays (takeGrant reuses the old decision and the cached budget is only checked for the
// reservation, not for the limits). The ordinary path, for the very same render and attempt,
// re-decides on the budget as it is (reserveChange replaces the render's unsent reservation and
// checks the limits) and refuses. Every guarded render now spends a second in this state, not
// only those that waited for the call budget in a burst.
func TestBreakGatherLimitLoweredDuringTheWindowIsNotDecidedAgain(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)}, vr)

	b := h.budget(t)
	b.Spec.MaxRenders = ptr.To[int64](0)
	b.Generation++
	if err := h.server.Update(t.Context(), b); err != nil {
		t.Fatal(err)
	}

	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Wait {
		t.Errorf("maxRenders lowered to 0 before the render paid: admitted (%+v); the ordinary path refuses it", d)
	}
}

// break-gather: a render that gathered and then does not come back to pay (its spec was made
// invalid, its storyboard's approval withdrawn, its API key Secret deleted: it stalls at an
// earlier gate, it is not deleted) has its reservation released once older than the controller's
// grace: meanwhile status.reserved says a render is in flight that is not, and with maxRenders
// reached every other render of the namespace is told BudgetExhausted.
func TestBreakGatherReservationOfARenderThatStoppedBeforePayingIsHeldForTenMinutes(t *testing.T) {
	vr := batchRender(1)
	other := batchRender(2)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr, other)

	// Two minutes later (grace is one minute in reconcileOnce): the render shows no submission,
	// no job; it stalled before its paid call and never came back to Reserve.
	b := h.budget(t)
	for i := range b.Status.Reservations {
		b.Status.Reservations[i].ReservedAt = metav1.NewTime(time.Now().Add(-2 * time.Minute))
	}
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}
	var got videov1alpha1.VideoRender
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), &got); err != nil {
		t.Fatal(err)
	}
	reconcileBudget(t, h, 1)
	if res := h.budget(t).Status.Reservations; len(res) != 0 {
		t.Errorf("two minutes after a 1 s gather, the reservation of a render that never paid is still held (%d): "+
			"kept as granted", len(res))
	}
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: other, Attempt: "b1", Est: bound.Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Wait {
		t.Errorf("another render is refused (%s) for a render that is in flight nowhere", d.Message)
	}
}

// break-gather: a render that takes its reservation written ahead at the last moment it may (it
// gathered, then was held back: a workqueue backlog) goes on to its in-flight write; the
// VideoBudget controller, reconciling the budget between the take and that write, must not find
// the reservation old enough to release as never sent, or the render pays with none. A render
// pays on it only within takeWithin of its time, the controller's grace less two status writes.
func TestBreakGatherGrantTakenAtItsTTLIsReleasedBeforeThePaidCall(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr)
	reconcileBudget(t, h, 1) // this process's controller: its grace (a minute) bounds the take
	clk := h.g.clock.(*clocktesting.FakeClock)
	var at time.Time
	for _, r := range h.budget(t).Status.Reservations {
		at = r.ReservedAt.Time
	}
	// Just past the last moment: reserved again the ordinary way.
	clk.SetTime(at.Add(time.Minute - 2*h.g.writers.timeout))
	if _, ok := h.g.takeGrant(t.Context(), "VideoRender", vr, "a1", "", bound.Estimate{Seconds: 10}); ok {
		t.Fatal("a render back past takeWithin paid on its reservation written ahead")
	}
	gatherWritten(t, h, vr)
	for _, r := range h.budget(t).Status.Reservations {
		at = r.ReservedAt.Time
	}
	// At the last moment it may, it comes back and pays.
	clk.SetTime(at.Add(time.Minute - 2*h.g.writers.timeout - time.Millisecond))
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}})
	if err != nil || d.Wait {
		t.Fatalf("the render comes back to pay: %+v %v", d, err)
	}
	if w := h.writes.Load(); w != 2 {
		t.Errorf("%d budget writes, want the 2 gathers: the render paid on its reservation", w)
	}
	// Its in-flight write takes up to a status write's time; the controller looks just before.
	if err := reconcileAt(t, h, clk.Now().Add(h.g.writers.timeout)); err != nil {
		t.Fatal(err)
	}
	held := false
	for _, r := range h.budget(t).Status.Reservations {
		held = held || r.UID == string(vr.UID) && r.AttemptID == "a1"
	}
	if !held {
		t.Errorf("the reservation of an attempt admitted to pay was released before its in-flight record: the render pays with none")
	}
}

// A render back from its gather window that then finds no call slot free waits for its key's call
// budget (callBudgetSlot asks again, for that wait): it still pays on the reservation written
// ahead. In the N=2,000 burst of make bench-pairs, 39% of the guarded renders came back past the
// window's slack, found their grant expired ("changed") and each wrote a reservation of its own.
func TestAGatheredRenderThatWaitsForItsCallBudgetPaysOnItsGrant(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)}, vr)
	// Back after its second: its key's call budget makes it wait 30 s more.
	if d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}, CallIn: 30 * time.Second}); err != nil || !d.Budgeted {
		t.Fatalf("asking again for the call budget's wait: %+v %v", d, err)
	}
	// 25 s later, within the controller's grace less two status writes, it comes to pay.
	reconcileBudget(t, h, 1)
	h.g.clock.(*clocktesting.FakeClock).Step(25 * time.Second)
	writes := h.writes.Load()
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}})
	if err != nil || d.Wait {
		t.Fatalf("the render comes to pay: %+v %v", d, err)
	}
	if w := h.writes.Load(); w != writes {
		t.Error("the render reserved the ordinary way (a budget write of its own) instead of paying on its reservation written ahead")
	}
}
