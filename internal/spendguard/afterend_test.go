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
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// budgetCharged is a budget whose count is count, with the latest charged ids ending in ids.
func budgetCharged(count int64, ids ...string) *videov1alpha1.VideoBudget {
	b := &videov1alpha1.VideoBudget{}
	b.Status.ChargeCount = count
	b.Status.ChargedJobs = ids
	return b
}

// A charge written after its render's end is made from the mark when, and only when, the
// budget certainly lacks it: never twice, and never on a guess.
func TestAMarkedChargeIsMadeOnlyWhenTheBudgetCertainlyLacksIt(t *testing.T) {
	at := func(count int64, after string) *videov1alpha1.ChargeMark {
		return &videov1alpha1.ChargeMark{Count: count, After: after}
	}
	cases := []struct {
		name   string
		budget *videov1alpha1.VideoBudget
		c      JobCharge
		want   bool
	}{
		{"missing, the id charged last then still listed", budgetCharged(12, "j9", "k1", "k2"), JobCharge{JobID: "j", Mark: at(10, "j9"), Seconds: 7}, true},
		{"in chargedJobs", budgetCharged(12, "j9", "j", "k"), JobCharge{JobID: "j", Mark: at(10, "j9"), Seconds: 7}, false},
		{"missing, but the id charged last then is gone", budgetCharged(80, "k1"), JobCharge{JobID: "j", Mark: at(10, "j9"), Seconds: 7}, false},
		{"marked on another budget's history (created again, restored, count restarted)", budgetCharged(3, "x1", "x2", "x3"), JobCharge{JobID: "j", Mark: at(10, "j9"), Seconds: 7}, false},
		{"marked on a budget that had charged nothing, missing just after", budgetCharged(1, "k1"), JobCharge{JobID: "j", Mark: at(0, ""), Seconds: 7}, true},
		{"marked on a budget that had charged nothing, maxChargedJobs-1 charges since", budgetCharged(maxChargedJobs - 1), JobCharge{JobID: "j", Mark: at(0, ""), Seconds: 7}, true},
		{"marked on a budget that had charged nothing, maxChargedJobs charges since", budgetCharged(maxChargedJobs), JobCharge{JobID: "j", Mark: at(0, ""), Seconds: 7}, false},
		{"marked on a budget that had charged nothing, a count it never reached", budgetCharged(3), JobCharge{JobID: "j", Mark: at(10, ""), Seconds: 7}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.budget
			before := b.Status.Used.RenderSeconds
			got := tc.c.change(b)
			if got != tc.want {
				t.Fatalf("charged %v, want %v", got, tc.want)
			}
			if !tc.want {
				if b.Status.Used.RenderSeconds != before {
					t.Fatalf("nothing to charge, yet used seconds moved to %d", b.Status.Used.RenderSeconds)
				}
				return
			}
			if b.Status.Used.RenderSeconds != 7 || !charged(b, "j") {
				t.Fatalf("used %d seconds, charged ids %v", b.Status.Used.RenderSeconds, b.Status.ChargedJobs)
			}
			// Applied again (a batch that lost its lock, a second finder): nothing more.
			if tc.c.change(b) || b.Status.Used.RenderSeconds != 7 {
				t.Fatalf("charged twice: %d seconds", b.Status.Used.RenderSeconds)
			}
		})
	}
	// Past the bound, a job whose running reservation the budget still holds is certainly not
	// charged: the write that charges a job ends that reservation.
	b := budgetCharged(100 + maxChargedJobs)
	b.Status.Reservations = []videov1alpha1.BudgetReservation{{Kind: "VideoRender", Name: "r", UID: "u", JobID: "j", EstimatedSeconds: 30}}
	if !(JobCharge{JobID: "j", Mark: &videov1alpha1.ChargeMark{Count: 1, After: "gone"}, Seconds: 7}).change(b) || b.Status.Used.RenderSeconds != 7 || len(b.Status.Reservations) != 0 {
		t.Fatalf("a held job: used %d, reservations %v", b.Status.Used.RenderSeconds, b.Status.Reservations)
	}
}

// The count a mark reads against goes on: one per charged job, through a new period, and into
// a budget created again from the namespace's ledger.
func TestTheChargeCountGoesOnAcrossPeriodsAndReplacedBudgets(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	b := &videov1alpha1.VideoBudget{}
	RollPeriod(b, now)
	for i := range maxChargedJobs + 3 {
		chargeJobAt(b, fmt.Sprintf("j%d", i), 1, nil, false, time.Time{})
	}
	if b.Status.ChargeCount != maxChargedJobs+3 || len(b.Status.ChargedJobs) != maxChargedJobs {
		t.Fatalf("count %d, %d ids kept", b.Status.ChargeCount, len(b.Status.ChargedJobs))
	}
	RollPeriod(b, b.Status.PeriodEnd.Time)
	if b.Status.ChargeCount != maxChargedJobs+3 || len(b.Status.ChargedJobs) != maxChargedJobs || b.Status.Used.RenderSeconds != 0 {
		t.Fatalf("after the boundary: count %d, %d ids, %d seconds", b.Status.ChargeCount, len(b.Status.ChargedJobs), b.Status.Used.RenderSeconds)
	}
	l := ledgerOf(b)
	replaced := &videov1alpha1.VideoBudget{}
	// The ledger's period ended long ago: its usage is not merged, its count is.
	if !MergeLedger(replaced, &l, now.AddDate(1, 0, 0)) || replaced.Status.ChargeCount != b.Status.ChargeCount {
		t.Fatalf("a budget created again counts from %d, want %d", replaced.Status.ChargeCount, b.Status.ChargeCount)
	}
}

// ChargeLater's write is shared with the namespace's other changes, and a write that fails is
// tried again: the charge is made once.
func TestAChargeAfterTheEndRidesWithTheNextWriteAndIsTriedAgain(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))})
	close(h.hold)
	h.pump(t)
	h.onWrite = func(n int32) error {
		if n <= 2 {
			return apierrors.NewServiceUnavailable("injected")
		}
		return nil
	}
	if s := h.g.Standing(t.Context(), endedRender("j1")); !s.EndFirst || s.EndMark == nil {
		t.Fatal("a budget without a seconds or credits limit takes charges after the end")
	}
	h.g.chargeLaterQueued("team-a", JobCharge{JobID: "j1", Seconds: 12})
	// A reservation comes meanwhile: the charge rides with its write (which fails, and so does
	// the next: the charge is queued again).
	_, _ = h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", Estimate{}, nil)
	deadline := time.Now().Add(4 * chargeLaterDelay)
	for !charged(h.budget(t), "j1") {
		if time.Now().After(deadline) {
			t.Fatal("the charge was never written")
		}
		time.Sleep(10 * time.Millisecond)
	}
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 12 || b.Status.ChargeCount != 1 || !charged(b, "j1") {
		t.Fatalf("used %d seconds, count %d, ids %v", b.Status.Used.RenderSeconds, b.Status.ChargeCount, b.Status.ChargedJobs)
	}

	// A seconds limit: the end comes first too, the running job's reservation holding its room
	// until the charge lands. A budget that has not taken the namespace's ledger over holds no
	// count a mark can be made on: there the charge comes first.
	b.Spec.MaxRenderSeconds = ptr.To(int64(100))
	if err := h.server.Update(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	if s := h.g.Standing(t.Context(), endedRender("j2")); !s.EndFirst || s.EndMark == nil {
		t.Fatal("under maxRenderSeconds a render's end is not written first")
	}
	b = h.budget(t)
	b.Status.LedgerBudgetUID = "an-earlier-budget"
	if err := h.server.Status().Update(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	if h.g.Standing(t.Context(), endedRender("j2")).EndFirst {
		t.Fatal("a budget that has not taken its ledger over takes a mark")
	}
}

// A charge lost after its render's end (the manager stopped before the write) is found by the
// VideoBudget controller of the next process and made once; one the budget holds and one past the
// bound are left alone; one this process still has queued is made once, whichever comes first.
func TestTheBudgetControllerChargesAChargeLostAfterTheEnd(t *testing.T) {
	ended := func(name, jobID string, mark int64, after string, secs float64) client.Object {
		vr := batchRender(0)
		vr.Name, vr.UID = name, types.UID("uid-"+name)
		vr.Status.JobID = jobID
		vr.Status.CompletedAt = &metav1.Time{Time: time.Now().Add(-time.Hour)}
		vr.Status.ChargeMark = &videov1alpha1.ChargeMark{Count: mark, After: after}
		vr.Status.VideoDuration = &metav1.Duration{Duration: time.Duration(secs * float64(time.Second))}
		vr.Status.AICreditsUsed = "2.5"
		return vr
	}
	objs := []client.Object{
		ended("lost", "j-lost", 70, "j-anchor", 12.2),
		ended("held", "j-held", 70, "j-anchor", 30),
		ended("old", "j-old", 1, "j-gone", 40),
		ended("queued", "j-queued", 70, "j-anchor", 50),
	}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(1000))}, objs...)
	close(h.hold)
	b := h.budget(t)
	b.Status.ChargeCount = 80
	b.Status.ChargedJobs = []string{"j-anchor", "j-held"}
	if err := h.server.Status().Update(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	// This process queued j-queued's charge itself: its write is on its way (it lands below).
	queued, _ := MarkedChargeOf(objs[3])
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clocktesting.NewFakeClock(time.Now()),
		Grace: time.Minute, Recheck: time.Hour, Retry: time.Second, Ledgers: NewLedgers("ops"), Guard: h.g})
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}
	for range 2 {
		if _, err := r.Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.g.chargeNow(t.Context(), "team-a", queued); err != nil {
		t.Fatal(err)
	}
	b = h.budget(t)
	if b.Status.Used.RenderSeconds != 13+50 || b.Status.ChargeCount != 82 || !charged(b, "j-lost") || charged(b, "j-old") || !charged(b, "j-queued") {
		t.Fatalf("used %d seconds (want the lost job's 13 and the queued one's 50, once), count %d, ids %v", b.Status.Used.RenderSeconds, b.Status.ChargeCount, b.Status.ChargedJobs)
	}
	if b.Status.Used.AICredits == nil || b.Status.Used.AICredits.String() != "5" {
		t.Fatalf("credits %v, want the lost and the queued job's 2.5 each", b.Status.Used.AICredits)
	}
}

// A render about to reserve its next submission charges the end it marked first, when the
// budget does not show that charge: it never moves on before the charge is in.
func TestTheNextSubmissionChargesThePreviousMarkedEndFirst(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))})
	close(h.hold)
	c := JobCharge{JobID: "j-prev", Seconds: 9, Mark: &videov1alpha1.ChargeMark{}}
	if !lostCharge(h.budget(t), c) {
		t.Fatal("the budget does not hold the previous job's charge")
	}
	if err := h.g.chargeNow(t.Context(), "team-a", c); err != nil {
		t.Fatal(err)
	}
	if err := h.g.chargeNow(t.Context(), "team-a", c); err != nil {
		t.Fatal(err)
	}
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 9 || lostCharge(b, c) {
		t.Fatalf("used %d seconds, ids %v: want the charge once", b.Status.Used.RenderSeconds, b.Status.ChargedJobs)
	}
}

// A write of the VideoBudget controller over the guard's last write no longer costs the guard's
// next write its lock: the controller tells the guard the version it wrote.
func TestTheGuardWritesOverTheControllersWriteWithoutLosingItsLock(t *testing.T) {
	for _, told := range []bool{false, true} {
		h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))})
		close(h.hold)
		if _, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", Estimate{}, nil); err != nil {
			t.Fatal(err)
		}
		// The controller's write, over the guard's.
		b := h.budget(t)
		from := b.ResourceVersion
		b.Status.ObservedGeneration++
		if err := h.server.Status().Update(t.Context(), b); err != nil {
			t.Fatal(err)
		}
		if told {
			h.g.wrote(from, b)
		}
		before := h.writes.Load()
		if _, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", Estimate{}, nil); err != nil {
			t.Fatal(err)
		}
		want := int32(2) // a conflict, then the write on the budget read again
		if told {
			want = 1
		}
		if got := h.writes.Load() - before; got != want {
			t.Errorf("told %v: %d write attempts, want %d", told, got, want)
		}
		if n := len(h.budget(t).Status.Reservations); n != 2 {
			t.Errorf("told %v: %d reservations, want 2", told, n)
		}
	}
}

type grantCounter struct {
	noWrites
	got map[string]int
}

func (c *grantCounter) ObserveGrant(result string) { c.got[result]++ }

// The grant outcomes count the renders of guarded namespaces only: elsewhere nothing is reserved.
func TestGrantOutcomesAreCountedOnlyInGuardedNamespaces(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))})
	close(h.hold)
	c := &grantCounter{got: map[string]int{}}
	h.g.observeWrites(c)
	unguarded := batchRender(1)
	unguarded.Namespace = "team-b"
	if _, ok := h.g.takeGrant(t.Context(), "VideoRender", unguarded, "a", "", Estimate{}); ok {
		t.Fatal("a grant in a namespace without a budget")
	}
	if _, ok := h.g.takeGrant(t.Context(), "VideoRender", batchRender(2), "a", "", Estimate{}); ok {
		t.Fatal("a grant nobody asked for")
	}
	if len(c.got) != 1 || c.got[GrantNone] != 1 {
		t.Fatalf("counted %v, want one %q (the guarded namespace's)", c.got, GrantNone)
	}
}

// endedRender is a render of team-a whose job jobID ended, as the controller asks Standing of it.
func endedRender(jobID string) *videov1alpha1.VideoRender {
	vr := batchRender(0)
	vr.Status.JobID = jobID
	return vr
}
