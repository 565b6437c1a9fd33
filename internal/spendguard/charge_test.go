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
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// The charge of a render's job, whatever the order in which its record, its end, the writes that
// fold them, a kill of the manager and a second read of its end come: charged exactly once
// (docs/spend-guard.md, "Durable"). A render's end is charged from its status, by the budget write
// that folds it (fold.go); Guard.Charge posts what no status records (a deleted render's job, read
// by its finalizer).

// chargeRender charges the end of vr's job, secs long, as a deleted render's finalizer does once
// it read the job's end from the service (Guard.Charge).
func (h *batchHarness) chargeRender(t *testing.T, vr *videov1alpha1.VideoRender, secs int64) error {
	t.Helper()
	c := ChargeOf(vr)
	c.Seconds = secs
	return h.g.Charge(t.Context(), "team-a", c)
}

// recordJob writes job jobID into render i's status, as the render's job-id write does (now, by
// the guard's clock), and returns the render as written. Nothing is written to the budget.
func (h *batchHarness) recordJob(t *testing.T, i int, jobID string) *videov1alpha1.VideoRender {
	t.Helper()
	vr := batchRender(i)
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), vr); err != nil {
		t.Fatal(err)
	}
	vr.Status.JobID, vr.Status.SubmittedAt, vr.Status.Submission = jobID, &metav1.Time{Time: h.g.clock.Now()}, nil
	if err := writeObjectStatus(t.Context(), h.server, vr); err != nil {
		t.Fatal(err)
	}
	return vr
}

// recordEnd writes the end of vr's job into its status, secs long, as the render's poll does (now,
// by the guard's clock), and returns the render as written. Nothing is written to the budget.
func (h *batchHarness) recordEnd(t *testing.T, vr *videov1alpha1.VideoRender, secs int64) *videov1alpha1.VideoRender {
	t.Helper()
	cur := &videov1alpha1.VideoRender{}
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), cur); err != nil {
		t.Fatal(err)
	}
	cur.Status.CompletedAt = &metav1.Time{Time: h.g.clock.Now()}
	cur.Status.VideoDuration = &metav1.Duration{Duration: time.Duration(secs) * time.Second}
	if err := writeObjectStatus(t.Context(), h.server, cur); err != nil {
		t.Fatal(err)
	}
	return cur
}

// foldNow makes a guard write of the harness's budget, which folds what the renders recorded.
func (h *batchHarness) foldNow(t *testing.T) {
	t.Helper()
	if err := h.g.foldNow(t.Context(), "team-a"); err != nil {
		t.Fatal(err)
	}
}

// chargeOthers charges n other jobs, 1 s each: enough of them push a job out of chargedJobs.
// They are charged by job id alone, as a preview's credits are: no render's reservation is
// involved.
func (h *batchHarness) chargeOthers(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		if err := h.g.Charge(t.Context(), "team-a", JobCharge{JobID: fmt.Sprintf("other-%d", i), Seconds: 1}); err != nil {
			t.Fatal(err)
		}
	}
}

// lookAgain has everything that may read a render's end again do so: more guard writes, a fresh
// guard's write and a fresh VideoBudget controller's looks (a manager killed and started again),
// a minute on, every fact long past foldAge.
func (h *batchHarness) lookAgain(t *testing.T) {
	t.Helper()
	h.foldNow(t)
	clk := freshGuardAt(h, h.g.clock.Now().Add(time.Minute))
	h.foldNow(t)
	reviewReconcile(t, h, clocktesting.NewFakeClock(clk.Now()), 2)
}

// make test-faults-long, "SIGKILL while guarded renders end" under a seconds limit: a manager
// killed around a render's end reads the job again. chargedJobs once made a second charge a
// no-op only while the job was among the latest 64 charged; with a burst of other charges in
// between, 34 s were charged twice. Now every render's end is posted from its reservation, which
// the posting write removes: folded again, by any writer, or charged again by its render's
// finalizer (the render deleted, its job read again), it is not made twice, however many jobs
// were charged since.
func TestAChargeReadAgainAfterManyOthersIsNotMadeTwice(t *testing.T) {
	var objs []client.Object
	for i := range maxChargedJobs + 2 {
		objs = append(objs, batchRender(i))
	}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1000), MaxRenderSeconds: ptr.To[int64](100000)}, objs...)
	close(h.hold)
	var renders []*videov1alpha1.VideoRender
	for i := range maxChargedJobs + 2 {
		if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v %v", i, d, err)
		}
		if err := h.g.settle(t.Context(), "team-a", batchRender(i).UID, "a", fmt.Sprintf("job-%d", i)); err != nil {
			t.Fatal(err)
		}
		renders = append(renders, h.readRender(t, i))
	}
	reconcileBudget(t, h, 1) // every running job holds its reservation (runningReserved)
	if b := h.budget(t); !b.Status.RunningReserved || len(b.Status.Reservations) != maxChargedJobs+2 || b.Status.Used.Renders != maxChargedJobs+2 {
		t.Fatalf("after the controller's look: runningReserved %v, %d reservations, %d renders", b.Status.RunningReserved, len(b.Status.Reservations), b.Status.Used.Renders)
	}
	for i, vr := range renders {
		renders[i] = h.recordEnd(t, vr, 7)
	}
	h.foldNow(t)
	want := int64(7 * (maxChargedJobs + 2))
	if b := h.budget(t); b.Status.Used.RenderSeconds != want || len(b.Status.Reservations) != 0 || charged(b, "job-0") {
		t.Fatalf("after the fold: %d s, %d reservations, job-0 among the latest charged %v; want %d s, none left, job-0 pushed out",
			b.Status.Used.RenderSeconds, len(b.Status.Reservations), charged(b, "job-0"), want)
	}
	// Killed around job-0's end: its end is read again.
	h.lookAgain(t)
	if err := h.chargeRender(t, renders[0], 7); err != nil {
		t.Fatal(err)
	}
	if got := h.budget(t).Status.Used.RenderSeconds; got != want {
		t.Fatalf("charged %d s for %d jobs of 7 s: %d s twice", got, maxChargedJobs+2, got-want)
	}
}

// A job that ends at once: the render records its job and its end before any write folded the
// job's record. The write that folds them settles the reservation and posts it in one step: one
// render, what the job cost (not its estimate), no reservation left. Before: the charge was posted
// beside the reservation, which the settlement then kept as a running job's (its estimate
// reserved) and which, read again after 64 other charges, was charged again.
func TestAJobThatEndsBeforeItsRecordIsFoldedIsChargedOnce(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1000), MaxRenderSeconds: ptr.To[int64](100000)}, batchRender(0))
	close(h.hold)
	reconcileBudget(t, h, 1) // every running job holds its reservation (runningReserved)
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{Seconds: 30}, nil); err != nil || d.Wait {
		t.Fatalf("%+v %v", d, err)
	}
	vr := h.recordJob(t, 0, "job-0")
	vr = h.recordEnd(t, vr, 40)
	h.foldNow(t)
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 40 || b.Status.Used.Renders != 1 || len(b.Status.Reservations) != 0 || b.Status.Reserved.RenderSeconds != 0 {
		t.Fatalf("after the fold: used %d renders %d s, %d reservations (%d s reserved); want 1 render, 40 s, none left",
			b.Status.Used.Renders, b.Status.Used.RenderSeconds, len(b.Status.Reservations), b.Status.Reserved.RenderSeconds)
	}
	// The manager is killed; the next one reads the job again after a burst of other charges.
	h.chargeOthers(t, maxChargedJobs+1)
	h.lookAgain(t)
	if err := h.chargeRender(t, vr, 40); err != nil {
		t.Fatal(err)
	}
	b = h.budget(t)
	if got, want := b.Status.Used.RenderSeconds, int64(40+maxChargedJobs+1); got != want || b.Status.Used.Renders != 1 {
		t.Fatalf("charged %d s (%d renders) for job-0's 40 s and %d others of 1 s: want %d s, 1 render", got, b.Status.Used.Renders, maxChargedJobs+1, want)
	}
}

// The write that would have folded a render's job record fails, and the render's job ends while
// that write is on its way: nothing of the failed write lands, and the next write folds the
// record and the end together. The job is charged once, what it cost (not lost, not its
// estimate), and not again when read again after many other charges.
func TestAnEndRecordedWhileTheWriteFoldingItsJobFailsIsChargedOnce(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1000), MaxRenderSeconds: ptr.To[int64](100000)},
		batchRender(0), batchRender(1))
	close(h.hold)
	reconcileBudget(t, h, 1) // every running job holds its reservation (runningReserved)
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{Seconds: 30}, nil); err != nil || d.Wait {
		t.Fatalf("%+v %v", d, err)
	}
	vr := h.recordJob(t, 0, "job-0")
	// Another render's reservation carries the fold of job-0's record; its write fails, and
	// job-0's end is recorded meanwhile.
	failed := false
	h.onWrite = func(int32) error {
		if failed {
			return nil
		}
		failed = true
		vr = h.recordEnd(t, vr, 40)
		return apierrors.NewServiceUnavailable("injected")
	}
	if _, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{Seconds: 30}, nil); err == nil {
		t.Fatal("the failed write reported success")
	}
	if b := h.budget(t); b.Status.Used.Renders != 0 || len(b.Status.Reservations) != 1 || b.Status.Reservations[0].JobID != "" {
		t.Fatalf("after the failed write: used %d renders, reservations %+v; want nothing of it written", b.Status.Used.Renders, b.Status.Reservations)
	}
	if _, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{Seconds: 30}, nil); err != nil {
		t.Fatal(err)
	}
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 40 || b.Status.Used.Renders != 1 {
		t.Fatalf("after the next write: used %d renders %d s; want 1 render, 40 s", b.Status.Used.Renders, b.Status.Used.RenderSeconds)
	}
	for _, r := range b.Status.Reservations {
		if r.UID == string(vr.UID) {
			t.Fatalf("job-0's reservation outlived its end's fold: %+v", r)
		}
	}
	h.chargeOthers(t, maxChargedJobs+1)
	h.lookAgain(t)
	if err := h.chargeRender(t, vr, 40); err != nil {
		t.Fatal(err)
	}
	b = h.budget(t)
	if got, want := b.Status.Used.RenderSeconds, int64(40+maxChargedJobs+1); got != want || b.Status.Used.Renders != 1 {
		t.Fatalf("charged %d s (%d renders) for job-0's 40 s and %d others of 1 s: want %d s, 1 render", got, b.Status.Used.Renders, maxChargedJobs+1, want)
	}
}

// A job that was never reserved (its render submitted before the namespace had a VideoBudget)
// gets its reservation from the controller's first look at the new budget while it runs
// (runningReserved); its end, recorded in its status, is then folded once, and not again when
// read again after many other charges.
func TestAJobSubmittedBeforeTheBudgetIsChargedOnce(t *testing.T) {
	running := runningRender(1, 30)
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)}, running)
	close(h.hold)
	reconcileBudget(t, h, 1) // its running job gets a reservation; runningReserved is set
	if b := h.budget(t); !b.Status.RunningReserved || len(b.Status.Reservations) != 1 || b.Status.Reservations[0].JobID != running.Status.JobID {
		t.Fatalf("after the controller's look: runningReserved %v, reservations %+v", b.Status.RunningReserved, b.Status.Reservations)
	}
	running = h.recordEnd(t, running, 50)
	h.foldNow(t)
	if b := h.budget(t); b.Status.Used.RenderSeconds != 50 || len(b.Status.Reservations) != 0 {
		t.Fatalf("after the fold: used %d s, reservations %+v; want 50 s, none left", b.Status.Used.RenderSeconds, b.Status.Reservations)
	}
	h.chargeOthers(t, maxChargedJobs+1)
	h.lookAgain(t)
	if err := h.chargeRender(t, running, 50); err != nil {
		t.Fatal(err)
	}
	if got, want := h.budget(t).Status.Used.RenderSeconds, int64(50+maxChargedJobs+1); got != want {
		t.Fatalf("charged %d s for 50 s and %d others of 1 s: want %d s", got, maxChargedJobs+1, want)
	}
}
