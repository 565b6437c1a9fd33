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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// gatheredHarness is a harness whose guard writes freely, over a budget of spec and objs, where
// the render vr (one of objs) gathered: its reservation of attempt a1 is written ahead
// (gatherWritten).
func gatheredHarness(t *testing.T, spec videov1alpha1.VideoBudgetSpec, vr *videov1alpha1.VideoRender, others ...client.Object) *batchHarness {
	t.Helper()
	h := newBatchHarness(t, spec, append([]client.Object{vr}, others...)...)
	close(h.hold)
	h.pump(t)
	gatherWritten(t, h, vr)
	return h
}

// gatherWritten queues the reservation of attempt a1 for vr as gatherReservation does (Reserve with
// CallIn = the manager's BudgetGather, 1 s) and waits until the budget holds it and the guard has
// learnt that its write is done (its render may pay on it from then on).
func gatherWritten(t *testing.T, h *batchHarness, vr *videov1alpha1.VideoRender) {
	t.Helper()
	const attempt = "a1"
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: attempt, Est: Estimate{Seconds: 10}, CallIn: time.Second})
	if err != nil || !d.Budgeted {
		t.Fatalf("gather: %+v %v", d, err)
	}
	// A busy machine may take long: the bound is the test's, not the write's.
	deadline := time.Now().Add(time.Minute)
	for {
		h.g.grants.mu.Lock()
		done := h.g.grants.byUID[vr.UID].done
		h.g.grants.mu.Unlock()
		if done {
			for _, r := range h.budget(t).Status.Reservations {
				if r.UID == string(vr.UID) && r.AttemptID == attempt {
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

	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Wait {
		t.Errorf("maxRenders lowered to 0 before the render paid: admitted (%+v); the ordinary path refuses it", d)
	}
}

// break-gather: a render that gathered and then does not come back to pay (its spec was made
// invalid, its storyboard's approval withdrawn, its API key Secret deleted: it stalls at an
// earlier gate, it is not deleted) keeps its reservation for grantTTL, ten minutes: the
// VideoBudget controller keeps any reservation this process holds a grant for (granted() looks
// at neither taken nor the gather's one second). Meanwhile status.reserved says a render is in
// flight that is not, and with maxRenders reached every other render of the namespace is told
// BudgetExhausted. Before the gather only renders that waited for their key's call budget in a
// burst held a grant; now every guarded render does.
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
	if err := h.server.Status().Update(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	h.g.grants.mu.Lock()
	h.g.grants.byUID[vr.UID].asked = time.Now().Add(-2 * time.Minute)
	h.g.grants.byUID[vr.UID].due = time.Now().Add(-2*time.Minute + time.Second + grantSlack)
	h.g.grants.mu.Unlock()
	var got videov1alpha1.VideoRender
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), &got); err != nil {
		t.Fatal(err)
	}
	reconcileBudget(t, h, 1)
	if res := h.budget(t).Status.Reservations; len(res) != 0 {
		t.Errorf("two minutes after a 1 s gather, the reservation of a render that never paid is still held (%d): "+
			"kept as granted until grantTTL (10 min)", len(res))
	}
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: other, Attempt: "b1", Est: Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Wait {
		t.Errorf("another render is refused (%s) for a render that is in flight nowhere", d.Message)
	}
}

// break-gather: a taken grant protects its reservation from the VideoBudget controller's "never
// sent" release only until asked+grantTTL (granted), and takeGrant accepts a grant up to that
// same instant. A render that takes its grant just before grantTTL (it gathered, then was held
// back: the key's circuit open through an outage of about ten minutes, a workqueue backlog) goes on
// to pay; the controller, reconciling the budget (busy: every write wakes it) between the take
// and the render's in-flight write, finds a reservation older than grace, an object with no
// submission of that attempt and no job, and a grant no longer "granted": it releases it. The
// render then writes its in-flight record and pays with no reservation in the budget.
func TestBreakGatherGrantTakenAtItsTTLIsReleasedBeforeThePaidCall(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr)
	// The render gathered almost grantTTL ago (its reservation was written then: older than grace).
	b := h.budget(t)
	for i := range b.Status.Reservations {
		b.Status.Reservations[i].ReservedAt = metav1.NewTime(time.Now().Add(-grantTTL))
	}
	if err := h.server.Status().Update(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	// It comes back at the last moment its grant may be used.
	h.g.grants.mu.Lock()
	h.g.grants.byUID[vr.UID].asked = time.Now().Add(-grantTTL + time.Second)
	h.g.grants.byUID[vr.UID].due = time.Now().Add(time.Second)
	h.g.grants.mu.Unlock()

	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: Estimate{Seconds: 10}})
	if err != nil || d.Wait {
		t.Fatalf("the render comes back to pay: %+v %v", d, err)
	}
	// Admitted: the render goes on to its in-flight write. The budget controller looks once the
	// grant would have expired.
	time.Sleep(1500 * time.Millisecond)
	reconcileBudget(t, h, 1)
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
	if d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: Estimate{Seconds: 10}, CallIn: 30 * time.Second}); err != nil || !d.Budgeted {
		t.Fatalf("asking again for the call budget's wait: %+v %v", d, err)
	}
	// 25 s later (the window's slack alone is 15 s), it comes to pay.
	h.g.grants.mu.Lock()
	gr := h.g.grants.byUID[vr.UID]
	gr.asked, gr.payAt, gr.due = gr.asked.Add(-25*time.Second), gr.payAt.Add(-25*time.Second), gr.due.Add(-25*time.Second)
	h.g.grants.mu.Unlock()
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: Estimate{Seconds: 10}})
	if err != nil || d.Wait {
		t.Fatalf("the render comes to pay: %+v %v", d, err)
	}
	h.g.grants.mu.Lock()
	paidOnGrant := gr.taken && !gr.takenAt.IsZero()
	h.g.grants.mu.Unlock()
	if !paidOnGrant {
		t.Error("the render reserved the ordinary way (a budget write of its own) instead of paying on its reservation written ahead")
	}
}
