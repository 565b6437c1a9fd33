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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
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
