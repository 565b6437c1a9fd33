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
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// Standing answers, in one read of the cached budget, whether the namespace has a budget, the
// attempt written ahead for the object, and whether the budget still holds the reservation of
// the ended job the object's status records (Unfolded: that end is not folded yet), whatever the
// namespace (with or without a budget) and the render (no job, a running job, an ended job folded
// or not, an ended job the budget holds another job's reservation for); a nil guard answers
// nothing.
func TestBreak37vStandingAnswersForEveryNamespaceAndRender(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](100)})
	close(h.hold)
	h.pump(t)
	now := metav1.Now()
	render := func(ns string, i int, jobID string, ended bool) *videov1alpha1.VideoRender {
		vr := batchRender(i)
		vr.Namespace, vr.UID = ns, types.UID(ns+"-"+string(vr.UID))
		vr.Status.JobID = jobID
		if ended {
			vr.Status.CompletedAt = &now
			vr.Status.VideoDuration = &metav1.Duration{Duration: 9 * time.Second}
		}
		return vr
	}
	held := func(i int, jobID string) videov1alpha1.BudgetReservation {
		vr := render("team-a", i, jobID, false)
		return videov1alpha1.BudgetReservation{Kind: "VideoRender", Name: vr.Name, UID: string(vr.UID), AttemptID: "a",
			ReservedAt: now, EstimatedSeconds: 30, JobID: jobID}
	}
	// team-a's budget holds the reservations of render 1's running job, of render 2's ended job
	// (not folded yet), and of an earlier job of render 4 (its current one was never reserved).
	b := h.budget(t)
	b.Status.Reservations = []videov1alpha1.BudgetReservation{held(1, "j-running"), held(2, "j-ended"), held(4, "j-earlier")}
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}
	type want struct {
		budgeted, unfolded bool
	}
	var renders []*videov1alpha1.VideoRender
	var wants []want
	for _, ns := range []string{"team-a", "team-b"} {
		budgeted := ns == "team-a"
		renders = append(renders,
			render(ns, 0, "", false),
			render(ns, 1, "j-running", false),
			render(ns, 2, "j-ended", true),
			render(ns, 3, "j-folded", true),
			render(ns, 4, "j-current", true))
		wants = append(wants, want{budgeted, false}, want{budgeted, false}, want{budgeted, budgeted}, want{budgeted, false}, want{budgeted, false})
	}
	h.g.reserveAhead("VideoRender", renders[1], "ahead-a", "", bound.Estimate{}, nil, time.Second)
	h.g.reserveAhead("VideoRender", renders[6], "ahead-b", "", bound.Estimate{}, nil, time.Second)
	for i, vr := range renders {
		what := fmt.Sprintf("%s/%s (job %q)", vr.Namespace, vr.Name, vr.Status.JobID)
		s := h.g.Standing(t.Context(), vr)
		if s.Budgeted != wants[i].budgeted {
			t.Errorf("%s: Budgeted %v, want %v", what, s.Budgeted, wants[i].budgeted)
		}
		wantAttempt := map[int]string{1: "ahead-a", 6: "ahead-b"}[i]
		if s.Attempt != wantAttempt || s.Attempt != h.g.grantedAttempt(vr.UID) {
			t.Errorf("%s: Attempt %q, want %q", what, s.Attempt, wantAttempt)
		}
		if s.Unfolded != wants[i].unfolded {
			t.Errorf("%s: Unfolded %v, want %v", what, s.Unfolded, wants[i].unfolded)
		}
	}
	if s := (*Guard)(nil).Standing(t.Context(), renders[2]); !reflect.DeepEqual(s, Standing{}) {
		t.Errorf("a nil guard's Standing %+v, want nothing", s)
	}
}

// Reserve for a render whose previous job ended (its status shows the end) folds that end in the
// reservation's own write, before deciding. When that write fails, Reserve answers the error and
// nothing is written: no reservation, and the end stays unfolded (its reservation held) for the
// next write, which folds it once.
func TestBreak37vReserveFoldsTheRendersEndedJobInItsWriteOrWritesNothing(t *testing.T) {
	vr := withEndAt(foldRender("j-prev", foldT0.Add(-time.Minute), 30), foldT0.Add(-time.Second), 9)
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](100)}, vr)
	close(h.hold)
	freshGuardAt(h, foldT0)
	b := h.budget(t)
	RollPeriod(b, foldT0)
	addUsageAt(b, videov1alpha1.BudgetUsage{Renders: 1}, time.Time{})
	b.Status.Reservations = []videov1alpha1.BudgetReservation{heldFor("a1", foldT0.Add(-time.Minute), 30, "j-prev")}
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}
	var fail atomic.Bool
	fail.Store(true)
	h.onWrite = func(int32) error {
		if fail.Load() {
			return apierrors.NewServiceUnavailable("etcd is away")
		}
		return nil
	}
	sub := Submission{Kind: "VideoRender", Obj: vr, Attempt: "a2", Est: bound.Estimate{Seconds: 30}}
	if _, err := h.g.Reserve(t.Context(), sub); err == nil {
		t.Fatal("a reservation whose write failed reported success")
	}
	b = h.budget(t)
	if len(b.Status.Reservations) != 1 || b.Status.Reservations[0].JobID != "j-prev" || b.Status.Used.RenderSeconds != 0 {
		t.Fatalf("after the failed write: reservations %+v, used %d s; want j-prev's reservation only, nothing charged",
			b.Status.Reservations, b.Status.Used.RenderSeconds)
	}
	if !h.g.Standing(t.Context(), vr).Unfolded {
		t.Fatal("j-prev's end is not folded, yet Standing says it is")
	}
	fail.Store(false)
	if d, err := h.g.Reserve(t.Context(), sub); err != nil || d.Wait {
		t.Fatalf("%+v %v", d, err)
	}
	if err := h.g.foldNow(t.Context(), "team-a"); err != nil {
		t.Fatal(err)
	}
	b = h.budget(t)
	if !charged(b, "j-prev") || b.Status.Used.RenderSeconds != 9 || b.Status.Used.Renders != 1 || len(b.Status.Reservations) != 1 ||
		b.Status.Reservations[0].AttemptID != "a2" || b.Status.Reservations[0].JobID != "" {
		t.Errorf("charged %v, used %d s and %d renders, reservations %+v: want j-prev's 9 s once, then a2 reserved",
			b.Status.ChargedJobs, b.Status.Used.RenderSeconds, b.Status.Used.Renders, b.Status.Reservations)
	}
}
