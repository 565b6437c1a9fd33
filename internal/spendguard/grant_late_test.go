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

	"k8s.io/utils/ptr"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// ageGrant moves the grant of vr's render back by d, as if it had been asked d ago.
func ageGrant(h *batchHarness, vr *videov1alpha1.VideoRender, d time.Duration) *grant {
	h.g.grants.mu.Lock()
	defer h.g.grants.mu.Unlock()
	gr := h.g.grants.byUID[vr.UID]
	gr.asked, gr.payAt, gr.due = gr.asked.Add(-d), gr.payAt.Add(-d), gr.due.Add(-d)
	return gr
}

// A render back from its gather window later than the window's slack (a workqueue backlog: in
// make bench at N=10,000 with budgets, 8,711 of 10,000 renders came back late) pays on its
// reservation written ahead while the budget still holds it: the lateness bounds how long the
// grant keeps the reservation from being released, not whether the render may use it. Before,
// each such render wrote a reservation of its own (0.93 budget writes per render at N=10,000)
// beside the one written ahead for it, until the VideoBudget controller released that one.
func TestARenderBackLateFromItsGatherPaysOnTheReservationStillHeld(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)}, vr)
	gr := ageGrant(h, vr, 40*time.Second) // 1 s of window, 15 s of slack: 24 s late
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: Estimate{Seconds: 10}})
	if err != nil || d.Wait {
		t.Fatalf("the render comes to pay: %+v %v", d, err)
	}
	h.g.grants.mu.Lock()
	paidOnGrant := gr.taken && !gr.takenAt.IsZero()
	h.g.grants.mu.Unlock()
	if !paidOnGrant {
		t.Error("the render reserved the ordinary way (a budget write of its own) though the budget holds the reservation written ahead for it")
	}
	if n := len(h.budget(t).Status.Reservations); n != 1 {
		t.Errorf("the budget holds %d reservations for one render, want 1", n)
	}
}

// The other side of the above: once the VideoBudget controller has decided to release the
// reservation of a grant no longer protected (its render late past grace: it stalled, or never
// comes back), the render must not pay on it. The controller's decision spends the grant under
// the grants' lock, so a render back between that decision and the release's write reserves the
// ordinary way, which decides again, and never pays on a reservation on its way out.
func TestARenderBackAfterTheControllerReleasedItsGrantReservesAgain(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)}, vr)
	gr := ageGrant(h, vr, 2*time.Minute)
	// The controller looks at the reservation (older than grace, no submission of its attempt)
	// and finds the grant no longer protecting it: it will release it.
	if h.g.granted(string(vr.UID), "a1") {
		t.Fatal("a grant two minutes past its due still protects its reservation")
	}
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: Estimate{Seconds: 10}})
	if err != nil || d.Wait {
		t.Fatalf("the render comes to pay: %+v %v", d, err)
	}
	h.g.grants.mu.Lock()
	paidOnGrant := !gr.takenAt.IsZero()
	h.g.grants.mu.Unlock()
	if paidOnGrant {
		t.Error("the render paid on a reservation the VideoBudget controller had decided to release")
	}
	if _, at := h.g.grantOf(vr.UID); !at.IsZero() {
		t.Error("a grant the controller released is still offered to its render")
	}
}

// A render deleted during its gather window has the reservation written ahead for it released,
// not charged (forgetUnsent): its attempt reached no service. When that release's write fails
// (409 on a busy budget) the controller tries again, and the second look must decide the same:
// before, forgetUnsent spent the grant at the first look and the retry charged the reservation as
// a render that "may have been submitted" (the controller suite's deleted-while-gathered spec
// counted 1 render of 0 in a run where the release met a conflict).
func TestAReleaseOfADeletedRendersUnsentReservationThatFailedIsDecidedAgainTheSameWay(t *testing.T) {
	vr := batchRender(1)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr)
	if err := h.server.Delete(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	reconcileConflicting(t, h)
	if !holdsUnsent(t, h, vr) {
		t.Fatal("control: the release's write failed, the reservation should still be there")
	}
	reservedLongAgo(t, h) // the next look comes after a submission's time
	reconcileBudget(t, h, 1)
	b := h.budget(t)
	if len(b.Status.Reservations) != 0 || b.Status.Used.Renders != 0 {
		t.Errorf("after a failed release, the reservation of a render deleted before it paid is charged or kept: "+
			"%d render(s) used, reservations %+v", b.Status.Used.Renders, b.Status.Reservations)
	}
}
