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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// Issue 28's consent and records, attacked after the change (DESIGN.md "What is paid for is what
// was approved", "The record travels with the object", "Records that outlive a version"): each
// spec is an ordinary operation (a key rotation, a GitOps sync, an upgrade's pin, a restore) in
// an order the change's own specs did not try.
var _ = Describe("Consent is a record, attacked", func() {
	var h *harness

	const settle = 1500 * time.Millisecond

	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak(otherAccountKey)
		}
	})
	paidRenders := func() int { return h.sim.Calls(simulator.EndpointRenderStoryboard) }
	readyRendering := func(vr *videov1alpha1.VideoRender, rendered string) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted))
			g.Expect(got.Status.StoryboardDigest).To(Equal(rendered))
		}).Should(Succeed())
	}
	stayReady := func(vr *videov1alpha1.VideoRender) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
		}, settle).Should(Succeed())
	}

	// "Records that outlive a version": a pin written in Git before the upgrade is the preview's
	// version 1 digest; the storyboard's status is of version 2 (a restore, or a preview read
	// again by the new manager) and carries digestV1 beside it.
	It("a render first submitted after the upgrade for a version 1 pin stays Ready when its storyboard moves on", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.startManager()
		sb := storyPreview(h.ns, "v1pin", "V1 pin")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		first := firstPreview(sb)
		Expect(first.DigestV1).NotTo(BeEmpty())

		vr := refRender(h.ns, "v1pin", "v1pin", "approvedDigest: "+first.DigestV1)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		Expect(paidRenders()).To(Equal(1))

		By("the storyboard moves on: preview 2 completes, nobody approves it")
		editPreviewStory(sb, "The second take. It waits for a review.")
		previewOfGeneration(sb, 2)
		stayReady(vr)
		Expect(paidRenders()).To(Equal(1))
	})

	It("a key rotation to another account's key while the storyboard moved on pays nothing and keeps the finished video Ready", func() {
		h = newHarness(simulator.Options{APIKeys: []string{testAPIKey, otherAccountKey}, ScopeJobsByKey: true})
		h.createSecret(testAPIKey)
		h.createNamedSecret("other", otherAccountKey)
		h.startManager()
		sb := storyPreview(h.ns, "rotate", "Rotate")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		first := firstPreview(sb)
		vr := refRender(h.ns, "rotate", "rotate", "approvedDigest: "+first.Digest)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		done := recordedRender(vr)

		editPreviewStory(sb, "The second take. It waits for a review.")
		second := previewOfGeneration(sb, 2)
		readyRendering(vr, first.Digest)

		By("pointing the render at another account's key")
		editRender(vr, func(cur *videov1alpha1.VideoRender) {
			cur.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "other", Key: videov1alpha1.DefaultAPIKeySecretKey}
		})
		stayReady(vr)
		Expect(paidRenders()).To(Equal(1))
		Expect(getRender(vr)(Default).Status.JobID).To(Equal(done.Status.JobID))

		By("approving preview 2: it is paid once, with the other account's key")
		editRender(vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = second.Digest })
		readyRendering(vr, second.Digest)
		Consistently(paidRenders, settle).Should(Equal(2))
	})

	It("a GitOps sync that puts back an older pin after a newer one was rendered pays nothing", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.startManager()
		sb := storyPreview(h.ns, "resync", "Resync")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		first := firstPreview(sb)
		vr := refRender(h.ns, "resync", "resync", "approvedDigest: "+first.Digest)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		readyRendering(vr, first.Digest)
		editPreviewStory(sb, "The second take, approved.")
		second := previewOfGeneration(sb, 2)
		editRender(vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = second.Digest })
		readyRendering(vr, second.Digest)
		Expect(paidRenders()).To(Equal(2))

		By("the sync writes the first pin back")
		editRender(vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = first.Digest })
		Consistently(paidRenders, settle).Should(Equal(2), "the first preview is no longer the storyboard's; nothing to pay")
		got := getRender(vr)(Default)
		GinkgoWriter.Printf("after the old pin came back: phase %s, conditions %+v\n", got.Status.Phase, got.Status.Conditions)
	})

	It("approval Latest switched off while a preview is in flight pays nothing for that preview", func() {
		h = newHarness(simulator.Options{PreviewDuration: 20 * time.Minute}) // ~2.4 s at the harness's time scale
		h.createSecret(testAPIKey)
		h.startManager()
		sb := storyPreview(h.ns, "inflight", "In flight")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		first := firstPreview(sb)
		vr := refRender(h.ns, "inflight", "inflight", "approval: Latest")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		readyRendering(vr, first.Digest)

		By("editing the storyboard, and turning the policy off while preview 2 runs")
		editPreviewStory(sb, "An edit nobody reviewed. It must not be paid for.")
		Eventually(func(g Gomega) {
			got := getStoryboard(sb)(g)
			g.Expect(got.Status.Submission != nil || (got.Status.JobGeneration == 2 && got.Status.CompletedAt == nil)).To(BeTrue())
		}).Should(Succeed())
		editRender(vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.Approval = "" })
		Expect(getStoryboard(sb)(Default).Status.PreviewedGeneration).To(Equal(int64(1)), "preview 2 was still in flight")
		previewOfGeneration(sb, 2)
		readyRendering(vr, first.Digest)
		Consistently(paidRenders, settle).Should(Equal(1))
	})

	It("two renders pinned to the same preview each pay once and both stay Ready when the storyboard moves on", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.startManager()
		sb := storyPreview(h.ns, "twice", "Twice")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		first := firstPreview(sb)
		a := refRender(h.ns, "twice-a", "twice", "approvedDigest: "+first.Digest)
		b := refRender(h.ns, "twice-b", "twice", "approvedDigest: "+first.Digest)
		Expect(k8sClient.Create(ctx, a)).To(Succeed())
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		readyRendering(a, first.Digest)
		readyRendering(b, first.Digest)
		Expect(paidRenders()).To(Equal(2), "two objects are two videos")
		editPreviewStory(sb, "The second take. It waits for a review.")
		previewOfGeneration(sb, 2)
		stayReady(a)
		stayReady(b)
		Expect(paidRenders()).To(Equal(2))
	})
})
