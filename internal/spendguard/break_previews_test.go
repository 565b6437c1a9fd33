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
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// A review's attempts to break b2421ca ("a preview's running job holds its reservation as a render's
// does"). Each test names the money it checks.

// editBudgetStatus rewrites the harness's budget status on the API server with edit, as another
// writer (an older manager) left it.
func editBudgetStatus(t *testing.T, h *batchHarness, edit func(b *videov1alpha1.VideoBudget)) {
	t.Helper()
	b := h.budget(t)
	edit(b)
	writeOlderLedger(t, h.server, b)
	b.Status.CompactRunningJobs()
	if err := h.server.Status().Update(t.Context(), b); err != nil {
		t.Fatal(err)
	}
}

func usedCredits(b *videov1alpha1.VideoBudget) string {
	if b.Status.Used.AICredits == nil {
		return "0"
	}
	return b.Status.Used.AICredits.String()
}

// asOlderManagerLeftIt rewrites the budget as 9078577 left it once the preview's job was folded:
// status.runningReserved set (that manager rebuilt renders' running jobs), the preview counted,
// its reservation deleted and "counted:<job>" in chargedJobs.
func asOlderManagerLeftIt(t *testing.T, h *batchHarness) {
	t.Helper()
	editBudgetStatus(t, h, func(b *videov1alpha1.VideoBudget) {
		if b.Status.Used.Previews != 1 || !b.Status.RunningReserved {
			t.Fatalf("control: the preview's job was not folded: %+v, runningReserved %v", b.Status.Used, b.Status.RunningReserved)
		}
		b.Status.Reservations = nil
		b.Status.ChargedJobs = append(b.Status.ChargedJobs, "counted:preview-job")
		b.Status.ChargeCount++
	})
}

// An upgrade from 9078577 with a preview's job running. That manager kept no reservation for a
// preview's running job (it posted "counted:<job>") yet set status.runningReserved; posted() now
// takes runningReserved as "a charge without a pending reservation was made" for previews too, so
// the upgraded manager's chargeEnd charges nothing: the preview's 7 credits are lost.
func TestBreakPreviewsUpgradeARunningPreviewsCreditsAreCharged(t *testing.T) {
	h, sb := previewHarness(t)
	h.foldNow(t)
	asOlderManagerLeftIt(t, h)
	// The new manager starts: a new guard and VideoBudget controller over the same API server.
	clk := freshGuardAt(h, h.g.clock.Now().Add(time.Minute))
	reviewReconcile(t, h, clocktesting.NewFakeClock(clk.Now()), 2)
	// The preview's job ends, reporting 7 credits: chargeEnd charges them before its end is written.
	chargePreviewCredits(t, h, sb)
	h.foldNow(t)
	b := h.budget(t)
	if b.Status.Used.AICredits == nil || b.Status.Used.AICredits.Cmp(resource.MustParse("7")) != 0 {
		t.Errorf("the running preview's 7 credits after the upgrade: used.aiCredits %s, want 7 (chargedJobs %v, reservations %+v)",
			usedCredits(b), b.Status.ChargedJobs, b.Status.Reservations)
	}
	if b.Status.Used.Previews != 1 {
		t.Errorf("used.previews %d, want 1", b.Status.Used.Previews)
	}
}

// A preview deleted after it recorded its job and before any write folded it, its delete event
// seen by the VideoBudget controller: its last state names the job, which is then read and
// charged: counted once, its 9 credits once, no seconds.
func TestBreakPreviewsDeletedBeforeTheFoldIsCountedAndChargedOnce(t *testing.T) {
	h, sb := previewHarness(t)
	jobs := &fakeJobs{ends: map[string]*JobEnd{}}
	clk := clocktesting.NewFakeClock(h.g.clock.Now().Add(2 * time.Minute))
	r, reconcile := goneJobsController(t, h, clk, jobs, 24*time.Hour)
	var last videov1alpha1.VideoStoryboard
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(sb), &last); err != nil {
		t.Fatal(err)
	}
	if err := h.server.Delete(t.Context(), sb); err != nil {
		t.Fatal(err)
	}
	r.objectGone(&last, false)
	reconcile()
	b := h.budget(t)
	if b.Status.Reserved.AICreditRenders != 1 || b.Status.Used.Previews != 1 {
		t.Fatalf("the deleted preview's running job: reserved %+v used %+v reservations %+v", b.Status.Reserved, b.Status.Used, b.Status.Reservations)
	}
	jobs.ends["preview-job"] = &JobEnd{Completed: true, Seconds: 40, Credits: ptr.To(resource.MustParse("9"))}
	reconcile()
	reconcile()
	b = h.budget(t)
	if usedCredits(b) != "9" || b.Status.Used.Previews != 1 || b.Status.Used.RenderSeconds != 0 || len(b.Status.Reservations) != 0 {
		t.Errorf("used %+v credits %s, reservations %+v: want 1 preview, 9 credits, 0 s, nothing held", b.Status.Used, usedCredits(b), b.Status.Reservations)
	}
}

// The preview's credits are charged (chargeEnd), then the manager dies before the end's write:
// a new manager reads the job again and charges again. Once.
func TestBreakPreviewsCreditsChargedAgainAfterACrashAreChargedOnce(t *testing.T) {
	h, sb := previewHarness(t)
	h.foldNow(t)
	chargePreviewCredits(t, h, sb)
	clk := freshGuardAt(h, h.g.clock.Now().Add(time.Minute))
	reviewReconcile(t, h, clocktesting.NewFakeClock(clk.Now()), 2)
	chargePreviewCredits(t, h, sb)
	h.foldNow(t)
	assertPreviewPaidOnce(t, h)
}

// The credits charged before the fold, then a crash, then the charge again and the fold.
func TestBreakPreviewsCreditsChargedBeforeTheFoldThenACrashAreChargedOnce(t *testing.T) {
	h, sb := previewHarness(t)
	chargePreviewCredits(t, h, sb)
	clk := freshGuardAt(h, h.g.clock.Now().Add(time.Minute))
	reviewReconcile(t, h, clocktesting.NewFakeClock(clk.Now()), 2)
	chargePreviewCredits(t, h, sb)
	h.foldNow(t)
	assertPreviewPaidOnce(t, h)
}

// replaceBudget deletes the harness's budget and creates it again (a GitOps replace), with uid.
func replaceBudget(t *testing.T, h *batchHarness, uid string) {
	t.Helper()
	old := h.budget(t)
	if err := h.server.Delete(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	if err := reconcileOnce(t, h); err != nil {
		t.Logf("the controller's look at the deleted budget: %v", err)
	}
	fresh := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName, UID: types.UID(uid)},
		Spec: old.Spec}
	if err := h.server.Create(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
}

// The budget is replaced between the fold of the preview's job and the charge of its credits: the
// new budget takes over the running job's reservation; the credits are charged once, the
// preview counted once.
func TestBreakPreviewsBudgetReplacedBetweenTheFoldAndTheCharge(t *testing.T) {
	h, sb := previewHarness(t)
	h.foldNow(t)
	replaceBudget(t, h, "b2")
	if err := reconcileOnce(t, h); err != nil {
		t.Fatal(err)
	}
	if b := h.budget(t); b.Status.Reserved.AICreditRenders != 1 {
		t.Errorf("the new budget does not hold the running preview's job: reserved %+v reservations %+v", b.Status.Reserved, b.Status.Reservations)
	}
	chargePreviewCredits(t, h, sb)
	chargePreviewCredits(t, h, sb)
	h.foldNow(t)
	assertPreviewPaidOnce(t, h)
}

// The budget is replaced between the charge of the credits and the end's write (which failed):
// the retried charge after the takeover charges nothing more; the preview's job is not rebuilt
// as a running one holding room.
func TestBreakPreviewsBudgetReplacedBetweenTheChargeAndTheEndsWrite(t *testing.T) {
	h, sb := previewHarness(t)
	h.foldNow(t)
	chargePreviewCredits(t, h, sb)
	replaceBudget(t, h, "b2")
	if err := reconcileOnce(t, h); err != nil {
		t.Fatal(err)
	}
	chargePreviewCredits(t, h, sb)
	h.foldNow(t)
	assertPreviewPaidOnce(t, h)
	if b := h.budget(t); b.Status.Reserved.AICreditRenders != 0 || len(b.Status.Reservations) != 0 {
		t.Errorf("the charged preview still holds room after the replace: reserved %+v reservations %+v", b.Status.Reserved, b.Status.Reservations)
	}
}

// The budget is replaced before the preview's job was folded (its reservation in flight): the
// takeover keeps the reservation, the fold counts it once, the credits are charged once.
func TestBreakPreviewsBudgetReplacedBeforeTheFold(t *testing.T) {
	h, sb := previewHarness(t)
	replaceBudget(t, h, "b2")
	if err := reconcileOnce(t, h); err != nil {
		t.Fatal(err)
	}
	h.foldNow(t)
	chargePreviewCredits(t, h, sb)
	h.foldNow(t)
	assertPreviewPaidOnce(t, h)
}

// `manager uninstall` (SettleAll) while a preview's job runs, then a reinstall: the reinstalled
// preview controller reads the job's end and charges its 7 credits. SettleAll "charged the
// estimate" of the preview's running job (0 s, no credits: a preview has none) and posted its job
// id, so the charge after the reinstall finds it posted and the credits are lost. Before this
// change a preview's running job held no reservation, SettleAll did not touch it, and its
// credits were charged after the reinstall.
func TestBreakPreviewsUninstallWithAPreviewRunningThenReinstallChargesItsCredits(t *testing.T) {
	for _, folded := range []bool{true, false} {
		t.Run(map[bool]string{true: "folded", false: "not folded"}[folded], func(t *testing.T) {
			h, sb := previewHarness(t)
			if folded {
				h.foldNow(t)
			}
			s, err := h.g.SettleAll(t.Context(), "team-a")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("settlement %+v", s)
			// Reinstalled: a new manager.
			freshGuardAt(h, h.g.clock.Now().Add(time.Minute))
			chargePreviewCredits(t, h, sb)
			h.foldNow(t)
			b := h.budget(t)
			if usedCredits(b) != "7" || b.Status.Used.Previews != 1 {
				t.Errorf("a preview running across an uninstall and a reinstall: used.aiCredits %s (want 7), previews %d (want 1); chargedJobs %v",
					usedCredits(b), b.Status.Used.Previews, b.Status.ChargedJobs)
			}
		})
	}
}

// A preview deleted while its job runs, but held in Terminating by a finalizer of someone else's
// (a GitOps tool's, foreground deletion): the preview controller stops at a deleted object
// (finishCharge: a preview carries no charge finalizer), so nothing reads its job's end, and the
// VideoBudget controller sees the object present and naming the job, so it takes the job for
// running. The job ends at the service with 9 credits; a day passes (past the job deadline).
// Want: the credits charged and the maxAICredits slot freed, as for a preview gone.
func TestBreakPreviewsTerminatingPreviewDoesNotHoldTheAICreditsSlotForever(t *testing.T) {
	h, sb := previewHarnessAt(t, time.Date(2026, 11, 10, 10, 0, 0, 0, time.UTC))
	h.foldNow(t)
	var cur videov1alpha1.VideoStoryboard
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(sb), &cur); err != nil {
		t.Fatal(err)
	}
	cur.Finalizers = append(cur.Finalizers, "gitops.example.com/hold")
	if err := h.server.Update(t.Context(), &cur); err != nil {
		t.Fatal(err)
	}
	if err := h.server.Delete(t.Context(), &cur); err != nil {
		t.Fatal(err)
	}
	jobs := &fakeJobs{ends: map[string]*JobEnd{"preview-job": {Completed: true, Credits: ptr.To(resource.MustParse("9"))}}}
	clk := clocktesting.NewFakeClock(h.g.clock.Now().Add(2 * time.Minute))
	_, reconcile := goneJobsController(t, h, clk, jobs, time.Hour)
	reconcile()
	clk.Step(25 * time.Hour)
	reconcile()
	reconcile()
	b := h.budget(t)
	if b.Status.Reserved.AICreditRenders != 0 || usedCredits(b) != "9" {
		t.Errorf("a Terminating preview a day after its job ended: reserved %+v, used.aiCredits %s (want 0 held, 9 charged), jobs read %q",
			b.Status.Reserved, usedCredits(b), jobs.reads)
	}
	other := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "q", UID: "sb-2"}}
	if d, err := h.g.reserve(t.Context(), kindStoryboard, other, "a", "", bound.Estimate{Credits: true}, nil); err != nil || d.Wait {
		t.Errorf("another preview with an aiVisual a day later: %+v, %v; want it admitted", d, err)
	}
}

// A rollback: the budget as b2421ca leaves it (a preview's running job holding a reservation with
// its job id), read by a manager of the version before (9078577). The preview's job ends with no
// credits reported; its end is written. Want: nothing held afterwards, the preview counted once.
// Passes on b2421ca; run against 9078577's spendguard to see what a rollback does.
func TestBreakPreviewsRunningReservationLeftByThisVersionEnds(t *testing.T) {
	h, sb := previewHarness(t)
	editBudgetStatus(t, h, func(b *videov1alpha1.VideoBudget) {
		for i := range b.Status.Reservations {
			b.Status.Reservations[i].JobID = "preview-job"
		}
		b.Status.Used.Previews = 1
		for i := range b.Status.Windows {
			b.Status.Windows[i].Used.Previews = 1
		}
		b.Status.RunningReserved = true
	})
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(sb), sb); err != nil {
		t.Fatal(err)
	}
	at := metav1.NewTime(h.g.clock.Now())
	sb.Status.CompletedAt = &at
	if err := h.server.Update(t.Context(), sb); err != nil {
		t.Fatal(err)
	}
	clk := freshGuardAt(h, h.g.clock.Now().Add(time.Minute))
	h.foldNow(t)
	reviewReconcile(t, h, clocktesting.NewFakeClock(clk.Now().Add(time.Hour)), 3)
	b := h.budget(t)
	if b.Status.Reserved.Previews != 0 || b.Status.Reserved.AICreditRenders != 0 || len(b.Status.Reservations) != 0 || b.Status.Used.Previews != 1 {
		t.Errorf("an ended preview's job: reserved %+v, reservations %+v, used %+v", b.Status.Reserved, b.Status.Reservations, b.Status.Used)
	}
}

// A preview adopts a running job named by its annotations (record.go adopt: a restore without
// status, a record written in Git; "nothing is paid"). No reservation holds the adopted job, and
// the budget says status.runningReserved, so its end would fold into nothing: the adoption holds
// it (Guard.Adopt), and its 7 credits are charged from its end, once. A second adoption (a retried
// reconcile) holds nothing more.
func TestBreakPreviewsAnAdoptedRunningPreviewJobsCreditsAreCharged(t *testing.T) {
	h, _ := previewHarness(t)
	h.foldNow(t)
	if b := h.budget(t); !b.Status.RunningReserved {
		t.Fatal("control: runningReserved is not set")
	}
	adopted := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "adopter", UID: "sb-9"}}
	at := metav1.NewTime(h.g.clock.Now().Add(time.Minute))
	adopted.Status.JobID, adopted.Status.SubmittedAt = "adopted-job", &at
	if err := h.server.Create(t.Context(), adopted); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := h.g.Adopt(t.Context(), adopted); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(h.budget(t).Status.Reservations); n != 2 {
		t.Fatalf("%d reservations, want the first preview's and the adopted job's", n)
	}
	chargePreviewCredits(t, h, adopted)
	h.foldNow(t)
	b := h.budget(t)
	if usedCredits(b) != "7" || b.Status.Used.Previews != 1 {
		t.Errorf("the adopted preview job's 7 credits: used.aiCredits %s (chargedJobs %v), previews %d (want 1: nothing was paid)",
			usedCredits(b), b.Status.ChargedJobs, b.Status.Used.Previews)
	}
}

// An adopted job the budget holds already (the ledger's reservation of the object that paid for
// it, gone since: a restore without status) is not held twice: its end is read once, by the
// VideoBudget controller, for the object that paid.
func TestAnAdoptedJobTheBudgetHoldsIsNotHeldTwice(t *testing.T) {
	h, sb := previewHarness(t)
	h.foldNow(t)
	restored := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "restored", UID: "sb-2"}}
	restored.Status.JobID, restored.Status.SubmittedAt = sb.Status.JobID, sb.Status.SubmittedAt
	if err := h.g.Adopt(t.Context(), restored); err != nil {
		t.Fatal(err)
	}
	if res := h.budget(t).Status.Reservations; len(res) != 1 || res[0].UID != string(sb.UID) {
		t.Errorf("reservations %+v; want only the paying preview's", res)
	}
}

// The CRD's bound on status.chargedJobs items went from 108 to 100 characters with this change,
// but a budget (and its ledger, which a replaced budget merges) written by 9078577 holds
// "counted:"+jobId entries of up to 108 (status.jobId allows 100). The first write of such a
// budget after the upgrade that changes chargedJobs (an atomic list: validated whole, no
// ratcheting of its items) sends the old entry along, and the API server refuses it: each later
// write folds first, so the namespace's budget cannot be written at all. The bound is read from
// the CRD, as TestBreakTodayCountedEntryFitsChargedJobsMaxLength does.
func TestBreakPreviewsAnUpgradedBudgetsChargedJobsStillFitTheCRD(t *testing.T) {
	h, sb := previewHarness(t)
	long := "j" + strings.Repeat("0", 99) // status.jobId allows 100
	h.foldNow(t)
	editBudgetStatus(t, h, func(b *videov1alpha1.VideoBudget) {
		b.Status.ChargedJobs = append(b.Status.ChargedJobs, "counted:"+long) // another preview's, by 9078577
		b.Status.ChargeCount++
	})
	freshGuardAt(h, h.g.clock.Now().Add(time.Minute))
	chargePreviewCredits(t, h, sb)
	b := h.budget(t)
	most := chargedJobsMaxLength(t)
	for _, id := range b.Status.ChargedJobs {
		if len(id) > most {
			t.Errorf("after the upgrade, a write of status.chargedJobs sends an item of %d characters (%.20s...): the CRD now allows %d, the API server refuses the write",
				len(id), id, most)
		}
	}
}
