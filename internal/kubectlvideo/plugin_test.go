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

package kubectlvideo

import (
	"bytes"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

var _ = Describe("kubectl video", func() {
	Describe("review, approve and download, against the running controllers", Ordered, func() {
		var vsb *videov1alpha1.VideoStoryboard

		BeforeAll(func() {
			vsb = readyStoryboard("meet", "Meet video-operator")
		})

		It("prints the preview in the terminal: every scene with its thumbnail and narration, and no render yet", func() {
			r := kubectlVideo(liveNS, "", "preview", "vsb/meet")
			Expect(r.err).NotTo(HaveOccurred())
			for i, sc := range vsb.Status.Preview.Scenes {
				Expect(r.out).To(ContainSubstring("Scene %d  %s", i+1, sc.Thumbnail))
				Expect(sc.Story).NotTo(BeEmpty())
				Expect(r.out).To(ContainSubstring(wrap(sc.Story, 96)[0]))
			}
			Expect(r.out).To(ContainSubstring("Render parameters:"))
			Expect(r.out).To(ContainSubstring("No VideoRender refers to it yet"))
		})

		It("writes a self-contained HTML contact sheet with the simulator's thumbnails embedded", func() {
			file := filepath.Join(GinkgoT().TempDir(), "meet.html")
			r := kubectlVideo(liveNS, "", "preview", "vsb/meet", "-o", "html", file)
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.out).To(ContainSubstring("3 scenes, 3 thumbnails embedded"))
			page, err := os.ReadFile(file)
			Expect(err).NotTo(HaveOccurred())
			Expect(strings.Count(string(page), `class="scene-card"`)).To(Equal(3))
			Expect(strings.Count(string(page), `src="data:image/jpeg;base64,`)).To(Equal(3))
			Expect(string(page)).NotTo(ContainSubstring(simSrv.URL), "nothing is loaded from the service when the page is opened")
			Expect(string(page)).To(ContainSubstring("Review the storyboard the service designed"))
			Expect(string(page)).To(ContainSubstring("<code>kubectl video render vsb/meet -n "+liveNS+"</code>"),
				"the command it suggests works from any namespace")
		})

		It("opens the contact sheet with --open: a file handed to the browser", func() {
			var opened string
			var out bytes.Buffer
			cmd := NewCommand(strings.NewReader(""), &out, GinkgoWriter, Overrides{Client: k8sClient, Namespace: liveNS,
				Open: func(p string) error { opened = p; return nil }})
			cmd.SetArgs([]string{"preview", "vsb/meet", "--open"})
			Expect(cmd.ExecuteContext(ctx)).To(Succeed())
			Expect(opened).To(BeAnExistingFile())
			DeferCleanup(os.Remove, opened)
			Expect(filepath.IsAbs(opened)).To(BeTrue())
			Expect(out.String()).To(ContainSubstring("to " + opened))
			page, err := os.ReadFile(opened)
			Expect(err).NotTo(HaveOccurred())
			Expect(strings.Count(string(page), `class="scene-card"`)).To(Equal(3))
		})

		It("renders it after confirmation, and creates nothing when the answer is no", func() {
			r := kubectlVideo(liveNS, "n\n", "render", "vsb/meet")
			Expect(r.err).To(MatchError(ContainSubstring("not confirmed: nothing was created")))
			Expect(r.out).To(ContainSubstring("a paid render of storyboard vsb/meet"))
			Expect(r.out).To(ContainSubstring("Scenes:"))
			Consistently(func() error {
				return k8sClient.Get(ctx, client.ObjectKey{Namespace: liveNS, Name: "meet"}, &videov1alpha1.VideoRender{})
			}, "300ms").Should(MatchError(ContainSubstring("not found")))

			r = kubectlVideo(liveNS, "y\n", "render", "vsb/meet")
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.out).To(ContainSubstring("Created vr/meet"))
			Eventually(func(g Gomega) {
				vr := getRenderNamed(liveNS, "meet")(g)
				g.Expect(vr.Spec.StoryboardRef).To(Equal(&videov1alpha1.StoryboardReference{Name: "meet", ApprovedDigest: vsb.Status.Preview.Digest}),
					"render pins the approval to the preview shown")
				g.Expect(vr.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted), "%+v", vr.Status.Conditions)
				g.Expect(vr.Status.StoryboardGeneration).To(Equal(vsb.Generation))
			}).Should(Succeed())

			By("warning that a second render of the same storyboard pays again")
			r = kubectlVideo(liveNS, "n\n", "render", "vsb/meet", "--name", "meet-again")
			Expect(r.out).To(ContainSubstring("WARNING: vsb/meet is already rendered by vr/meet (Completed"))
			Expect(r.err).To(HaveOccurred())

			By("refusing a name that is taken")
			r = kubectlVideo(liveNS, "", "render", "vsb/meet", "--yes")
			Expect(r.err).To(MatchError(ContainSubstring(`VideoRender "meet" already exists`)))
		})

		It("prints the VideoRender for a GitOps repository with --dry-run, and creates nothing", func() {
			r := kubectlVideo(liveNS, "", "render", "vsb/meet", "--dry-run", "--name", "meet-gitops")
			Expect(r.err).NotTo(HaveOccurred())
			var vr videov1alpha1.VideoRender
			Expect(yaml.UnmarshalStrict([]byte(r.out), &vr)).To(Succeed())
			Expect(r.out).NotTo(ContainSubstring("status:"), "a manifest for a repository has no status")
			Expect(r.out).NotTo(ContainSubstring("creationTimestamp"))
			Expect(vr.APIVersion).To(Equal("video.videoops.io/v1alpha1"))
			Expect(vr.Kind).To(Equal("VideoRender"))
			Expect(vr.Name).To(Equal("meet-gitops"))
			Expect(vr.Spec.StoryboardRef.Name).To(Equal("meet"))
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: liveNS, Name: "meet-gitops"}, &videov1alpha1.VideoRender{})
			Expect(err).To(MatchError(ContainSubstring("not found")))
			By("and the API server accepts what it printed")
			vr.Namespace = liveNS
			Expect(k8sClient.Create(ctx, &vr, client.DryRunAll)).To(Succeed())
		})

		It("shows the render's status on one screen: phase, conditions, job, outputs, storyboard and events", func() {
			vr := getRenderNamed(liveNS, "meet")(Default)
			r := kubectlVideo(liveNS, "", "status", "vr/meet")
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.out).To(ContainSubstring("VideoRender " + liveNS + "/meet"))
			Expect(r.out).To(MatchRegexp(`Phase:\s+Completed`))
			Expect(r.out).To(MatchRegexp(`Ready\s+True\s+Completed`))
			Expect(r.out).To(ContainSubstring("Job:          " + vr.Status.JobID))
			Expect(r.out).To(ContainSubstring("video       " + vr.Status.Outputs.VideoURL))
			Expect(r.out).To(MatchRegexp(`Storyboard:\s+vsb/meet \(phase Completed, generation 1, previewed 1, rendered 1\)`))
			// Events are recorded asynchronously, after the status.
			Eventually(func(g Gomega) {
				g.Expect(kubectlVideo(liveNS, "", "status", "vr/meet").out).To(MatchRegexp(`Normal\s+Submitted\s+Submitted job ` + vr.Status.JobID))
			}).Should(Succeed())

			r = kubectlVideo(liveNS, "", "status", "vsb", "meet")
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.out).To(MatchRegexp(`Rendered by:\s+vr/meet \(Completed, renders storyboard generation 1\)`))

			r = kubectlVideo(liveNS, "", "preview", "vsb/meet")
			Expect(r.out).To(ContainSubstring("Rendered by: vr/meet (Completed"))

			r = kubectlVideo(liveNS, "", "status")
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.out).To(MatchRegexp(`vsb/meet\s+Completed\s+100%\s+Completed`))
			Expect(r.out).To(MatchRegexp(`vr/meet\s+Completed\s+100%\s+Completed`))
		})

		It("lists the outputs and downloads the files into the directory, and only there", func() {
			vr := getRenderNamed(liveNS, "meet")(Default)
			dir := filepath.Join(GinkgoT().TempDir(), "out")
			r := kubectlVideo(liveNS, "", "outputs", "vr/meet", "--download", dir)
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.out).To(MatchRegexp(`video\s+` + vr.Status.Outputs.VideoURL))
			Expect(r.out).To(MatchRegexp(`share\s+` + vr.Status.Outputs.VideoShareURL))
			entries, err := os.ReadDir(dir)
			Expect(err).NotTo(HaveOccurred())
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			Expect(names).To(ConsistOf("video.mp4", "audio.mp3", "thumbnail.jpg", "captions.srt", "captions.vtt", "transcript.txt"))
			transcript, err := os.ReadFile(filepath.Join(dir, "transcript.txt"))
			Expect(err).NotTo(HaveOccurred())
			Expect(string(transcript)).To(ContainSubstring("Declare a video in YAML"))
			thumb, err := os.ReadFile(filepath.Join(dir, "thumbnail.jpg"))
			Expect(err).NotTo(HaveOccurred())
			_, err = jpeg.Decode(bytes.NewReader(thumb))
			Expect(err).NotTo(HaveOccurred())
		})
	})

	Describe("retry and confirm-resubmit, against the running controllers", func() {
		It("retries a failed render with --force when its spec caused it: one new job, and refuses a render that has not failed", func() {
			vr := fromYAML(&videov1alpha1.VideoRender{}, liveNS, `
metadata: {name: bad-voice}
spec:
  storyboard:
    videoName: Bad voice
    voiceOver: {enabled: true, aiVoices: [{speaker: NoSuchVoice}]}
    scenes:
      - story: This voice does not exist.
`)
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			var firstJob string
			Eventually(func(g Gomega) {
				got := getRenderNamed(liveNS, "bad-voice")(g)
				g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseFailed))
				g.Expect(got.Status.Failure).NotTo(BeNil())
				firstJob = got.Status.JobID
			}).Should(Succeed())
			r := kubectlVideo(liveNS, "", "status", "vr/bad-voice")
			Expect(r.out).To(ContainSubstring("Failure:      TEXT_TO_VIDEO_FAILED"))
			Expect(r.out).To(MatchRegexp(`Stalled\s+True\s+JobFailed`))

			By("refusing to pay again for an unknown voice unless --force")
			r = kubectlVideo(liveNS, "", "retry", "vr/bad-voice")
			Expect(r.err).To(MatchError(ContainSubstring(`Invalid voice speaker "NoSuchVoice"`)))
			Expect(r.err).To(MatchError(ContainSubstring("would be paid for and fail the same way")))
			Expect(getRenderNamed(liveNS, "bad-voice")(Default).Annotations).NotTo(HaveKey(videov1alpha1.AnnotationRetry))

			r = kubectlVideo(liveNS, "", "retry", "vr/bad-voice", "--force")
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.out).To(ContainSubstring("Asked for a retry of vr/bad-voice"))
			got := getRenderNamed(liveNS, "bad-voice")(Default)
			value := got.Annotations[videov1alpha1.AnnotationRetry]
			Expect(value).NotTo(BeEmpty())
			Eventually(func(g Gomega) {
				got := getRenderNamed(liveNS, "bad-voice")(g)
				g.Expect(got.Status.LastHandledRetry).To(Equal(value))
				g.Expect(got.Status.JobID).NotTo(Equal(firstJob), "a new job was submitted")
				g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseFailed))
			}).Should(Succeed())

			r = kubectlVideo(liveNS, "", "retry", "vr/meet")
			Expect(r.err).To(MatchError(ContainSubstring("vr/meet has not failed (phase Completed, reason Completed): nothing to retry")))
		})

		It("confirms the resubmission of an unknown outcome, after showing its window, and the render then completes", func() {
			sim.SetFaults(simulator.Faults{ServerErrorShare: 1, Endpoints: []string{apiclient.EndpointRenderStoryboard}})
			DeferCleanup(func() { sim.SetFaults(simulator.Faults{}) })
			vr := fromYAML(&videov1alpha1.VideoRender{}, liveNS, `
metadata: {name: five-hundred}
spec:
  storyboard:
    videoName: Five hundred
    scenes:
      - story: The service answers 500 to this submission.
`)
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			var attempt, window string
			Eventually(func(g Gomega) {
				got := getRenderNamed(liveNS, "five-hundred")(g)
				c := meta.FindStatusCondition(got.Status.Conditions, string(videov1alpha1.ConditionStalled))
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Reason).To(Equal(string(videov1alpha1.ReasonSubmissionUnknown)))
				g.Expect(got.Status.Submission).NotTo(BeNil())
				attempt = got.Status.Submission.AttemptID
				g.Expect(got.Status.Submission.Deadline).NotTo(BeNil(), "the controller records the end of the attempt's window")
				window = got.Status.Submission.StartedAt.UTC().Format(time.RFC3339) + " to " + got.Status.Submission.Deadline.UTC().Format(time.RFC3339)
				g.Expect(c.Message).To(ContainSubstring("sent from " + window + ")"))
			}).Should(Succeed())
			sim.SetFaults(simulator.Faults{})

			r := kubectlVideo(liveNS, "", "retry", "vr/five-hundred")
			Expect(r.err).To(MatchError(ContainSubstring("use kubectl video confirm-resubmit vr/five-hundred")))

			r = kubectlVideo(liveNS, "", "status", "vr/five-hundred")
			Expect(r.out).To(ContainSubstring("OUTCOME UNKNOWN: attempt " + attempt))
			Expect(r.out).To(MatchRegexp(`window:\s+\S+Z to \S+Z`))

			r = kubectlVideo(liveNS, "no\n", "confirm-resubmit", "vr/five-hundred")
			Expect(r.err).To(MatchError(ContainSubstring("not confirmed")))
			Expect(getRenderNamed(liveNS, "five-hundred")(Default).Annotations).NotTo(HaveKey(videov1alpha1.AnnotationConfirmResubmit))

			r = kubectlVideo(liveNS, "y\n", "confirm-resubmit", "vr/five-hundred")
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.out).To(ContainSubstring("Attempt:    " + attempt))
			Expect(r.out).To(ContainSubstring("Window:     " + window))
			Expect(r.out).To(ContainSubstring("pays twice"))
			Expect(getRenderNamed(liveNS, "five-hundred")(Default).Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationConfirmResubmit, attempt))
			Eventually(func(g Gomega) {
				got := getRenderNamed(liveNS, "five-hundred")(g)
				g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted), "%+v", got.Status.Conditions)
			}, 30*time.Second).Should(Succeed())

			r = kubectlVideo(liveNS, "", "confirm-resubmit", "vr/five-hundred", "--yes")
			Expect(r.err).To(MatchError(ContainSubstring("vr/five-hundred is not in SubmissionUnknown (phase Completed, reason Completed)")))
		})
	})

	Describe("bad input, and states written directly, in namespaces no manager watches", func() {
		var ns string
		BeforeEach(func() { ns = newNamespace("static-") })

		DescribeTable("gets a clear error",
			func(args []string, want string) {
				r := kubectlVideo(ns, "", args...)
				Expect(r.err).To(MatchError(ContainSubstring(want)))
			},
			Entry("a kind that is not a video", []string{"status", "pod/x"}, `unknown kind "pod": kubectl video works with videostoryboard (vsb), videorender (vr) and videobudget (vb)`),
			Entry("no name", []string{"status", "vr/"}, "names no object"),
			Entry("a missing object", []string{"status", "vr/missing"}, `VideoRender "missing" not found in namespace`),
			Entry("a missing storyboard", []string{"preview", "videostoryboard/missing"}, `VideoStoryboard "missing" not found in namespace`),
			Entry("preview of a render", []string{"preview", "vr/x"}, "kubectl video preview works on a VideoStoryboard (vsb/NAME), not on vr/x"),
			Entry("render of a render", []string{"render", "vr/x"}, "kubectl video render works on a VideoStoryboard"),
			Entry("outputs of a storyboard", []string{"outputs", "vsb/x"}, "kubectl video outputs works on a VideoRender"),
			Entry("an unknown output format", []string{"preview", "vsb/x", "-o", "pdf"}, `unknown output "pdf"`),
		)

		It("refuses to preview or render a storyboard whose preview is not complete", func() {
			vsb := threeScenes(ns, "running", "Running")
			Expect(k8sClient.Create(ctx, vsb)).To(Succeed())
			vsb.Status.Phase = videov1alpha1.PhaseInProgress
			vsb.Status.Progress = ptr.To[int32](40)
			setStatus(vsb)
			for _, args := range [][]string{{"preview", "vsb/running"}, {"preview", "vsb/running", "-o", "html"}, {"render", "vsb/running", "--yes"}} {
				r := kubectlVideo(ns, "", args...)
				Expect(r.err).To(MatchError("the preview of vsb/running is not complete yet (phase InProgress, progress 40%): try again when its phase is Completed"), "%v", args)
			}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "running"}, &videov1alpha1.VideoRender{})).NotTo(Succeed())

			By("a preview of an older generation is not what would be rendered")
			vsb.Status.Phase = videov1alpha1.PhaseCompleted
			vsb.Status.PreviewedGeneration = 1
			vsb.Status.Preview = &videov1alpha1.StoryboardPreview{Scenes: []videov1alpha1.PreviewScene{{Story: "old", Thumbnail: "http://127.0.0.1:1/x.jpg"}}}
			setStatus(vsb)
			Eventually(func() error {
				cur := &videov1alpha1.VideoStoryboard{}
				if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(vsb), cur); err != nil {
					return err
				}
				cur.Spec.VideoName = "Running edited"
				return k8sClient.Update(ctx, cur)
			}).Should(Succeed())
			r := kubectlVideo(ns, "", "render", "vsb/running", "--yes")
			Expect(r.err).To(MatchError(ContainSubstring("the preview of vsb/running is of generation 1, but the spec is at generation 2")))
		})

		It("refuses outputs of a render without outputs, and confirm-resubmit of a render not in SubmissionUnknown", func() {
			vr := fromYAML(&videov1alpha1.VideoRender{}, ns, `
metadata: {name: pending}
spec:
  projectId: p-1
`)
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			vr.Status.Phase = videov1alpha1.PhaseInProgress
			vr.Status.Conditions = []metav1.Condition{{Type: string(videov1alpha1.ConditionReconciling), Status: metav1.ConditionTrue,
				Reason: string(videov1alpha1.ReasonInProgress), Message: "Rendering", LastTransitionTime: metav1.Now()}}
			setStatus(vr)
			r := kubectlVideo(ns, "", "outputs", "vr/pending")
			Expect(r.err).To(MatchError("vr/pending has no outputs yet (phase InProgress, progress -): see kubectl video status vr/pending -n " + ns))
			r = kubectlVideo(ns, "y\n", "confirm-resubmit", "vr/pending")
			Expect(r.err).To(MatchError("vr/pending is not in SubmissionUnknown (phase InProgress, reason InProgress): there is no submission to confirm"))
			r = kubectlVideo(ns, "", "retry", "vr/pending")
			Expect(r.err).To(MatchError(ContainSubstring("vr/pending has not failed")))
			Expect(getRenderNamed(ns, "pending")(Default).Annotations).To(BeEmpty(), "no refused command wrote anything")
		})

		It("shows a submission in flight with its window, and a clearance code with its expiry", func() {
			vr := fromYAML(&videov1alpha1.VideoRender{}, ns, `
metadata: {name: in-flight}
spec:
  storyboardRef: {name: not-there}
`)
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			started := metav1.NewTime(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC))
			expires := metav1.NewTime(time.Now().Add(49 * time.Hour))
			vr.Status.Phase = videov1alpha1.PhaseSubmitting
			deadline := metav1.NewTime(started.Add(50 * time.Second))
			vr.Status.Submission = &videov1alpha1.Submission{Generation: 1, AttemptID: "attempt-42", StartedAt: started, Deadline: &deadline}
			vr.Status.Clearance = &videov1alpha1.Clearance{Code: "CLR-123", ExpiresAt: &expires}
			vr.Status.Progress = ptr.To[int32](0)
			setStatus(vr)
			r := kubectlVideo(ns, "", "status", "vr/in-flight")
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.out).To(ContainSubstring("Submission:   in flight: attempt attempt-42, generation 1"))
			Expect(r.out).To(MatchRegexp(`window:\s+2026-11-20T10:00:00Z to 2026-11-20T10:00:50Z`), "from startedAt to the deadline the controller recorded")
			Expect(r.out).NotTo(ContainSubstring("confirm-resubmit"), "a submission in flight is not for a human to resolve")
			Expect(r.out).To(MatchRegexp(`note:\s+past its window by \S+ and no outcome recorded: is the manager running\?`))
			Expect(r.out).To(MatchRegexp(`Clearance:\s+CLR-123 \(expires \S+Z, in (2d|4[89]h)\)`))
			Expect(r.out).To(ContainSubstring("Storyboard:   vsb/not-there: VideoStoryboard \"not-there\" not found"))
			Expect(r.out).To(ContainSubstring("Conditions:   none yet"))
			Expect(r.out).To(ContainSubstring("Events:       none"))

			r = kubectlVideo(ns, "", "confirm-resubmit", "vr/in-flight", "--yes")
			Expect(r.err).To(MatchError(ContainSubstring("is not in SubmissionUnknown (phase Submitting")))

			By("within its window a submission in flight is just in flight")
			vr.Status.Submission.StartedAt = metav1.Now()
			vr.Status.Submission.Deadline = ptr.To(metav1.NewTime(time.Now().Add(time.Hour)))
			setStatus(vr)
			r = kubectlVideo(ns, "", "status", "vr/in-flight")
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.out).To(ContainSubstring("Submission:   in flight: attempt attempt-42"))
			Expect(r.out).NotTo(ContainSubstring("note:"))

			By("a submission recorded without its deadline: the window's end is not guessed")
			vr.Status.Submission.StartedAt = started
			vr.Status.Submission.Deadline = nil
			setStatus(vr)
			r = kubectlVideo(ns, "", "status", "vr/in-flight")
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.out).To(MatchRegexp(`window:\s+from 2026-11-20T10:00:00Z on \(the controller recorded no end`))
		})

		It("links a thumbnail it cannot fetch instead of embedding it, and says so", func() {
			vsb := threeScenes(ns, "offline", "Offline")
			Expect(k8sClient.Create(ctx, vsb)).To(Succeed())
			vsb.Status.Phase = videov1alpha1.PhaseCompleted
			vsb.Status.PreviewedGeneration = 1
			vsb.Status.Preview = &videov1alpha1.StoryboardPreview{Scenes: []videov1alpha1.PreviewScene{
				{Story: "Gone <b>bold</b>", Thumbnail: simSrv.URL + "/files/no-such-job/scene-1.jpg"},
			}}
			setStatus(vsb)
			file := filepath.Join(GinkgoT().TempDir(), "offline.html")
			r := kubectlVideo(ns, "", "preview", "vsb/offline", "-o", "html", file)
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.errOut).To(ContainSubstring("warning: scene 1: thumbnail not embedded (HTTP 404): linked instead"))
			page, err := os.ReadFile(file)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(page)).To(ContainSubstring(`<a href="` + simSrv.URL + `/files/no-such-job/scene-1.jpg">`))
			Expect(string(page)).To(ContainSubstring("Gone &lt;b&gt;bold&lt;/b&gt;"), "narration is escaped")
		})
	})
})
