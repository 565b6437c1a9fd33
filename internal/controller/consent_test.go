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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// Consent is a record, never an inference (docs/architecture.md "What is paid for is what was
// approved"): a storyboardRef render pays only for a digest a person or a policy wrote down. Every
// ordinary write of a render (a key rotation, a default made explicit, a GitOps drift fix, a label,
// a restore) approves nothing, and a finished render stays Ready when its storyboard moves on.
var _ = Describe("Consent is a record", func() {
	var h *harness

	const quiet = 900 * time.Millisecond

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
	paidRenders := func() int { return h.sim.Calls(simulator.EndpointRenderStoryboard) }
	// readyWithNewerPreview waits until the render is Ready for its generation, has rendered
	// preview rendered, and reports the newer preview waiting with the command that approves it.
	readyWithNewerPreview := func(vr *videov1alpha1.VideoRender, rendered, newer string) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(kstatusOf(got)).To(Equal(status.CurrentStatus))
			g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted))
			g.Expect(got.Status.StoryboardDigest).To(Equal(rendered))
			g.Expect(got.Status.Outputs).NotTo(BeNil())
			msg := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReady).Message
			g.Expect(msg).To(And(ContainSubstring(newer), ContainSubstring("kubectl video approve vr/"+vr.Name+" -n "+h.ns)), msg)
		}).Should(Succeed())
	}

	// renderedThenMovedOn is a render that rendered preview 1 without a pin (approval Latest, then
	// the policy removed, as a render of an older version without approvals was), and a storyboard
	// whose preview 2 completed and was reviewed by nobody.
	renderedThenMovedOn := func(name string) (*videov1alpha1.VideoStoryboard, *videov1alpha1.VideoRender, string, string) {
		GinkgoHelper()
		sb := storyPreview(h.ns, name, name)
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		first := firstPreview(sb)
		vr := refRender(h.ns, name, name, "approval: Latest")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		Expect(paidRenders()).To(Equal(1))
		By("automation is turned off: nothing is approved from now on unless pinned")
		editRender(vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.Approval = "" })
		eventuallyReady(vr)
		By("the storyboard is edited and its preview 2 completes; nobody reviews it")
		editPreviewStory(sb, "An edit nobody reviewed. It must not be paid for.")
		second := previewOfGeneration(sb, 2)
		Expect(second.Digest).NotTo(Equal(first.Digest))
		return sb, vr, first.Digest, second.Digest
	}

	DescribeTable("no ordinary write of a render approves a preview nobody reviewed",
		func(write func(vr *videov1alpha1.VideoRender)) {
			start(simulator.Options{})
			_, vr, first, second := renderedThenMovedOn("moved-on")
			write(vr)
			Consistently(paidRenders, quiet).Should(Equal(1), "preview 2 was approved by nobody")
			readyWithNewerPreview(vr, first, second)
			Expect(paidRenders()).To(Equal(1))
		},
		Entry("a key rotation: apiKeySecretRef points at the new Secret", func(vr *videov1alpha1.VideoRender) {
			h.createNamedSecret("rotated", testAPIKey)
			editRender(vr, func(cur *videov1alpha1.VideoRender) {
				cur.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "rotated", Key: videov1alpha1.DefaultAPIKeySecretKey}
			})
		}),
		Entry("the retired default written explicitly (approval PreviewAtApproval)", func(vr *videov1alpha1.VideoRender) {
			editRender(vr, func(cur *videov1alpha1.VideoRender) {
				cur.Spec.StoryboardRef.Approval = videov1alpha1.ApprovalPreviewAtApproval
			})
		}),
		Entry("a GitOps drift fix: a hand edit reverted to the manifest", func(vr *videov1alpha1.VideoRender) {
			editRender(vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.Approval = videov1alpha1.ApprovalPinned })
			editRender(vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.Approval = "" })
		}),
	)

	It("a label written while the previous job runs approves nothing", func() {
		// A render takes about 14 s here: the edits below all happen while its job runs.
		start(simulator.Options{RenderDuration: 120 * time.Minute})
		sb := storyPreview(h.ns, "running", "Running")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		first := firstPreview(sb)
		vr := refRender(h.ns, "running", "running", "approval: Latest")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.JobID).NotTo(BeEmpty())
			g.Expect(got.Status.CompletedAt).To(BeNil())
		}).Should(Succeed())

		By("while job 1 runs: automation off, preview 2 completes, and the spec's manager adds a label")
		editRender(vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.Approval = "" })
		editPreviewStory(sb, "An edit nobody reviewed. It must not be paid for.")
		second := previewOfGeneration(sb, 2)
		Consistently(paidRenders, 6*time.Second).Should(Equal(1), "job 1 is still running")
		editRender(vr, func(cur *videov1alpha1.VideoRender) { cur.Labels = map[string]string{"team": "video"} })
		Expect(getRender(vr)(Default).Status.CompletedAt).To(BeNil(), "the label was written while job 1 ran")

		By("job 1 ends: the render is Ready with preview 1, and preview 2 is reported, not paid")
		readyWithNewerPreview(vr, first.Digest, second.Digest)
		Consistently(paidRenders, quiet).Should(Equal(1))
	})

	It("a restore without status of a render whose storyboard moved on adopts its job and pays nothing more", func() {
		start(simulator.Options{})
		_, vr, first, second := renderedThenMovedOn("restored")
		Eventually(func(g Gomega) {
			g.Expect(getRender(vr)(g).Annotations).To(HaveKey(videov1alpha1.AnnotationRequestDigest))
		}).Should(Succeed())
		before := getRender(vr)(Default)

		By("deleting the render and creating it again from its manifest and annotations, without status (Velero)")
		Expect(k8sClient.Delete(ctx, before)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key(vr), &videov1alpha1.VideoRender{})) }).Should(BeTrue())
		restored := &videov1alpha1.VideoRender{
			ObjectMeta: metav1.ObjectMeta{Name: before.Name, Namespace: before.Namespace, Annotations: before.Annotations},
			Spec:       before.Spec,
		}
		Expect(k8sClient.Create(ctx, restored)).To(Succeed())

		Consistently(paidRenders, quiet).Should(Equal(1), "preview 2 was approved by nobody; preview 1 was paid")
		readyWithNewerPreview(vr, "", second)
		got := getRender(vr)(Default)
		Expect(got.Status.JobID).To(Equal(before.Status.JobID), "the job it had is adopted")
		Expect(got.Status.RequestDigest).To(Equal(before.Status.RequestDigest))
		Expect(first).NotTo(BeEmpty())
	})

	It("a finished pinned render stays Ready when its storyboard is edited, until the new preview is approved", func() {
		start(simulator.Options{})
		sb := storyPreview(h.ns, "pinned", "Pinned")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		first := firstPreview(sb)
		vr := refRender(h.ns, "pinned", "pinned", "approvedDigest: "+first.Digest)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)

		By("the storyboard moves on: a new preview is made, then completes")
		editPreviewStory(sb, "The second take. It waits for a review.")
		second := previewOfGeneration(sb, 2)
		readyWithNewerPreview(vr, first.Digest, second.Digest)
		Consistently(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
		}, quiet).Should(Succeed())
		Expect(paidRenders()).To(Equal(1))

		By("approving the new preview (what kubectl video approve writes) renders it once")
		editRender(vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = second.Digest })
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.StoryboardDigest).To(Equal(second.Digest))
		}).Should(Succeed())
		Consistently(paidRenders, quiet).Should(Equal(2))
	})

	It("an unpinned render waits for an approval and pays nothing, however long its preview has existed", func() {
		start(simulator.Options{})
		sb := storyPreview(h.ns, "existing", "Existing")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)
		vr := refRender(h.ns, "unpinned", "existing", "")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			rec := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReconciling)
			g.Expect(rec.Reason).To(Equal(string(videov1alpha1.ReasonAwaitingApproval)))
			g.Expect(rec.Message).To(And(ContainSubstring(preview.Digest), ContainSubstring("kubectl video approve vr/unpinned -n "+h.ns)))
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		}).Should(Succeed())
		Consistently(paidRenders, quiet).Should(BeZero())
	})

	It("a preview adopted by hand is shown but cannot be approved; a fresh preview of the spec can", func() {
		start(simulator.Options{})
		original := storyPreview(h.ns, "original", "Original")
		Expect(k8sClient.Create(ctx, original)).To(Succeed())
		firstPreview(original)
		jobID := getStoryboard(original)(Default).Status.JobID
		Expect(jobID).NotTo(BeEmpty())

		By("another storyboard, with another script, names that job in its annotation (the documented adoption)")
		adopter := fromYAML(&videov1alpha1.VideoStoryboard{}, h.ns, `
metadata: {name: adopter}
spec:
  videoName: Adopter
  scenes:
    - story: A script nobody previewed. It is not what the adopted job narrates.
`)
		adopter.Annotations = map[string]string{videov1alpha1.AnnotationJobID: jobID}
		Expect(k8sClient.Create(ctx, adopter)).To(Succeed())
		vr := refRender(h.ns, "automation", "adopter", "approval: Latest")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getStoryboard(adopter)(g)
			g.Expect(got.Status.JobID).To(Equal(jobID))
			g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted))
			g.Expect(got.Status.Preview).NotTo(BeNil())
			g.Expect(got.Status.Preview.Scenes).NotTo(BeEmpty(), "the adopted preview is shown")
			g.Expect(got.Status.Preview.Digest).To(BeEmpty(), "and cannot be pinned")
			g.Expect(got.Status.Preview.Unverified).To(ContainSubstring(videov1alpha1.AnnotationRequestDigest))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			rec := conditionOf(&getRender(vr)(g).Status.JobStatus, videov1alpha1.ConditionReconciling)
			g.Expect(rec.Reason).To(Equal(string(videov1alpha1.ReasonAwaitingApproval)))
			g.Expect(rec.Message).To(ContainSubstring("may be of another request"))
		}).Should(Succeed())
		Consistently(paidRenders, quiet).Should(BeZero(), "not even approval Latest renders a preview of an unknown request")

		By("a fresh preview of the adopter's own spec can be approved, and Latest renders it")
		editPreviewStory(adopter, "The adopter's own script. Now it is previewed.")
		fresh := previewOfGeneration(adopter, 2)
		Expect(fresh.Unverified).To(BeEmpty())
		eventuallyReady(vr)
		Expect(getRender(vr)(Default).Status.StoryboardDigest).To(Equal(fresh.Digest))
		Consistently(paidRenders, quiet).Should(Equal(1))
	})

	It("a job that failed because of its spec says to change the spec and what a retry costs", func() {
		start(simulator.Options{})
		vr := badVoiceRender(h.ns, "bad-voice", "Bad voice")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonJobFailed)).To(BeTrue(), "%+v", got.Status.Conditions)
			msg := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message
			g.Expect(msg).To(And(ContainSubstring("because of its spec"), ContainSubstring("change the spec"),
				ContainSubstring("paid for"), Not(ContainSubstring("to try again"))), msg)
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			notes := eventNotesG(g, h.ns, "bad-voice", string(videov1alpha1.ReasonJobFailed))
			g.Expect(notes).To(HaveLen(1))
			g.Expect(notes[0]).To(And(ContainSubstring("change the spec"), Not(ContainSubstring("to try again"))))
		}).Should(Succeed())
	})
})

// Issue 28's consent and records, attacked after the change (docs/architecture.md "What is paid for
// is what was approved", "The record travels with the object", "Records that outlive a version"):
// each spec is an ordinary operation (a key rotation, a GitOps sync, an upgrade's pin, a restore)
// in an order the change's own specs did not try.
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
