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

	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// lowerMaxRenders sets the harness's budget's maxRenders to n (a spec change: generation moves).
func lowerMaxRenders(t *testing.T, h *batchHarness, n int64) {
	t.Helper()
	b := h.budget(t)
	b.Spec.MaxRenders = ptr.To(n)
	b.Generation++
	if err := h.server.Update(t.Context(), b); err != nil {
		t.Fatal(err)
	}
}

// break-late2: a gathered render comes back, and its ordinary reserve decides Wait (a person
// lowered maxRenders to 0, "stop paying") and writes nothing, so the budget still holds the
// reservation written ahead, which the render never paid with. The render is deleted while it
// waits: its delete event's last state shows no attempt in flight, so the reservation is
// released, not charged as a deleted object's that "may have been submitted".
func TestBreakLate2RenderRefusedAfterItsGrantWaitsAndIsDeletedIsChargedAsPaid(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr)
	lowerMaxRenders(t, h, 0)

	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Wait {
		t.Fatalf("control: maxRenders 0, the render must wait, got %+v", d)
	}
	if !holdsUnsent(t, h, vr) {
		t.Fatal("control: the refused reserve writes nothing; the reservation written ahead should still be there")
	}
	// The render, waiting (nothing sent), is deleted; the controller looks once grace is over.
	if err := h.server.Delete(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	reservedLongAgo(t, h)
	reconcileGone(t, h, vr)
	b := h.budget(t)
	if len(b.Status.Reservations) != 0 {
		t.Fatalf("the reservation of a deleted render is still held: %+v", b.Status.Reservations)
	}
	if b.Status.Used.Renders != 0 || b.Status.Used.RenderSeconds != 0 {
		t.Errorf("a render that waited (Budget exhausted) and was deleted without ever paying is charged as used: "+
			"%d render(s), %d s", b.Status.Used.Renders, b.Status.Used.RenderSeconds)
	}
}

// break-late2: the same, after the controller's release of the late render's reservation met a
// conflict: the render comes back, waits (maxRenders 0), and is deleted; the retry releases it.
func TestBreakLate2UsedAttemptClearsReleasedThoughItsReserveWroteNothing(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr)
	reservedLongAgo(t, h)
	h.g.clock.(*clocktesting.FakeClock).Step(2 * time.Minute) // back late

	reconcileConflicting(t, h) // decides the release, whose write fails
	if !holdsUnsent(t, h, vr) {
		t.Fatal("control: the release's write failed, the reservation should still be there")
	}
	// The render comes back: the budget is maxRenders 0 now, so its ordinary reserve writes
	// nothing (the same holds for a reserve whose write fails: ErrBusy).
	lowerMaxRenders(t, h, 0)
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Wait {
		t.Fatalf("control: maxRenders 0, the render must wait, got %+v", d)
	}
	if err := h.server.Delete(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	reconcileGone(t, h, vr)
	b := h.budget(t)
	if len(b.Status.Reservations) != 0 {
		t.Fatalf("the reservation of a deleted render is still held: %+v", b.Status.Reservations)
	}
	if b.Status.Used.Renders != 0 {
		t.Errorf("a render that never paid is charged as used (%d render(s))", b.Status.Used.Renders)
	}
}

// queued is how many changes wait in the harness's namespace's queue.
func queued(h *batchHarness) int {
	w := &h.g.writers
	w.mu.Lock()
	defer w.mu.Unlock()
	if s, ok := w.slots["team-a"]; ok {
		return len(s.queue)
	}
	return 0
}

// break-late2: a grant replaced by a re-ask for the same attempt with another request (its spec
// changed while it waited for its call budget: a new estimate or digest makes reserveAhead put a
// new grant in the map) still writes its reservation when its timer fires: the timer that queues
// a reservation for a call more than aheadLead away looks only at the old grant's taken, never
// at whether it is still the grant of its object. Queued after the new grant's change, it
// replaces the reservation the new grant wrote with the OLD request's (reserveChange drops the
// object's unsent reservation). takeGrant on the new grant counts it held (written on this
// budget, same attempt) and lets the render pay the new, larger request on a reservation of the
// old one's estimate: maxRenderSeconds then admits another render the real reservation would
// have refused.
func TestBreakLate2ReplacedGrantsTimerOverwritesTheNewGrantsReservation(t *testing.T) {
	vr := batchRender(1)
	other := batchRender(2)
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100)}, vr, other)
	close(h.hold)
	// Waits for its call budget a little longer than aheadLead: its reservation is queued by a timer.
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}, CallIn: aheadLead + 500*time.Millisecond})
	if err != nil || !d.Budgeted {
		t.Fatalf("reserve ahead: %+v %v", d, err)
	}
	// Its spec changed (a longer video); it still waits for the same call slot, a second away now.
	d, err = h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 500}, CallIn: time.Second})
	if err != nil || !d.Budgeted {
		t.Fatalf("reserve ahead again: %+v %v", d, err)
	}
	if n := queued(h); n != 1 {
		t.Fatalf("control: the first grant's timer (500 ms) should not have fired yet: %d change(s) queued", n)
	}
	// The first grant's timer fires 500 ms after it was asked: wait until it queued its change,
	// or (a guard that drops a replaced grant's timer) until it certainly fired. The timer is a
	// real one: there is no step to take in its place.
	fired := time.Now().Add(500*time.Millisecond + 2*time.Second)
	for queued(h) < 2 && time.Now().Before(fired) {
		time.Sleep(10 * time.Millisecond)
	}
	// The namespace's next budget write takes the queue, as the controller's flushDue does.
	slot, err := h.g.writers.join(t.Context(), "team-a", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = h.g.flushTurn(t.Context(), slot, ChangeReserveAhead)

	d, err = h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 500}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Wait {
		t.Fatalf("control: the render's 500 s fit an empty 100 s budget (one over is allowed): %+v", d)
	}
	for _, r := range h.budget(t).Status.Reservations {
		if r.UID == string(vr.UID) && r.AttemptID == "a1" && r.EstimatedSeconds != 500 {
			t.Errorf("the render is admitted to pay its 500 s request while the budget reserves %d s for it", r.EstimatedSeconds)
		}
	}
	d2, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: other, Attempt: "b1", Est: bound.Estimate{Seconds: 50}})
	if err != nil {
		t.Fatal(err)
	}
	if !d2.Wait {
		t.Errorf("maxRenderSeconds 100 with a 500 s render paying: a second render is admitted (%+v)", d2)
	}
}
