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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// break-fix: a review of the fixes of break-mid and break-ops (8c099a3, 6f33ac6).

// Fix 7 (fillEstimate) gives an older manager's zero-estimate reservation its render's estimate,
// but only in the VideoBudget controller's settleInterrupted. docs/spend-guard.md: running renders
// of a budget written by an older manager are accounted "before anything else is admitted (by
// the VideoBudget controller, or by the first admission if it comes first)". After an upgrade the
// render controllers and the VideoBudget controller start together, and a render's admission
// often comes first: it decides on 0.1.0's reservation as it stands (0 s, no flags), and since
// the render holds a reservation countRunning does not rebuild it. A second render without upper
// bound is admitted beside the project render (no upper bound either) under maxRenderSeconds.
func TestBreakFixAnOlderManagersReservationHoldsUnboundedRendersBeforeTheControllersFirstLook(t *testing.T) {
	spec := videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](600)}
	now := time.Now()
	start, end := PeriodBounds(videov1alpha1.BudgetPeriodMonthly, now)
	project := batchRender(1)
	project.Spec.ProjectID = ptr.To("proj-1")
	project.Status.JobID = "job-1"
	project.Status.SubmittedAt = &metav1.Time{Time: now.Add(-5 * time.Minute)}
	h := newBatchHarness(t, spec, project)
	close(h.hold)
	b := h.budget(t)
	b.Status = videov1alpha1.VideoBudgetStatus{Period: videov1alpha1.BudgetPeriodMonthly,
		PeriodStart: &metav1.Time{Time: start}, PeriodEnd: &metav1.Time{Time: end},
		Reservations: []videov1alpha1.BudgetReservation{{Kind: "VideoRender", Name: project.Name, UID: string(project.UID),
			AttemptID: "old-attempt", ReservedAt: metav1.NewTime(now.Add(-6 * time.Minute).Truncate(time.Second))}}}
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}

	// The upgraded manager's first admission in the namespace comes before its VideoBudget
	// controller's first look.
	blog := bound.Estimate{Seconds: bound.DefaultSceneSeconds, Unbounded: true}
	d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(2), "a", "", blog, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Wait {
		b := h.budget(t)
		t.Errorf("a render without upper bound is admitted while a project render (no upper bound) submitted by 0.1.0 runs: "+
			"the admission decided on 0.1.0's reservation %+v (reserved %+v)", b.Status.Reservations, b.Status.Reserved)
	}
}

// Fix 3 (BudgetReservation.UnreportedCredits, line flag r) is set only on reservations written
// from now on. A veo render whose job was recorded by the manager before the upgrade holds a
// running reservation without the flag, although its own status.budgetEstimate (recorded by that
// manager, which knew veo slides consume unreported credits) says unreportedCredits. The new
// manager's VideoBudget controller looks at the budget while the render runs (it refreshes the
// reservation's key from the render, and an estimate only when it has none: fillEstimate), then
// the render is deleted with its finalizer stripped and its job ends: the controller charges it
// without the flag, and the budget says every credit of the period is in used.aiCredits.
func TestBreakFixAVeoJobReservedBeforeTheUpgradeCountsItsUnreportedCreditsOnceItsRenderIsGone(t *testing.T) {
	now := time.Now()
	vr := batchRender(0)
	vr.Status.JobID = "job-veo"
	vr.Status.SubmittedAt = &metav1.Time{Time: now.Add(-5 * time.Minute)}
	vr.Status.BudgetEstimate = &videov1alpha1.BudgetEstimate{Seconds: 40, AICredits: true, UnreportedCredits: true}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxAICredits: ptr.To(resource.MustParse("100"))}, vr)
	close(h.hold)
	start, end := PeriodBounds(videov1alpha1.BudgetPeriodMonthly, now)
	b := h.budget(t)
	// The budget as the manager before 8c099a3 left it: the running job's reservation with its
	// estimate and the flags it knew (c), no r.
	b.Status = videov1alpha1.VideoBudgetStatus{LedgerBudgetUID: "b1", RunningReserved: true, Period: videov1alpha1.BudgetPeriodMonthly,
		PeriodStart: &metav1.Time{Time: start}, PeriodEnd: &metav1.Time{Time: end}, Used: videov1alpha1.BudgetUsage{Renders: 1},
		Reservations: []videov1alpha1.BudgetReservation{{Kind: "VideoRender", Name: vr.Name, UID: string(vr.UID), AttemptID: "a",
			ReservedAt: metav1.NewTime(now.Add(-6 * time.Minute).Truncate(time.Second)), EstimatedSeconds: 40, AICredits: true, JobID: "job-veo"}}}
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}
	jobs := &fakeJobs{ends: map[string]*JobEnd{}}
	clk := clocktesting.NewFakeClock(now)
	_, reconcile := goneJobsController(t, h, clk, jobs, 24*time.Hour)
	reconcile() // the upgraded manager's first look, while the render runs

	cur := &videov1alpha1.VideoRender{}
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), cur); err != nil {
		t.Fatal(err)
	}
	if err := h.server.Delete(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	jobs.mu.Lock()
	jobs.ends["job-veo"] = &JobEnd{Completed: true, Seconds: 40}
	jobs.mu.Unlock()
	reconcile()
	reconcile()

	b = h.budget(t)
	if len(b.Status.Reservations) != 0 || b.Status.Used.RenderSeconds != 40 {
		t.Fatalf("control: the gone render's job should be charged its 40 s: reservations %+v, used %+v", b.Status.Reservations, b.Status.Used)
	}
	if b.Status.Used.UnreportedCreditRenders != 1 {
		t.Errorf("a veo render whose status records unreportedCredits was charged with used.unreportedCreditRenders %d, want 1: "+
			"its reservation, written before the upgrade, never got the flag", b.Status.Used.UnreportedCreditRenders)
	}
	if c := meta.FindStatusCondition(b.Status.Conditions, string(videov1alpha1.ConditionCreditsUnaccounted)); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("CreditsUnaccounted is %+v after a veo render was paid", c)
	}
}

// Fix 3 again: "a running job whose render is gone keeps its unreported-credits flag, so its
// charge is counted in used.unreportedCreditRenders, whoever charges it". Every estimate charge
// of a job whose end will not be read passes the flag (heldForEnd's estimate, SettleAll's running
// jobs), except the one for a submission whose outcome is unknown: an avatar render deleted while
// its paid call was in flight "may have been submitted" and is charged its count and estimate on
// the safe side (settleInterrupted's charge), as if it ran, but not its unreported credits. The
// budget counts a render that may have shown an AI avatar, and says used.aiCredits holds every
// credit of the period.
func TestBreakFixAnAvatarRenderGoneMidSubmissionIsCountedAsUnreportedCredits(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxAICredits: ptr.To(resource.MustParse("100"))})
	h.g.clock = clocktesting.NewFakeClock(time.Date(2026, 11, 10, 10, 0, 0, 0, time.UTC)) // a day later is the same month
	close(h.hold)
	est := bound.For(avatarVideo())
	if !est.Unreported {
		t.Fatalf("control: an avatar render's estimate %+v should say unreported credits", est)
	}
	vr := batchRender(0)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", est, nil); err != nil || d.Wait {
		t.Fatalf("the render: %+v, %v", d, err)
	}
	// The render is deleted while its paid call is in flight (outcome unknown); the controller
	// looks once the reservation is past the grace.
	clk := clocktesting.NewFakeClock(h.g.clock.Now().Add(2 * time.Minute))
	_, reconcile := goneJobsController(t, h, clk, &fakeJobs{ends: map[string]*JobEnd{}}, 24*time.Hour)
	reconcile()
	// A render that runs alone under maxAICredits may still run: its room is held until the job
	// deadline (TestAnUnboundedRenderGoneBeforeItsSettlementHoldsItsRoomUntilTheJobDeadline).
	if n := len(h.budget(t).Status.Reservations); n != 1 {
		t.Fatalf("the gone avatar render's room was let go before the job deadline (%d reservations)", n)
	}
	clk.Step(24 * time.Hour)
	reconcile()
	b := h.budget(t)
	if len(b.Status.Reservations) != 0 || b.Status.Used.Renders != 1 || b.Status.Used.RenderSeconds != est.Seconds {
		t.Fatalf("control: the gone render's reservation should be charged (1 render, %d s): reservations %+v, used %+v",
			est.Seconds, b.Status.Reservations, b.Status.Used)
	}
	if b.Status.Used.UnreportedCreditRenders != 1 {
		t.Errorf("an avatar render charged as submitted (1 render, %d s) counts %d in used.unreportedCreditRenders, want 1",
			est.Seconds, b.Status.Used.UnreportedCreditRenders)
	}
}

// Fix 6's own promise (keepAhead, docs/spend-guard.md): "A ledger that is gone stays gone:
// deleting it is how the limits are removed", "the platform deletes the VideoBudget and its
// ledger". The platform does just that, in that order, right after a write folded a render's
// recorded job. The VideoBudget controller sees the deletion a moment later, after the ledger's
// deletion: were keepAhead to write a copy of the deleted budget then, it would create the ledger
// again with the deleted budget's usage, and the namespace would stay limited for the rest of the
// month: a render waiting on a budget that no longer exists.
func TestBreakFixALedgerThePlatformDeletedWithItsBudgetStaysDeleted(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)})
	close(h.hold)
	vr := batchRender(0)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
		t.Fatalf("the render: %+v, %v", d, err)
	}
	recordFolded(t, h, vr, "job-0")
	storedLedger(t, h) // the first copy was written

	// The platform removes the limits: kubectl delete videobudget default; kubectl delete configmap ...
	deleteBudget(t, h)
	if err := h.server.Delete(t.Context(), storedLedger(t, h)); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Now())
	r := opsController(h, h.g, clk, nil)
	opsReconcile(t, r, clk, 1) // the deletion, seen by the controller

	err := h.server.Get(t.Context(), client.ObjectKey{Namespace: "ops", Name: NewLedgers("ops").Name("team-a")}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the ledger the platform deleted with its budget was written again (get: %v)", err)
	}
	d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{Seconds: 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Wait {
		t.Errorf("the platform removed the namespace's limits (budget and ledger deleted), yet a render waits: %+v", d)
	}
}

// Held (the control of the test above): with every copy of the budget written to the ledger
// (flushPending) when the platform deletes the budget and its ledger, the ledger stays deleted and
// the namespace is free.
func TestBreakFixHeldALedgerDeletedWithNothingHeldBackStaysDeleted(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)})
	close(h.hold)
	vr := batchRender(0)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
		t.Fatalf("the render: %+v, %v", d, err)
	}
	recordFolded(t, h, vr, "job-0")
	deleteBudget(t, h)
	if err := h.server.Delete(t.Context(), storedLedger(t, h)); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Now())
	opsReconcile(t, opsController(h, h.g, clk, nil), clk, 1)
	if err := h.server.Get(t.Context(), client.ObjectKey{Namespace: "ops", Name: NewLedgers("ops").Name("team-a")}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the ledger deleted by the platform is back (get: %v)", err)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
		t.Fatalf("limits removed, yet: %+v, %v", d, err)
	}
}

// Fix 5 (adoptLedger drops a restored status's reservations for the ledger's) assumes the ledger
// is never older than the status it replaces: "the ledger ... followed every write until the
// budget was deleted". The ledger follows the budget write by write, but a whole-cluster restore
// (a disaster recovery: Velero restores the manager's namespace with its ConfigMaps and the
// tenant's namespace with the budget's status, from one backup that read them one after the
// other) brings back both as they were read: the ledger may be a write behind the status. A
// render's job was recorded and folded in between: the status says 1 render used and holds the
// job's running reservation; the ledger still holds the render's in-flight reservation and 0
// renders. Were the new manager to drop the status's reservation for the ledger's, the render's
// recorded job would be folded into that one again, and the render counted a second time (before
// fix 5, the status's own reservation was kept and the ledger's, of the same attempt, was not
// added).
func TestBreakFixAWholeClusterRestoreWithTheLedgerBehindTheStatusCountsARenderOnce(t *testing.T) {
	spec := videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](2), MaxRenderSeconds: ptr.To[int64](100000)}
	h := newBatchHarness(t, spec)
	close(h.hold)
	now := time.Now()
	vr := batchRender(1)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a1", "", bound.Estimate{Seconds: 100}, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v %v", d, err)
	}
	// The backup: the ledger one write behind (the copy of the budget as the reservation left
	// it), and the budget's status after the next write, which folds the render's recorded job.
	behind := ledgerOf(h.budget(t))
	recordFolded(t, h, vr, "job-1")
	status := h.budget(t).Status.DeepCopy()
	if status.Used.Renders != 1 || len(status.Reservations) != 1 || status.Reservations[0].JobID != "job-1" {
		t.Fatalf("control: the budget used %+v, reservations %+v; want the job folded", status.Used, status.Reservations)
	}
	if behind.Used.Renders != 0 || len(behind.Reservations) != 1 || behind.Reservations[0].JobID != "" {
		t.Fatalf("control: the ledger's copy should hold the in-flight reservation: used %+v, reservations %+v", behind.Used, behind.Reservations)
	}

	// The restore, into a cluster where a new manager runs: the budget is created again with the
	// backup's status (uid b2); the ledger, the render and its job come back as they were.
	deleteBudget(t, h)
	cm := storedLedger(t, h)
	cm.Data = ledgerConfigMap(t, cm.Namespace, cm.Name, behind).Data
	if err := h.server.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	createBudget(t, h, spec, status)
	g2 := New(h.server, h.server, clocktesting.NewFakeClock(now.Add(time.Hour)), 10*time.Second, NewLedgers("ops"))
	clk := clocktesting.NewFakeClock(now.Add(time.Hour))
	r := opsController(h, g2, clk, &fakeJobs{ends: map[string]*JobEnd{}})
	opsReconcile(t, r, clk, 3)

	b := h.budget(t)
	if b.Status.LedgerBudgetUID != "b2" {
		t.Fatalf("control: the restored budget did not take the ledger over: %+v", b.Status)
	}
	if b.Status.Used.Renders != 1 {
		t.Errorf("one render paid, yet the restored budget says %d renders used (reservations %+v): the ledger's in-flight "+
			"reservation, older than the status, was folded again", b.Status.Used.Renders, b.Status.Reservations)
	}
	if d, err := g2.reserve(t.Context(), "VideoRender", batchRender(2), "b1", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
		t.Errorf("maxRenders 2 with one render paid: the next render waits (%+v, %v)", d, err)
	}
}

// Held (fix 8): a job the service really forgot, for a gone render, holds its room until the job
// deadline (a second render without upper bound waits meanwhile), is then charged its estimate
// once, with its unreported-credits flag, and the room is free.
func TestBreakFixHeldAJobTheServiceForgotIsChargedItsEstimateOnceAtTheDeadline(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](600), MaxAICredits: ptr.To(resource.MustParse("100"))})
	close(h.hold)
	est := bound.For(veoDeck())
	vr := batchRender(0)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", est, nil); err != nil || d.Wait {
		t.Fatalf("the render: %+v, %v", d, err)
	}
	recordFolded(t, h, vr, "job-gone")
	// The render is gone (finalizer stripped); the service forgot its job.
	if err := h.server.Delete(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	jobs := &fakeJobs{ends: map[string]*JobEnd{"job-gone": {Unknown: true}}}
	clk := clocktesting.NewFakeClock(time.Now().Add(2 * time.Minute))
	_, reconcile := goneJobsController(t, h, clk, jobs, time.Hour)
	for range 3 {
		reconcile()
	}
	if b := h.budget(t); len(b.Status.Reservations) != 1 || b.Status.Used.RenderSeconds != 0 {
		t.Fatalf("before the deadline: reservations %+v, used %+v; want the room held", b.Status.Reservations, b.Status.Used)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{Seconds: 30, Unbounded: true, Credits: true}, nil); err != nil || !d.Wait {
		t.Fatalf("a second credit-consuming render is admitted while the first one's job is held: %+v, %v", d, err)
	}
	clk.Step(time.Hour)
	for range 3 {
		reconcile()
	}
	b := h.budget(t)
	if len(b.Status.Reservations) != 0 || b.Status.Used.RenderSeconds != est.Seconds || b.Status.Used.UnreportedCreditRenders != 1 || b.Status.ChargeCount != 1 {
		t.Fatalf("past the deadline: reservations %+v, used %+v, chargeCount %d; want the estimate %d s charged once, unreported",
			b.Status.Reservations, b.Status.Used, b.Status.ChargeCount, est.Seconds)
	}
}

// The same promise ("A ledger that is gone stays gone: deleting it is how the limits are
// removed"; "Waiting objects then submit at their next look") with a job still running when the
// platform removes the limits, in the documented order and with the deletion seen at once (the
// held control above): the render is deleted, and its finalizer reads the job's end and charges
// it (Guard.Charge: a cost no status records), which finds the budget gone and goes to the ledger
// (keepInLedger: "a charge made after the budget was deleted is kept for every later copy"). Were
// that to write the deleted budget's whole copy again, the namespace would be limited again by a
// budget the platform deleted, with its old usage, until the end of the month.
func TestBreakFixALedgerThePlatformDeletedStaysDeletedWhenARunningJobEnds(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)})
	close(h.hold)
	vr := batchRender(0)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
		t.Fatalf("the render: %+v, %v", d, err)
	}
	recordFolded(t, h, vr, "job-0")
	deleteBudget(t, h)
	clk := clocktesting.NewFakeClock(time.Now())
	opsReconcile(t, opsController(h, h.g, clk, nil), clk, 1) // the deletion, seen at once
	if err := h.server.Delete(t.Context(), storedLedger(t, h)); err != nil {
		t.Fatal(err)
	}
	// The render is deleted; its finalizer reads its job's end and charges it.
	c := ChargeOf(vr)
	c.Seconds = 10
	if err := h.g.Charge(t.Context(), "team-a", c); err != nil {
		t.Fatal(err)
	}
	if err := h.server.Get(t.Context(), client.ObjectKey{Namespace: "ops", Name: NewLedgers("ops").Name("team-a")}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ledger the platform deleted with its budget was written again by a job's charge (get: %v)", err)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
		t.Errorf("the platform removed the namespace's limits, yet a render waits: %+v, %v", d, err)
	}
}
