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
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Break tests of today's change (23c5072 and the refactors after it). Each fails while the hole
// it names is there.

// status.jobId allows 100 characters (api/v1alpha1/common_types.go, MaxLength=100), and so does
// each item of status.chargedJobs. The fold of a preview's job now posts "counted:"+jobId: a job
// id longer than 92 characters makes an item the API server's validation refuses, and since every
// budget write folds what the objects recorded, every write of the namespace's budget fails from
// then on (reservations included: nothing is admitted, nothing is charged).
func TestBreakTodayCountedEntryFitsChargedJobsMaxLength(t *testing.T) {
	sb := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "p", UID: "sb-1"}}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxAICredits: ptr.To(resource.MustParse("100"))}, sb)
	close(h.hold)
	if d, err := h.g.reserve(t.Context(), kindStoryboard, sb, "a", "", Estimate{Credits: true}, nil); err != nil || d.Wait {
		t.Fatalf("reserving the preview: %+v %v", d, err)
	}
	jobID := strings.Repeat("j", 100) // a job id status.jobId accepts
	at := metav1.NewTime(h.g.clock.Now())
	sb.Status.JobID, sb.Status.SubmittedAt = jobID, &at
	if err := h.server.Update(t.Context(), sb); err != nil {
		t.Fatal(err)
	}
	h.foldNow(t)
	b := h.budget(t)
	if b.Status.Used.Previews != 1 {
		t.Fatalf("control: the preview's job was not folded: used %+v", b.Status.Used)
	}
	for _, id := range b.Status.ChargedJobs {
		if len(id) > 100 {
			t.Errorf("status.chargedJobs holds an item of %d characters (%.20s...): the CRD allows 100, the API server refuses the write", len(id), id)
		}
	}
}

// A preview in flight across the upgrade from 83400f8: the previous manager folded its job's
// record and posted its plain job id for the count (settleRecorded then did). The new manager
// reads the job's answer and charges its credits (chargeEnd): Charge finds the id in chargedJobs
// and takes the credits for charged. The credits of every preview counted by the previous manager
// and ending after the upgrade are still lost.
func TestBreakTodayPreviewCountedByThePreviousManagerHasItsCreditsCharged(t *testing.T) {
	sb := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "p", UID: "sb-1"}}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxAICredits: ptr.To(resource.MustParse("100"))}, sb)
	close(h.hold)
	at := metav1.NewTime(h.g.clock.Now())
	sb.Status.JobID, sb.Status.SubmittedAt = "preview-job", &at
	if err := h.server.Update(t.Context(), sb); err != nil {
		t.Fatal(err)
	}
	// The budget as 83400f8 left it: the preview's reservation folded, its job id posted.
	b := h.budget(t)
	b.Status.Used.Previews = 1
	b.Status.ChargedJobs = []string{"preview-job"}
	b.Status.ChargeCount = 1
	if err := h.server.Status().Update(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	chargePreviewCredits(t, h, sb)
	assertPreviewPaidOnce(t, h)
}

// The credits charge of a preview (chargeEnd, before its end is written) is kept from being made
// twice only by its job id in chargedJobs: a retry (the end's write failed, the reconcile reads
// the job again) finds it there. Each preview now posts two entries ("counted:"+id and id), so
// 32 other previews with credits, charged between the charge and its retry, push the id out of
// the 64 kept: the credits are charged again.
func TestBreakTodayPreviewCreditsRetryAfterOtherPreviewsIsNotChargedTwice(t *testing.T) {
	const others = maxChargedJobs / 2
	objs := []client.Object{}
	sbs := []*videov1alpha1.VideoStoryboard{}
	for i := range others + 1 {
		sb := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprintf("sb-%d", i))}}
		objs = append(objs, sb)
		sbs = append(sbs, sb)
	}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxAICredits: ptr.To(resource.MustParse("1000"))}, objs...)
	close(h.hold)
	pay := func(sb *videov1alpha1.VideoStoryboard, credits string) {
		t.Helper()
		if d, err := h.g.reserve(t.Context(), kindStoryboard, sb, "a", "", Estimate{Credits: true}, nil); err != nil || d.Wait {
			t.Fatalf("reserving preview %s: %+v %v", sb.Name, d, err)
		}
		at := metav1.NewTime(h.g.clock.Now())
		sb.Status.JobID, sb.Status.SubmittedAt = "job-"+sb.Name, &at
		if err := h.server.Update(t.Context(), sb); err != nil {
			t.Fatal(err)
		}
		c := ChargeOf(sb)
		c.Credits = ptr.To(resource.MustParse(credits))
		if err := h.g.Charge(t.Context(), "team-a", c); err != nil {
			t.Fatal(err)
		}
	}
	pay(sbs[0], "7")
	for _, sb := range sbs[1:] {
		pay(sb, "1")
	}
	// Preview 0's end write failed: its reconcile charges the credits it read again.
	c := ChargeOf(sbs[0])
	c.Credits = ptr.To(resource.MustParse("7"))
	if err := h.g.Charge(t.Context(), "team-a", c); err != nil {
		t.Fatal(err)
	}
	b := h.budget(t)
	want := resource.MustParse(fmt.Sprint(7 + others))
	if b.Status.Used.AICredits == nil || b.Status.Used.AICredits.Cmp(want) != 0 {
		t.Errorf("used.aiCredits %v, want %s: preview 0's 7 credits charged twice (chargedJobs %d entries for %d previews)",
			b.Status.Used.AICredits, want.String(), len(b.Status.ChargedJobs), others+1)
	}
	if b.Status.Used.Previews != others+1 {
		t.Errorf("used.previews %d, want %d", b.Status.Used.Previews, others+1)
	}
}
