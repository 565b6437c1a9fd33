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
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

// A render with library music records a clearance code that expires (docs/architecture.md
// "Lifecycle"): the job is read again for a fresh code (also when a code is missing or its expiry
// unreadable), never rendered again, and the finished video stays Ready while a refresh fails.
var _ = Describe("Clearance codes", func() {
	var h *harness
	start := keyedWorld(&h)

	It("records a fresh code after the old one expires", func() {
		h = newHarness(simulator.Options{ClearanceExpiry: 2 * time.Second})
		h.createSecret(testAPIKey)
		h.startManager()
		vr := fromYAML(&videov1alpha1.VideoRender{}, h.ns, `
metadata: {name: clearance}
spec:
  storyboard:
    videoName: Clearance
    backgroundMusic: {enabled: true, autoMusic: true}
    scenes:
      - story: Library music needs a clearance code per upload.
`)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		var first videov1alpha1.Clearance
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.Clearance).NotTo(BeNil())
			first = *got.Status.Clearance
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.Clearance.Code).NotTo(Equal(first.Code))
			g.Expect(got.Status.Clearance.ExpiresAt.Time).To(BeTemporally(">", first.ExpiresAt.Time))
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue())
		}, within(15*time.Second)).Should(Succeed())
		Expect(h.jobsNamed("Clearance")).To(HaveLen(1), "a refresh reads the job again; it never renders again")
	})

	It("a finished video stays Ready through refresh 429s, a removed Secret and a removed storyboard", func() {
		start(simulator.Options{ClearanceExpiry: 2 * time.Second})
		h.startManager()
		withMusic := fromYAML(&videov1alpha1.VideoRender{}, h.ns, `
metadata: {name: stays-ready}
spec:
  storyboard:
    videoName: Stays ready
    backgroundMusic: {enabled: true, autoMusic: true}
    scenes:
      - story: Library music needs a clearance code per upload.
`)
		sb := storyPreview(h.ns, "source", "Source")
		fromRef := fromYAML(&videov1alpha1.VideoRender{}, h.ns, "metadata: {name: from-ref}\nspec: {storyboardRef: {name: source, approval: Latest}}")
		for _, o := range []client.Object{withMusic, sb, fromRef} {
			Expect(k8sClient.Create(ctx, o)).To(Succeed())
		}
		var code string
		Eventually(func(g Gomega) {
			got := getRender(withMusic)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue())
			g.Expect(got.Status.Clearance).NotTo(BeNil())
			code = got.Status.Clearance.Code
			g.Expect(readyFor(&getRender(fromRef)(g).Status.JobStatus, 1)).To(BeTrue())
		}).Should(Succeed())

		By("answering every read with 429 past the code's expiry, removing the Secret and the storyboard")
		h.sim.SetFaults(simulator.Faults{RateLimitShare: 1, RetryAfter: 10 * time.Millisecond, Endpoints: []string{apiclient.EndpointGetJob}})
		Expect(k8sClient.Delete(ctx, getStoryboard(sb)(Default))).To(Succeed())
		Expect(k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: videov1alpha1.DefaultAPIKeySecretName}})).To(Succeed())
		Consistently(func(g Gomega) {
			for _, vr := range []*videov1alpha1.VideoRender{withMusic, fromRef} {
				got := getRender(vr)(g)
				g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%s: %+v", vr.Name, got.Status.Conditions)
				g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted))
				g.Expect(kstatusOf(got)).To(Equal(status.CurrentStatus))
			}
		}, "3s").Should(Succeed())
		Expect(getRender(withMusic)(Default).Status.Clearance.Code).To(Equal(code), "the recorded code is kept meanwhile")
		Eventually(func() []string { return h.eventReasons("stays-ready") }).Should(ContainElement("ClearanceRefreshFailed"), "refresh trouble is evented")

		By("restoring the Secret and the service: a fresh code is recorded")
		h.sim.SetFaults(simulator.Faults{})
		h.createSecret(testAPIKey)
		Eventually(func(g Gomega) {
			got := getRender(withMusic)(g)
			g.Expect(got.Status.Clearance.Code).NotTo(Equal(code))
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue())
		}, within(15*time.Second)).Should(Succeed())
	})

	It("a completed read without a clearance code is read once more, and an unreadable expiry is refreshed later", func() {
		start(simulator.Options{})
		var stripped atomic.Bool
		var reads atomic.Int32
		h.wrap = func(c apiclient.Interface) apiclient.Interface {
			return &jobRewriter{Interface: c, rewrite: func(j *apiclient.Job) {
				if !j.Status().IsCompleted() || j.Data.PlatformClearanceCode == "" {
					return
				}
				reads.Add(1)
				if stripped.CompareAndSwap(false, true) {
					// The completing read carries no code yet.
					j.Data.PlatformClearanceCode, j.Data.PlatformClearanceExpiresAt = "", ""
					return
				}
				j.Data.PlatformClearanceExpiresAt = "next tuesday"
			}}
		}
		h.startManager()
		vr := fromYAML(&videov1alpha1.VideoRender{}, h.ns, `
metadata: {name: late-code}
spec:
  storyboard:
    videoName: Late code
    backgroundMusic: {enabled: true}
    scenes:
      - story: The code arrives on the next status call.
`)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue())
			g.Expect(got.Status.Clearance).NotTo(BeNil(), "the code of the next status call is recorded")
			g.Expect(got.Status.Clearance.Code).To(HavePrefix("PCC-"))
			g.Expect(got.Status.Clearance.ExpiresAt).To(BeNil(), "the expiry could not be read")
		}).Should(Succeed())
		after := reads.Load()
		Eventually(reads.Load, within(10*time.Second)).Should(BeNumerically(">", after), "an unreadable expiry is read again later")
		Expect(getRender(vr)(Default).Status.Clearance.Code).To(HavePrefix("PCC-"), "the code is kept meanwhile")
		Expect(h.jobsNamed("Late code")).To(HaveLen(1))
	})
})
