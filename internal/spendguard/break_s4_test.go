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

// Adversarial review (s4) of 5fa93b4 (a render deleted before its recorded job reached the
// budget: its delete event's last state, and the hold until the job deadline) and 5ba7ea4 (a
// render's end written before its charge). Each test failed on the code of 5ba7ea4; the charge
// written after the end is gone since (the end in the render's status is folded, fold.go), and
// the scenarios are kept under that design.

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

// s4Clock puts the harness's guard and a VideoBudget controller on one fake clock set to at.
func s4Clock(h *batchHarness, at time.Time) *clocktesting.FakeClock {
	clk := clocktesting.NewFakeClock(at)
	h.g.clock = clk
	return clk
}

// Change 1 (b), the hold until the job deadline, moves a render's count into the NEXT period.
//
// Daily budget, maxRenders 1. At 20:00 an unbounded render reserves, records its job, and the
// manager crashes before a budget write folds it; the render is deleted with its finalizer stripped
// while no manager runs (so no delete event is seen). The render, and so its job if any, certainly
// belongs to that day: it was reserved and gone at 20:00.
//
// Before 5fa93b4 the VideoBudget controller charged the gone reservation (count + estimate) at its
// first look past the grace (20:02, same day). Now it holds it until the job deadline (6 h: 02:00
// the next day) and then charges it with countUsed(b, res, time.Time{}) and addUsage, i.e. "now":
// the render is counted in the next day. The next day's first render then waits the whole day
// under maxRenders 1 (the bug TestBreakMidARenderRecordedBeforeTheRollOverIsCountedInTheNextPeriod
// fixed for recorded jobs). Expected: the next day shows 0 renders used and admits a render.
func TestS4AGoneRenderHeldUntilTheDeadlineIsCountedInTheNextPeriod(t *testing.T) {
	day := time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC)
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriod("Daily"),
		MaxRenders: ptr.To[int64](1), MaxRenderSeconds: ptr.To[int64](1200)})
	close(h.hold)
	clk := s4Clock(h, day)
	goneBeforeSettled(t, h, clk.Now())
	clk.Step(2 * time.Minute) // past the grace of a submission in flight
	_, reconcile := goneJobsController(t, h, clk, &fakeJobs{ends: map[string]*JobEnd{}}, 6*time.Hour)
	reconcile()
	if b := h.budget(t); len(b.Status.Reservations) != 1 {
		t.Fatalf("setup: the gone render's reservation is not held: %+v", b.Status.Reservations)
	}
	// The next day, past the job deadline.
	clk.SetTime(time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC))
	reconcile()
	b := h.budget(t)
	if len(b.Status.Reservations) != 0 {
		t.Fatalf("past the job deadline the reservation is still held: %+v", b.Status.Reservations)
	}
	if !b.Status.PeriodStart.Time.Equal(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("period starts %v, want Nov 21", b.Status.PeriodStart)
	}
	if b.Status.Used.Renders != 0 || b.Status.Used.RenderSeconds != 0 {
		t.Errorf("Nov 21 shows %d render(s) and %d s used for a render reserved and deleted on Nov 20 at 20:00 "+
			"(held until the job deadline, then counted 'now'); want 0 and 0", b.Status.Used.Renders, b.Status.Used.RenderSeconds)
	}
	bounded := bound.Estimate{Seconds: 10}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(5), "a", "", bounded, nil); err != nil || d.Wait {
		t.Errorf("the first render of Nov 21 waits under maxRenders 1 (%q, %v): the day's only render went to yesterday's job", d.Message, err)
	}
}

// Change 1 (b): the hold is not limited to renders the manager did not see deleted.
//
// maxRenderSeconds 1200. An unbounded render reserves its room and is deleted (kubectl delete; it
// has no finalizer yet: the finalizer comes with the record) before its in-flight record was
// written: the paid call follows the in-flight record, so it certainly paid nothing. The running
// manager sees the delete event, whose last state shows no submission in flight and no job;
// objectGone returns without telling anyone. The VideoBudget controller then holds the
// reservation as "a render that may still run" until the job deadline (6 h): every other render
// without an upper bound in the namespace waits 6 hours behind a render that never paid.
// Before 5fa93b4 its room was freed at the first look past the grace (charged count + guess).
// The commit and doc say the hold is for a render deleted "while this manager was down" /
// "unseen". Expected: once past the grace, the next unbounded render is admitted.
func TestS4ARenderSeenDeletedBeforeItPaidHoldsTheUnboundedRoomUntilTheJobDeadline(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](1200)})
	close(h.hold)
	clk := s4Clock(h, time.Now())
	blog := bound.Estimate{Seconds: bound.DefaultSceneSeconds, Unbounded: true}
	vr := batchRender(0)
	if err := h.server.Create(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", blog, nil); err != nil || d.Wait {
		t.Fatalf("the first render: %+v, %v", d, err)
	}
	last := &videov1alpha1.VideoRender{}
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), last); err != nil {
		t.Fatal(err)
	}
	if err := h.server.Delete(t.Context(), last); err != nil {
		t.Fatal(err)
	}
	r, reconcile := goneJobsController(t, h, clk, &fakeJobs{ends: map[string]*JobEnd{}}, 6*time.Hour)
	// The running manager's informer delivers the delete with the render's last state: no
	// submission in flight, no job.
	r.objectGone(last, false)
	clk.Step(2 * time.Minute)
	reconcile()
	reconcile()
	d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", blog, nil)
	if err != nil || d.Wait {
		t.Errorf("5 min after a render that never paid was seen deleted, the next unbounded render still waits (%q); "+
			"reservations %+v (held until the 6 h job deadline)", d.Message, h.budget(t).Status.Reservations)
	}
}

// A failed job's end, recorded in its render's status and not folded yet, is charged nothing by
// an uninstall.
//
// Under maxRenderSeconds a render's job runs on its reservation (its 600 s estimate). The job
// fails: the render writes the failure in its own status, and nothing tells the budget (the next
// budget write folds it, fold.go). The platform then uninstalls: the manager is stopped first,
// before any write came, and `manager uninstall` runs SettleAll, which charges every running
// job's reservation its estimate ("nobody will read its end"). Before, it did so without looking
// at the render, whose status says the job failed: a failed job was charged 600 s. SettleAll folds
// what the objects recorded first: the failed job's reservation ends, charged nothing, as the
// render's own fold would have made it.
func TestS4AnUninstallChargesAFailedJobWhoseEndWasWrittenFirstItsEstimate(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](3600)})
	close(h.hold)
	now := time.Now()
	clk := s4Clock(h, now.Add(-10*time.Minute))
	vr := batchRender(0)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 600}, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v, %v", d, err)
	}
	recordInStatus(t, h.server, vr, "job-f", now.Add(-5*time.Minute))
	clk.SetTime(now)
	foldByGuardWrite(t, h.g)
	if b := h.budget(t); b.Status.Used.Renders != 1 || (JobCharge{JobID: "job-f"}).pending(b) < 0 {
		t.Fatalf("setup: the recorded job was not folded: %+v", b.Status)
	}
	// The job fails; its render writes the failure in its own status.
	writeRenderStatus(t, h.server, vr, func(st *videov1alpha1.VideoRenderStatus) {
		st.CompletedAt = &metav1.Time{Time: now}
		st.Failure = &videov1alpha1.JobFailure{Code: "TEXT_TO_VIDEO_FAILED", Message: "the service failed"}
	})
	if s := h.g.Standing(t.Context(), vr); !s.Unfolded {
		t.Fatalf("setup: the budget does not show the failed end unfolded: %+v", s)
	}
	// No budget write comes: the manager is stopped for the uninstall. The uninstall's own guard
	// settles the namespace.
	un := New(h.server, h.server, clocktesting.NewFakeClock(now), 10*time.Second, NewLedgers("ops"))
	s, err := un.SettleAll(t.Context(), "team-a")
	if err != nil {
		t.Fatal(err)
	}
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 0 || len(b.Status.Reservations) != 0 || b.Status.Used.Renders != 1 {
		t.Errorf("after the uninstall a FAILED job: used %+v, reservations %+v; want 0 s, none left, its render counted once",
			b.Status.Used, b.Status.Reservations)
	}
	if s.Folded != 1 {
		t.Errorf("the uninstall reports %d facts folded, want 1 (the failed end): %+v", s.Folded, s)
	}
	if s.Estimated != 0 {
		t.Errorf("the uninstall charged %d estimates, want none: %+v", s.Estimated, s)
	}
}
