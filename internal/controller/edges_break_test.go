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
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// An adversarial review of issue 22 (DESIGN.md "The record travels with the object"): each spec
// is a way the record of a paid job could pay twice, pay for nothing, or stall an object whose
// request was never paid.
var _ = Describe("The record travels with the object, attacked", func() {
	var h *harness

	const settle = 1500 * time.Millisecond

	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak(otherAccountKey)
		}
	})

	paidCalls := func() int {
		return h.sim.Calls(simulator.EndpointCreateStoryboard) + h.sim.Calls(simulator.EndpointRenderStoryboard) +
			h.sim.Calls(simulator.EndpointRenderProject)
	}

	It("a copy with another request and another account's key pays for its own request instead of stalling on the copied record", func() {
		h = newHarness(simulator.Options{APIKeys: []string{testAPIKey, otherAccountKey}, ScopeJobsByKey: true})
		h.createSecret(testAPIKey)
		h.createNamedSecret("other", otherAccountKey)
		h.startManager()
		original := storyRender(h.ns, "original", "Original")
		Expect(k8sClient.Create(ctx, original)).To(Succeed())
		eventuallyReady(original)
		rec := recordedRender(original)
		Expect(paidCalls()).To(Equal(1))

		By("creating a new render from the original's YAML (annotations included), another story, another account's Secret")
		cp := storyRender(h.ns, "copy", "Copy")
		cp.Spec.Storyboard.Scenes[0].Story = ptrTo("A different video, never paid for. It must be paid once.")
		cp.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "other", Key: videov1alpha1.DefaultAPIKeySecretKey}
		cp.SetAnnotations(rec.GetAnnotations())
		Expect(k8sClient.Create(ctx, cp)).To(Succeed())

		Eventually(func(g Gomega) {
			got := getRender(cp)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.JobID).NotTo(Equal(rec.Status.JobID))
			g.Expect(got.GetAnnotations()).To(HaveKeyWithValue(videov1alpha1.AnnotationJobID, got.Status.JobID),
				"the copied record is replaced by the copy's own")
			g.Expect(got.GetAnnotations()).To(HaveKeyWithValue(videov1alpha1.AnnotationRequestDigest, got.Status.RequestDigest))
		}).Should(Succeed())
		Consistently(paidCalls, settle).Should(Equal(2), "the copy's request is paid once")
	})

	It("a record naming an unknown job of another request does not stall a request that was never paid", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.startManager()
		donor := storyRender(h.ns, "donor", "Donor")
		Expect(k8sClient.Create(ctx, donor)).To(Succeed())
		eventuallyReady(donor)
		digest := recordedRender(donor).Status.RequestDigest

		By("creating a render of another request whose annotations name a job the service does not know")
		vr := storyRender(h.ns, "forged", "Forged")
		vr.SetAnnotations(map[string]string{videov1alpha1.AnnotationJobID: "job-that-does-not-exist",
			videov1alpha1.AnnotationRequestDigest: digest})
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		Consistently(paidCalls, settle).Should(Equal(2))
	})

	It("a restore without status of a render stalled SubmissionUnknown pays nothing without a confirmation", func() {
		// The render's answer is cut: the job exists, its outcome is unknown, and the object
		// stalls until a human confirms, which may take days: a backup taken meanwhile has it.
		h = newHarness(simulator.Options{RenderDuration: time.Hour,
			Faults: simulator.Faults{TruncatedShare: 1, Endpoints: []string{simulator.EndpointRenderStoryboard}}})
		h.createSecret(testAPIKey)
		h.startManager()
		vr := storyRender(h.ns, "unknown", "Unknown")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		Expect(paidCalls()).To(Equal(1))
		h.sim.SetFaults(simulator.Faults{})

		By("restoring it without status, as Velero does by default")
		Consistently(paidCalls, settle).Should(Equal(1))
		restoreWithoutStatus(getRender(vr)(Default))
		Consistently(paidCalls, settle).Should(Equal(1), "the unknown attempt may have created a job: no second one without a confirmation")
		var restored *videov1alpha1.VideoRender
		Eventually(func(g Gomega) {
			restored = getRender(vr)(g)
			g.Expect(stalledWith(&restored.Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue(),
				"the restored object stalls again: %+v", restored.Status.Conditions)
			g.Expect(restored.Annotations).To(HaveKey(videov1alpha1.AnnotationSubmissionUnknown))
		}).Should(Succeed())

		By("a human confirms the resubmission of that attempt: exactly one more paid call")
		attempt := restored.Status.Submission.AttemptID
		Expect(restored.Annotations[videov1alpha1.AnnotationSubmissionUnknown]).To(HavePrefix(attempt + " "))
		patch := client.MergeFrom(restored.DeepCopy())
		restored.Annotations[videov1alpha1.AnnotationConfirmResubmit] = attempt
		Expect(k8sClient.Patch(ctx, restored, patch)).To(Succeed())
		Eventually(paidCalls).Should(Equal(2))
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.JobID).NotTo(BeEmpty())
			g.Expect(got.Annotations).NotTo(HaveKey(videov1alpha1.AnnotationSubmissionUnknown), "the record of the unknown attempt goes with the new job")
		}).Should(Succeed())
		Consistently(paidCalls, settle).Should(Equal(2))
	})
})
