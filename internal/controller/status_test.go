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
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

// kubectlGet runs the envtest kubectl (KUBEBUILDER_ASSETS) as a cluster admin and returns its
// output: what a person sees, printer columns included.
func kubectlGet(args ...string) string {
	GinkgoHelper()
	user, err := testEnv.AddUser(envtest.User{Name: "status-reader", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	kc, err := user.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(os.WriteFile(kubeconfig, kc, 0o600)).To(Succeed())
	cmd := exec.CommandContext(ctx, filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl"), append([]string{"--kubeconfig", kubeconfig, "get"}, args...)...)
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	GinkgoWriter.Printf("kubectl get %s\n%s", strings.Join(args, " "), out)
	return string(out)
}

var headerCell = regexp.MustCompile(`\S+( \S+)*`)

// columns returns the cells of the first data row of kubectl's table output, by header.
func columns(table string) map[string]string {
	GinkgoHelper()
	lines := strings.Split(strings.TrimSpace(table), "\n")
	Expect(len(lines)).To(BeNumerically(">=", 2), table)
	header, row := lines[0], lines[1]
	out := map[string]string{}
	// A header cell starts where its name starts (names may hold single spaces, as in MAX
	// RENDERS; kubectl pads cells with three); the cell runs to the next header.
	var names []string
	var starts []int
	for _, loc := range headerCell.FindAllStringIndex(header, -1) {
		names = append(names, header[loc[0]:loc[1]])
		starts = append(starts, loc[0])
	}
	for i, n := range names {
		end := len(row)
		if i+1 < len(names) {
			end = min(starts[i+1], len(row))
		}
		if starts[i] < len(row) {
			out[n] = strings.TrimSpace(row[starts[i]:end])
		} else {
			out[n] = ""
		}
	}
	return out
}

// Issue 24, "Status rough edges": what kubectl and GitOps tools show.
var _ = Describe("Status as people and GitOps tools see it", func() {
	var h *harness

	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak()
		}
	})

	It("refuses a VideoBudget named other than default with an error on metadata.name", func() {
		b := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: newNamespace(), Name: "team-a"}}
		err := k8sClient.Create(ctx, b)
		Expect(err).To(HaveOccurred())
		GinkgoWriter.Println(err)
		Expect(err.Error()).NotTo(ContainSubstring("<nil>"), "the error names no field")
		var se *apierrors.StatusError
		Expect(errors.As(err, &se)).To(BeTrue(), "%v", err)
		Expect(se.ErrStatus.Details).NotTo(BeNil())
		var fields []string
		for _, c := range se.ErrStatus.Details.Causes {
			fields = append(fields, c.Field)
		}
		Expect(fields).To(ConsistOf("metadata.name"), "%v", err)
		Expect(err.Error()).To(ContainSubstring("must be named default"))
	})

	It("shows a budget's usage from 0 and its reset time in kubectl get vb", func() {
		h = newHarness(simulator.Options{})
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodMonthly, MaxRenders: ptr.To[int64](5)})
		h.startManager()
		var end time.Time
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.PeriodEnd).NotTo(BeNil())
			end = b.Status.PeriodEnd.UTC()
		}).Should(Succeed())
		Expect(end).To(BeTemporally(">", time.Now()), "the period ends in the future")

		out := kubectlGet("vb", "-n", h.ns)
		Expect(out).NotTo(ContainSubstring("<invalid>"))
		cells := columns(out)
		Expect(cells).To(HaveKeyWithValue("RENDERS", "0"), out)
		Expect(cells).To(HaveKeyWithValue("MAX RENDERS", "5"), out)
		Expect(cells).To(HaveKeyWithValue("RESETS", end.Format(time.RFC3339)), out)

		out = kubectlGet("vb", "-n", h.ns, "-o", "wide")
		Expect(columns(out)).To(HaveKeyWithValue("SECONDS", "0"), out)
	})

	It("stalls a render that waits on an exhausted budget, with the reset time, and submits it when the budget is raised", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodMonthly, MaxRenders: ptr.To[int64](1)})
		h.startManager()
		first := h.createRenders("first", 1)[0]
		Eventually(func(g Gomega) {
			got := getRender(first)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue())
		}).Should(Succeed())

		waiting := h.createRenders("waiting", 1)[0]
		Eventually(func(g Gomega) {
			got := getRender(waiting)(g)
			st := &got.Status.JobStatus
			// Only the next period or a person moves it on: Stalled, not Reconciling, so that
			// kstatus (Flux) and Argo CD do not show it progressing for up to a month.
			g.Expect(stalledWith(st, videov1alpha1.ReasonBudgetExhausted)).To(BeTrue(), "%+v", st.Conditions)
			g.Expect(conditionOf(st, videov1alpha1.ConditionReconciling).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(conditionOf(st, videov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(conditionOf(st, videov1alpha1.ConditionStalled).Message).To(ContainSubstring("period resets at"))
			g.Expect(st.Phase).To(Equal(videov1alpha1.PhasePending))
			g.Expect(st.ObservedGeneration).To(Equal(got.Generation))
			g.Expect(kstatusOf(got)).To(Equal(status.FailedStatus))
		}).Should(Succeed())
		Eventually(func() []string { return h.eventReasons(waiting.Name) }).Should(ContainElement(string(videov1alpha1.ReasonBudgetExhausted)))
		Consistently(func() int { return len(h.jobsNamed("waiting 0")) }, "1s").Should(BeZero())

		By("raising the budget: it resumes by itself")
		Eventually(func() error {
			b := h.budget(Default)
			b.Spec.MaxRenders = ptr.To[int64](2)
			return k8sClient.Update(ctx, b)
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(waiting)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		Expect(h.jobsNamed("waiting 0")).To(HaveLen(1))
	})
})

// Status says what the job did and nothing more: a generation is claimed only by a reconcile that
// decided for it, a value longer than the schema allows is bounded (a URL is left out, never cut),
// the previous generation's outputs stay beside the new one's, and a preview shape the interface
// document does not describe is kept raw.
var _ = Describe("Status tells the truth about the job", func() {
	var h *harness
	start := keyedWorld(&h)

	It("a failed reconcile of a new generation does not claim it, and says so", func() {
		start(simulator.Options{})
		var secretReads atomic.Bool
		h.secretMetadataFault = func(client.ObjectKey) error {
			if secretReads.Load() {
				return errInjected
			}
			return nil
		}
		h.startManager()
		vr := storyRender(h.ns, "gen-error", "Gen error")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(readyFor(&getRender(vr)(g).Status.JobStatus, 1)).To(BeTrue())
		}).Should(Succeed())

		secretReads.Store(true)
		editStory(vr, "A second version. It cannot be submitted yet.")
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Generation).To(Equal(int64(2)))
			rec := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReconciling)
			g.Expect(rec.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(rec.Reason).To(Equal(string(videov1alpha1.ReasonReconcileError)))
			g.Expect(got.Status.ObservedGeneration).To(Equal(int64(1)), "no decision was taken for generation 2")
			g.Expect(kstatusOf(got)).To(Equal(status.InProgressStatus))
		}).Should(Succeed())

		secretReads.Store(false)
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, 2)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(kstatusOf(got)).To(Equal(status.CurrentStatus))
		}).Should(Succeed())
	})

	It("values longer than the status schema allows are bounded, and URLs are never cut", func() {
		start(simulator.Options{})
		longURL := "https://cdn.example.com/v/" + strings.Repeat("é", maxURL) // too long: left out
		fitting := "https://cdn.example.com/s/" + strings.Repeat("a", maxURL-len("https://cdn.example.com/s/"))
		h.wrap = func(c apiclient.Interface) apiclient.Interface {
			return &jobRewriter{Interface: c, rewrite: func(j *apiclient.Job) {
				j.Data.RenderState = strings.Repeat("R", 300)
				j.Data.RenderProgressMessage = strings.Repeat("ü", 3000)
				if j.Status().IsCompleted() {
					j.Data.VideoURL = longURL
					j.Data.VideoShareURL = fitting
					j.Data.PlatformClearanceCode = strings.Repeat("C", 2000)
					j.Data.AICreditsUsed = "1e40" // 41 digits as a plain decimal: over the schema's 32

					if j.Data.Storyboard != nil {
						for i := range j.Data.Storyboard.Scenes {
							j.Data.Storyboard.Scenes[i].Story = strings.Repeat("ß", 20000)
							j.Data.Storyboard.Scenes[i].Thumbnail = longURL
						}
					}
				}
				if j.Status().IsFailed() {
					j.Data.ErrorCode = strings.Repeat("E", 500)
					j.Data.ErrorMessage = strings.Repeat("€", 10000)
				}
			}}
		}
		h.startManager()
		vr := storyRender(h.ns, "long-values", "Long values")
		sb := storyPreview(h.ns, "long-preview", "Long preview")
		bad := badVoiceRender(h.ns, "long-failure", "Long failure")
		for _, o := range []client.Object{vr, sb, bad} {
			Expect(k8sClient.Create(ctx, o)).To(Succeed())
		}
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.Outputs.VideoURL).To(BeEmpty(), "a URL too long to record is left out, not cut")
			g.Expect(got.Status.Outputs.VideoShareURL).To(Equal(fitting), "a URL that fits is kept whole")
			g.Expect(got.Status.Clearance).To(BeNil())
			g.Expect(got.Status.AICreditsUsed).To(BeEmpty(), "a number too long to record is left out, not cut")
			g.Expect(got.Status.OutputsOmitted).To(ContainElements(HavePrefix("videoURL ("), HavePrefix("platformClearanceCode ("),
				HavePrefix("aiCreditsUsed (")))
			g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReady).Message).To(ContainSubstring("videoURL"))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			got := getStoryboard(sb)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.Preview.Scenes).NotTo(BeEmpty())
			g.Expect([]rune(got.Status.Preview.Scenes[0].Story)).To(HaveLen(maxPreviewStory))
			g.Expect(got.Status.Preview.Scenes[0].Thumbnail).To(BeEmpty())
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(bad)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonJobFailed)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect([]rune(got.Status.Failure.Code)).To(HaveLen(maxFailureCode))
			g.Expect([]rune(got.Status.Failure.Message)).To(HaveLen(maxFailureMessage))
			g.Expect(got.Status.Failure.Message).To(HaveSuffix(ellipsis))
		}).Should(Succeed())
	})

	It("the older generation's outputs are kept when a newer one is rendered", func() {
		start(simulator.Options{RenderDuration: 10 * time.Minute}) // 1.2 s here
		h.startManager()
		vr := storyRender(h.ns, "two-gens", "Two gens")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		var firstJob string
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseInProgress))
			firstJob = got.Status.JobID
		}).Should(Succeed())
		editStory(vr, "A second version, edited while the first rendered.")
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, 2)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.Previous).NotTo(BeNil())
			g.Expect(got.Status.Previous.JobID).To(Equal(firstJob))
			g.Expect(got.Status.Previous.JobGeneration).To(Equal(int64(1)))
			g.Expect(got.Status.Previous.Outputs).NotTo(BeNil())
			g.Expect(got.Status.Previous.Outputs.VideoURL).To(ContainSubstring(firstJob))
			g.Expect(got.Status.Outputs.VideoURL).NotTo(Equal(got.Status.Previous.Outputs.VideoURL))
		}, within(30*time.Second)).Should(Succeed())
		Expect(h.jobsNamed("Two gens")).To(HaveLen(2))
		Expect(eventNotes(h.ns, "two-gens", "Submitted")).To(ContainElement(ContainSubstring("status.previous")))
	})

	It("an undocumented preview shape is read best-effort and kept raw", func() {
		start(simulator.Options{})
		h.wrap = func(c apiclient.Interface) apiclient.Interface {
			return &jobRewriter{Interface: c, rewrite: func(j *apiclient.Job) {
				if !j.Status().IsCompleted() || j.Data.Storyboard == nil {
					return
				}
				odd := `[{"thumbnail": {"url": "https://cdn.example.com/t0.png", "width": 320}, "story": "First."}, {"thumbnail": 7, "story": null}]`
				var decoded apiclient.Job
				Expect(json.Unmarshal([]byte(`{"job_id":"x","success":true,"data":{"status":"completed","storyboard":`+odd+`}}`), &decoded)).To(Succeed())
				j.Data.Storyboard = decoded.Data.Storyboard
			}}
		}
		h.startManager()
		sb := storyPreview(h.ns, "odd-shape", "Odd shape")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getStoryboard(sb)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			p := got.Status.Preview
			g.Expect(p.Scenes).To(HaveLen(2))
			g.Expect(p.Scenes[0].Thumbnail).To(Equal("https://cdn.example.com/t0.png"))
			g.Expect(p.Scenes[0].Story).To(Equal("First."))
			g.Expect(p.Raw).NotTo(BeNil(), "the preview is kept as the service sent it")
			g.Expect(string(p.Raw.Raw)).To(ContainSubstring(`"width":320`))
		}).Should(Succeed())
	})
})
