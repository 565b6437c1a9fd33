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

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// A preview's AI credits ("Job status response": aiCreditsUsed, "only when the video includes
// scenes with aiVisual") are charged from its job's answer before its end is written; its
// submission is counted when a budget write folds the job its status records. Both reach the
// budget once, in either order: the record's fold posted the job id, so the credits charged after
// it were taken for charged already, and credits charged first kept the record from being folded.

// previewHarness is a budget under maxAICredits 100 with one preview that reserved attempt "a"
// and recorded job "preview-job".
func previewHarness(t *testing.T) (*batchHarness, *videov1alpha1.VideoStoryboard) {
	t.Helper()
	return previewHarnessAt(t, time.Now())
}

// previewHarnessAt is previewHarness with the guard's clock at now: a spec that lets a day pass
// starts mid-month, so that it does not cross the month's end on the day it runs.
func previewHarnessAt(t *testing.T, now time.Time) (*batchHarness, *videov1alpha1.VideoStoryboard) {
	t.Helper()
	sb := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "p", UID: "sb-1"}}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxAICredits: ptr.To(resource.MustParse("100"))}, sb)
	h.g.clock = clocktesting.NewFakeClock(now)
	close(h.hold)
	if d, err := h.g.reserve(t.Context(), kindStoryboard, sb, "a", "", bound.Estimate{Credits: true}, nil); err != nil || d.Wait {
		t.Fatalf("reserving the preview: %+v %v", d, err)
	}
	at := metav1.NewTime(h.g.clock.Now())
	sb.Status.JobID, sb.Status.SubmittedAt = "preview-job", &at
	if err := h.server.Update(t.Context(), sb); err != nil {
		t.Fatal(err)
	}
	return h, sb
}

// chargePreviewCredits writes the preview's end with the 7 credits its answer reports, as its
// controller does (recordJob), for the budget's writes to fold.
func chargePreviewCredits(t *testing.T, h *batchHarness, sb *videov1alpha1.VideoStoryboard) {
	t.Helper()
	var cur videov1alpha1.VideoStoryboard
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(sb), &cur); err != nil {
		t.Fatal(err)
	}
	at := metav1.NewTime(h.g.clock.Now())
	cur.Status.CompletedAt, cur.Status.AICreditsUsed = &at, "7"
	if err := h.server.Update(t.Context(), &cur); err != nil {
		t.Fatal(err)
	}
	cur.DeepCopyInto(sb)
}

func assertPreviewPaidOnce(t *testing.T, h *batchHarness) {
	t.Helper()
	b := h.budget(t)
	if b.Status.Used.AICredits == nil || b.Status.Used.AICredits.Cmp(resource.MustParse("7")) != 0 {
		t.Errorf("the preview's 7 credits: used.aiCredits %v, want 7", b.Status.Used.AICredits)
	}
	if b.Status.Used.Previews != 1 || b.Status.Reserved.Previews != 0 {
		t.Errorf("the preview: used %d, reserved %d; want counted once and no longer reserved", b.Status.Used.Previews, b.Status.Reserved.Previews)
	}
}

func TestAPreviewsCreditsReportedAfterItsJobWasFoldedAreCharged(t *testing.T) {
	h, sb := previewHarness(t)
	h.foldNow(t)
	if b := h.budget(t); b.Status.Used.Previews != 1 {
		t.Fatalf("control: the job's record was not folded: used %+v", b.Status.Used)
	}
	chargePreviewCredits(t, h, sb)
	h.foldNow(t)
	assertPreviewPaidOnce(t, h)
	// The end written again (a retried write): nothing more.
	chargePreviewCredits(t, h, sb)
	h.foldNow(t)
	assertPreviewPaidOnce(t, h)
}

func TestAPreviewsCreditsChargedBeforeItsJobWasFoldedLeaveItsRecordToBeFolded(t *testing.T) {
	h, sb := previewHarness(t)
	chargePreviewCredits(t, h, sb)
	h.foldNow(t)
	assertPreviewPaidOnce(t, h)
	chargePreviewCredits(t, h, sb)
	h.foldNow(t)
	assertPreviewPaidOnce(t, h)
}

// A charge of a preview's credits that finds its reservation pending (the cache did not show the
// job's record to the write's fold yet) counts the preview too, and the record's fold, when it
// comes, finds it known: counted once, credits once, one chargedJobs entry.
func TestAPreviewsCreditsChargeCountsItsPendingSubmission(t *testing.T) {
	reservedAt := metav1.Now()
	b := &videov1alpha1.VideoBudget{Status: videov1alpha1.VideoBudgetStatus{Reservations: []videov1alpha1.BudgetReservation{
		{Kind: kindStoryboard, Name: "p", UID: "sb-1", AttemptID: "a", ReservedAt: reservedAt, AICredits: true},
	}}}
	sb := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "p", UID: "sb-1"}}
	sb.Status.JobID, sb.Status.SubmittedAt = "preview-job", &reservedAt
	c := ChargeOf(sb)
	c.Credits = ptr.To(resource.MustParse("7"))
	if !c.change(b) {
		t.Fatal("the charge changed nothing")
	}
	recountReserved(b)
	if b.Status.Used.Previews != 1 || b.Status.Reserved.Previews != 0 || len(b.Status.Reservations) != 0 {
		t.Errorf("the pending preview: used %d, reserved %d, %d reservations; want counted once", b.Status.Used.Previews, b.Status.Reserved.Previews, len(b.Status.Reservations))
	}
	if b.Status.Used.AICredits == nil || b.Status.Used.AICredits.Cmp(resource.MustParse("7")) != 0 {
		t.Errorf("used.aiCredits %v, want 7", b.Status.Used.AICredits)
	}
	if len(b.Status.ChargedJobs) != 1 || b.Status.ChargedJobs[0] != "preview-job" {
		t.Errorf("chargedJobs %v, want the job id once", b.Status.ChargedJobs)
	}
	res := videov1alpha1.BudgetReservation{Kind: kindStoryboard, UID: "sb-1", AttemptID: "b", ReservedAt: reservedAt}
	if paidWith(b, &sb.Status.JobStatus, res) {
		t.Error("a later reservation of the preview in the same second would be folded with its charged job")
	}
}
