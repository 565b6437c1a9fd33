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
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// The case the 100,000-seed simulation found (seeds 72192 and 19201): a render without an upper
// bound records its job, the manager crashes before the settlement that writes the job id into
// the reservation, and the tenant deletes the render with its finalizer stripped. The reservation
// names no job: the VideoBudget controller charged its 30 s guess at once and freed the room,
// while the job ran on at the service (423 s): a second render without an upper bound was admitted
// under maxRenderSeconds, and 393 s were never charged.

// goneBeforeSettled reserves for an unbounded render, records its job in the render (no
// settlement reaches the budget: the manager crashed) and deletes the render. It returns the
// render's last state, as the informer's delete event carries it.
func goneBeforeSettled(t *testing.T, h *batchHarness, at time.Time) *videov1alpha1.VideoRender {
	t.Helper()
	blog := bound.Estimate{Seconds: bound.DefaultSceneSeconds, Unbounded: true}
	vr := batchRender(0)
	vr.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "team-key", Key: "k"}
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", blog, nil); err != nil || d.Wait {
		t.Fatalf("the first render: %+v, %v", d, err)
	}
	recordJob(t, h, vr, "job-0", at)
	last := &videov1alpha1.VideoRender{}
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), last); err != nil {
		t.Fatal(err)
	}
	if err := h.server.Delete(t.Context(), last); err != nil {
		t.Fatal(err)
	}
	return last
}

// Seen by a manager that was down when the render was deleted: nothing tells it which job the
// reservation paid for, so its room is held, as a running job's, until the job deadline, then
// its estimate is charged (the render controller gives up on a job at the same deadline).
func TestAnUnboundedRenderGoneBeforeItsSettlementHoldsItsRoomUntilTheJobDeadline(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](1200)})
	close(h.hold)
	clk := clocktesting.NewFakeClock(time.Now())
	goneBeforeSettled(t, h, clk.Now())
	clk.Step(2 * time.Minute) // past the grace of a submission in flight
	_, reconcile := goneJobsController(t, h, clk, &fakeJobs{ends: map[string]*JobEnd{}}, time.Hour)
	reconcile()
	b := h.budget(t)
	if len(b.Status.Reservations) != 1 || b.Status.Used.RenderSeconds != 0 {
		t.Fatalf("an unbounded render gone without its settlement: reservations %+v, used %+v; want its room held",
			b.Status.Reservations, b.Status.Used)
	}
	blog := bound.Estimate{Seconds: bound.DefaultSceneSeconds, Unbounded: true}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", blog, nil); err != nil || !d.Wait {
		t.Fatalf("a second unbounded render admitted while the first one's job may still run: %+v, %v", d, err)
	}
	clk.Step(time.Hour)
	reconcile()
	b = h.budget(t)
	if len(b.Status.Reservations) != 0 || b.Status.Used.Renders != 1 || b.Status.Used.RenderSeconds != bound.DefaultSceneSeconds {
		t.Fatalf("past the job deadline: reservations %+v, used %+v; want none, 1 render and its estimate", b.Status.Reservations, b.Status.Used)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", blog, nil); err != nil || d.Wait {
		t.Fatalf("past the job deadline the next unbounded render still waits: %+v, %v", d, err)
	}
}

// Seen by a running manager, the delete event carries the render's last state, which names the
// job: the reservation takes it, the job's end is read with the render's key and charged what
// the job was.
func TestAnUnboundedRenderGoneBeforeItsSettlementIsChargedItsJobsEnd(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](1200)})
	close(h.hold)
	clk := clocktesting.NewFakeClock(time.Now())
	last := goneBeforeSettled(t, h, clk.Now())
	jobs := &fakeJobs{ends: map[string]*JobEnd{}}
	r, reconcile := goneJobsController(t, h, clk, jobs, 6*time.Hour)
	wake := wakes(t, h.g.ledgers)
	r.objectGone(last, false)
	// The settlement rides with the namespace's next budget write: its delay wakes the controller.
	select {
	case <-wake:
	case <-time.After(time.Minute):
		t.Fatal("the delete event's settlement never woke the VideoBudget controller")
	}
	clk.Step(2 * time.Minute)
	reconcile()
	b := h.budget(t)
	if len(b.Status.Reservations) != 1 || b.Status.Reservations[0].JobID != "job-0" || b.Status.Used.Renders != 1 {
		t.Fatalf("after the delete event: reservations %+v, used %+v; want the reservation to name job-0 and the render counted",
			b.Status.Reservations, b.Status.Used)
	}
	jobs.ends["job-0"] = &JobEnd{Completed: true, Seconds: 423}
	reconcile()
	b = h.budget(t)
	if len(b.Status.Reservations) != 0 || b.Status.Used.RenderSeconds != 423 || b.Status.Used.Renders != 1 {
		t.Fatalf("after the job's end: reservations %+v, used %+v; want none, 1 render, 423 s", b.Status.Reservations, b.Status.Used)
	}
	if len(jobs.reads) == 0 || jobs.reads[0] != "team-a/job-0 with team-key/k" {
		t.Errorf("the job was read as %q, want with the key the render named", jobs.reads)
	}
	// A delete event of a render whose reservation was settled, or that never paid, changes nothing.
	r.objectGone(last, false)
	r.objectGone(batchRender(2), false)
	reconcile()
	if got := h.budget(t).Status.Used; got.Renders != 1 || got.RenderSeconds != 423 {
		t.Fatalf("a second delete event changed the budget: used %+v", got)
	}
}
