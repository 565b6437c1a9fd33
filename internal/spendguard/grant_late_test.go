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
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// A render back from its gather window late (a workqueue backlog: in make bench at N=10,000 with
// budgets, 8,711 of 10,000 renders came back late) pays on its reservation written ahead while it
// is within takeWithin of its time. Before, each such render wrote a reservation of its own (0.93
// budget writes per render at N=10,000) beside the one written ahead for it, until the VideoBudget
// controller released that one.
func TestARenderBackLateFromItsGatherPaysOnTheReservationStillHeld(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)}, vr)
	h.g.clock.(*clocktesting.FakeClock).Step(24 * time.Second)
	writes := h.writes.Load()
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}})
	if err != nil || d.Wait {
		t.Fatalf("the render comes to pay: %+v %v", d, err)
	}
	if h.writes.Load() != writes {
		t.Error("the render reserved the ordinary way (a budget write of its own) though the budget holds the reservation written ahead for it")
	}
	if n := len(h.budget(t).Status.Reservations); n != 1 {
		t.Errorf("the budget holds %d reservations for one render, want 1", n)
	}
}

// The other side of the above: a render back past takeWithin (it stalled, or a long backlog)
// may find its reservation released by the VideoBudget controller at any moment, so it never pays
// on it: it reserves the ordinary way, which decides again, and replaces the old reservation.
func TestARenderBackAfterTheControllerReleasedItsGrantReservesAgain(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)}, vr)
	h.g.clock.(*clocktesting.FakeClock).Step(2 * time.Minute)
	if attempt, _ := h.g.grantOf(vr.UID); attempt != "" {
		t.Error("a grant past takeWithin is still offered to its render")
	}
	writes := h.writes.Load()
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}})
	if err != nil || d.Wait {
		t.Fatalf("the render comes to pay: %+v %v", d, err)
	}
	if h.writes.Load() == writes {
		t.Error("the render paid on a reservation the VideoBudget controller may release")
	}
	res := h.budget(t).Status.Reservations
	if len(res) != 1 || !res[0].ReservedAt.After(time.Now().Add(time.Minute)) {
		t.Errorf("reservations %+v; want one, made when the render came back", res)
	}
}

// A render deleted during its gather window has the reservation written ahead for it released,
// not charged: the delete event's last state shows no attempt in flight, so it sent nothing. When
// that release's write fails (409 on a busy budget) the controller tries again, and the second
// look decides the same (the controller suite's deleted-while-gathered spec once counted 1 render
// of 0 in a run where the release met a conflict).
func TestAReleaseOfADeletedRendersUnsentReservationThatFailedIsDecidedAgainTheSameWay(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr)
	if err := h.server.Delete(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	reconcileConflicting(t, h, vr)
	if !holdsUnsent(t, h, vr) {
		t.Fatal("control: the release's write failed, the reservation should still be there")
	}
	reservedLongAgo(t, h) // the next look comes after a submission's time
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clocktesting.NewFakeClock(time.Now()),
		Grace: time.Minute, Recheck: time.Hour, Retry: time.Second, Ledgers: h.g.ledgers, Guard: h.g})
	r.objectGone(vr, false)
	reconcileWith(t, r)
	b := h.budget(t)
	if len(b.Status.Reservations) != 0 || b.Status.Used.Renders != 0 {
		t.Errorf("after a failed release, the reservation of a render deleted before it paid is charged or kept: "+
			"%d render(s) used, reservations %+v", b.Status.Used.Renders, b.Status.Reservations)
	}
}

// A gathered render whose key then makes it wait longer than it may pay on its reservation
// written ahead (callBudgetSlot asks again) has the reservation queued again for its later call,
// replacing the first: it still pays without a write of its own, and the budget holds one
// reservation for it, which the controller keeps until then.
func TestARenderAskedToWaitPastItsWindowHasItsReservationWrittenAheadAgain(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)}, vr)
	h.g.setGrace(2*h.g.writers.timeout + 2*time.Second) // a render pays within 2 s of its time
	if d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}, CallIn: 3 * time.Second}); err != nil || !d.Budgeted {
		t.Fatalf("asking again for the call budget's wait: %+v %v", d, err)
	}
	payAt := h.g.clock.Now().Add(3 * time.Second).Truncate(time.Second)
	// A busy machine may take long: the bound is the test's, not the write's.
	deadline := time.Now().Add(time.Minute)
	for !slices.ContainsFunc(h.budget(t).Status.Reservations, func(r videov1alpha1.BudgetReservation) bool { return r.ReservedAt.Time.Equal(payAt) }) {
		if time.Now().After(deadline) {
			t.Fatalf("the reservation was never written again for the later call: %+v", h.budget(t).Status.Reservations)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(h.budget(t).Status.Reservations); n != 1 {
		t.Errorf("the budget holds %d reservations for one render, want 1", n)
	}
	h.g.clock.(*clocktesting.FakeClock).SetTime(payAt)
	writes := h.writes.Load()
	if d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}}); err != nil || d.Wait {
		t.Fatalf("the render comes to pay: %+v %v", d, err)
	}
	if h.writes.Load() != writes {
		t.Error("the render reserved the ordinary way (a budget write of its own) instead of paying on its reservation written again")
	}
}
