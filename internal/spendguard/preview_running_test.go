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

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// A preview with an aiVisual scene consumes AI credits ("Job status response": aiCreditsUsed),
// known only at its job's end, as a render's: its running job holds its reservation until that
// end is charged, whoever holds the preview.

// Previews that may consume credits run one at a time under maxAICredits, with the renders that
// may: a burst of them passed the limit by what they consumed together.
func TestPreviewsThatMayConsumeCreditsRunOneAtATimeUnderMaxAICredits(t *testing.T) {
	h, sb := previewHarness(t)
	h.foldNow(t)
	other := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "q", UID: "sb-2"}}
	d, err := h.g.reserve(t.Context(), kindStoryboard, other, "a", "", bound.Estimate{Credits: true}, nil)
	if err != nil || !d.Wait || d.Limit != videov1alpha1.BudgetLimitAICredits {
		t.Fatalf("a second preview with an aiVisual while the first one's job runs: %+v, %v; want it to wait on maxAICredits", d, err)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{Seconds: 10, Credits: true}, nil); err != nil || !d.Wait {
		t.Fatalf("a render that may consume credits while the preview's job runs: %+v, %v; want it to wait", d, err)
	}
	plain := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "plain", UID: "sb-3"}}
	if d, err := h.g.reserve(t.Context(), kindStoryboard, plain, "a", "", bound.Estimate{}, nil); err != nil || d.Wait {
		t.Fatalf("a preview without an aiVisual waits: %+v, %v", d, err)
	}
	chargePreviewCredits(t, h, sb)
	if d, err := h.g.reserve(t.Context(), kindStoryboard, other, "a", "", bound.Estimate{Credits: true}, nil); err != nil || d.Wait {
		t.Fatalf("the second preview once the first one's credits are charged: %+v, %v; want it admitted", d, err)
	}
	b := h.budget(t)
	if b.Status.Used.Previews != 1 || b.Status.Reserved.Previews != 2 {
		t.Errorf("used %d previews, reserved %d: want the first counted once and two in flight", b.Status.Used.Previews, b.Status.Reserved.Previews)
	}
}

// A preview deleted while its job runs (previews carry no charge finalizer) keeps its reservation
// until the VideoBudget controller reads the job's end with the preview's key, then is charged its
// credits, and no seconds: a preview is counted, not timed.
func TestAPreviewDeletedWhileItsJobRunsIsChargedItsJobsCredits(t *testing.T) {
	h, sb := previewHarness(t)
	h.foldNow(t)
	if err := h.server.Delete(t.Context(), sb); err != nil {
		t.Fatal(err)
	}
	jobs := &fakeJobs{ends: map[string]*JobEnd{}}
	clk := clocktesting.NewFakeClock(time.Now().Add(2 * time.Minute))
	_, reconcile := goneJobsController(t, h, clk, jobs, 24*time.Hour)
	reconcile()
	if b := h.budget(t); b.Status.Reserved.AICreditRenders != 1 {
		t.Fatalf("the deleted preview's running job holds no room: reserved %+v, reservations %+v", b.Status.Reserved, b.Status.Reservations)
	}
	jobs.ends["preview-job"] = &JobEnd{Completed: true, Seconds: 40, Credits: ptr.To(resource.MustParse("9"))}
	reconcile()
	b := h.budget(t)
	if b.Status.Used.AICredits == nil || b.Status.Used.AICredits.Cmp(resource.MustParse("9")) != 0 {
		t.Errorf("the deleted preview's 9 credits: used.aiCredits %v", b.Status.Used.AICredits)
	}
	if b.Status.Used.Previews != 1 || b.Status.Used.RenderSeconds != 0 || len(b.Status.Reservations) != 0 {
		t.Errorf("used %+v, reservations %+v: want the preview counted once, no seconds, nothing held", b.Status.Used, b.Status.Reservations)
	}
	if len(jobs.reads) == 0 || jobs.reads[0] != "team-a/preview-job with default" {
		t.Errorf("the job's reads %q, want it read with the preview's key", jobs.reads)
	}
}
