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

package controller

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

// Attempts to break issue 21 (DESIGN.md "What is paid for is what was approved"): scenarios in
// which a storyboardRef render would pay for what nobody approved, or pay twice.
var _ = Describe("Render what was reviewed, attacked", func() {
	var h *harness

	const pollIntervals = 3 * 60 * time.Millisecond

	start := func(wrap func(apiclient.Interface) apiclient.Interface) {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.wrap = wrap
		h.startManager()
	}
	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak()
		}
	})
	paidRenders := func() int { return h.sim.Calls(simulator.EndpointRenderStoryboard) }
	awaitingApproval := func(vr *videov1alpha1.VideoRender) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			rec := conditionOf(&getRender(vr)(g).Status.JobStatus, videov1alpha1.ConditionReconciling)
			g.Expect(rec.Reason).To(Equal(string(videov1alpha1.ReasonAwaitingApproval)))
		}).Should(Succeed())
	}

	It("pinning the preview a Latest render already rendered does not pay for it again", func() {
		start(nil)
		sb := storyPreview(h.ns, "rendered", "Rendered")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)
		vr := refRender(h.ns, "unpinned", "rendered", "approval: Latest")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		Expect(paidRenders()).To(Equal(1))
		Expect(getRender(vr)(Default).Status.StoryboardDigest).To(Equal(preview.Digest))

		By("pinning the very preview it rendered (what kubectl video approve writes)")
		editRender(vr, func(cur *videov1alpha1.VideoRender) {
			cur.Spec.StoryboardRef.Approval = ""
			cur.Spec.StoryboardRef.ApprovedDigest = preview.Digest
		})
		eventuallyReady(vr)
		Consistently(paidRenders, 5*pollIntervals).Should(Equal(1), "the approved preview was paid for already")
		got := getRender(vr)(Default)
		Expect(got.Status.StoryboardDigest).To(Equal(preview.Digest))
		Expect(got.Status.JobGeneration).To(Equal(got.Generation), "the job renders what the current spec asks")
	})

	It("a policy-only edit of a pinned, rendered render does not pay again", func() {
		start(nil)
		sb := briefStoryboard(h.ns, "policy", "Policy")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)
		vr := refRender(h.ns, "pinned", "policy", "approvedDigest: "+preview.Digest)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		Expect(paidRenders()).To(Equal(1))

		By("a platform team makes the policy explicit: approval Pinned, the same pin")
		editRender(vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.Approval = videov1alpha1.ApprovalPinned })
		eventuallyReady(vr)
		Consistently(paidRenders, 5*pollIntervals).Should(Equal(1), "nothing about what is rendered changed")

		By("opting out of the pinned narration changes the request: that is paid, once")
		editRender(vr, func(cur *videov1alpha1.VideoRender) {
			cur.Spec.StoryboardRef.Narration = videov1alpha1.NarrationRegenerate
		})
		eventuallyReady(vr)
		Consistently(paidRenders, 5*pollIntervals).Should(Equal(2))
		Expect(getRender(vr)(Default).Status.NarrationPinned).To(HaveValue(BeFalse()))
	})

	It("a pin does not pay for an edited request whose preview looks the same (a service with stable thumbnails)", func() {
		start(func(in apiclient.Interface) apiclient.Interface { return stableThumbnails{in} })
		sb := storyPreview(h.ns, "stable", "Stable")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		first := firstPreview(sb)

		By("the storyboard is edited in what a preview does not show before the pinned render runs")
		vr := refRender(h.ns, "pinned", "stable", "approvedDigest: "+first.Digest+", approval: Pinned")
		// The render is held back until the edit: an API key it cannot read yet.
		vr.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "later", Key: videov1alpha1.DefaultAPIKeySecretKey}
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func() error {
			cur := getStoryboard(sb)(Default)
			cur.Spec.VoiceOver = &videov1alpha1.VoiceOver{Enabled: false}
			return k8sClient.Update(ctx, cur)
		}).Should(Succeed())
		second := previewOfGeneration(sb, 2)
		Expect(second.Digest).NotTo(Equal(first.Digest), "the previewed request is part of what was approved")
		h.createNamedSecret("later", testAPIKey)

		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			rec := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReconciling)
			g.Expect(rec.Reason).To(Equal(string(videov1alpha1.ReasonAwaitingApproval)), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		Consistently(paidRenders, 5*pollIntervals).Should(BeZero(), "the request with the voice-over turned off was never approved")
	})

	It("a label or annotation whose key is \"spec\" is no approval of a later preview", func() {
		start(nil)
		sb := storyPreview(h.ns, "labelled", "Labelled")
		vr := refRender(h.ns, "labelled", "labelled", "")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		preview := firstPreview(sb)
		awaitingApproval(vr)

		By("kubectl label vr/labelled spec=reviewed, by a field manager that owns no spec field")
		patch := []byte(`{"metadata":{"labels":{"spec":"reviewed"},"annotations":{"spec":"x"}}}`)
		Expect(k8sClient.Patch(ctx, getRender(vr)(Default), client.RawPatch("application/merge-patch+json", patch),
			client.FieldOwner("kubectl-label"))).To(Succeed())
		Consistently(paidRenders, 5*pollIntervals).Should(BeZero(), "preview %s was never approved", preview.Digest)
	})

	It("a brief scene's own settings are not dropped silently from the pinned render: it stalls before paying", func() {
		start(nil)
		sb := fromYAML(&videov1alpha1.VideoStoryboard{}, h.ns, `
metadata: {name: styled}
spec:
  videoName: Styled
  aiStoryboard: {enabled: true}
  scenes:
    - brief: {prompt: tides and the moon, duration: 30}
      hideSubtitles: true
      voiceOver: {enabled: true}
`)
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)
		pinned := refRender(h.ns, "styled-pinned", "styled", "approvedDigest: "+preview.Digest)
		Expect(k8sClient.Create(ctx, pinned)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(pinned)(g)
			stalled := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled)
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Reason).To(Equal(string(videov1alpha1.ReasonBriefSettingsNotCarried)))
			g.Expect(stalled.Message).To(And(ContainSubstring("hideSubtitles"), ContainSubstring("voiceOver"),
				ContainSubstring("Regenerate")))
		}).Should(Succeed())
		Consistently(paidRenders, 5*pollIntervals).Should(BeZero(), "the video would not be the one previewed")

		By("the opt-out renders the brief as previewed, its settings included")
		regen := refRender(h.ns, "styled-regenerated", "styled", "approvedDigest: "+preview.Digest+", narration: Regenerate")
		Expect(k8sClient.Create(ctx, regen)).To(Succeed())
		eventuallyReady(regen)
		Expect(paidRenders()).To(Equal(1))
		sent := decodeRenderRequest(h.sim.RenderRequests()[0])
		Expect(sent.Scenes).To(HaveLen(1))
		Expect(sent.Scenes[0].HideSubtitles).To(Equal(ptr.To(true)))
	})

	It("a metadata-only write by the field manager that wrote the spec is no approval of a later preview", func() {
		start(nil)
		sb := storyPreview(h.ns, "relabelled", "Relabelled")
		vr := refRender(h.ns, "relabelled", "relabelled", "")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		preview := firstPreview(sb)
		awaitingApproval(vr)

		By("a GitOps sync adds a team label to every object it applies: the spec's own field manager writes metadata only")
		editRender(vr, func(cur *videov1alpha1.VideoRender) {
			if cur.Labels == nil {
				cur.Labels = map[string]string{}
			}
			cur.Labels["team"] = "video"
		})
		Expect(getRender(vr)(Default).Generation).To(Equal(int64(1)), "the spec did not change")
		By("something else wakes the render up: an annotation by another field manager")
		patch := []byte(`{"metadata":{"annotations":{"example.com/touched":"yes"}}}`)
		Expect(k8sClient.Patch(ctx, getRender(vr)(Default), client.RawPatch("application/merge-patch+json", patch),
			client.FieldOwner("kubectl-annotate"))).To(Succeed())
		Consistently(paidRenders, 5*pollIntervals).Should(BeZero(), "preview %s was never approved", preview.Digest)
		Expect(conditionOf(&getRender(vr)(Default).Status.JobStatus, videov1alpha1.ConditionReconciling).Reason).
			To(Equal(string(videov1alpha1.ReasonAwaitingApproval)))
	})
})

// stableThumbnails answers every completed preview with thumbnail URLs that depend only on the
// scene (its index and narration), as a service that serves thumbnails by content would: two
// previews that look the same have the same digest of what a reviewer sees.
type stableThumbnails struct{ apiclient.Interface }

func (s stableThumbnails) GetJob(ctx context.Context, id string) (*apiclient.Job, error) {
	job, err := s.Interface.GetJob(ctx, id)
	if err != nil || job.Data.Storyboard == nil {
		return job, err
	}
	for i := range job.Data.Storyboard.Scenes {
		sc := &job.Data.Storyboard.Scenes[i]
		sc.Thumbnail = fmt.Sprintf("https://cdn.example.com/thumbnails/%d-%d.jpg", i+1, len(sc.Story))
	}
	return job, nil
}
