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
	"os"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// Break tests of today's change (23c5072 and the refactors after it). Each fails while the hole
// it names is there.

// status.jobId allows 100 characters, and a job's charge posts its id into status.chargedJobs: an
// item longer than the CRD allows would make the API server refuse every later write of the budget
// (each folds first). The bound is read from the CRD itself.
func TestBreakTodayCountedEntryFitsChargedJobsMaxLength(t *testing.T) {
	sb := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "p", UID: "sb-1"}}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxAICredits: ptr.To(resource.MustParse("100"))}, sb)
	close(h.hold)
	if d, err := h.g.reserve(t.Context(), kindStoryboard, sb, "a", "", bound.Estimate{Credits: true}, nil); err != nil || d.Wait {
		t.Fatalf("reserving the preview: %+v %v", d, err)
	}
	jobID := strings.Repeat("j", 100) // a job id status.jobId accepts
	at := metav1.NewTime(h.g.clock.Now())
	sb.Status.JobID, sb.Status.SubmittedAt = jobID, &at
	if err := h.server.Update(t.Context(), sb); err != nil {
		t.Fatal(err)
	}
	h.foldNow(t)
	c := ChargeOf(sb)
	c.Credits = ptr.To(resource.MustParse("3"))
	if err := h.g.Charge(t.Context(), "team-a", c); err != nil {
		t.Fatal(err)
	}
	b := h.budget(t)
	if b.Status.Used.Previews != 1 || len(b.Status.ChargedJobs) != 1 {
		t.Fatalf("control: the preview's job was not folded and charged: used %+v, chargedJobs %d", b.Status.Used, len(b.Status.ChargedJobs))
	}
	most := chargedJobsMaxLength(t)
	for _, id := range b.Status.ChargedJobs {
		if len(id) > most {
			t.Errorf("status.chargedJobs holds an item of %d characters (%.20s...): the CRD allows %d, the API server refuses the write", len(id), id, most)
		}
	}
}

// chargedJobsMaxLength is the maxLength of status.chargedJobs items in the installed CRD.
func chargedJobsMaxLength(t *testing.T) int {
	t.Helper()
	raw, err := os.ReadFile("../../config/crd/bases/video.videoops.io_videobudgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	items := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["chargedJobs"].Items
	if items == nil || items.Schema == nil || items.Schema.MaxLength == nil {
		t.Fatal("the CRD gives status.chargedJobs items no maxLength")
	}
	return int(*items.Schema.MaxLength)
}

// The credits charge of a preview (chargeEnd, before its end is written) posts its running job's
// reservation: a retry (the end's write failed, the reconcile reads the job again) finds none, and
// takes the charge for made. When a preview posted two entries ("counted:"+id and id), 32 other previews
// with credits, charged between the charge and its retry, pushed the id out of the 64 kept: the
// credits were charged again.
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
		if d, err := h.g.reserve(t.Context(), kindStoryboard, sb, "a", "", bound.Estimate{Credits: true}, nil); err != nil || d.Wait {
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
