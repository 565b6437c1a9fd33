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
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

// Metrics and events follow the status that was written (docs/architecture.md "Never pay
// twice"): a transition counts once, also when the answer to its write was lost, a write that
// failed counts nothing, and no label or event carries a key, a URL or more than the API takes.
var _ = Describe("Metrics and events follow the written status", func() {
	var h *harness
	start := keyedWorld(&h)

	It("counts jobs by phase and service calls by endpoint and code, with no key or URL in a label", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.startManager()
		Expect(k8sClient.Create(ctx, storyRender(h.ns, "measured", "Measured"))).To(Succeed())
		Expect(k8sClient.Create(ctx, storyPreview(h.ns, "measured-preview", "Measured preview"))).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(h.metric("video_operator_jobs", "kind", "VideoRender", "namespace", h.ns, "phase", "Completed")).To(Equal(1.0))
			g.Expect(h.metric("video_operator_jobs", "kind", "VideoStoryboard", "namespace", h.ns, "phase", "Completed")).To(Equal(1.0))
		}).Should(Succeed())
		Expect(h.metric("video_operator_jobs", "kind", "VideoRender", "namespace", h.ns, "phase", "InProgress")).To(Equal(0.0), "the gauge moved, not grew")
		Expect(h.metric("video_operator_service_requests_total", "endpoint", apiclient.EndpointRenderStoryboard, "code", "200")).To(Equal(1.0))
		Expect(h.metric("video_operator_service_requests_total", "endpoint", apiclient.EndpointCreateStoryboard, "code", "200")).To(Equal(1.0))
		Expect(h.metric("video_operator_submissions_total", "kind", "VideoRender", "result", "accepted")).To(Equal(1.0))
		Expect(h.metric("video_operator_jobs_ended_total", "kind", "VideoRender", "result", "completed")).To(Equal(1.0))
		Expect(len(h.series("video_operator_service_request_duration_seconds"))).To(BeNumerically(">=", 3))
		Expect(h.oldestSubmissions()).To(BeEmpty(), "no submission is in flight once both jobs are recorded")

		families, err := h.reg.Gather()
		Expect(err).NotTo(HaveOccurred())
		for _, f := range families {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					Expect(l.GetValue()).NotTo(ContainSubstring(testAPIKey))
					Expect(l.GetValue()).NotTo(ContainSubstring("/"), "no URL or path in %s", f.GetName())
					Expect(len(l.GetValue())).To(BeNumerically("<=", 20), "bounded label %s=%s", l.GetName(), l.GetValue())
				}
			}
		}
	})

	It("metrics and events follow the persisted transition only", func() {
		start(simulator.Options{})
		var failed atomic.Int32
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, _ := patch.Data(obj)
			if strings.Contains(string(data), `"completedAt"`) && failed.Add(1) <= 2 {
				return errInjected
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}
		h.startManager()
		vr := fromYAML(&videov1alpha1.VideoRender{}, h.ns, `
metadata: {name: credits}
spec:
  storyboard:
    videoName: Credits
    scenes:
      - story: One AI image is 2.5 credits.
        background:
          type: image
          aiVisual: {model: flux-schnell, prompt: A lighthouse at dawn}
`)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		Expect(failed.Load()).To(BeNumerically(">", 2), "the completing write failed twice")
		recorded := getRender(vr)(Default).Status.AICreditsUsed
		Expect(recorded).NotTo(BeEmpty())
		// The metrics move once the write that persisted the transition returned, which the
		// cache may show a moment before; then they stay: counted once, not once per try.
		counted := func(g Gomega) {
			g.Expect(fmt.Sprint(h.metric("video_operator_ai_credits_used_total", "kind", "VideoRender"))).To(Equal(recorded))
			g.Expect(h.metric("video_operator_jobs_ended_total", "kind", "VideoRender", "result", "completed")).To(Equal(1.0))
		}
		Eventually(counted).Should(Succeed())
		Consistently(counted, "1s", "100ms").Should(Succeed())
		// A render's completion has no event of its own (docs/architecture.md "Load on the cluster"): the
		// endings metric above is what counts it once.
		Expect(eventNotes(h.ns, "credits", string(videov1alpha1.ReasonCompleted))).To(BeEmpty())
	})

	It("a write that landed although its answer was lost counts its transition once", func() {
		start(simulator.Options{})
		var lost atomic.Bool
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, _ := patch.Data(obj)
			err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			if err == nil && strings.Contains(string(data), `"completedAt"`) && lost.CompareAndSwap(false, true) {
				return apierrors.NewTimeoutError("injected: the answer to the write was lost", 1)
			}
			return err
		}}
		h.startManager()
		vr := storyRender(h.ns, "lost-answer", "Lost answer")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(readyFor(&getRender(vr)(g).Status.JobStatus, 1)).To(BeTrue())
		}).Should(Succeed())
		// The write lands before the interceptor loses its answer: the object can look Ready first.
		Eventually(lost.Load).Should(BeTrue())
		// The endings metric counts the transition (a render's completion has no event:
		// docs/architecture.md "Load on the cluster"), once, and stays at one.
		Eventually(func() float64 {
			return h.metric("video_operator_jobs_ended_total", "kind", "VideoRender", "result", "completed")
		}).Should(Equal(1.0))
		Consistently(func() float64 {
			return h.metric("video_operator_jobs_ended_total", "kind", "VideoRender", "result", "completed")
		}, time.Second).Should(Equal(1.0))
	})

	It("an event whose message is over 1 KiB is bounded, not refused by the events API", func() {
		start(simulator.Options{})
		h.wrap = func(c apiclient.Interface) apiclient.Interface {
			return &jobRewriter{Interface: c, rewrite: func(j *apiclient.Job) {
				if j.Status().IsFailed() {
					j.Data.ErrorMessage = strings.Repeat("€", 4000) // 12 KB
				}
			}}
		}
		h.startManager()
		bad := badVoiceRender(h.ns, "long-event", "Long event")
		Expect(k8sClient.Create(ctx, bad)).To(Succeed())
		Eventually(func(g Gomega) {
			notes := eventNotesG(g, h.ns, "long-event", string(videov1alpha1.ReasonJobFailed))
			g.Expect(notes).NotTo(BeEmpty(), "the JobFailed event")
			for _, n := range notes {
				g.Expect(len(n)).To(BeNumerically("<=", maxEventNote))
				g.Expect(n).To(HavePrefix("Job "))
			}
		}).Should(Succeed())
	})
})
