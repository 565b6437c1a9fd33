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
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

// A refused submission consumes nothing (a retry value, the storyboard generation it renders), and
// a failed or never-ending job is submitted again only when a person asks, once per retry value
// (docs/architecture.md "Lifecycle"). Each spec drives the real reconcilers against a real API
// server and the simulated service.
var _ = Describe("Refusals, failures and retries", func() {
	var h *harness
	start := keyedWorld(&h)

	It("a retry answered by a 429 is not lost", func() {
		start(simulator.Options{})
		h.startManager()
		vr := badVoiceRender(h.ns, "retry-429", "Retry 429")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(stalledWith(&getRender(vr)(g).Status.JobStatus, videov1alpha1.ReasonJobFailed)).To(BeTrue())
		}).Should(Succeed())

		h.sim.SetFaults(simulator.Faults{RateLimitShare: 1, RetryAfter: 10 * time.Millisecond, Endpoints: []string{apiclient.EndpointRenderStoryboard}})
		setAnnotation(vr, videov1alpha1.AnnotationRetry, "try-again")
		Eventually(func() int { return h.sim.Counters().Faults["rate_limit"] }).Should(BeNumerically(">=", 1))
		Expect(getRender(vr)(Default).Status.LastHandledRetry).To(BeEmpty(), "a refused attempt consumes nothing")
		h.sim.SetFaults(simulator.Faults{})

		Eventually(func() int { return len(h.jobsNamed("Retry 429")) }).Should(Equal(2), "the retry was submitted once the 429s stopped")
		Eventually(func(g Gomega) {
			g.Expect(getRender(vr)(g).Status.LastHandledRetry).To(Equal("try-again"))
		}).Should(Succeed())
		Consistently(func() int { return len(h.jobsNamed("Retry 429")) }, "500ms").Should(Equal(2))
	})

	It("a storyboardRef render refused by a 429 still renders the new preview", func() {
		start(simulator.Options{})
		h.startManager()
		sb := storyPreview(h.ns, "ref-429", "Ref 429")
		vr := fromYAML(&videov1alpha1.VideoRender{}, h.ns, "metadata: {name: ref-429-render}\nspec: {storyboardRef: {name: ref-429, approval: Latest}}")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue())
			g.Expect(got.Status.StoryboardGeneration).To(Equal(int64(1)))
		}).Should(Succeed())

		By("editing the storyboard while renders are answered 429")
		h.sim.SetFaults(simulator.Faults{RateLimitShare: 1, RetryAfter: 10 * time.Millisecond, Endpoints: []string{apiclient.EndpointRenderStoryboard}})
		Eventually(func() error {
			cur := getStoryboard(sb)(Default)
			cur.Spec.Scenes[0].Story = ptrTo("The second version. It was reviewed again.")
			return k8sClient.Update(ctx, cur)
		}).Should(Succeed())
		Eventually(func() int { return h.sim.Counters().Faults["rate_limit"] }).Should(BeNumerically(">=", 1))
		Expect(getRender(vr)(Default).Status.StoryboardGeneration).To(Equal(int64(1)), "the refused attempt did not claim generation 2")
		h.sim.SetFaults(simulator.Faults{})

		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.StoryboardGeneration).To(Equal(int64(2)))
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		Expect(renderJobs(h.jobsNamed("Ref 429"))).To(Equal(2), "one render per previewed generation")
	})

	It("a 404 on a preview POST backs off and says what the service answered", func() {
		start(simulator.Options{})
		var notFound atomic.Int32
		notFound.Store(3)
		h.wrap = func(c apiclient.Interface) apiclient.Interface {
			return &previewNotFound{Interface: c, left: &notFound}
		}
		h.startManager()
		sb := storyPreview(h.ns, "wrong-path", "Wrong path")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getStoryboard(sb)(g)
			rec := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReconciling)
			g.Expect(rec.Reason).To(Equal(string(videov1alpha1.ReasonUnexpectedResponse)), "%+v", got.Status.Conditions)
			g.Expect(rec.Message).To(ContainSubstring("HTTP 404"))
			g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Status).NotTo(Equal(metav1.ConditionTrue))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			got := getStoryboard(sb)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		Expect(h.eventReasons("wrong-path")).NotTo(ContainElement(string(videov1alpha1.ReasonProjectNotFound)))
	})

	It("confirm-resubmit after a retry resubmits", func() {
		start(simulator.Options{})
		// The first render fails at the service; the manager dies right after the second.
		crashed := h.crashAfterRender(2)
		h.startManager()
		vr := badVoiceRender(h.ns, "retry-confirm", "Retry confirm")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(stalledWith(&getRender(vr)(g).Status.JobStatus, videov1alpha1.ReasonJobFailed)).To(BeTrue())
		}).Should(Succeed())
		setAnnotation(vr, videov1alpha1.AnnotationRetry, "r1")
		Eventually(crashed.Load).Should(BeTrue())
		h.stopManager()
		Expect(h.jobsNamed("Retry confirm")).To(HaveLen(2))

		h.wrap = nil
		h.startManager()
		var attempt string
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue(), "%+v", got.Status.Conditions)
			attempt = got.Status.Submission.AttemptID
			g.Expect(got.Status.Submission.Retry).To(Equal("r1"), "the retry the attempt consumes travels with it")
		}).Should(Succeed())
		setAnnotation(vr, videov1alpha1.AnnotationConfirmResubmit, attempt)
		Eventually(func() int { return len(h.jobsNamed("Retry confirm")) }).Should(Equal(3), "the confirmed attempt is sent again")
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.LastHandledRetry).To(Equal("r1"))
			g.Expect(got.Status.Submission).To(BeNil())
		}).Should(Succeed())
		Consistently(func() int { return len(h.jobsNamed("Retry confirm")) }, "500ms").Should(Equal(3))
	})

	It("a retry value set before the first submission does not pay again after its failure", func() {
		start(simulator.Options{})
		h.startManager()
		vr := fromYAML(&videov1alpha1.VideoRender{}, h.ns, `
metadata:
  name: preset-retry
  annotations: {video.videoops.io/retry: "copied-from-a-template"}
spec:
  storyboard:
    videoName: Preset retry
    voiceOver: {enabled: true, aiVoices: [{speaker: NoSuchVoice}]}
    scenes:
      - story: This voice does not exist.
`)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonJobFailed)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.LastHandledRetry).To(Equal("copied-from-a-template"), "consumed by the first submission")
		}).Should(Succeed())
		Consistently(func() int { return len(h.jobsNamed("Preset retry")) }, "1s").Should(Equal(1))
	})

	It("a job that never ends stalls with JobDeadlineExceeded at the job deadline, and a retry submits anew", func() {
		start(simulator.Options{RenderDuration: 100 * time.Hour}) // 12 minutes here: never, for this spec
		h.jobDeadline = time.Second
		h.startManager()
		vr := storyRender(h.ns, "never-ends", "Never ends")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonJobDeadlineExceeded)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.Failure.Code).To(Equal(codeJobDeadlineExceeded))
			g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message).To(ContainSubstring(videov1alpha1.AnnotationRetry))
			g.Expect(kstatusOf(got)).To(Equal(status.FailedStatus))
		}).Should(Succeed())
		Consistently(func() int { return len(h.jobsNamed("Never ends")) }, "500ms").Should(Equal(1))
		setAnnotation(vr, videov1alpha1.AnnotationRetry, "once-more")
		Eventually(func() int { return len(h.jobsNamed("Never ends")) }).Should(Equal(2))
	})
})

// previewNotFound answers preview submissions with a 404 that is not the document's (a wrong
// base path behind a proxy) while left is positive.
type previewNotFound struct {
	apiclient.Interface
	left *atomic.Int32
}

func (p *previewNotFound) CreateStoryboardPreview(ctx context.Context, body any) (*apiclient.JobCreated, error) {
	if p.left.Add(-1) >= 0 {
		return nil, &apiclient.APIError{Endpoint: apiclient.EndpointCreateStoryboard, StatusCode: 404, Message: "404 page not found"}
	}
	return p.Interface.CreateStoryboardPreview(ctx, body)
}
