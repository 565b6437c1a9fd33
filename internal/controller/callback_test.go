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
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/callback"
	"github.com/videoops/video-operator/internal/simulator"
)

// With the operator's callback URL a job costs two service calls (docs/callbacks.md): a callback
// only wakes the reconcile, whichever replica receives it, and is never trusted for data: the job
// it names is read with the object's key before it is adopted.
var _ = Describe("Callbacks from the service", func() {
	var h *harness
	start := keyedWorld(&h)

	It("costs two service calls per job: the submission and one read after the callback", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.callbackPoll = time.Hour // no polling: only the callback can end the job
		h.startManager()
		vr := storyRender(h.ns, "called-back", "Called back")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		jobs := h.jobsNamed("Called back")
		Expect(jobs).To(HaveLen(1))
		Expect(jobs[0].Webhook).To(HavePrefix(h.callbackSrv.URL + callback.Path))
		Expect(len(jobs[0].Webhook)).To(BeNumerically("<=", 500), "the service's limit on webhook")
		Expect(string(jobs[0].WebhookInput)).To(ContainSubstring(callback.AttemptKey))
		Expect(h.sim.Counters().WebhooksDelivered).To(Equal(1))
		Expect(h.sim.Calls(apiclient.EndpointRenderStoryboard)).To(Equal(1))
		Expect(h.sim.Calls(apiclient.EndpointGetJob)).To(Equal(1))
	})

	It("adopts the job of a submission interrupted by a crash when its callback arrives", func() {
		// Jobs last a few seconds here, so the callback arrives after the restart.
		h = newHarness(simulator.Options{RenderDuration: 30 * time.Minute})
		h.createSecret(testAPIKey)
		h.callbackPoll = time.Hour
		crashed := h.crashAfterRender(1) // the manager dies right after the service accepted the job
		h.startManager()
		vr := storyRender(h.ns, "crash-callback", "Crash callback")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(crashed.Load).Should(BeTrue())
		h.stopManager()
		Expect(getRender(vr)(Default).Status.JobID).To(BeEmpty(), "the crash came before the job id write")

		h.wrap = nil
		h.startManager()
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.Submission).To(BeNil())
		}).Should(Succeed())
		jobs := h.jobsNamed("Crash callback")
		Expect(jobs).To(HaveLen(1), "adopted, not resubmitted")
		Expect(getRender(vr)(Default).Status.JobID).To(Equal(jobs[0].ID))
	})

	It("a callback reaches the leader's reconcile whichever replica receives it", func() {
		start(simulator.Options{})
		h.callbackPoll = time.Hour // no polling: only the callback can end the job
		h.leaderElection = true
		leader := h.startExtraManager(nil)
		Eventually(leader.elected, within(30*time.Second)).Should(BeClosed())
		h.startManager() // a standby replica; the service's callbacks reach this one
		vr := storyRender(h.ns, "any-replica", "Any replica")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.Callback).To(BeNil(), "the leader consumed the callback the standby recorded")
		}).Should(Succeed())
		Expect(h.sim.Counters().WebhooksDelivered).To(Equal(1))
		Expect(h.sim.Calls(apiclient.EndpointRenderStoryboard)).To(Equal(1))
		Expect(h.sim.Calls(apiclient.EndpointGetJob)).To(Equal(1),
			"one read, woken by the callback the standby recorded (the leader polls only hourly here)")
	})

	It("a callback naming a job the service does not know for the object's key is not adopted", func() {
		start(simulator.Options{RenderDuration: 30 * time.Minute}) // 3.6 s: the real callback comes late
		h.callbackPoll = time.Hour
		crashed := h.crashAfterRender(1)
		h.startManager()
		vr := storyRender(h.ns, "forged", "Forged")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(crashed.Load).Should(BeTrue())
		h.stopManager()
		h.wrap = nil
		h.startManager()
		sub := getRender(vr)(Default).Status.Submission
		Expect(sub).NotTo(BeNil())

		By("a signed callback with the proof, naming a job that does not exist")
		signer := callback.NewSigner("", []byte(strings.Repeat("k", 32)))
		body := `{"job_id":"00000000-0000-4000-8000-000000000000","data":{"status":"completed"},"webhookInput":{"` +
			callback.AttemptKey + `":"` + sub.AttemptID + `","` + callback.ProofKey + `":"` + signer.Proof(sub.AttemptID) + `"}}`
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.callbackSrv.URL+callback.Path+signer.Token(sub.AttemptID), strings.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Body.Close()).To(Succeed())
		Expect(resp.StatusCode).To(Equal(http.StatusAccepted))
		Consistently(func(g Gomega) {
			g.Expect(getRender(vr)(g).Status.JobID).NotTo(Equal("00000000-0000-4000-8000-000000000000"))
		}, "1s").Should(Succeed())
		Expect(h.logs.String()).To(ContainSubstring("not adopting it"), "the named job was checked with the object's key")

		By("the service's own callback arriving later")
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
		}, within(30*time.Second)).Should(Succeed())
		jobs := h.jobsNamed("Forged")
		Expect(jobs).To(HaveLen(1))
		Expect(getRender(vr)(Default).Status.JobID).To(Equal(jobs[0].ID))
	})
})
