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
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

// Issue 11, "A call budget per API key that never blocks a worker", through the real reconcilers
// (4 workers per kind), a real API server and the simulated service.
var _ = Describe("The call budget of an API key", func() {
	const tenantBKey = "sk-video-tenant-b-0c8e2f6a91d3"
	var h *harness

	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak(tenantBKey)
		}
	})

	It("never makes another tenant wait behind one tenant's backlog, and keeps each key within its rate", func() {
		h = newHarness(simulator.Options{APIKeys: []string{testAPIKey, tenantBKey}})
		h.createSecret(testAPIKey)
		h.createNamedSecret("tenant-b", tenantBKey)
		h.serviceRate, h.serviceBurst = 4, 1 // one call every quarter second per key
		h.startManager()

		const backlog = 16
		began := time.Now()
		for i := range backlog {
			Expect(k8sClient.Create(ctx, storyRender(h.ns, fmt.Sprintf("a-%02d", i), fmt.Sprintf("A %d", i)))).To(Succeed())
		}
		Eventually(func() int { return h.sim.Submissions(testAPIKey) }).Should(BeNumerically(">=", 1))

		// Tenant B arrives behind tenant A's backlog, in the same queues and workers.
		var bs []*videov1alpha1.VideoRender
		for i := range 2 {
			vr := storyRender(h.ns, fmt.Sprintf("b-%d", i), fmt.Sprintf("B %d", i))
			vr.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "tenant-b", Key: videov1alpha1.DefaultAPIKeySecretKey}
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			bs = append(bs, vr)
		}
		for _, vr := range bs {
			Eventually(func(g Gomega) {
				g.Expect(readyFor(&getRender(vr)(g).Status.JobStatus, 1)).To(BeTrue())
			}, "15s").Should(Succeed())
		}
		elapsed := time.Since(began)
		aSubmitted := h.sim.Submissions(testAPIKey)
		Expect(aSubmitted).To(BeNumerically("<", backlog), "tenant B finished before tenant A's backlog was through")
		// Every call of A (a check, submissions, reads) took a slot: submissions alone cannot
		// outrun the rate.
		Expect(float64(aSubmitted)).To(BeNumerically("<=", 4*elapsed.Seconds()+1),
			"tenant A made %d submissions in %s at 4 calls/s", aSubmitted, elapsed)
		Expect(h.sim.Submissions(tenantBKey)).To(Equal(2))

		// A's backlog drains, each object submitted once.
		Eventually(func() int { return h.sim.Submissions(testAPIKey) }, "60s").Should(Equal(backlog))
		for i := range backlog {
			Expect(h.jobsNamed(fmt.Sprintf("A %d", i))).To(HaveLen(1))
		}
	})

	It("pauses the whole key on a 429 until Retry-After, instead of each object retrying on its own", func() {
		h = newHarness(simulator.Options{Faults: simulator.Faults{RateLimitShare: 1, RetryAfter: 3 * time.Second}})
		h.createSecret(testAPIKey)
		h.startManager()
		var vrs []*videov1alpha1.VideoRender
		for i := range 6 {
			vr := storyRender(h.ns, fmt.Sprintf("storm-%d", i), fmt.Sprintf("Storm %d", i))
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			vrs = append(vrs, vr)
		}
		limited := func() int { return h.sim.Counters().Faults["rate_limit"] }
		Eventually(limited).Should(BeNumerically(">=", 1))
		first := limited()
		// The backoff of one object is 20 ms here: without the pause, six objects would make
		// dozens of calls in two seconds.
		Consistently(limited, "2s", "100ms").Should(Equal(first), "calls made while the key was paused")

		h.sim.SetFaults(simulator.Faults{})
		for _, vr := range vrs {
			eventuallyReady(vr)
			Expect(h.jobsNamed(vr.Spec.Storyboard.VideoName)).To(HaveLen(1))
		}
	})

	It("spaces the reads of a key's running jobs beyond the poll interval when the budget needs it, and says so once", func() {
		h = newHarness(simulator.Options{TimeScale: 0.05}) // renders of about 6 s
		h.createSecret(testAPIKey)
		h.serviceRate, h.serviceBurst = 5, 1
		h.startManager()
		const n = 10
		for i := range n {
			Expect(k8sClient.Create(ctx, storyRender(h.ns, fmt.Sprintf("spaced-%d", i), fmt.Sprintf("Spaced %d", i)))).To(Succeed())
		}
		// 10 running jobs at 5 calls/s, 80% for polls: each read about every 2.5 s, more than the
		// 60 ms poll interval of these specs.
		Eventually(func(g Gomega) []string {
			var list videov1alpha1.VideoRenderList
			g.Expect(k8sClient.List(ctx, &list, client.InNamespace(h.ns))).To(Succeed())
			var msgs []string
			for _, vr := range list.Items {
				if rec := conditionOf(&vr.Status.JobStatus, videov1alpha1.ConditionReconciling); rec.Message != "" {
					msgs = append(msgs, rec.Message)
				}
			}
			return msgs
		}, "20s").Should(ContainElement(ContainSubstring("running jobs share this API key's budget of 5 calls/s")))
		began, reads := time.Now(), h.sim.Calls(apiclient.EndpointGetJob)
		for i := range n {
			eventuallyReady(storyRender(h.ns, fmt.Sprintf("spaced-%d", i), ""))
		}
		elapsed := time.Since(began)
		Expect(float64(h.sim.Calls(apiclient.EndpointGetJob)-reads)).To(BeNumerically("<=", 5*elapsed.Seconds()+1),
			"reads stayed within the key's rate")
	})
})
