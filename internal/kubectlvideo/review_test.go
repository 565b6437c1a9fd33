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
	"context"
	"errors"
	"io"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// What a user would try to break, in namespaces no manager watches: statuses are written
// directly, and nothing created there is ever submitted.
var _ = Describe("kubectl video, used the wrong way", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace("review-") })

	// completedStoryboard is a storyboard whose preview of generation 1 completed.
	completedStoryboard := func(name string) *videov1alpha1.VideoStoryboard {
		GinkgoHelper()
		vsb := threeScenes(ns, name, "Reviewed")
		Expect(k8sClient.Create(ctx, vsb)).To(Succeed())
		vsb.Status.Phase = videov1alpha1.PhaseCompleted
		vsb.Status.PreviewedGeneration = vsb.Generation
		vsb.Status.JobID = "job-preview-1"
		vsb.Status.Preview = &videov1alpha1.StoryboardPreview{Digest: "sha256:" + strings.Repeat("ab", 32), Scenes: []videov1alpha1.PreviewScene{
			{Story: "One", Thumbnail: "http://127.0.0.1:1/1.jpg"}, {Story: "Two", Thumbnail: "http://127.0.0.1:1/2.jpg"},
		}}
		setStatus(vsb)
		return vsb
	}
	condition := func(t videov1alpha1.ConditionType, reason videov1alpha1.ConditionReason, msg string) metav1.Condition {
		return metav1.Condition{Type: string(t), Status: metav1.ConditionTrue, Reason: string(reason), Message: msg, LastTransitionTime: metav1.Now()}
	}
	// failedRender is a render whose job failed.
	failedRender := func(name string) *videov1alpha1.VideoRender {
		GinkgoHelper()
		vr := fromYAML(&videov1alpha1.VideoRender{}, ns, "metadata: {name: "+name+"}\nspec: {projectId: p-1}\n")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		vr.Status.Phase = videov1alpha1.PhaseFailed
		vr.Status.JobID = "job-failed-1"
		// A failure the spec does not cause: retry takes it without --force.
		vr.Status.Failure = &videov1alpha1.JobFailure{Code: "TEXT_TO_VIDEO_FAILED", Message: "rendering stopped"}
		vr.Status.Conditions = []metav1.Condition{condition(videov1alpha1.ConditionStalled, videov1alpha1.ReasonJobFailed, "failed")}
		setStatus(vr)
		return vr
	}
	// unknownRender is a render whose submission's outcome is unknown.
	unknownRender := func(name string) *videov1alpha1.VideoRender {
		GinkgoHelper()
		vr := fromYAML(&videov1alpha1.VideoRender{}, ns, "metadata: {name: "+name+"}\nspec: {projectId: p-1}\n")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		started := metav1.NewTime(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC))
		deadline := metav1.NewTime(started.Add(50 * time.Second))
		vr.Status.Phase = videov1alpha1.PhaseSubmitting
		vr.Status.Submission = &videov1alpha1.Submission{Generation: 1, AttemptID: "attempt-7", StartedAt: started, Deadline: &deadline}
		vr.Status.Conditions = []metav1.Condition{condition(videov1alpha1.ConditionStalled, videov1alpha1.ReasonSubmissionUnknown, "unknown")}
		setStatus(vr)
		return vr
	}
	noRender := func(name string) {
		GinkgoHelper()
		Consistently(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &videov1alpha1.VideoRender{})
		}, "200ms").Should(MatchError(ContainSubstring("not found")))
	}

	DescribeTable("-A names no object: it lists, or it is refused before anything is read or written",
		func(args ...string) {
			r := kubectlVideo(ns, "y\n", append(args, "-A")...)
			Expect(r.err).To(MatchError(ContainSubstring("-A (--all-namespaces) only lists, with kubectl video status and no object")))
			Expect(r.out).To(BeEmpty())
		},
		Entry("status of one object", "status", "vr/x"),
		Entry("preview", "preview", "vsb/x"),
		Entry("render", "render", "vsb/x", "--yes"),
		Entry("retry", "retry", "vr/x"),
		Entry("confirm-resubmit", "confirm-resubmit", "vr/x", "--yes"),
		Entry("outputs", "outputs", "vr/x"),
	)

	It("accepts kubectl's names of both kinds, in any case", func() {
		completedStoryboard("names")
		Expect(k8sClient.Create(ctx, fromYAML(&videov1alpha1.VideoRender{}, ns, "metadata: {name: names}\nspec: {projectId: p-1}\n"))).To(Succeed())
		for kind, names := range map[Kind][]string{
			KindStoryboard: {"vsb", "VSB", "videostoryboard", "videostoryboards", "VideoStoryboard", "videostoryboards.video.videoops.io"},
			KindRender:     {"vr", "videorender", "videorenders", "VideoRender", "videorenders.video.videoops.io"},
		} {
			for _, name := range names {
				r := kubectlVideo(ns, "", "status", name+"/names")
				Expect(r.err).NotTo(HaveOccurred(), name)
				Expect(r.out).To(HavePrefix("%s %s/names", kind, ns), name)
				r = kubectlVideo(ns, "", "status", name, "names")
				Expect(r.err).NotTo(HaveOccurred(), name)
				Expect(r.out).To(HavePrefix("%s %s/names", kind, ns), name)
			}
		}
		r := kubectlVideo(ns, "", "status", "videos/names")
		Expect(r.err).To(MatchError(ContainSubstring(`unknown kind "videos"`)))
	})

	It("shows an object the controller never acted on without inventing a state", func() {
		Expect(k8sClient.Create(ctx, threeScenes(ns, "fresh", "Fresh"))).To(Succeed())
		r := kubectlVideo(ns, "", "status", "vsb/fresh")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`Phase:\s+-`))
		Expect(r.out).To(ContainSubstring("Conditions:   none yet"))
		Expect(r.out).To(MatchRegexp(`Job:\s+none`))
		Expect(r.out).To(MatchRegexp(`Preview:\s+not yet`))
		r = kubectlVideo(ns, "y\n", "render", "vsb/fresh")
		Expect(r.err).To(MatchError(ContainSubstring("the preview of vsb/fresh is not complete yet (phase -, progress -)")))
		noRender("fresh")
	})

	It("asks only a person at a terminal before paying: an answer piped in confirms nothing", func() {
		completedStoryboard("piped")
		r := kubectlVideoPiped(ns, "y\n", "render", "vsb/piped")
		Expect(r.err).To(MatchError(ContainSubstring("standard input is not a terminal, so nobody can confirm: nothing was done (use --yes")))
		Expect(r.out).To(ContainSubstring("a paid render of storyboard vsb/piped"), "it still says what would be paid for")
		noRender("piped")

		unknownRender("unknown")
		r = kubectlVideoPiped(ns, "yes\n", "confirm-resubmit", "vr/unknown")
		Expect(r.err).To(MatchError(ContainSubstring("standard input is not a terminal")))
		Expect(getRenderNamed(ns, "unknown")(Default).Annotations).NotTo(HaveKey(videov1alpha1.AnnotationConfirmResubmit))

		By("--yes is the script's confirmation")
		r = kubectlVideoPiped(ns, "", "render", "vsb/piped", "--yes")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(getRenderNamed(ns, "piped")(Default).Spec.StoryboardRef.Name).To(Equal("piped"))
		r = kubectlVideoPiped(ns, "", "confirm-resubmit", "vr/unknown", "--yes")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(getRenderNamed(ns, "unknown")(Default).Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationConfirmResubmit, "attempt-7"))
	})

	It("ends the question on Ctrl-C instead of waiting for Enter", func() {
		completedStoryboard("interrupted")
		stdin, typing := io.Pipe()
		DeferCleanup(typing.Close)
		out := gbytes.NewBuffer()
		runCtx, interrupt := context.WithCancel(ctx)
		defer interrupt()
		cmd := NewCommand(stdin, out, GinkgoWriter, Overrides{Client: k8sClient, Namespace: ns, IsTerminal: func(io.Reader) bool { return true }})
		cmd.SetArgs([]string{"render", "vsb/interrupted"})
		done := make(chan error, 1)
		go func() { done <- cmd.ExecuteContext(runCtx) }()
		Eventually(out).Should(gbytes.Say(`pay for the render\? \[y/N\]: `))
		interrupt() // what SIGINT does: main's signal.NotifyContext cancels the context
		var err error
		Eventually(done).Should(Receive(&err))
		Expect(err).To(MatchError("interrupted: nothing was done"))
		noRender("interrupted")
	})

	It("refuses a taken or invalid name before asking anyone to pay", func() {
		completedStoryboard("taken")
		Expect(k8sClient.Create(ctx, fromYAML(&videov1alpha1.VideoRender{}, ns, "metadata: {name: taken}\nspec: {projectId: p-other}\n"))).To(Succeed())
		r := kubectlVideo(ns, "y\n", "render", "vsb/taken")
		Expect(r.err).To(MatchError(`VideoRender "taken" already exists in namespace "` + ns + `": nothing was created; choose another name with --name`))
		Expect(r.out).NotTo(ContainSubstring("[y/N]"), "no question whose yes cannot be honoured")
		Expect(getRenderNamed(ns, "taken")(Default).Spec.ProjectID).To(HaveValue(Equal("p-other")), "the existing render is untouched")

		r = kubectlVideo(ns, "y\n", "render", "vsb/taken", "--name", "Taken_2")
		Expect(r.err).To(MatchError(ContainSubstring(`"Taken_2" is not a valid name for a VideoRender: a lowercase RFC 1123 subdomain`)))
		Expect(r.out).To(BeEmpty(), "refused before anything is shown or asked")
		r = kubectlVideo(ns, "", "render", "vsb/taken", "--name", "Taken_2", "--dry-run")
		Expect(r.err).To(MatchError(ContainSubstring("is not a valid name")), "nor printed for a repository")

		r = kubectlVideo(ns, "y\n", "render", "vsb/taken", "--name", "taken-2")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("Create VideoRender taken-2 and pay for the render? [y/N]"))
		Expect(r.out).To(MatchRegexp(`API key:\s+Secret video-api-key, key apiKey \(the default\)`), "which account pays, also by default")
	})

	It("says what the render pays for: the previewed generation, its scenes and parameters, the account and the budget", func() {
		vsb := threeScenes(ns, "paid", "Paid video")
		vsb.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "team-key", Key: "token"}
		Expect(k8sClient.Create(ctx, vsb)).To(Succeed())
		vsb.Status.Phase = videov1alpha1.PhaseCompleted
		vsb.Status.PreviewedGeneration = 1
		vsb.Status.JobID = "job-preview-9"
		vsb.Status.Preview = &videov1alpha1.StoryboardPreview{Digest: "sha256:" + strings.Repeat("cd", 32),
			Scenes: []videov1alpha1.PreviewScene{{Story: "One", Thumbnail: "http://127.0.0.1:1/1.jpg"}}}
		setStatus(vsb)
		r := kubectlVideo(ns, "n\n", "render", "vsb/paid")
		Expect(r.err).To(MatchError("not confirmed: nothing was created"))
		Expect(r.out).To(ContainSubstring("This creates VideoRender " + ns + "/paid, a paid render of storyboard vsb/paid as previewed:"))
		Expect(r.out).To(MatchRegexp(`Video name:\s+Paid video`))
		Expect(r.out).To(MatchRegexp(`Generation:\s+1 \(preview job job-preview-9\)`))
		Expect(r.out).To(MatchRegexp(`Scenes:\s+1`))
		Expect(r.out).To(MatchRegexp(`API key:\s+Secret team-key, key token`))
		Expect(r.out).To(And(ContainSubstring("Preview digest: sha256:"+strings.Repeat("cd", 32)),
			ContainSubstring("renders this preview only: a later change of vsb/paid waits until it is approved"),
			ContainSubstring("(kubectl video approve vr/paid -n "+ns+")")),
			"a storyboardRef render does not pay for a later preview by itself: the question says so")
		Expect(r.out).To(MatchRegexp(`Budget:\s+no VideoBudget in namespace ` + ns + `: renders are not limited`))
		noRender("paid")

		By("the namespace's VideoBudget, and a warning when it has no render left")
		vb := fromYAML(&videov1alpha1.VideoBudget{}, ns, "metadata: {name: default}\nspec: {period: Monthly, maxRenders: 3, maxAICredits: \"500\"}\n")
		Expect(k8sClient.Create(ctx, vb)).To(Succeed())
		end := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
		vb.Status.Period = videov1alpha1.BudgetPeriodMonthly
		vb.Status.PeriodEnd = &end
		vb.Status.Used.Renders = 2
		setStatus(vb)
		r = kubectlVideo(ns, "n\n", "render", "vsb/paid")
		Expect(r.out).To(MatchRegexp(`Budget:\s+VideoBudget default: 2 of 3 renders used, 0 of 500 AI credits this monthly period until 2026-12-01T00:00:00Z`))
		Expect(r.out).NotTo(ContainSubstring("WARNING"))
		vb.Status.Reserved.Renders = 1
		setStatus(vb)
		r = kubectlVideo(ns, "n\n", "render", "vsb/paid")
		Expect(r.out).To(MatchRegexp(`Budget:\s+VideoBudget default: 3 of 3 renders used`))
		Expect(r.out).To(ContainSubstring("WARNING: VideoBudget default has no render left this period: the VideoRender would wait (BudgetExhausted) until 2026-12-01T00:00:00Z."))
		noRender("paid")
	})

	It("shows the status to someone who may read videos but not events, as kubectl describe does", func() {
		failedRender("no-events")
		direct, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		noEvents := interceptor.NewClient(direct, interceptor.Funcs{
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if _, ok := list.(*eventsv1.EventList); ok {
					return apierrors.NewForbidden(eventsv1.Resource("events"), "", errors.New("RBAC: no list"))
				}
				return c.List(ctx, list, opts...)
			},
		})
		r := runPlugin(Overrides{Client: noEvents, Namespace: ns}, "", "status", "vr/no-events")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`Failure:\s+TEXT_TO_VIDEO_FAILED: rendering stopped`))
		Expect(r.out).To(ContainSubstring(`Events:       not shown: you may not list events in namespace "` + ns + `"`))
	})

	It("does not promise a retry where the controller resumes by itself: a missing Secret", func() {
		vr := fromYAML(&videov1alpha1.VideoRender{}, ns, "metadata: {name: no-key}\nspec: {projectId: p-1}\n")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		vr.Status.Phase = videov1alpha1.PhasePending
		vr.Status.Conditions = []metav1.Condition{condition(videov1alpha1.ConditionStalled, videov1alpha1.ReasonSecretNotFound,
			`Secret "video-api-key" not found in namespace "`+ns+`"`)}
		setStatus(vr)
		r := kubectlVideo(ns, "", "retry", "vr/no-key")
		Expect(r.err).To(MatchError(`vr/no-key is stalled on SecretNotFound, which a retry does not fix: Secret "video-api-key" not found in namespace "` +
			ns + `"; the controller resumes by itself once it is fixed`))
		Expect(r.out).NotTo(ContainSubstring("paid job"))
		Expect(getRenderNamed(ns, "no-key")(Default).Annotations).NotTo(HaveKey(videov1alpha1.AnnotationRetry))
	})

	It("retries only with the state it showed: a change meanwhile makes the annotation fail", func() {
		failedRender("raced")
		direct, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		racing := interceptor.NewClient(direct, interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				// Someone else changes the object between the read and the patch.
				cur := &videov1alpha1.VideoRender{}
				Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), cur)).To(Succeed())
				cur.Labels = map[string]string{"changed": "meanwhile"}
				Expect(c.Update(ctx, cur)).To(Succeed())
				return c.Patch(ctx, obj, patch, opts...)
			},
		})
		r := runPlugin(Overrides{Client: racing, Namespace: ns, IsTerminal: func(_ io.Reader) bool { return true }}, "", "retry", "vr/raced")
		Expect(r.err).To(MatchError(ContainSubstring("the object has been modified")))
		Expect(r.err).To(MatchError(ContainSubstring("look again and retry")))
		got := getRenderNamed(ns, "raced")(Default)
		Expect(got.Labels).To(HaveKeyWithValue("changed", "meanwhile"))
		Expect(got.Annotations).NotTo(HaveKey(videov1alpha1.AnnotationRetry))

		By("without the race it sets a new value each time")
		r = kubectlVideo(ns, "", "retry", "vr/raced")
		Expect(r.err).NotTo(HaveOccurred())
		first := getRenderNamed(ns, "raced")(Default).Annotations[videov1alpha1.AnnotationRetry]
		Expect(first).NotTo(BeEmpty())
		r = kubectlVideo(ns, "", "retry", "vr/raced")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(getRenderNamed(ns, "raced")(Default).Annotations[videov1alpha1.AnnotationRetry]).NotTo(Equal(first))
	})
})
