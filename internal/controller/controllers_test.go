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
	"strings"
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

var _ = Describe("Controllers against the simulated service", func() {
	var h *harness

	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak()
		}
	})

	Context("with a valid key", func() {
		BeforeEach(func() {
			h = newHarness(simulator.Options{})
			h.createSecret(testAPIKey)
			h.startManager()
		})

		It("previews a storyboard (POST /v2/video/storyboard) and records scenes and the previewed generation", func() {
			sb := storyPreview(h.ns, "preview", "Preview one")
			Expect(k8sClient.Create(ctx, sb)).To(Succeed())

			Eventually(func(g Gomega) {
				got := getStoryboard(sb)(g)
				g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "Ready: %+v", got.Status.Conditions)
				g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted))
				g.Expect(got.Status.PreviewedGeneration).To(Equal(got.Generation))
				g.Expect(got.Status.Preview).NotTo(BeNil())
				g.Expect(got.Status.Preview.Scenes).NotTo(BeEmpty())
				g.Expect(got.Status.Preview.Scenes[0].Thumbnail).To(HavePrefix("http"))
				g.Expect(got.Status.Progress).To(HaveValue(Equal(int32(100))))
				g.Expect(kstatusOf(got)).To(Equal(status.CurrentStatus))
			}).Should(Succeed())
			Expect(h.jobsNamed("Preview one")).To(HaveLen(1))
			Expect(h.jobsNamed("Preview one")[0].Kind).To(Equal("preview"))
			Eventually(func() []string { return h.eventReasons("preview") }).Should(ContainElements("Submitted", "Completed"))
		})

		It("renders an inline storyboard and records every output, the durations and the clearance code", func() {
			vr := fromYAML(&videov1alpha1.VideoRender{}, h.ns, `
metadata: {name: with-music}
spec:
  storyboard:
    videoName: With music
    backgroundMusic: {enabled: true, autoMusic: true}
    scenes:
      - story: A render with library music gets a platform clearance code.
`)
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())

			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "Ready: %+v", got.Status.Conditions)
				o := got.Status.Outputs
				g.Expect(o).NotTo(BeNil())
				for _, u := range []string{o.VideoURL, o.VideoShareURL, o.VideoEmbedURL, o.AudioURL, o.Thumbnail, o.SRTFile, o.TXTFile, o.VTTFile} {
					g.Expect(u).To(HavePrefix(h.srv.URL))
				}
				g.Expect(got.Status.VideoDuration).NotTo(BeNil())
				g.Expect(got.Status.EncodingDuration).NotTo(BeNil())
				g.Expect(got.Status.Clearance).NotTo(BeNil())
				g.Expect(got.Status.Clearance.Code).NotTo(BeEmpty())
				g.Expect(got.Status.Clearance.ExpiresAt).NotTo(BeNil())
				g.Expect(got.Status.JobGeneration).To(Equal(got.Generation))
			}).Should(Succeed())
			jobs := h.jobsNamed("With music")
			Expect(jobs).To(HaveLen(1))
			Expect(jobs[0].ClearanceCode).To(Equal(getRender(vr)(Default).Status.Clearance.Code))
		})

		It("renders a stored project (POST /v2/projects/{projectid}/render) and stalls on an unknown one", func() {
			project := simulator.DefaultProjects()[1].ID
			ok := fromYAML(&videov1alpha1.VideoRender{}, h.ns, "metadata: {name: project}\nspec: {projectId: "+project+"}")
			missing := fromYAML(&videov1alpha1.VideoRender{}, h.ns, "metadata: {name: missing}\nspec: {projectId: no-such-project}")
			Expect(k8sClient.Create(ctx, ok)).To(Succeed())
			Expect(k8sClient.Create(ctx, missing)).To(Succeed())

			Eventually(func(g Gomega) {
				got := getRender(ok)(g)
				g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
				g.Expect(got.Status.Outputs.VideoURL).NotTo(BeEmpty())
			}).Should(Succeed())
			Eventually(func(g Gomega) {
				got := getRender(missing)(g)
				g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonProjectNotFound)).To(BeTrue(), "%+v", got.Status.Conditions)
				g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseFailed))
				g.Expect(kstatusOf(got)).To(Equal(status.FailedStatus))
			}).Should(Succeed())
		})

		It("waits with ProjectBusy while the project is being rendered (409), then renders it", func() {
			project := simulator.DefaultProjects()[0].ID
			first := fromYAML(&videov1alpha1.VideoRender{}, h.ns, "metadata: {name: first}\nspec: {projectId: "+project+"}")
			Expect(k8sClient.Create(ctx, first)).To(Succeed())
			Eventually(func(g Gomega) { g.Expect(getRender(first)(g).Status.JobID).NotTo(BeEmpty()) }).Should(Succeed())

			second := fromYAML(&videov1alpha1.VideoRender{}, h.ns, "metadata: {name: second}\nspec: {projectId: "+project+"}")
			Expect(k8sClient.Create(ctx, second)).To(Succeed())
			Eventually(func(g Gomega) {
				got := getRender(second)(g)
				g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReconciling).Reason).To(Equal(string(videov1alpha1.ReasonProjectBusy)))
			}).Should(Succeed())
			eventuallyReady(second)
		})

		It("renders a reviewed storyboard only after its preview completed, and again after a new preview", func() {
			vr := fromYAML(&videov1alpha1.VideoRender{}, h.ns, "metadata: {name: reviewed}\nspec: {storyboardRef: {name: review-me, approval: Latest}}")
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReconciling).Reason).To(Equal(string(videov1alpha1.ReasonStoryboardNotFound)))
				g.Expect(kstatusOf(got)).To(Equal(status.InProgressStatus))
			}).Should(Succeed())

			sb := storyPreview(h.ns, "review-me", "Reviewed")
			Expect(k8sClient.Create(ctx, sb)).To(Succeed())
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
				g.Expect(got.Status.StoryboardGeneration).To(Equal(int64(1)))
			}).Should(Succeed())
			jobs := h.jobsNamed("Reviewed")
			Expect(jobs).To(HaveLen(2), "one preview and one render")
			Expect([]string{jobs[0].Kind, jobs[1].Kind}).To(ConsistOf("preview", "render"))
			var previewAt, renderAt time.Time
			for _, j := range jobs {
				if j.Kind == "preview" {
					previewAt = j.EndsAt
				} else {
					renderAt = j.CreatedAt
				}
			}
			Expect(renderAt).NotTo(BeTemporally("<", previewAt), "the render was submitted before the preview ended")

			By("editing the storyboard: a new preview, then a new render of it")
			Eventually(func() error {
				cur := getStoryboard(sb)(Default)
				cur.Spec.Scenes[0].Story = ptrTo("An edited preview. It changed after review.")
				return k8sClient.Update(ctx, cur)
			}).Should(Succeed())
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(got.Status.StoryboardGeneration).To(Equal(int64(2)))
				g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			}).Should(Succeed())
			Consistently(func() int { return len(h.jobsNamed("Reviewed")) }, "500ms").Should(Equal(4))
		})

		It("stalls with the service's code and message when the job fails, and retries on request", func() {
			vr := badVoiceRender(h.ns, "bad-voice", "Bad voice")
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonJobFailed)).To(BeTrue(), "%+v", got.Status.Conditions)
				g.Expect(got.Status.Failure).NotTo(BeNil())
				g.Expect(got.Status.Failure.Code).To(Equal("TEXT_TO_VIDEO_FAILED"))
				g.Expect(got.Status.Failure.Message).NotTo(BeEmpty())
				g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message).To(ContainSubstring("TEXT_TO_VIDEO_FAILED"))
				g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseFailed))
				g.Expect(kstatusOf(got)).To(Equal(status.FailedStatus))
			}).Should(Succeed())
			Eventually(func() []string { return h.eventReasons("bad-voice") }).Should(ContainElement(string(videov1alpha1.ReasonJobFailed)))
			Consistently(func() int { return len(h.jobsNamed("Bad voice")) }, "500ms").Should(Equal(1), "a failed job is not retried by itself")
			By("one JobFailed event, which says once that the job failed (issue 24)")
			jobID := getRender(vr)(Default).Status.JobID
			Consistently(func(g Gomega) {
				notes := eventNotesG(g, h.ns, "bad-voice", string(videov1alpha1.ReasonJobFailed))
				g.Expect(notes).To(HaveLen(1))
				g.Expect(strings.Count(notes[0], "Job "+jobID+" failed")).To(Equal(1), notes[0])
				g.Expect(notes[0]).To(ContainSubstring("TEXT_TO_VIDEO_FAILED"))
			}, "1s").Should(Succeed())

			By("asking for a retry with the annotation")
			Eventually(func() error {
				cur := getRender(vr)(Default)
				cur.Annotations = map[string]string{videov1alpha1.AnnotationRetry: "1"}
				return k8sClient.Update(ctx, cur)
			}).Should(Succeed())
			Eventually(func() int { return len(h.jobsNamed("Bad voice")) }).Should(Equal(2))
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(got.Status.LastHandledRetry).To(Equal("1"))
				g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonJobFailed)).To(BeTrue())
			}).Should(Succeed())
			Consistently(func() int { return len(h.jobsNamed("Bad voice")) }, "500ms").Should(Equal(2), "the same annotation value retries once")
		})

		It("submits exactly one new job when the spec is edited", func() {
			vr := storyRender(h.ns, "edited", "Edited")
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			var firstJob string
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(readyFor(&got.Status.JobStatus, 1)).To(BeTrue())
				firstJob = got.Status.JobID
			}).Should(Succeed())

			editStory(vr, "A second version of the story. With a new ending.")
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(got.Generation).To(Equal(int64(2)))
				g.Expect(readyFor(&got.Status.JobStatus, 2)).To(BeTrue(), "%+v", got.Status.Conditions)
				g.Expect(got.Status.JobGeneration).To(Equal(int64(2)))
				g.Expect(got.Status.JobID).NotTo(Equal(firstJob))
			}).Should(Succeed())
			Consistently(func() int { return len(h.jobsNamed("Edited")) }, "1s").Should(Equal(2))
		})

		It("stalls with BrandNotFound, naming the known brands, before paying for a render", func() {
			vr := fromYAML(&videov1alpha1.VideoRender{}, h.ns, `
metadata: {name: branded}
spec:
  storyboard:
    videoName: Branded
    brandName: No Such Brand
    scenes:
      - story: A render with a brand the account does not have.
`)
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonBrandNotFound)).To(BeTrue(), "%+v", got.Status.Conditions)
				msg := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message
				for _, b := range simulator.DefaultBrands() {
					g.Expect(msg).To(ContainSubstring(b.Name))
				}
			}).Should(Succeed())
			Expect(h.jobsNamed("Branded")).To(BeEmpty())
		})

		It("stalls with InvalidRequest and the field path before paying when a transcript word ends before it starts", func() {
			vr := fromYAML(&videov1alpha1.VideoRender{}, h.ns, `
metadata: {name: backwards}
spec:
  storyboard:
    videoName: Backwards
    scenes:
      - audioUrl: https://example.com/talk.mp3
        audioLanguage: en-US
        transcript:
          - words:
              - {word: Hello, start_time: 0, end_time: 0.4}
              - {word: there, start_time: 0.9, end_time: 0.5}
`)
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonInvalidRequest)).To(BeTrue(), "%+v", got.Status.Conditions)
				msg := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message
				g.Expect(msg).To(ContainSubstring("spec.storyboard.scenes[0].transcript[0].words[1].end_time"))
				g.Expect(msg).To(ContainSubstring("end_time must not be before start_time"))
				g.Expect(got.Status.Submission).To(BeNil())
				g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseFailed))
				g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
			}).Should(Succeed())
			Consistently(func() []simulator.JobInfo { return h.jobsNamed("Backwards") }, "1s").Should(BeEmpty())
		})

		It("stalls a VideoStoryboard whose template layer style breaks a SubtitleStyle rule before previewing", func() {
			sb := fromYAML(&videov1alpha1.VideoStoryboard{}, h.ns, `
metadata: {name: layered}
spec:
  videoName: Layered
  templateId: tpl-1
  scenes:
    - templateOverride:
        layers:
          - - layerId: title
              style: {fontUrl: https://example.com/f.ttf}
`)
			Expect(k8sClient.Create(ctx, sb)).To(Succeed())
			Eventually(func(g Gomega) {
				got := getStoryboard(sb)(g)
				g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonInvalidRequest)).To(BeTrue(), "%+v", got.Status.Conditions)
				msg := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message
				g.Expect(msg).To(ContainSubstring("spec.scenes[0].templateOverride.layers[0][0].style.fontFamily"))
			}).Should(Succeed())
			Expect(h.jobsNamed("Layered")).To(BeEmpty())
		})

		It("warns that animatePPT is ignored", func() {
			vr := fromYAML(&videov1alpha1.VideoRender{}, h.ns, `
metadata: {name: deck}
spec:
  storyboard:
    videoName: Deck
    scenes:
      - pptUrl: https://example.com/deck.pptx
        animatePPT: true
`)
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			Eventually(func() []string { return h.eventReasons("deck") }).Should(ContainElement("AnimatePPTIgnored"))
		})
	})

	Context("with slow previews", func() {
		BeforeEach(func() {
			h = newHarness(simulator.Options{PreviewDuration: 30 * time.Minute}) // 3.6 s here
			h.createSecret(testAPIKey)
			h.startManager()
		})

		It("reports a running job as InProgress and a reference render as WaitingForPreview until the preview completes", func() {
			sb := storyPreview(h.ns, "slow", "Slow preview")
			vr := fromYAML(&videov1alpha1.VideoRender{}, h.ns, "metadata: {name: after-slow}\nspec: {storyboardRef: {name: slow, approval: Latest}}")
			Expect(k8sClient.Create(ctx, sb)).To(Succeed())
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())

			Eventually(func(g Gomega) {
				got := getStoryboard(sb)(g)
				g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseInProgress))
				g.Expect(got.Status.JobID).NotTo(BeEmpty())
				g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReconciling).Reason).To(Equal(string(videov1alpha1.ReasonInProgress)))
				g.Expect(kstatusOf(got)).To(Equal(status.InProgressStatus))

				render := getRender(vr)(g)
				g.Expect(conditionOf(&render.Status.JobStatus, videov1alpha1.ConditionReconciling).Reason).To(Equal(string(videov1alpha1.ReasonWaitingForPreview)))
				g.Expect(render.Status.Phase).To(Equal(videov1alpha1.PhasePending))
				g.Expect(kstatusOf(render)).To(Equal(status.InProgressStatus))
			}).Should(Succeed())
			Expect(h.jobsNamed("Slow preview")).To(HaveLen(1), "nothing rendered before the preview completed")

			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
				g.Expect(kstatusOf(got)).To(Equal(status.CurrentStatus))
			}, within(30*time.Second)).Should(Succeed())
		})
	})

	Context("credentials", func() {
		BeforeEach(func() {
			h = newHarness(simulator.Options{})
			h.startManager()
		})

		It("stalls while the Secret or its key is missing and resumes as soon as it is fixed", func() {
			vr := storyRender(h.ns, "needs-key", "Needs key")
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonSecretNotFound)).To(BeTrue(), "%+v", got.Status.Conditions)
				g.Expect(kstatusOf(got)).To(Equal(status.FailedStatus))
				// Nothing was submitted: the phase says Pending, not blank (issue 24).
				g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhasePending))
			}).Should(Succeed())

			By("creating the Secret without the expected key")
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: videov1alpha1.DefaultAPIKeySecretName},
				StringData: map[string]string{"wrong": testAPIKey}}
			Expect(k8sClient.Create(ctx, s)).To(Succeed())
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonSecretKeyMissing)).To(BeTrue(), "%+v", got.Status.Conditions)
				g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message).To(ContainSubstring(videov1alpha1.DefaultAPIKeySecretKey))
			}).Should(Succeed())

			By("adding the key: the Secret watch resumes the work at once")
			s.StringData = map[string]string{videov1alpha1.DefaultAPIKeySecretKey: "  " + testAPIKey + "\n"}
			Expect(k8sClient.Update(ctx, s)).To(Succeed())
			eventuallyReady(vr)
		})

		It("stalls with Unauthorized on a rejected key until the Secret changes", func() {
			s := h.createSecret("sk-video-wrong-key-000000")
			vr := storyRender(h.ns, "wrong-key", "Wrong key")
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonUnauthorized)).To(BeTrue(), "%+v", got.Status.Conditions)
			}).Should(Succeed())
			calls := h.sim.Calls(apiclient.EndpointRenderStoryboard)
			Consistently(func() int { return h.sim.Calls(apiclient.EndpointRenderStoryboard) }, "500ms").Should(Equal(calls),
				"a rejected key is not tried again until the Secret changes")

			s.StringData = map[string]string{videov1alpha1.DefaultAPIKeySecretKey: testAPIKey}
			Expect(k8sClient.Update(ctx, s)).To(Succeed())
			eventuallyReady(vr)
			Expect(h.jobsNamed("Wrong key")).To(HaveLen(1))
		})
	})

	Context("when the service misbehaves", func() {
		It("survives 429 and 500 storms (500s taken as refused by opt-in): every job completes, each submitted once", func() {
			h = newHarness(simulator.Options{Faults: simulator.Faults{
				RateLimitShare: 0.3, RetryAfter: 10 * time.Millisecond, ServerErrorShare: 0.3,
			}})
			h.createSecret(testAPIKey)
			// The simulator's 500s replace the work, so resubmitting after one is safe here; by
			// default a 500 on a submission is an unknown outcome (see neverpaytwice_test.go).
			h.internalErrorIsRefusal = true
			h.startManager()
			names := []string{"Storm a", "Storm b", "Storm c", "Storm d", "Storm e"}
			for i, n := range names {
				Expect(k8sClient.Create(ctx, storyRender(h.ns, "storm-"+string(rune('a'+i)), n))).To(Succeed())
			}
			Expect(k8sClient.Create(ctx, storyPreview(h.ns, "storm-preview", "Storm preview"))).To(Succeed())

			Eventually(func(g Gomega) {
				var renders videov1alpha1.VideoRenderList
				g.Expect(k8sClient.List(ctx, &renders, client.InNamespace(h.ns))).To(Succeed())
				g.Expect(renders.Items).To(HaveLen(len(names)))
				for _, r := range renders.Items {
					g.Expect(readyFor(&r.Status.JobStatus, r.Generation)).To(BeTrue(), "%s: %+v", r.Name, r.Status.Conditions)
				}
				var sb videov1alpha1.VideoStoryboard
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: "storm-preview"}, &sb)).To(Succeed())
				g.Expect(readyFor(&sb.Status.JobStatus, sb.Generation)).To(BeTrue(), "%+v", sb.Status.Conditions)
			}, within(60*time.Second)).Should(Succeed())
			c := h.sim.Counters()
			Expect(c.Faults["rate_limit"]).To(BeNumerically(">", 0), "the storm happened")
			Expect(c.Faults["server_error"]).To(BeNumerically(">", 0), "the storm happened")
			for _, n := range append(names, "Storm preview") {
				Expect(h.jobsNamed(n)).To(HaveLen(1), n)
			}
		})
	})
})
