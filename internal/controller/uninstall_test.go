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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// docs/architecture.md "Several managers, install and uninstall": the uninstall lets go of the
// operator's finalizers with what they guard settled. An attempt whose outcome is unknown may have
// created a paid job: it is counted, never released.
var _ = Describe("Uninstall, attacked", func() {
	It("counts a render stalled SubmissionUnknown as used when the finalizers are released, and lets it be deleted", func() {
		h := newHarness(simulator.Options{RenderDuration: time.Hour,
			Faults: simulator.Faults{TruncatedShare: 1, Endpoints: []string{simulator.EndpointRenderStoryboard}}})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)})
		h.startManager()
		vr := storyRender(h.ns, "unknown", "Unknown")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		// Since the group commit the charge finalizer rides with the job's record, which an unknown
		// attempt never has: its budget reservation stands for it (charged if the render goes).
		Expect(h.sim.Calls(simulator.EndpointRenderStoryboard)).To(Equal(1))

		By("stopping the manager and running the uninstall mode")
		h.stopManager()
		_, err := ReleaseFinalizers(ctx, k8sClient, []string{h.ns}, managerNamespace)
		Expect(err).NotTo(HaveOccurred())
		b := h.budget(Default)
		Expect(b.Status.Used.Renders).To(Equal(int64(1)), "the unknown attempt may have been paid: it is counted")
		Expect(b.Status.Reservations).To(BeEmpty())
		got := getRender(vr)(Default)
		Expect(controllerutil.ContainsFinalizer(got, videov1alpha1.FinalizerCharge)).To(BeFalse())

		By("running it again charges nothing twice")
		_, err = ReleaseFinalizers(ctx, k8sClient, []string{h.ns}, managerNamespace)
		Expect(err).NotTo(HaveOccurred())
		Expect(h.budget(Default).Status.Used.Renders).To(Equal(int64(1)))

		Expect(k8sClient.Delete(ctx, got)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key(vr), &videov1alpha1.VideoRender{})) }).Should(BeTrue())
	})
})

// docs/spend-guard.md "The ledger": the ledger is the copy that outlives a VideoBudget. Deleting
// the manager's namespace (an uninstall of install.yaml, then a reinstall) deletes every ledger
// while the budgets still hold their usage.
var _ = Describe("The ledger, attacked by a reinstall", func() {
	It("a ledger deleted while its budget exists is written again from the budget by the next manager, so a later replace forgets nothing", func() {
		h := newHarness(simulator.Options{})
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
		ledger := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: managerNamespace, Name: videov1alpha1.LedgerConfigMapPrefix + h.ns}}
		Eventually(func() error { return k8sClient.Get(ctx, key(ledger), &corev1.ConfigMap{}) }).Should(Succeed())

		By("the operator is uninstalled with its namespace (the ledger goes) and installed again")
		h.stopManager()
		Expect(k8sClient.Delete(ctx, ledger)).To(Succeed())
		h.startManager()
		Eventually(func() error { return k8sClient.Get(ctx, key(ledger), &corev1.ConfigMap{}) }, within(10*time.Second)).Should(Succeed(),
			"the new manager writes the ledger again from the budget's status")

		By("a GitOps replace of the budget afterwards")
		h.replaceBudget(spec, nil)
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "2s", "50ms").Should(Equal(1))
		Expect(budgetWaiting(&getRender(second)(Default).Status.JobStatus)).To(BeTrue())
	})
})
