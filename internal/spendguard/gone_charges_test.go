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
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// Charges made while the namespace has no VideoBudget (a GitOps replace's gap) are kept in its
// ledger (keepInLedger). The facts alone do not cover them: these specs are charges whose job the
// ledger's copy does not name, or whose end the budget created again cannot read. Each failed when
// keepInLedger was removed on the claim that the ledger's running reservation and the job's end
// were enough (92fd4d9, reverted): four charged less than the jobs cost (A, B, C, F), one in the
// wrong period (D), one charged an attempt never sent (E).

// A: the job was recorded after the last ledger copy (the fold not made yet: the controller folds
// within foldAge, the next guard write carries it). A GitOps replace deletes the budget in that
// window. The render is deleted while its job runs; its finalizer reads the end (450 s) and
// Charge finds no budget; the controller's delete event is ignored (objectGone: no budget).
// The budget created again takes over a reservation that names no job: its holder is gone, no
// last state names the job, so it is charged its estimate, a 30 s guess for a render without
// upper bound.
func TestAJobRecordedAfterTheLastLedgerCopyAndChargedWhileTheBudgetIsGoneIsChargedWhatItCost(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)})
	close(h.hold)
	blog := bound.Estimate{Seconds: bound.DefaultSceneSeconds, Unbounded: true}
	vr := batchRender(0)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", blog, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v %v", d, err)
	}
	// The paid call answered: its job recorded in status, not folded yet (no budget write since).
	recordJob(t, h, vr, "job-0", h.g.clock.Now())
	clk := clocktesting.NewFakeClock(h.g.clock.Now())
	jobs := &fakeJobs{ends: map[string]*JobEnd{"job-0": {Completed: true, Seconds: 450}}}
	r, look := goneJobsController(t, h, clk, jobs, 6*time.Hour)
	deleteBudget(t, h)
	look() // the controller's look at the deleted budget (keepAhead)
	// The render is deleted while its job runs: its finalizer reads the end and charges it.
	finalizerCharge(t, h, r, vr, 450, nil)
	createBudget(t, h, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)}, nil)
	for range 4 {
		look()
	}
	clk.Step(7 * time.Hour) // past the job deadline
	look()
	look()
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 450 || b.Status.Used.Renders != 1 || len(b.Status.Reservations) != 0 {
		t.Fatalf("job-0 cost 450 s and its finalizer charged them while the budget was gone; the budget created again "+
			"used %d renders, %d s (reservations %+v, service reads %v): the charge was dropped and the job is charged its guess",
			b.Status.Used.Renders, b.Status.Used.RenderSeconds, b.Status.Reservations, jobs.reads)
	}
}

// B: a render with an aiVisual (AI credits) running when the budget is deleted; its reservation,
// with its job id, is in the ledger. The job ends while the budget is gone: the finalizer reads
// 60 s and 50 credits and Charge finds no budget. The budget is created again after the service
// has forgotten the job (or answers JOB_NOT_FOUND to the key): the reservation is charged its
// estimate, and an estimate holds no credits.
func TestACreditsChargedWhileTheBudgetIsGoneSurviveAServiceThatForgotTheJob(t *testing.T) {
	b, reads := creditsChargedWhileGone(t, false)
	if usedCredits(b) != "50" || len(b.Status.Reservations) != 0 {
		t.Fatalf("job-0 consumed 50 AI credits, charged by its finalizer while the budget was gone; the budget created again "+
			"used %s credits, %d s (reservations %+v, service reads %v)", usedCredits(b), b.Status.Used.RenderSeconds,
			b.Status.Reservations, reads)
	}
}

// creditsChargedWhileGone is B, with a restart of the manager after the budget's deletion when
// restart is set (G): it returns the budget created again, and the service reads made.
func creditsChargedWhileGone(t *testing.T, restart bool) (*videov1alpha1.VideoBudget, []string) {
	t.Helper()
	spec := videov1alpha1.VideoBudgetSpec{MaxAICredits: ptr.To(resource.MustParse("1000"))}
	h := newBatchHarness(t, spec)
	close(h.hold)
	vr := batchRender(0)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 100, Credits: true}, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v %v", d, err)
	}
	recordFolded(t, h, vr, "job-0")
	clk := clocktesting.NewFakeClock(h.g.clock.Now())
	jobs := &fakeJobs{ends: map[string]*JobEnd{}}
	r, look := goneJobsController(t, h, clk, jobs, 6*time.Hour)
	look()
	deleteBudget(t, h)
	look()
	if restart {
		// Nothing of the deleted budget is in the new process's memory.
		h.g = New(h.server, h.server, clocktesting.NewFakeClock(h.g.clock.Now()), 10*time.Second, NewLedgers("ops"))
		r, look = goneJobsController(t, h, clk, jobs, 6*time.Hour)
	}
	finalizerCharge(t, h, r, vr, 60, ptr.To(resource.MustParse("50")))
	// Later: the service no longer knows the job.
	jobs.mu.Lock()
	jobs.ends["job-0"] = &JobEnd{Unknown: true}
	jobs.mu.Unlock()
	createBudget(t, h, spec, nil)
	look()
	clk.Step(7 * time.Hour)
	look()
	look()
	return h.budget(t), jobs.reads
}

// C: a key rotation while the budget is gone. The ledger's reservation names key-v1 (the
// controller's last look before the deletion); the platform points the render at key-v2 and
// deletes key-v1 during the gap (no budget: no look refreshes the reservation). The render is
// deleted; its finalizer reads the end with key-v2 (450 s) and Charge finds no budget. The budget
// created again reads the job with key-v1, which is gone: the room is held until the job
// deadline, then the 30 s guess is charged.
func TestAKeyRotatedWhileTheBudgetIsGoneDoesNotLoseTheChargeOfItsRendersJob(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)})
	close(h.hold)
	blog := bound.Estimate{Seconds: bound.DefaultSceneSeconds, Unbounded: true}
	vr := batchRender(1)
	vr.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "key-v1", Key: "api-key"}
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a1", "", blog, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v %v", d, err)
	}
	recordFolded(t, h, vr, "job-1")
	jobs := &keyedJobs{secrets: map[string]bool{"key-v1/api-key": true, "key-v2/api-key": true}, ends: map[string]*JobEnd{}}
	clk := clocktesting.NewFakeClock(h.g.clock.Now().Add(2 * time.Minute))
	r := opsController(h, h.g, clk, jobs) // job deadline 6 h
	opsReconcile(t, r, clk, 2)
	deleteBudget(t, h)
	opsReconcile(t, r, clk, 1)
	// The rotation, during the gap.
	cur := &videov1alpha1.VideoRender{}
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), cur); err != nil {
		t.Fatal(err)
	}
	cur.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "key-v2", Key: "api-key"}
	if err := h.server.Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	jobs.mu.Lock()
	delete(jobs.secrets, "key-v1/api-key")
	jobs.ends["job-1"] = &JobEnd{Completed: true, Seconds: 450}
	jobs.mu.Unlock()
	// The render is deleted; its finalizer reads the end with key-v2 and charges it.
	finalizerCharge(t, h, r, cur, 450, nil)
	createBudget(t, h, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)}, nil)
	opsReconcile(t, r, clk, 3)
	held := len(h.budget(t).Status.Reservations)
	clk.Step(7 * time.Hour)
	opsReconcile(t, r, clk, 2)
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 450 || len(b.Status.Reservations) != 0 {
		t.Fatalf("job-1 cost 450 s, charged by its finalizer (with key-v2) while the budget was gone; the budget created again "+
			"held %d reservation(s) for 3 polls, then used %d s (reservations %+v, service reads %v)",
			held, b.Status.Used.RenderSeconds, b.Status.Reservations, jobs.reads)
	}
}

// D: the budget created again in a later period. A job running when the budget was deleted ends
// in that period (its finalizer's charge finds no budget); the budget is created again next
// month. The ledger's reservation is taken over "whatever the period", and the job's end, read
// from the service, is charged now: last month's job counts in this month.
func TestAJobThatEndedWhileTheBudgetWasGoneCountsInThePeriodItEndedIn(t *testing.T) {
	now := time.Now()
	_, end := PeriodBounds(videov1alpha1.BudgetPeriodMonthly, now)
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)})
	close(h.hold)
	vr := batchRender(0)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 600}, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v %v", d, err)
	}
	recordFolded(t, h, vr, "job-0")
	clk := clocktesting.NewFakeClock(h.g.clock.Now())
	jobs := &fakeJobs{ends: map[string]*JobEnd{"job-0": {Completed: true, Seconds: 450}}}
	r, look := goneJobsController(t, h, clk, jobs, 0)
	look()
	deleteBudget(t, h)
	look()
	finalizerCharge(t, h, r, vr, 450, nil)
	// Next month.
	clk.SetTime(end.Add(24 * time.Hour))
	createBudget(t, h, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)}, nil)
	look()
	look()
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 0 || len(b.Status.Reservations) != 0 {
		t.Fatalf("job-0 ended last month (450 s, charged by its finalizer while the budget was gone); the budget created "+
			"this month used %d s (period %v, reservations %+v, service reads %v)",
			b.Status.Used.RenderSeconds, b.Status.PeriodStart, b.Status.Reservations, jobs.reads)
	}
}

// E: a release while the budget is gone. A submission refused by the service (it certainly
// created no job) releases its reservation: Release finds no budget and is dropped. The render is
// then deleted (its delete event ignored: no budget). The budget created again takes the
// reservation over from the ledger, its holder gone and no last state: it is charged (count and
// estimate). Over-charge, on the safe side.
func TestAReleaseWhileTheBudgetIsGoneIsNotChargedByTheBudgetCreatedAgain(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)})
	close(h.hold)
	vr := batchRender(0)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 100}, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v %v", d, err)
	}
	writeRenderStatus(t, h.server, vr, func(st *videov1alpha1.VideoRenderStatus) {
		st.Submission = &videov1alpha1.Submission{AttemptID: "a", StartedAt: metav1.Time{Time: h.g.clock.Now()}}
	})
	clk := clocktesting.NewFakeClock(h.g.clock.Now())
	r, look := goneJobsController(t, h, clk, &fakeJobs{}, 0)
	deleteBudget(t, h)
	look()
	if err := h.g.Release(t.Context(), "team-a", vr.UID, "a"); err != nil {
		t.Fatal(err)
	}
	writeRenderStatus(t, h.server, vr, func(st *videov1alpha1.VideoRenderStatus) { st.Submission = nil })
	if err := h.server.Delete(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	r.objectGone(vr, false)
	createBudget(t, h, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, nil)
	for range 4 {
		look()
	}
	b := h.budget(t)
	if b.Status.Used.Renders != 0 || len(b.Status.Reservations) != 0 {
		t.Fatalf("the attempt was released (never sent) while the budget was gone; the budget created again used %d renders, %d s "+
			"(reservations %+v)", b.Status.Used.Renders, b.Status.Used.RenderSeconds, b.Status.Reservations)
	}
}

// F: the ledger copy of the last write failed and is held back (the ledger unwritable for a
// moment) when the budget is deleted: the ledger still holds the reservation as it was before the
// job's fold (no job id). The ledger recovers; the render's job ends and its finalizer charges it
// (450 s), finding no budget. The manager restarts before anything else writes the copy held back
// (it lived in memory). The budget created again takes over the reservation that names no job, its
// holder gone: charged its 30 s guess.
func TestAChargeWhileTheBudgetIsGoneAfterAFailedLedgerCopySurvivesARestart(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)})
	close(h.hold)
	var failing atomic.Bool
	isCM := func(obj client.Object) bool { _, ok := obj.(*corev1.ConfigMap); return ok }
	c := interceptor.NewClient(h.server.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			if isCM(obj) && failing.Load() {
				return apierrors.NewServiceUnavailable("etcd leader change")
			}
			return cl.Patch(ctx, obj, p, opts...)
		},
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if isCM(obj) && failing.Load() {
				return apierrors.NewServiceUnavailable("etcd leader change")
			}
			return cl.Create(ctx, obj, opts...)
		},
	})
	now := time.Now()
	h.g = New(c, c, clocktesting.NewFakeClock(now), 10*time.Second, NewLedgers("ops"))
	vr := batchRender(0)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: bound.DefaultSceneSeconds, Unbounded: true}, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v %v", d, err)
	}
	failing.Store(true)
	recordJob(t, h, vr, "job-0", h.g.clock.Now())
	if err := h.g.mutateBudget(t.Context(), "team-a", ChangeFold, func(*videov1alpha1.VideoBudget) bool { return false }); err == nil {
		t.Fatal("the fold's write succeeded with the ledger failing")
	}
	deleteBudget(t, h)
	failing.Store(false)
	finalizerCharge(t, h, nil, vr, 450, nil)
	// The manager restarts.
	h.g = New(h.server, h.server, clocktesting.NewFakeClock(now), 10*time.Second, NewLedgers("ops"))
	createBudget(t, h, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)}, nil)
	clk := clocktesting.NewFakeClock(now)
	_, look := goneJobsController(t, h, clk, &fakeJobs{ends: map[string]*JobEnd{"job-0": {Completed: true, Seconds: 450}}}, 0)
	for range 4 {
		look()
	}
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 450 || b.Status.Used.Renders != 1 || len(b.Status.Reservations) != 0 {
		t.Fatalf("job-0 cost 450 s, charged by its finalizer while the budget was gone (the ledger writable again); after a restart "+
			"the budget created again used %d renders, %d s (reservations %+v)", b.Status.Used.Renders, b.Status.Used.RenderSeconds, b.Status.Reservations)
	}
}

// G (found by the simulation once it deleted renders through their finalizer, seed 66): B with a
// restart while the budget is gone. The new process holds no copy of the deleted budget, and the
// finalizer's charge was dropped (keepInLedger had nothing to apply it to): the 50 credits were
// lost, and the job was charged its estimate at the job deadline. The ledger is that copy.
func TestAChargeWhileTheBudgetIsGoneInAProcessStartedSinceIsKeptInTheLedger(t *testing.T) {
	b, _ := creditsChargedWhileGone(t, true)
	if usedCredits(b) != "50" || b.Status.Used.RenderSeconds != 60 || len(b.Status.Reservations) != 0 {
		t.Fatalf("job-0 cost 60 s and 50 AI credits, charged by its finalizer while the budget was gone, in a process started "+
			"since; the budget created again used %s credits, %d s (reservations %+v)", usedCredits(b), b.Status.Used.RenderSeconds,
			b.Status.Reservations)
	}
}

// H (found by the simulation, seed 4966): fail closed from the first failed ledger copy. A
// reservation whose budget write landed and whose ledger copy failed lived only in the budget and
// in this process's memory: the budget replaced and the manager killed before the copy was
// written, the budget created again never knew it, and the preview paid on it was never counted.
// Nothing is paid on a reservation the ledger does not hold.
func TestAReservationWhoseLedgerCopyFailsIsNotPaidOn(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)})
	close(h.hold)
	writable := unwritableLedgers(t, h)
	writable.Store(true)
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
		t.Fatalf("the first render, its ledger writable: %+v %v", d, err)
	}
	writable.Store(false)
	d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{Seconds: 10}, nil)
	if err == nil && !d.Wait {
		t.Fatalf("admitted on a reservation whose ledger copy failed (%+v): a replace and a restart before the copy is written "+
			"lose it, and what was paid on it", d)
	}
	if l, _, _ := h.g.ledgers.read(t.Context(), h.server, "team-a"); l == nil || len(l.Reservations) != 1 {
		t.Fatalf("the ledger holds %+v, want the first render's reservation alone", l)
	}
}

// finalizerCharge is a deleted render's charge finalizer: it reads vr again, charges its job secs
// and credits (nil: none), and lets the render go; r, when set, gets its delete event.
func finalizerCharge(t *testing.T, h *batchHarness, r *Reconciler, vr *videov1alpha1.VideoRender, secs int64, credits *resource.Quantity) {
	t.Helper()
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), vr); err != nil {
		t.Fatal(err)
	}
	c := ChargeOf(vr)
	c.Seconds, c.Credits = secs, credits
	if err := h.g.Charge(t.Context(), "team-a", c); err != nil {
		t.Fatal(err)
	}
	if err := h.server.Delete(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	if r != nil {
		r.objectGone(vr, false)
	}
}
