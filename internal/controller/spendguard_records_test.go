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
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// longBlog is a blog post the simulator narrates word for word in 600 s (1,500 words at 2.5 words
// a second): no field of the request that renders it states that length.
const longBlog = "https://blog.example.com/ten-minutes"

func longDocument() string {
	line := strings.TrimSpace(strings.Repeat("word ", 150))
	return strings.Repeat(line+"\n", 10)
}

func blogRender(ns, name string) *videov1alpha1.VideoRender {
	return fromYAML(&videov1alpha1.VideoRender{}, ns, `
metadata: {name: `+name+`}
spec:
  storyboard:
    videoName: `+name+`
    scenes:
      - blogUrl: `+longBlog+`
`)
}

// replaceBudget deletes the namespace's VideoBudget and creates it again with spec, as a GitOps
// replace or prune does; between waits until the old one is gone, before the new one comes.
func (h *harness) replaceBudget(spec videov1alpha1.VideoBudgetSpec, between func()) {
	GinkgoHelper()
	old := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: videov1alpha1.VideoBudgetName}}
	Expect(k8sClient.Delete(ctx, old)).To(Succeed())
	Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key(old), old)) }).Should(BeTrue())
	if between != nil {
		between()
	}
	h.createBudget(spec)
}

// writeTenantLedger creates or overwrites the ConfigMap a tenant can write in its own namespace
// under the ledger's old name, with usage used in the current daily period.
func writeTenantLedger(ns string, used videov1alpha1.BudgetUsage) {
	GinkgoHelper()
	start, end := time.Now().UTC().Truncate(24*time.Hour), time.Now().UTC().Truncate(24*time.Hour).Add(24*time.Hour)
	raw, err := json.Marshal(map[string]any{"period": "Daily", "periodStart": start, "periodEnd": end, "used": used, "budgetUID": "forged"})
	Expect(err).NotTo(HaveOccurred())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: videov1alpha1.LedgerConfigMapName}}
	err = k8sClient.Get(ctx, key(cm), cm)
	cm.Data = map[string]string{"ledger.json": string(raw)}
	if apierrors.IsNotFound(err) {
		Expect(k8sClient.Create(ctx, cm)).To(Succeed())
		return
	}
	Expect(err).NotTo(HaveOccurred())
	Expect(k8sClient.Update(ctx, cm)).To(Succeed())
}

// Issue 28, item 3 and the ledger half of item 5: docs/architecture.md "The record travels with the
// object" (its paragraph on the spend guard) and "Records that outlive a version", through the real
// reconcilers, a real API server and the simulator.
var _ = Describe("The spend guard rests on records, not on estimates", func() {
	var h *harness

	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak()
		}
	})

	It("lets 20 renders of a blog post the service renders 600 s long pay at most one render beyond maxRenderSeconds: 600", func() {
		h = newHarness(simulator.Options{Documents: map[string]string{longBlog: longDocument()}})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenderSeconds: ptr.To[int64](600)})
		h.startManager()
		vrs := make([]*videov1alpha1.VideoRender, 0, 20)
		for i := range 20 {
			vr := blogRender(h.ns, fmt.Sprintf("blog-%02d", i))
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			vrs = append(vrs, vr)
		}

		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.RenderSeconds).To(BeNumerically(">=", 600))
			g.Expect(b.Status.Reservations).To(BeEmpty(), "no job runs any more")
		}, within(30*time.Second)).Should(Succeed())
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "2s", "100ms").Should(BeNumerically("<=", 2),
			"at most one render beyond the limit")
		b := h.budget(Default)
		GinkgoWriter.Printf("paid renders %d, used seconds %d\n", h.sim.Submissions(testAPIKey), b.Status.Used.RenderSeconds)
		Expect(b.Status.Used.RenderSeconds).To(BeNumerically("<=", 1200), "the limit plus one render of 600 s")
		waiting := 0
		for _, vr := range vrs {
			st := getRender(vr)(Default).Status.JobStatus
			if budgetWaiting(&st) {
				waiting++
			}
		}
		Expect(waiting).To(BeNumerically(">=", 18))
	})

	It("runs credit-consuming storyboardRef renders one at a time after the VideoBudget is replaced", func() {
		// Renders of about 6 s, so the first one still runs when the budget is replaced.
		h = newHarness(simulator.Options{TimeScale: 0.05})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxAICredits: ptr.To(resource.MustParse("1000"))})
		h.startManager()
		sb := fromYAML(&videov1alpha1.VideoStoryboard{}, h.ns, `
metadata: {name: lighthouse}
spec:
  videoName: Lighthouse
  scenes:
    - story: One AI image is 2.5 credits.
      background:
        type: image
        aiVisual: {model: flux-schnell, prompt: A lighthouse at dawn}
`)
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)
		first := refRender(h.ns, "first", "lighthouse", "approvedDigest: "+preview.Digest)
		Expect(k8sClient.Create(ctx, first)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(getRender(first)(g).Status.JobID).NotTo(BeEmpty())
		}).Should(Succeed())
		Expect(getRender(first)(Default).Status.CompletedAt).To(BeNil(), "the first render still runs")

		h.replaceBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxAICredits: ptr.To(resource.MustParse("1000"))}, nil)
		second := refRender(h.ns, "second", "lighthouse", "approvedDigest: "+preview.Digest)
		Expect(k8sClient.Create(ctx, second)).To(Succeed())

		// While the first runs, the second waits: the rebuilt reservation kept its AI-credit flag.
		Eventually(func(g Gomega) {
			st := getRender(second)(g).Status.JobStatus
			g.Expect(st.JobID != "" || budgetWaiting(&st)).To(BeTrue())
		}).Should(Succeed())
		got := getRender(second)(Default)
		if got.Status.JobID != "" {
			Expect(getRender(first)(Default).Status.CompletedAt).NotTo(BeNil(), "the second render was paid while the first ran")
		} else {
			Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message).To(ContainSubstring("one at a time"))
		}
		eventuallyReady(first)
		eventuallyReady(second)
	})

	It("pays nothing for a render waiting on a spent budget while the budget is deleted and created again", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		spec := videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenders: ptr.To[int64](1)}
		h.createBudget(spec)
		h.startManager()
		first := h.createRenders("first", 1)[0]
		eventuallyReady(first)
		second := h.createRenders("second", 1)[0]
		Eventually(func(g Gomega) {
			g.Expect(budgetWaiting(&getRender(second)(g).Status.JobStatus)).To(BeTrue())
		}).Should(Succeed())

		h.replaceBudget(spec, func() {
			// The budget is gone: the waiting render still waits, and says why.
			Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "2s", "50ms").Should(Equal(1))
			st := getRender(second)(Default).Status.JobStatus
			Expect(budgetWaiting(&st)).To(BeTrue())
		})
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "2s", "50ms").Should(Equal(1))
		Expect(budgetWaiting(&getRender(second)(Default).Status.JobStatus)).To(BeTrue())
		Expect(h.budget(Default).Status.Used.Renders).To(Equal(int64(1)))
	})

	It("keeps a deleted budget's limits until the platform deletes its ledger in the manager's namespace", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenders: ptr.To[int64](1)})
		h.startManager()
		first := h.createRenders("first", 1)[0]
		eventuallyReady(first)
		old := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: videov1alpha1.VideoBudgetName}}
		Expect(k8sClient.Delete(ctx, old)).To(Succeed())
		second := h.createRenders("second", 1)[0]
		ledger := client.ObjectKey{Namespace: managerNamespace, Name: videov1alpha1.LedgerConfigMapPrefix + h.ns}
		Eventually(func(g Gomega) {
			st := getRender(second)(g).Status.JobStatus
			g.Expect(budgetWaiting(&st)).To(BeTrue())
			g.Expect(conditionOf(&st, videov1alpha1.ConditionStalled).Message).To(ContainSubstring("deletes the ledger ConfigMap " + ledger.String()))
		}).Should(Succeed())
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "1s", "50ms").Should(Equal(1))

		By("the platform removes the limits on purpose")
		Expect(k8sClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ledger.Namespace, Name: ledger.Name}})).To(Succeed())
		eventuallyReady(second)
		Expect(h.sim.Submissions(testAPIKey)).To(Equal(2))
	})

	It("keeps the period's usage whatever a tenant does to a ConfigMap of its own namespace named like the old ledger", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		// A ledger an older manager wrote in the tenant's namespace: one render this period.
		writeTenantLedger(h.ns, videov1alpha1.BudgetUsage{Renders: 1})
		spec := videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenders: ptr.To[int64](2)}
		h.createBudget(spec)
		h.startManager()
		first := h.createRenders("first", 1)[0]
		eventuallyReady(first)
		Eventually(func(g Gomega) {
			g.Expect(h.budget(g).Status.Used.Renders).To(Equal(int64(2)), "the old ledger's render and this one")
		}).Should(Succeed())

		By("the tenant rewrites the old ConfigMap to zero, and the budget is replaced")
		writeTenantLedger(h.ns, videov1alpha1.BudgetUsage{})
		h.replaceBudget(spec, nil)
		second := h.createRenders("second", 1)[0]
		Eventually(func(g Gomega) {
			g.Expect(h.budget(g).Status.Used.Renders).To(Equal(int64(2)))
			g.Expect(budgetWaiting(&getRender(second)(g).Status.JobStatus)).To(BeTrue())
		}).Should(Succeed())

		By("the tenant deletes it, and the budget is replaced again")
		Expect(k8sClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: videov1alpha1.LedgerConfigMapName}})).
			To(Or(Succeed(), MatchError(apierrors.IsNotFound, "not found")))
		h.replaceBudget(spec, nil)
		Eventually(func(g Gomega) {
			g.Expect(h.budget(g).Status.LedgerBudgetUID).NotTo(BeEmpty())
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(h.budget(g).Status.Used.Renders).To(Equal(int64(2)))
			g.Expect(budgetWaiting(&getRender(second)(g).Status.JobStatus)).To(BeTrue())
		}, "2s", "100ms").Should(Succeed())
		Expect(h.sim.Submissions(testAPIKey)).To(Equal(1))
		cm := &corev1.ConfigMap{}
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: videov1alpha1.LedgerConfigMapName}, cm))).
			To(BeTrue(), "the manager writes no ledger in the tenant's namespace any more")
	})
})
