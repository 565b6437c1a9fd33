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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The charge of a render's job, whatever the order in which its settlement, its charge, a kill of
// the manager and a second read of its end come: charged exactly once (docs/spend-guard.md
// "Charging").

// chargeRender charges the end of vr's job, secs long, as the render reconciler does.
func (h *batchHarness) chargeRender(t *testing.T, vr *videov1alpha1.VideoRender, secs int64) error {
	t.Helper()
	c := ChargeOf(vr)
	c.Seconds = secs
	return h.g.chargeNow(t.Context(), "team-a", c)
}

// recordJob writes job jobID into render i's status, as the render's job-id write does, and
// returns the render as written.
func (h *batchHarness) recordJob(t *testing.T, i int, jobID string) *videov1alpha1.VideoRender {
	t.Helper()
	vr := batchRender(i)
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), vr); err != nil {
		t.Fatal(err)
	}
	vr.Status.JobID, vr.Status.SubmittedAt = jobID, &metav1.Time{Time: time.Now()}
	if err := h.server.Update(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	return vr
}

// chargeOthers charges n other jobs, 1 s each: enough of them push a job out of chargedJobs.
// They are charged by job id alone, as a preview's credits are: no render's reservation is
// involved.
func (h *batchHarness) chargeOthers(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		if err := h.g.chargeNow(t.Context(), "team-a", JobCharge{JobID: fmt.Sprintf("other-%d", i), Seconds: 1}); err != nil {
			t.Fatal(err)
		}
	}
}

// make test-faults-long, "SIGKILL while guarded renders end" under a seconds limit: a manager
// killed after a render's charge and before its end is written reads the job again and charges
// it again. chargedJobs turned that into a no-op only while the job was among the latest 64
// charged; with a burst of other charges in between, 34 s were charged twice.
func TestAChargeReadAgainAfterManyOthersIsNotMadeTwice(t *testing.T) {
	var objs []client.Object
	for i := range maxChargedJobs + 2 {
		objs = append(objs, batchRender(i))
	}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1000), MaxRenderSeconds: ptr.To[int64](100000)}, objs...)
	close(h.hold)
	var renders []*videov1alpha1.VideoRender
	for i := range maxChargedJobs + 2 {
		if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", Estimate{Seconds: 10}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v %v", i, d, err)
		}
		if err := h.g.settle(t.Context(), "team-a", batchRender(i).UID, "a", fmt.Sprintf("job-%d", i)); err != nil {
			t.Fatal(err)
		}
		renders = append(renders, h.recordJob(t, i, fmt.Sprintf("job-%d", i)))
	}
	reconcileBudget(t, h, 1) // every running job holds its reservation (runningReserved)
	if b := h.budget(t); !b.Status.RunningReserved || len(b.Status.Reservations) != maxChargedJobs+2 {
		t.Fatalf("after the controller's look: runningReserved %v, %d reservations", b.Status.RunningReserved, len(b.Status.Reservations))
	}
	for _, vr := range renders {
		if err := h.chargeRender(t, vr, 7); err != nil {
			t.Fatal(err)
		}
	}
	// The manager was killed after job-0's charge, before its end: the next one charges it again.
	if err := h.chargeRender(t, renders[0], 7); err != nil {
		t.Fatal(err)
	}
	if got, want := h.budget(t).Status.Used.RenderSeconds, int64(7*(maxChargedJobs+2)); got != want {
		t.Fatalf("charged %d s for %d jobs of 7 s: %d s twice", got, maxChargedJobs+2, got-want)
	}
}

// A job that ends at once is charged before the settlement of its render's reservation has
// landed in the budget (it rides with a later write, or was lost in a crash): the charge finds
// the reservation by the render, not by the job id the settlement writes into it, settles it and
// posts the charge in one step. Before: the charge was posted beside the reservation, which the
// settlement then kept as a running job's (its estimate reserved) and which, read again after 64
// other charges, was charged again; charged only against a reservation keyed by its job id (the
// reverted fix), the charge was skipped and lost.
func TestAChargeBeforeItsSettlementLandedIsMadeOnce(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1000), MaxRenderSeconds: ptr.To[int64](100000)}, batchRender(0))
	close(h.hold)
	reconcileBudget(t, h, 1) // every running job holds its reservation (runningReserved)
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", Estimate{Seconds: 30}, nil); err != nil || d.Wait {
		t.Fatalf("%+v %v", d, err)
	}
	vr := h.recordJob(t, 0, "job-0")
	if err := h.chargeRender(t, vr, 40); err != nil {
		t.Fatal(err)
	}
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 40 || b.Status.Used.Renders != 1 || len(b.Status.Reservations) != 0 || b.Status.Reserved.RenderSeconds != 0 {
		t.Fatalf("after the charge: used %d renders %d s, %d reservations (%d s reserved); want 1 render, 40 s, none left",
			b.Status.Used.Renders, b.Status.Used.RenderSeconds, len(b.Status.Reservations), b.Status.Reserved.RenderSeconds)
	}
	// The settlement lands late; then the manager is killed before the render's end, and the next
	// one reads the job again after a burst of other charges.
	if err := h.g.settle(t.Context(), "team-a", vr.UID, "a", "job-0"); err != nil {
		t.Fatal(err)
	}
	h.chargeOthers(t, maxChargedJobs+1)
	if err := h.chargeRender(t, vr, 40); err != nil {
		t.Fatal(err)
	}
	reconcileBudget(t, h, 2)
	b = h.budget(t)
	if got, want := b.Status.Used.RenderSeconds, int64(40+maxChargedJobs+1); got != want || b.Status.Used.Renders != 1 {
		t.Fatalf("charged %d s (%d renders) for job-0's 40 s and %d others of 1 s: want %d s, 1 render", got, b.Status.Used.Renders, maxChargedJobs+1, want)
	}
}

// A settlement whose write failed is queued again (SettleLater), behind the render's charge that
// came while the failed write was on its way: the charge is applied before the settlement. It
// is charged once, what the job cost (not lost, not its estimate), and not again when read again
// after many other charges.
func TestAChargeBetweenAFailedSettlementAndItsRetryIsMadeOnce(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1000), MaxRenderSeconds: ptr.To[int64](100000)},
		batchRender(0), batchRender(1))
	close(h.hold)
	h.pump(t)
	reconcileBudget(t, h, 1) // every running job holds its reservation (runningReserved)
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", Estimate{Seconds: 30}, nil); err != nil || d.Wait {
		t.Fatalf("%+v %v", d, err)
	}
	vr := h.recordJob(t, 0, "job-0")
	var fail atomic.Bool
	inWrite, release := make(chan struct{}), make(chan struct{})
	h.onWrite = func(int32) error {
		if fail.CompareAndSwap(true, false) {
			close(inWrite)
			<-release
			return apierrors.NewServiceUnavailable("injected")
		}
		return nil
	}
	// The settlement rides with another render's reservation, whose write fails.
	h.g.Settle("team-a", vr.UID, "a", "job-0", time.Time{})
	fail.Store(true)
	var wg sync.WaitGroup
	wg.Go(func() {
		_, _ = h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", Estimate{Seconds: 30}, nil)
	})
	<-inWrite
	var chargeErr error
	wg.Go(func() { chargeErr = h.chargeRender(t, vr, 40) })
	// The charge is queued while the failed write is on its way; the settlement, queued again
	// once the write failed, comes behind it.
	for queued := false; !queued; {
		h.g.writers.mu.Lock()
		queued = len(h.g.writers.slots["team-a"].queue) > 0
		h.g.writers.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if chargeErr != nil {
		t.Fatal(chargeErr)
	}
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 40 || b.Status.Used.Renders != 1 {
		t.Fatalf("after the charge: used %d renders %d s; want 1 render, 40 s", b.Status.Used.Renders, b.Status.Used.RenderSeconds)
	}
	for _, r := range b.Status.Reservations {
		if r.UID == string(vr.UID) {
			t.Fatalf("job-0's reservation outlived its charge: %+v", r)
		}
	}
	h.chargeOthers(t, maxChargedJobs+1)
	if err := h.chargeRender(t, vr, 40); err != nil {
		t.Fatal(err)
	}
	reconcileBudget(t, h, 2)
	b = h.budget(t)
	if got, want := b.Status.Used.RenderSeconds, int64(40+maxChargedJobs+1); got != want || b.Status.Used.Renders != 1 {
		t.Fatalf("charged %d s (%d renders) for job-0's 40 s and %d others of 1 s: want %d s, 1 render", got, b.Status.Used.Renders, maxChargedJobs+1, want)
	}
}

// A job that was never reserved (its render submitted before the namespace had a VideoBudget)
// is charged once, whether its end comes before the controller's first look at the new budget
// (no pending reservation to post: chargedJobs is the check while runningReserved is unset) or
// after it (its reservation rebuilt from the render), and not again when read again after many
// other charges.
func TestAJobSubmittedBeforeTheBudgetIsChargedOnce(t *testing.T) {
	early, late := runningRender(0, 30), runningRender(1, 30)
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)}, early, late)
	close(h.hold)
	if err := h.chargeRender(t, early, 40); err != nil {
		t.Fatal(err)
	}
	reconcileBudget(t, h, 1) // late's running job gets a reservation; runningReserved is set
	if b := h.budget(t); !b.Status.RunningReserved || len(b.Status.Reservations) != 1 || b.Status.Reservations[0].JobID != late.Status.JobID {
		t.Fatalf("after the controller's look: runningReserved %v, reservations %+v", b.Status.RunningReserved, b.Status.Reservations)
	}
	if err := h.chargeRender(t, late, 50); err != nil {
		t.Fatal(err)
	}
	h.chargeOthers(t, maxChargedJobs+1)
	for _, vr := range []*videov1alpha1.VideoRender{early, late} {
		if err := h.chargeRender(t, vr, 50); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := h.budget(t).Status.Used.RenderSeconds, int64(40+50+maxChargedJobs+1); got != want {
		t.Fatalf("charged %d s for 40 s, 50 s and %d others of 1 s: want %d s", got, maxChargedJobs+1, want)
	}
}
