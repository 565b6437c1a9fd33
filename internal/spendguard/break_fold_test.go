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

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// Break tests of the fold (fold.go). Each fails while the bug it names is there.

// A render's job job-1 failed within the second it was submitted in (a request the service
// refused asynchronously), and the render moved on at once (a spec change that was waiting for
// job-1 to end): its next reservation is written in that same second, job-1's end already
// folded. Until its in-flight record reaches the cache, the render's status still shows job-1,
// ended, with no submission in flight, submitted in the second the reservation was made in:
// recordedSince takes job-1 for the job the new reservation paid for (times are kept to the
// second). A guard write of the namespace (any other render's) in that window settles the new
// reservation to job-1 and posts it for job-1's end: the reservation is gone before its job
// exists. job-2 then runs holding nothing, and its end finds no reservation to post: its seconds
// are never charged.
func TestBreakFoldANewReservationIsNotTakenForTheEndedJobRecordedInTheSameSecond(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](1000)}, batchRender(0), batchRender(1))
	close(h.hold)
	clk := freshGuardAt(h, foldT0)
	// job-1: reserved, recorded, failed, folded (the render counted, nothing charged).
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{Seconds: 60}, nil); err != nil || d.Wait {
		t.Fatalf("%+v %v", d, err)
	}
	clk.Step(100 * time.Millisecond)
	h.recordJob(t, 0, "job-1")
	clk.Step(400 * time.Millisecond)
	vr := h.readRender(t, 0)
	vr.Status.CompletedAt = &metav1.Time{Time: clk.Now()}
	vr.Status.Failure = &videov1alpha1.JobFailure{Code: "RENDER_FAILED", Message: "refused"}
	h.writeRenderStatus(t, vr)
	h.foldNow(t)
	if b := h.budget(t); b.Status.Used.Renders != 1 || len(b.Status.Reservations) != 0 {
		t.Fatalf("job-1 folded: used %d renders, reservations %+v; want 1, none", b.Status.Used.Renders, b.Status.Reservations)
	}
	// The render's next submission reserves, in the same second, before its in-flight record.
	clk.Step(200 * time.Millisecond)
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "b", "", bound.Estimate{Seconds: 60}, nil); err != nil || d.Wait {
		t.Fatalf("%+v %v", d, err)
	}
	// Another render's write of the budget comes in that window: it folds what the cache shows.
	clk.Step(100 * time.Millisecond)
	h.foldNow(t)
	b := h.budget(t)
	if b.Status.Used.Renders != 1 || len(b.Status.Reservations) != 1 || b.Status.Reservations[0].AttemptID != "b" ||
		b.Status.Reservations[0].JobID != "" {
		t.Errorf("before job-2 exists: used %d renders, reservations %+v; want 1 render (job-1) and attempt b's reservation, naming no job",
			b.Status.Used.Renders, b.Status.Reservations)
	}
	// Attempt b is paid: job-2 is recorded, runs 40 s, ends; everything folds.
	clk.Step(time.Second)
	vr = h.readRender(t, 0)
	vr.Status.Failure, vr.Status.CompletedAt = nil, nil
	vr.Status.JobID, vr.Status.SubmittedAt = "job-2", &metav1.Time{Time: clk.Now()}
	h.writeRenderStatus(t, vr)
	h.foldNow(t)
	clk.Step(40 * time.Second)
	h.writeRenderStatus(t, withEndAt(h.readRender(t, 0), clk.Now(), 40))
	h.lookAgain(t)
	b = h.budget(t)
	if u := b.Status.Used; u.Renders != 2 || u.RenderSeconds != 40 || timesCharged(b, "job-2") != 1 || len(b.Status.Reservations) != 0 {
		t.Fatalf("after job-2 ended: used %d renders, %d s, charged %v, reservations %+v; want 2 renders, job-2's 40 s charged once, none left",
			u.Renders, u.RenderSeconds, b.Status.ChargedJobs, b.Status.Reservations)
	}
}

// Upgraded from a manager that recorded no estimate in the render's status (0.1.0, 953f389): a
// render with an AI avatar, whose credits no job answer reports, was submitted by it and ends
// under this one. Its reservation knows it consumes unreported credits (rebuilt from its spec,
// fillEstimate), and so did the charge of b82c5a5 (terms.estimateOf falls back to the spec). The
// fold reads the flag from status.budgetEstimate alone: the render is not counted in
// used.unreportedCreditRenders, and CreditsUnaccounted is not set, while heldForEnd and SettleAll
// would have counted it from the same reservation.
func TestBreakFoldAnOlderManagersAvatarRenderIsCountedAmongUnreportedCredits(t *testing.T) {
	vr := withEndAt(foldRender("job-0", foldT0.Add(-time.Minute), 0), foldT0, 30)
	vr.Status.BudgetEstimate = nil
	vr.Spec.Storyboard = avatarVideo()
	if !bound.Render(vr).Unreported {
		t.Fatal("the test's render is not estimated to consume unreported credits")
	}
	res := heldFor("rebuilt", foldT0.Add(-time.Minute), 0, "job-0")
	fillEstimate(&res, vr)
	if !res.UnreportedCredits {
		t.Fatal("the rebuilt reservation lacks its unreported-credits flag")
	}
	b := foldBudget(foldT0, 1, res)
	foldAsGuard(t, foldReader(t, vr), b, foldT0.Add(time.Second))
	if u := b.Status.Used; u.RenderSeconds != 30 || u.UnreportedCreditRenders != 1 || len(b.Status.Reservations) != 0 {
		t.Fatalf("folded: %d s, %d renders with unreported credits, reservations %+v; want 30 s, 1, none",
			u.RenderSeconds, u.UnreportedCreditRenders, b.Status.Reservations)
	}
}

// Upgraded from a manager whose budget kept no reservation for running jobs (953f389, 0.1.0:
// status.runningReserved unset). Its render's job-1 was recorded and counted by it, and still
// runs at the upgrade. Under the new manager, the render reads job-1's end (a callback, or its
// first poll) and writes it to its status before the VideoBudget controller's first look at the
// budget (which rebuilds the running jobs' reservations, countRunning): the rebuild skips a job
// that ended, and with no reservation the fold has nothing to post. b82c5a5 charged such an end
// before writing it (posted: no runningReserved, not in chargedJobs). Fixed: the rebuild of a
// budget that did not just take a ledger over adds the jobs that ended since this process
// started (countRunning), and the fold posts them.
func TestBreakFoldAnEndWrittenBeforeTheUpgradedBudgetsFirstLookIsCharged(t *testing.T) {
	// The new manager starts at foldT0 and writes job-1's end a second later.
	vr := withEndAt(foldRender("job-1", foldT0.Add(-10*time.Minute), 600), foldT0.Add(time.Second), 30)
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](1000)}, batchRender(1))
	close(h.hold)
	clk := freshGuardAt(h, foldT0)
	// The budget as the older manager left it: job-1 counted, no running job reserved.
	b := h.budget(t)
	b.Status = *foldBudget(foldT0, 1).Status.DeepCopy()
	b.Status.LedgerBudgetUID = "b1"
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}
	// The render as the new manager wrote it: job-1 ended, 30 s.
	if err := h.server.Create(t.Context(), vr.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	h.writeRenderStatus(t, vr)
	reviewReconcile(t, h, clk, 2)
	h.lookAgain(t)
	b = h.budget(t)
	if u := b.Status.Used; u.Renders != 1 || u.RenderSeconds != 30 || timesCharged(b, "job-1") != 1 {
		t.Fatalf("used %d renders, %d s, charged %v, reservations %+v; want job-1's 1 render and its 30 s charged once",
			u.Renders, u.RenderSeconds, b.Status.ChargedJobs, b.Status.Reservations)
	}
}
