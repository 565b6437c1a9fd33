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
	"errors"
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
)

// Standing (0822087) answers what Budgeted, GrantedAttempt, UnchargedMark and ChargeAfterEnd
// answered, whatever the namespace (with or without a budget) and the render (no job, a running
// job, a marked end the budget lacks or holds), and a nil guard answers nothing.
func TestBreak37vStandingAnswersAsTheCallsItReplaced(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](100)})
	close(h.hold)
	h.pump(t)
	if err := h.g.chargeNow(t.Context(), "team-a", JobCharge{JobID: "j-held", Seconds: 1}); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	render := func(ns string, i int, jobID string, ended bool, mark *videov1alpha1.ChargeMark) *videov1alpha1.VideoRender {
		vr := batchRender(i)
		vr.Namespace, vr.UID = ns, types.UID(ns+"-"+string(vr.UID))
		vr.Status.JobID, vr.Status.ChargeMark = jobID, mark
		if ended {
			vr.Status.CompletedAt = &now
			vr.Status.VideoDuration = &metav1.Duration{Duration: 9 * time.Second}
		}
		return vr
	}
	var renders []*videov1alpha1.VideoRender
	for _, ns := range []string{"team-a", "team-b"} {
		renders = append(renders,
			render(ns, 0, "", false, nil),
			render(ns, 1, "j-running", false, nil),
			render(ns, 2, "j-lost", true, &videov1alpha1.ChargeMark{Count: 0}),
			render(ns, 3, "j-held", true, &videov1alpha1.ChargeMark{Count: 0}),
			render(ns, 4, "j-unmarked", true, nil))
	}
	h.g.reserveAhead("VideoRender", renders[1], "ahead-a", "", Estimate{}, nil, time.Second)
	h.g.reserveAhead("VideoRender", renders[6], "ahead-b", "", Estimate{}, nil, time.Second)
	if h.g.grantedAttempt(renders[1].UID) != "ahead-a" || h.g.grantedAttempt(renders[6].UID) != "ahead-b" {
		t.Fatal("the grants asked for are not held")
	}
	for _, vr := range renders {
		what := fmt.Sprintf("%s/%s (job %q)", vr.Namespace, vr.Name, vr.Status.JobID)
		s := h.g.Standing(t.Context(), vr)
		if want := h.g.budgeted(t.Context(), vr.Namespace); s.Budgeted != want {
			t.Errorf("%s: Budgeted %v, Budgeted answered %v", what, s.Budgeted, want)
		}
		if want := h.g.grantedAttempt(vr.UID); s.Attempt != want {
			t.Errorf("%s: Attempt %q, GrantedAttempt answered %q", what, s.Attempt, want)
		}
		c, ok := h.g.unchargedMark(t.Context(), vr)
		if (s.Uncharged != nil) != ok || ok && !reflect.DeepEqual(*s.Uncharged, c) {
			t.Errorf("%s: Uncharged %+v, UnchargedMark answered %+v %v", what, s.Uncharged, c, ok)
		}
		if vr.Status.JobID == "" {
			continue // chargeEnd is asked only of a job's end (poll)
		}
		var mark *videov1alpha1.ChargeMark
		var first bool
		if b, err := h.g.cachedBudget(t.Context(), vr.Namespace); err == nil {
			mark, first = endMark(b, vr.Status.JobID)
		}
		if s.EndFirst != first || !reflect.DeepEqual(s.EndMark, mark) {
			t.Errorf("%s: EndFirst %v EndMark %+v, ChargeAfterEnd answered %+v %v", what, s.EndFirst, s.EndMark, mark, first)
		}
	}
	if s := (*Guard)(nil).Standing(t.Context(), renders[2]); !reflect.DeepEqual(s, Standing{}) {
		t.Errorf("a nil guard's Standing %+v, want nothing", s)
	}
}

// Reserve (0822087) does what reserveBudget did: a marked end the budget lacks is charged before
// the reservation; when that charge cannot be written, Reserve answers ErrBusy (reserveBudget's
// "later") and reserves nothing.
func TestBreak37vReserveChargesAMarkedEndFirstOrReservesNothing(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](100)})
	close(h.hold)
	var fail atomic.Bool
	fail.Store(true)
	h.onWrite = func(int32) error {
		if fail.Load() {
			return apierrors.NewServiceUnavailable("etcd is away")
		}
		return nil
	}
	now := metav1.Now()
	vr := batchRender(0)
	vr.Status.JobID, vr.Status.CompletedAt, vr.Status.ChargeMark = "j-prev", &now, &videov1alpha1.ChargeMark{Count: 0}
	vr.Status.VideoDuration = &metav1.Duration{Duration: 9 * time.Second}
	sub := Submission{Kind: "VideoRender", Obj: vr, Attempt: "a2"}
	_, err := h.g.Reserve(t.Context(), sub)
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("a marked end whose charge was not written: %v, want ErrBusy", err)
	}
	if b := h.budget(t); len(b.Status.Reservations) != 0 {
		t.Fatalf("reserved %+v before the marked end was charged", b.Status.Reservations)
	}
	fail.Store(false)
	if d, err := h.g.Reserve(t.Context(), sub); err != nil || d.Wait {
		t.Fatalf("%+v %v", d, err)
	}
	b := h.budget(t)
	if !charged(b, "j-prev") || b.Status.Used.RenderSeconds != 9 || len(b.Status.Reservations) != 1 || b.Status.Reservations[0].AttemptID != "a2" {
		t.Errorf("charged %v, used %d s, reservations %+v: want j-prev's 9 s then a2 reserved", b.Status.ChargedJobs, b.Status.Used.RenderSeconds, b.Status.Reservations)
	}
}
