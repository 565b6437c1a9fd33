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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

// Issue 22, cases 6 and 7: the spend guard at the edges of an object's life (docs/architecture.md
// "The record travels with the object", its paragraph on the spend guard), through the real
// reconcilers, a real API server and the simulator.
var _ = Describe("The spend guard at the edges of an object's life", func() {
	var h *harness

	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak()
		}
	})

	// eventuallyGone waits until the object is deleted for good (its finalizer let it go).
	eventuallyGone := func(obj client.Object) {
		GinkgoHelper()
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, key(obj), obj.DeepCopyObject().(client.Object)))
		}, within(30*time.Second)).Should(BeTrue(), "%s is still there", obj.GetName())
	}

	It("charges a render deleted mid-job its job's seconds, so only one render pays before maxRenderSeconds holds", func() {
		// Renders of about 6 s: each is deleted while its job runs.
		h = newHarness(simulator.Options{TimeScale: 0.05})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenderSeconds: ptr.To[int64](1)})
		h.startManager()

		for i := range 3 {
			vr := storyRender(h.ns, fmt.Sprintf("gone-%d", i), fmt.Sprintf("Gone %d", i))
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			Eventually(func(g Gomega) {
				st := getRender(vr)(g).Status.JobStatus
				g.Expect(st.JobID != "" || budgetWaiting(&st)).To(BeTrue(), "submitted or waiting for budget")
			}).Should(Succeed())
			if i == 0 {
				Expect(h.sim.Jobs()).To(HaveLen(1))
				Expect(getRender(vr)(Default).Status.CompletedAt).To(BeNil(), "deleted while its job runs")
			}
			Expect(k8sClient.Delete(ctx, vr)).To(Succeed())
			eventuallyGone(vr)
		}

		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.RenderSeconds).To(BeNumerically(">", 0), "the deleted render's seconds")
			g.Expect(b.Status.Used.Renders).To(Equal(int64(1)))
			g.Expect(b.Status.Reservations).To(BeEmpty())
		}).Should(Succeed())
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "1s", "100ms").Should(Equal(1))
	})

	// Issue 37, case 5: a render deleted with its charge finalizer stripped keeps its reservation
	// until the VideoBudget controller reads its job's end, then is charged what the job was.
	It("holds the room of a render deleted with its finalizer stripped until its job's end is read, then charges the job's seconds", func() {
		// A render of about 18 s at the service.
		h = newHarness(simulator.Options{TimeScale: 0.15})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenderSeconds: ptr.To[int64](100000)})
		h.startManager()
		vr := storyRender(h.ns, "stripped", "Stripped")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		var jobID string
		Eventually(func(g Gomega) {
			cur := getRender(vr)(g)
			g.Expect(cur.Finalizers).To(ContainElement(videov1alpha1.FinalizerCharge), "the record, with the finalizer, is written")
			jobID = cur.Status.JobID
		}, within(30*time.Second)).Should(Succeed())
		Expect(k8sClient.Patch(ctx, vr, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		Expect(k8sClient.Delete(ctx, vr)).To(Succeed())
		eventuallyGone(vr)

		// While the job runs at the service, the budget holds its reservation and has charged no
		// seconds (before: its estimate was charged and its room freed at once).
		holds := func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Reservations).To(ContainElement(HaveField("JobID", jobID)), "the running job's reservation")
			g.Expect(b.Status.Used.RenderSeconds).To(BeZero())
		}
		Eventually(holds, within(10*time.Second)).Should(Succeed(), "the settlement rides with a budget write within a second")
		info, ok := h.sim.Job(jobID)
		Expect(ok).To(BeTrue())
		if time.Until(info.EndsAt) > 3*time.Second {
			Consistently(func(g Gomega) {
				if j, _ := h.sim.Job(jobID); j.Status == "in-progress" {
					holds(g)
				}
			}, "2s", "100ms").Should(Succeed())
		}

		api, err := apiclient.New(testAPIKey, apiclient.Options{BaseURL: h.srv.URL + "/serviceapis"})
		Expect(err).NotTo(HaveOccurred())
		var want int64
		Eventually(func(g Gomega) {
			job, err := api.GetJob(ctx, jobID)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(job.Status().IsCompleted()).To(BeTrue(), "the job ends at the service")
			want, _ = jobCost(job)
		}, within(60*time.Second)).Should(Succeed())
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Reservations).To(BeEmpty())
			g.Expect(b.Status.Used.RenderSeconds).To(Equal(want), "the job's own seconds")
			g.Expect(b.Status.ChargedJobs).To(ContainElement(jobID))
		}, within(60*time.Second)).Should(Succeed())
		Expect(h.sim.Submissions(testAPIKey)).To(Equal(1))
	})

	It("lets 20 renders created at once under maxRenderSeconds pay at most one render beyond it", func() {
		h = newHarness(simulator.Options{TimeScale: 0.02})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenderSeconds: ptr.To[int64](1)})
		h.startManager()
		vrs := h.createRenders("burst", 20)

		// The first render alone reaches 1 s: at most one more may have been paid beside it.
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.RenderSeconds).To(BeNumerically(">=", 1))
			g.Expect(b.Status.Reservations).To(BeEmpty())
			g.Expect(budgetCondition(b.Status.Conditions, videov1alpha1.ConditionExhausted).Reason).
				To(Equal(string(videov1alpha1.ReasonMaxRenderSecondsReached)))
		}, within(30*time.Second)).Should(Succeed())
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "2s", "100ms").Should(BeNumerically("<=", 2))
		expectEachSubmittedAtMostOnce(h, vrs)
		waiting := 0
		for _, vr := range vrs {
			if budgetWaiting(&getRender(vr)(Default).Status.JobStatus) {
				waiting++
			}
		}
		Expect(waiting).To(BeNumerically(">=", 18))
	})

	It("keeps the period's usage when the VideoBudget is deleted and created again", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		spec := videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenders: ptr.To[int64](1)}
		h.createBudget(spec)
		h.startManager()
		first := h.createRenders("first", 1)[0]
		eventuallyReady(first)
		Eventually(func(g Gomega) {
			g.Expect(h.budget(g).Status.Used.Renders).To(Equal(int64(1)))
		}).Should(Succeed())

		// A GitOps replace: the budget goes, with its status, and comes back from Git.
		old := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: videov1alpha1.VideoBudgetName}}
		Expect(k8sClient.Delete(ctx, old)).To(Succeed())
		eventuallyGone(old)
		h.createBudget(spec)
		second := h.createRenders("second", 1)[0]

		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.Renders).To(Equal(int64(1)), "the period's usage survived the budget's replacement")
			g.Expect(budgetWaiting(&getRender(second)(g).Status.JobStatus)).To(BeTrue())
		}).Should(Succeed())
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "2s", "100ms").Should(Equal(1), "still exactly one paid render")
	})

	It("keeps the key out of status, events and logs when job answers and callback bodies echo it", func() {
		// A proxy in front of the service reflects the Authorization header into the text of
		// successful job answers and of the webhooks (callbacks) it sends.
		h = newHarness(simulator.Options{ReflectAuthorization: true, TimeScale: 0.01})
		h.createSecret(testAPIKey)
		h.callbackPoll = 100 * time.Millisecond // callbacks arrive, and running jobs are read too
		h.startManager()

		ok := storyRender(h.ns, "echo-ok", "Echo ok")
		Expect(k8sClient.Create(ctx, ok)).To(Succeed())
		failing := fromYAML(&videov1alpha1.VideoRender{}, h.ns, `
metadata: {name: echo-failed}
spec:
  storyboard:
    videoName: Echo failed
    voiceOver: {enabled: true, aiVoices: [{speaker: NoSuchVoice}]}
    scenes:
      - story: This voice does not exist.
`)
		Expect(k8sClient.Create(ctx, failing)).To(Succeed())
		eventuallyReady(ok)
		Eventually(func(g Gomega) {
			got := getRender(failing)(g)
			g.Expect(got.Status.Failure).NotTo(BeNil())
			// The proxy's note is there, without the key: the answer was redacted, not dropped.
			g.Expect(got.Status.Failure.Message).To(ContainSubstring("Authorization=[REDACTED]"))
		}).Should(Succeed())
		Eventually(func() int { return h.sim.Counters().WebhooksDelivered }).Should(BeNumerically(">=", 2), "callbacks that echo the key arrived")
		Eventually(func() []string { return h.eventReasons(failing.Name) }).Should(ContainElement(string(videov1alpha1.ReasonJobFailed)))
		// AfterEach: the key is in no log line, event or object.
	})
})
