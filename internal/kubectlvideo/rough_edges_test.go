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
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Completion, machine-readable output, VideoBudget, several objects at once, hints that can be
// copied verbatim, and a retry that would only pay again for the same failure. States are
// written directly, in namespaces no manager watches.
var _ = Describe("kubectl video, the habits of kubectl", func() {
	var ns string

	// completions returns the candidates cobra's __complete prints, without the directive line.
	completions := func(ns string, args ...string) []string {
		GinkgoHelper()
		r := kubectlVideo(ns, "", append([]string{"__complete"}, args...)...)
		Expect(r.err).NotTo(HaveOccurred())
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(r.out), "\n") {
			if strings.HasPrefix(line, ":") {
				Expect(line).To(Equal(":4"), "no file names are offered")
				continue
			}
			name, _, _ := strings.Cut(line, "\t")
			got = append(got, name)
		}
		return got
	}

	render := func(name string) *videov1alpha1.VideoRender {
		GinkgoHelper()
		vr := fromYAML(&videov1alpha1.VideoRender{}, ns, "metadata: {name: "+name+"}\nspec: {projectId: p-"+name+"}\n")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		return vr
	}

	failed := func(vr *videov1alpha1.VideoRender, reason videov1alpha1.ConditionReason, jobID, code, message string) {
		GinkgoHelper()
		vr.Status.Phase = videov1alpha1.PhaseFailed
		vr.Status.JobID = jobID
		vr.Status.JobGeneration = 1
		vr.Status.Failure = &videov1alpha1.JobFailure{Code: code, Message: message}
		vr.Status.Conditions = []metav1.Condition{{Type: string(videov1alpha1.ConditionStalled), Status: metav1.ConditionTrue,
			Reason: string(reason), Message: "failed: " + message, LastTransitionTime: metav1.Now()}}
		setStatus(vr)
	}

	BeforeEach(func() { ns = newNamespace("habits-") })

	It("completes object names from the namespace, per kind, and namespaces after -n", func() {
		render("alpha")
		render("beta")
		Expect(k8sClient.Create(ctx, threeScenes(ns, "story", "Story"))).To(Succeed())
		Expect(k8sClient.Create(ctx, &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}})).To(Succeed())

		Expect(completions(ns, "status", "")).To(ConsistOf("vr/alpha", "vr/beta", "vsb/story", "vb/default"))
		Expect(completions(ns, "status", "vr/")).To(ConsistOf("vr/alpha", "vr/beta"))
		Expect(completions(ns, "status", "vr/al")).To(ConsistOf("vr/alpha"))
		Expect(completions(ns, "status", "vr", "")).To(ConsistOf("alpha", "beta"))
		Expect(completions(ns, "status", "vr/alpha", "")).To(ConsistOf("vr/beta", "vsb/story", "vb/default"), "an object already named is not offered again")
		Expect(completions(ns, "outputs", "")).To(ConsistOf("vr/alpha", "vr/beta"), "outputs works on renders only")
		Expect(completions(ns, "preview", "")).To(ConsistOf("vsb/story"))
		Expect(completions(ns, "retry", "")).To(ConsistOf("vr/alpha", "vr/beta", "vsb/story"))
		Expect(completions(ns, "retry", "vr/alpha", "")).To(BeEmpty(), "retry takes one object")

		other := newNamespace("habits-other-")
		Expect(completions(ns, "-n", other, "status", "")).To(BeEmpty(), "-n selects the namespace whose names are offered")
		Expect(completions(ns, "status", "-n", "")).To(ContainElements(ns, other))
	})

	It("prints the object with -o yaml or -o json, as kubectl get does, and several as a List", func() {
		vr := render("alpha")
		failed(vr, videov1alpha1.ReasonJobFailed, "job-1", "RENDER_FAILED", "The render failed")
		render("beta")

		r := kubectlVideo(ns, "", "status", "vr/alpha", "-o", "yaml")
		Expect(r.err).NotTo(HaveOccurred())
		var got videov1alpha1.VideoRender
		Expect(yaml.UnmarshalStrict([]byte(r.out), &got)).To(Succeed())
		Expect(got.APIVersion).To(Equal("video.videoops.io/v1alpha1"))
		Expect(got.Kind).To(Equal("VideoRender"))
		Expect(got.Namespace).To(Equal(ns))
		Expect(got.Status.Failure).To(Equal(&videov1alpha1.JobFailure{Code: "RENDER_FAILED", Message: "The render failed"}))
		Expect(r.out).NotTo(ContainSubstring("managedFields"), "as kubectl get: managed fields only on request")

		r = kubectlVideo(ns, "", "status", "vr/alpha", "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		got = videov1alpha1.VideoRender{}
		Expect(json.Unmarshal([]byte(r.out), &got)).To(Succeed())
		Expect(got.Status.JobID).To(Equal("job-1"))

		var list struct {
			APIVersion string                      `json:"apiVersion"`
			Kind       string                      `json:"kind"`
			Items      []videov1alpha1.VideoRender `json:"items"`
		}
		r = kubectlVideo(ns, "", "status", "vr/alpha", "vr/beta", "-o", "json")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(json.Unmarshal([]byte(r.out), &list)).To(Succeed())
		Expect(list.APIVersion).To(Equal("v1"))
		Expect(list.Kind).To(Equal("List"))
		Expect(list.Items).To(HaveLen(2))
		Expect(list.Items[1].Name).To(Equal("beta"))
		Expect(list.Items[1].Kind).To(Equal("VideoRender"))

		r = kubectlVideo(ns, "", "status", "-o", "yaml")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(yaml.Unmarshal([]byte(r.out), &list)).To(Succeed())
		Expect(list.Items).To(HaveLen(2), "the namespace's videos")

		r = kubectlVideo(ns, "", "status", "vr/alpha", "-o", "wide")
		Expect(r.err).To(MatchError(ContainSubstring(`unknown output "wide"`)))
	})

	It("prints a render's outputs with -o json or -o yaml", func() {
		vr := render("done")
		vr.Status.Phase = videov1alpha1.PhaseCompleted
		vr.Status.JobID = "job-2"
		vr.Status.JobGeneration = 1
		vr.Status.Outputs = &videov1alpha1.RenderOutputs{VideoURL: "https://cdn.example/j2/video.mp4", SRTFile: "https://cdn.example/j2/c.srt"}
		setStatus(vr)
		for _, format := range []string{"json", "yaml"} {
			r := kubectlVideo(ns, "", "outputs", "vr/done", "-o", format)
			Expect(r.err).NotTo(HaveOccurred())
			var got videov1alpha1.RenderOutputs
			Expect(yaml.UnmarshalStrict([]byte(r.out), &got)).To(Succeed(), "JSON is YAML too")
			Expect(got).To(Equal(*vr.Status.Outputs))
		}
		r := kubectlVideo(ns, "", "outputs", "vr/done", "-o", "html")
		Expect(r.err).To(MatchError(ContainSubstring(`unknown output "html"`)))
	})

	It("knows VideoBudget: status vb shows the period, usage against the limits and reservations", func() {
		vb := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"},
			Spec: videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodMonthly, MaxRenders: ptr.To[int64](10),
				MaxAICredits: ptr.To(resource.MustParse("50"))}}
		Expect(k8sClient.Create(ctx, vb)).To(Succeed())
		start := metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
		end := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
		vb.Status = videov1alpha1.VideoBudgetStatus{Period: videov1alpha1.BudgetPeriodMonthly, PeriodStart: &start, PeriodEnd: &end,
			Used:     videov1alpha1.BudgetUsage{Renders: 3, RenderSeconds: 95, AICredits: ptr.To(resource.MustParse("12.5")), Previews: 4},
			Reserved: videov1alpha1.BudgetReserved{Renders: 1},
			Reservations: []videov1alpha1.BudgetReservation{{Kind: "VideoRender", Name: "alpha", UID: "u-1", AttemptID: "attempt-7",
				ReservedAt: metav1.Now()}},
			Conditions: []metav1.Condition{{Type: string(videov1alpha1.ConditionExhausted), Status: metav1.ConditionFalse,
				Reason: string(videov1alpha1.ReasonWithinBudget), Message: "No limit is reached", LastTransitionTime: metav1.Now()}}}
		setStatus(vb)

		for _, args := range [][]string{{"status", "vb/default"}, {"status", "videobudget", "default"}, {"status", "vb"}} {
			r := kubectlVideo(ns, "", args...)
			Expect(r.err).NotTo(HaveOccurred(), "%v", args)
			Expect(r.out).To(ContainSubstring("VideoBudget " + ns + "/default"))
			Expect(r.out).To(MatchRegexp(`Period:\s+Monthly, 2026-11-01T00:00:00Z to 2026-12-01T00:00:00Z`))
			Expect(r.out).To(MatchRegexp(`Renders:\s+3 used, 1 reserved, of 10`))
			Expect(r.out).To(MatchRegexp(`Seconds:\s+95 used, no limit`))
			Expect(r.out).To(MatchRegexp(`AI credits:\s+12.5 used, of 50`))
			Expect(r.out).To(MatchRegexp(`Previews:\s+4 used, no limit`))
			Expect(r.out).To(MatchRegexp(`Exhausted\s+False\s+WithinBudget`))
			Expect(r.out).To(MatchRegexp(`vr/alpha\s+attempt attempt-7`))
		}
		r := kubectlVideo(ns, "", "status", "vb/default", "-o", "yaml")
		Expect(r.err).NotTo(HaveOccurred())
		var got videov1alpha1.VideoBudget
		Expect(yaml.UnmarshalStrict([]byte(r.out), &got)).To(Succeed())
		Expect(got.Kind).To(Equal("VideoBudget"))
		Expect(got.Status.Used.Renders).To(Equal(int64(3)))

		r = kubectlVideo(ns, "", "retry", "vb/default")
		Expect(r.err).To(MatchError(ContainSubstring("kubectl video retry works on a VideoRender (vr) or a VideoStoryboard (vsb), not on vb/default")))
	})

	It("shows several objects, named TYPE/NAME each or TYPE then names, and reports the missing ones", func() {
		render("alpha")
		render("beta")
		for _, args := range [][]string{{"status", "vr/alpha", "vr/beta"}, {"status", "vr", "alpha", "beta"}} {
			r := kubectlVideo(ns, "", args...)
			Expect(r.err).NotTo(HaveOccurred(), "%v", args)
			Expect(r.out).To(ContainSubstring("VideoRender " + ns + "/alpha"))
			Expect(r.out).To(ContainSubstring("VideoRender " + ns + "/beta"))
		}
		r := kubectlVideo(ns, "", "status", "vr/alpha", "vr/missing")
		Expect(r.out).To(ContainSubstring("VideoRender " + ns + "/alpha"))
		Expect(r.err).To(MatchError(ContainSubstring(`VideoRender "missing" not found`)))

		r = kubectlVideo(ns, "", "status", "vr", "alpha", "vsb/x")
		Expect(r.err).To(MatchError(ContainSubstring("KIND/NAME")))
	})

	It("puts -n NAMESPACE into every command it suggests, so that it can be copied verbatim", func() {
		vr := render("unknown")
		vr.Status.Phase = videov1alpha1.PhaseSubmitting
		vr.Status.Submission = &videov1alpha1.Submission{Generation: 1, AttemptID: "attempt-9", StartedAt: metav1.Now()}
		vr.Status.Conditions = []metav1.Condition{{Type: string(videov1alpha1.ConditionStalled), Status: metav1.ConditionTrue,
			Reason: string(videov1alpha1.ReasonSubmissionUnknown), Message: "unknown", LastTransitionTime: metav1.Now()}}
		setStatus(vr)
		r := kubectlVideo(ns, "", "status", "vr/unknown")
		Expect(r.out).To(MatchRegexp(`resolve:\s+kubectl video confirm-resubmit vr/unknown -n ` + ns + ` `))
		r = kubectlVideo(ns, "", "retry", "vr/unknown")
		Expect(r.err).To(MatchError(ContainSubstring("use kubectl video confirm-resubmit vr/unknown -n " + ns)))
		r = kubectlVideo(ns, "", "confirm-resubmit", "vr/unknown", "--yes")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("Follow it with: kubectl video status vr/unknown -n " + ns + "\n"))

		vr = render("broken")
		failed(vr, videov1alpha1.ReasonJobFailed, "job-3", "RENDER_FAILED", "The render engine crashed")
		r = kubectlVideo(ns, "", "retry", "vr/broken")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("Follow it with: kubectl video status vr/broken -n " + ns + "\n"))

		render("pending")
		r = kubectlVideo(ns, "", "outputs", "vr/pending")
		Expect(r.err).To(MatchError(HaveSuffix("see kubectl video status vr/pending -n " + ns)))
	})

	DescribeTable("retry refuses a configuration error that would fail the same way, unless --force",
		func(reason videov1alpha1.ConditionReason, jobID, code, message, want string) {
			vr := render("config")
			failed(vr, reason, jobID, code, message)
			r := kubectlVideo(ns, "", "retry", "vr/config")
			Expect(r.err).To(MatchError(ContainSubstring(want)))
			Expect(r.err).To(MatchError(ContainSubstring("--force")))
			Expect(getRenderNamed(ns, "config")(Default).Annotations).NotTo(HaveKey(videov1alpha1.AnnotationRetry), "nothing was written")

			r = kubectlVideo(ns, "", "retry", "vr/config", "--force")
			Expect(r.err).NotTo(HaveOccurred())
			Expect(getRenderNamed(ns, "config")(Default).Annotations).To(HaveKey(videov1alpha1.AnnotationRetry))
		},
		Entry("an unknown voice: a paid job that fails again", videov1alpha1.ReasonJobFailed, "job-4", "TEXT_TO_VIDEO_FAILED",
			`Invalid voice speaker "NoSuchVoice": no such voice in the voice library`, "a new job for the same spec would be paid for and fail the same way"),
		Entry("a request the service refused (400)", videov1alpha1.ReasonInvalidRequest, "", "INVALID_REQUEST_BODY",
			"Invalid request; scenes[0].story: too long", "the service refused this spec"),
		Entry("a project the service does not know", videov1alpha1.ReasonProjectNotFound, "", "ProjectNotFound",
			"Project not found", "the service refused this spec"),
	)
})
