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
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/previewdigest"
	"github.com/videoops/video-operator/internal/simulator"
)

// Issue 21, "Render what was reviewed" (docs/architecture.md "What is paid for is what was
// approved"): a storyboardRef render pays only for the preview a person approved, and narrates an
// approved brief word for word. Each case of the "Done when" is one spec, named after it.
var _ = Describe("Render what was reviewed", func() {
	var h *harness

	// pollIntervals is three of the harness's longest poll intervals (PollMax 60 ms): the
	// window in which a render that would pay again certainly would have.
	const pollIntervals = 3 * 60 * time.Millisecond

	start := func(opts simulator.Options) {
		h = newHarness(opts)
		h.createSecret(testAPIKey)
		h.startManager()
	}
	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak()
		}
	})

	// paidRenders counts every call to the paid render endpoint, accepted or not.
	paidRenders := func() int { return h.sim.Calls(simulator.EndpointRenderStoryboard) }

	It("a brief-mode storyboard previews, a pinned render renders the previewed narration word for word", func() {
		start(simulator.Options{})
		sb := briefStoryboard(h.ns, "brief", "Brief one")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)
		Expect(preview.Scenes).To(HaveLen(3), "a 30 s brief gives three scenes")

		vr := refRender(h.ns, "pinned", "brief", "approvedDigest: "+preview.Digest)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)

		By("the service received script story scenes equal to the preview's narration")
		bodies := h.sim.RenderRequests()
		Expect(bodies).To(HaveLen(1))
		sent := decodeRenderRequest(bodies[0])
		GinkgoWriter.Printf("preview %s: %q\nrender request: %s\n", preview.Digest, storiesOfPreview(preview), bodies[0])
		Expect(sent.AIStoryboard).NotTo(BeNil())
		Expect(sent.AIStoryboard.Enabled).To(BeTrue(), "the AI still designs the scenes (AI storyboard rules 1)")
		Expect(storiesOf(sent)).To(Equal(storiesOfPreview(preview)), "in order, character for character")
		for _, sc := range sent.Scenes {
			Expect(sc.Brief).To(BeNil())
			Expect(sc.StoryCoPilot).To(BeNil())
		}
		Expect(sent.VideoName).To(Equal("Brief one"), "the rest of the request is the previewed one")

		By("the transcript carries that narration")
		got := getRender(vr)(Default)
		Expect(fetch(got.Status.Outputs.TXTFile)).To(Equal(strings.Join(storiesOfPreview(preview), "\n") + "\n"))

		By("status, the Submitted event, the audit log and the budget record what was paid")
		Expect(got.Status.StoryboardDigest).To(Equal(preview.Digest))
		Expect(got.Status.NarrationPinned).To(HaveValue(BeTrue()))
		Eventually(func() []string { return h.eventNotes("pinned", "Submitted") }).Should(ContainElement(
			And(ContainSubstring(preview.Digest), ContainSubstring("narration pinned"))))
		Expect(h.logs.String()).To(MatchRegexp(`"msg":"Paid submission".*"outcome":"accepted".*"storyboardDigest":"%s","narrationPinned":true`, preview.Digest))
	})

	It("the opt-out renders the brief as before, the narration written anew", func() {
		start(simulator.Options{})
		sb := briefStoryboard(h.ns, "brief", "Brief two")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)

		vr := refRender(h.ns, "regenerated", "brief", "approvedDigest: "+preview.Digest+", narration: Regenerate")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)

		bodies := h.sim.RenderRequests()
		Expect(bodies).To(HaveLen(1))
		sent := decodeRenderRequest(bodies[0])
		Expect(sent.Scenes).To(HaveLen(1), "one brief scene")
		Expect(sent.Scenes[0].Brief).NotTo(BeNil())
		Expect(sent).To(Equal(&getStoryboard(sb)(Default).Spec.StoryboardRequest), "the previewed request, unchanged")
		got := getRender(vr)(Default)
		Expect(got.Status.NarrationPinned).To(HaveValue(BeFalse()))
		Expect(got.Status.StoryboardDigest).To(Equal(preview.Digest))
		// The service's AI wrote again: the video does not say what was reviewed.
		Expect(fetch(got.Status.Outputs.TXTFile)).NotTo(Equal(strings.Join(storiesOfPreview(preview), "\n") + "\n"))
	})

	It("a finished pinned render stays Ready after its storyboard is edited, reports the new preview, then renders the new pin once", func() {
		start(simulator.Options{})
		sb := briefStoryboard(h.ns, "edited", "Edited")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		first := firstPreview(sb)
		vr := refRender(h.ns, "pinned", "edited", "approvedDigest: "+first.Digest)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		Expect(paidRenders()).To(Equal(1))

		By("editing the storyboard: a new preview completes")
		Eventually(func() error {
			cur := getStoryboard(sb)(Default)
			cur.Spec.Scenes[0].Brief.Prompt = "tides and the moon over a long weekend"
			return k8sClient.Update(ctx, cur)
		}).Should(Succeed())
		second := previewOfGeneration(sb, 2)
		Expect(second.Digest).NotTo(Equal(first.Digest))

		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			ready := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReady)
			g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "the paid, finished video stays Ready")
			g.Expect(ready.Message).To(And(ContainSubstring(first.Digest), ContainSubstring(second.Digest)), "names both digests")
			g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReconciling).Status).NotTo(Equal(metav1.ConditionTrue))
			g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Status).NotTo(Equal(metav1.ConditionTrue))
			g.Expect(kstatusOf(got)).To(Equal(status.CurrentStatus), "kubectl wait and Argo CD see the finished video")
		}).Should(Succeed())
		Consistently(paidRenders, 5*pollIntervals).Should(Equal(1), "0 further paid calls while the new preview is not approved")

		By("updating the pin to the new digest")
		Eventually(func() error {
			cur := getRender(vr)(Default)
			cur.Spec.StoryboardRef.ApprovedDigest = second.Digest
			return k8sClient.Update(ctx, cur)
		}).Should(Succeed())
		eventuallyReady(vr)
		Consistently(paidRenders, 5*pollIntervals).Should(Equal(2), "exactly one paid call for the new pin")
		bodies := h.sim.RenderRequests()
		Expect(storiesOf(decodeRenderRequest(bodies[1]))).To(Equal(storiesOfPreview(second)))
		Expect(getRender(vr)(Default).Status.StoryboardDigest).To(Equal(second.Digest))
	})

	It("a pin naming a digest that no preview has waits and pays nothing", func() {
		start(simulator.Options{})
		sb := storyPreview(h.ns, "script", "Script")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)
		unknown := "sha256:" + strings.Repeat("0", 64)
		vr := refRender(h.ns, "unknown-pin", "script", "approvedDigest: "+unknown)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			rec := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReconciling)
			g.Expect(rec.Reason).To(Equal(string(videov1alpha1.ReasonAwaitingApproval)))
			g.Expect(rec.Message).To(And(ContainSubstring("no current preview of VideoStoryboard \"script\" has the approved digest"),
				ContainSubstring(unknown), ContainSubstring(preview.Digest)))
			g.Expect(kstatusOf(got)).To(Equal(status.InProgressStatus))
		}).Should(Succeed())
		Consistently(paidRenders, 5*pollIntervals).Should(BeZero())
	})

	It("a brief whose narration does not fit in status stalls the pinned render before paying", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.wrap = func(in apiclient.Interface) apiclient.Interface { return oversizedPreview{in} }
		h.startManager()
		sb := briefStoryboard(h.ns, "too-long", "Too long")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)
		Expect(preview.Incomplete).To(ContainSubstring("omitted from status for size"))
		Expect(getStoryboard(sb)(Default).Status.OutputsOmitted).To(ContainElement(HavePrefix("scenes[")))

		vr := refRender(h.ns, "pinned", "too-long", "approvedDigest: "+preview.Digest)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonNarrationIncomplete)).To(BeTrue(), "%+v", got.Status.Conditions)
			msg := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message
			g.Expect(msg).To(And(ContainSubstring("cannot be narrated word for word"), ContainSubstring("omitted from status for size"),
				ContainSubstring("narration to Regenerate")))
		}).Should(Succeed())
		Consistently(paidRenders, 5*pollIntervals).Should(BeZero())
		Eventually(func() []string { return h.eventReasons("pinned") }).Should(ContainElement(string(videov1alpha1.ReasonNarrationIncomplete)))
	})

	It("a preview's digest is the same after a restart and read again from the service; two previews of one request differ", func() {
		start(simulator.Options{})
		sb := storyPreview(h.ns, "digest", "Digest")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)
		Expect(previewdigest.Valid(preview.Digest)).To(BeTrue(), preview.Digest)
		Expect(preview.Generation).To(Equal(int64(1)))

		By("restarting the manager")
		h.stopManager()
		h.startManager()
		Consistently(func(g Gomega) string { return getStoryboard(sb)(g).Status.Preview.Digest }, 5*pollIntervals).Should(Equal(preview.Digest))

		By("reading the preview from the service again, as another cluster would")
		api, err := apiclient.New(testAPIKey, apiclient.Options{BaseURL: h.srv.URL + "/serviceapis"})
		Expect(err).NotTo(HaveOccurred())
		cur := getStoryboard(sb)(Default)
		job, err := api.GetJob(ctx, cur.Status.JobID)
		Expect(err).NotTo(HaveOccurred())
		Expect(digestOf(job.Data.Storyboard, &cur.Spec.StoryboardRequest).Current).To(Equal(preview.Digest))

		By("previewing the same request again")
		again := storyPreview(h.ns, "digest-again", "Digest")
		Expect(k8sClient.Create(ctx, again)).To(Succeed())
		other := firstPreview(again)
		Expect(storiesOfPreview(other)).To(Equal(storiesOfPreview(preview)), "same narration")
		Expect(other.Digest).NotTo(Equal(preview.Digest), "another preview (its thumbnails are its own)")
	})

	Context("without a pin (approval Pinned, the default)", func() {
		It("waits for an approval when the render was written before its preview completed", func() {
			start(simulator.Options{})
			sb := briefStoryboard(h.ns, "together", "Together")
			vr := refRender(h.ns, "with-it", "together", "")
			Expect(k8sClient.Create(ctx, sb)).To(Succeed())
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			preview := firstPreview(sb)
			Eventually(func(g Gomega) {
				rec := conditionOf(&getRender(vr)(g).Status.JobStatus, videov1alpha1.ConditionReconciling)
				g.Expect(rec.Reason).To(Equal(string(videov1alpha1.ReasonAwaitingApproval)))
				g.Expect(rec.Message).To(ContainSubstring(preview.Digest))
			}).Should(Succeed())
			Consistently(paidRenders, 5*pollIntervals).Should(BeZero())
		})

		It("renders every new preview with approval Latest, as its field says", func() {
			start(simulator.Options{})
			sb := storyPreview(h.ns, "latest", "Latest")
			vr := refRender(h.ns, "latest", "latest", "approval: Latest")
			Expect(k8sClient.Create(ctx, sb)).To(Succeed())
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			eventuallyReady(vr)
			Expect(paidRenders()).To(Equal(1))
			By("the record of the paid call does not call the preview approved: nobody reviewed it")
			// The storyboard is named "latest" too: its own Submitted event names no preview.
			Eventually(func() []string { return h.eventNotes("latest", "Submitted") }).Should(ContainElement(
				And(ContainSubstring("approval Latest"), ContainSubstring("not reviewed"), Not(ContainSubstring("approved preview")))))
		})
	})
})

// Attempts to break issue 21 (docs/architecture.md "What is paid for is what was approved"):
// scenarios in which a storyboardRef render would pay for what nobody approved, or pay twice.
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

// briefStoryboard is an AI brief-mode storyboard (AI storyboard rules 3): a single brief scene.
// The prompt has no full stop, so each generated sentence is one scene.
func briefStoryboard(ns, name, videoName string) *videov1alpha1.VideoStoryboard {
	return fromYAML(&videov1alpha1.VideoStoryboard{}, ns, `
metadata: {name: `+name+`}
spec:
  videoName: `+videoName+`
  aiStoryboard: {enabled: true}
  scenes:
    - brief: {prompt: tides and the moon, duration: 30}
`)
}

// refRender is a storyboardRef render; extra holds more fields of storyboardRef.
func refRender(ns, name, storyboard, extra string) *videov1alpha1.VideoRender {
	if extra != "" {
		extra = ", " + extra
	}
	return fromYAML(&videov1alpha1.VideoRender{}, ns, fmt.Sprintf("metadata: {name: %s}\nspec: {storyboardRef: {name: %s%s}}", name, storyboard, extra))
}

// firstPreview waits for the storyboard's first preview and returns it.
func firstPreview(sb *videov1alpha1.VideoStoryboard) *videov1alpha1.StoryboardPreview {
	GinkgoHelper()
	return previewOfGeneration(sb, 1)
}

// previewOfGeneration waits for the preview of generation gen and returns it.
func previewOfGeneration(sb *videov1alpha1.VideoStoryboard, gen int64) *videov1alpha1.StoryboardPreview {
	GinkgoHelper()
	var p *videov1alpha1.StoryboardPreview
	Eventually(func(g Gomega) {
		got := getStoryboard(sb)(g)
		g.Expect(got.Status.PreviewedGeneration).To(Equal(gen))
		g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted))
		g.Expect(got.Status.Preview).NotTo(BeNil())
		g.Expect(got.Status.Preview.Generation).To(Equal(gen))
		g.Expect(previewdigest.Valid(got.Status.Preview.Digest)).To(BeTrue())
		p = got.Status.Preview
	}, within(20*time.Second)).Should(Succeed())
	return p
}

func decodeRenderRequest(raw json.RawMessage) *videov1alpha1.StoryboardRequest {
	GinkgoHelper()
	var req videov1alpha1.StoryboardRequest
	Expect(json.Unmarshal(raw, &req)).To(Succeed())
	return &req
}

func storiesOf(req *videov1alpha1.StoryboardRequest) []string {
	out := []string{}
	for _, sc := range req.Scenes {
		if sc.Story != nil {
			out = append(out, *sc.Story)
		}
	}
	return out
}

func storiesOfPreview(p *videov1alpha1.StoryboardPreview) []string {
	out := []string{}
	for _, sc := range p.Scenes {
		out = append(out, sc.Story)
	}
	return out
}

// fetch returns the body of an output URL of the simulator.
func fetch(url string) string {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	Expect(resp.StatusCode).To(Equal(http.StatusOK))
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

// eventNotes returns the notes of the events of one reason about the named object.
func (h *harness) eventNotes(name, reason string) []string {
	var events eventsv1.EventList
	Expect(k8sClient.List(ctx, &events, client.InNamespace(h.ns))).To(Succeed())
	var out []string
	for _, e := range events.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out
}

// oversizedPreview answers every completed preview with 60 scenes of a 14,000-character
// narration each: about 840 KB, more than the 512 KiB a preview may take in status.
type oversizedPreview struct{ apiclient.Interface }

func (o oversizedPreview) GetJob(ctx context.Context, id string) (*apiclient.Job, error) {
	job, err := o.Interface.GetJob(ctx, id)
	if err != nil || job.Data.Storyboard == nil || len(job.Data.Storyboard.Scenes) == 0 {
		return job, err
	}
	sb := job.Data.Storyboard
	first := sb.Scenes[0]
	for i := len(sb.Scenes); i < 60; i++ {
		s := first
		s.Story = fmt.Sprintf("Scene %d. %s", i+1, strings.Repeat("Narration that goes on. ", 583))
		sb.Scenes = append(sb.Scenes, s)
	}
	return job, nil
}

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
