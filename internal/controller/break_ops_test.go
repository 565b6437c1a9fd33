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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// opsLedger is what the namespace's ledger ConfigMap holds, as far as these specs read it.
type opsLedger struct {
	BudgetUID    string                            `json:"budgetUID"`
	Used         videov1alpha1.BudgetUsage         `json:"used"`
	Reservations []videov1alpha1.BudgetReservation `json:"reservations"`
	ChargeCount  int64                             `json:"chargeCount"`
}

func readOpsLedger(g Gomega, ns string) opsLedger {
	cm := &corev1.ConfigMap{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: videov1alpha1.LedgerConfigMapPrefix + ns}, cm)).To(Succeed())
	var l opsLedger
	g.Expect(json.Unmarshal([]byte(cm.Data["ledger.json"]), &l)).To(Succeed())
	return l
}

// runningWithFinalizer creates a story render that holds the charge finalizer and whose job
// jobID runs, as a manager leaves it.
func runningWithFinalizer(ns, name, jobID string, est int64) *videov1alpha1.VideoRender {
	GinkgoHelper()
	vr := storyRender(ns, name, name)
	controllerutil.AddFinalizer(vr, videov1alpha1.FinalizerCharge)
	Expect(k8sClient.Create(ctx, vr)).To(Succeed())
	vr.Status.JobID = jobID
	vr.Status.SubmittedAt = &metav1.Time{Time: time.Now().Add(-time.Minute).Truncate(time.Second)}
	vr.Status.BudgetEstimate = &videov1alpha1.BudgetEstimate{Seconds: est}
	Expect(k8sClient.Status().Update(ctx, vr)).To(Succeed())
	return vr
}

var _ = Describe("Ordinary operations, attacked (break-ops)", func() {
	// docs/uninstall.md: the uninstall charges each running job its estimate and settles every
	// reservation; "Each namespace with a budget keeps its ledger ... delete it when you no longer
	// want that period's spend remembered". docs/spend-guard.md: the ledger is what a budget
	// created again takes over ("A budget survives its replacement"). The uninstall mode has no
	// VideoBudget controller: its budget writes after the first one within the ledger's cadence
	// (10 s then; the ledger is written through now) were held back for a controller that never
	// came, and the process exited. The ledger
	// keeps the first render's charge and the second render's reservation: a budget created again
	// (a reinstall, then a GitOps sync) takes over 100 s of the 200 s charged and a reservation of
	// a job already charged, which it charges again once it reads the job's end.
	It("leaves the ledger as the uninstall left the budget: every estimate charged, no reservation", func() {
		ns := newNamespace()
		b := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: videov1alpha1.VideoBudgetName},
			Spec: videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)}}
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		var renders []*videov1alpha1.VideoRender
		for i := range 2 {
			renders = append(renders, runningWithFinalizer(ns, fmt.Sprintf("running-%d", i), fmt.Sprintf("job-%d", i), 100))
		}
		now := time.Now()
		start := time.Date(now.UTC().Year(), now.UTC().Month(), 1, 0, 0, 0, 0, time.UTC)
		b.Status = videov1alpha1.VideoBudgetStatus{LedgerBudgetUID: string(b.UID), RunningReserved: true,
			Period: videov1alpha1.BudgetPeriodMonthly, PeriodStart: &metav1.Time{Time: start}, PeriodEnd: &metav1.Time{Time: start.AddDate(0, 1, 0)},
			Used: videov1alpha1.BudgetUsage{Renders: 2}}
		for _, vr := range renders {
			b.Status.Reservations = append(b.Status.Reservations, videov1alpha1.BudgetReservation{Kind: "VideoRender", Name: vr.Name,
				UID: string(vr.UID), AttemptID: "a", ReservedAt: *vr.Status.SubmittedAt, EstimatedSeconds: 100, JobID: vr.Status.JobID})
		}
		Expect(k8sClient.Status().Update(ctx, b)).To(Succeed())

		rep, err := ReleaseFinalizers(ctx, k8sClient, []string{ns}, managerNamespace)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Estimated).To(Equal(2))
		got := h0budget(ns)
		Expect(got.Status.Used.RenderSeconds).To(Equal(int64(200)), "control: the uninstall charged both estimates")
		Expect(got.Status.Reservations).To(BeEmpty(), "control: and settled every reservation")

		l := readOpsLedger(Default, ns)
		Expect(l.Used.RenderSeconds).To(Equal(int64(200)),
			"the ledger a budget created again would take over holds %d s of the 200 s the uninstall charged", l.Used.RenderSeconds)
		Expect(l.Reservations).To(BeEmpty(),
			"the ledger still holds reservations of jobs the uninstall charged: a budget created again charges them again")
	})

	// docs/backup-restore.md "Keys, accounts and restores into another account": a key of
	// another account is answered JOB_NOT_FOUND for the jobs of the submitting one; that never
	// means the job is gone (the object stalls APIKeyChanged, the remedy is to put the submitting
	// key back). docs/spend-guard.md: a render gone without its finalizer "changes nothing to the
	// money": its reservation holds its room until the VideoBudget controller reads its job's end.
	//
	// The namespace's Secret is changed to a key of another account (the team moves to a new
	// account) while a render's job runs; the render is deleted with its finalizer stripped. The
	// VideoBudget controller reads the job with the new key, takes JOB_NOT_FOUND for "the service
	// no longer knows it", charges the estimate and frees the room while the job still runs at
	// the service: under maxRenderSeconds a second render without upper bound is then admitted
	// beside it.
	It("holds a gone render's room while the namespace's Secret holds a key of another account and the job runs", func() {
		const otherAccountKey = "sk-video-other-account-91c2"
		h := newHarness(simulator.Options{RenderDuration: time.Hour, ScopeJobsByKey: true, APIKeys: []string{testAPIKey, otherAccountKey}})
		secret := h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenderSeconds: ptr.To[int64](100000)})
		h.startManager()
		DeferCleanup(h.stopManager)
		vr := storyRender(h.ns, "moving", "Moving")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		var jobID string
		Eventually(func(g Gomega) {
			cur := getRender(vr)(g)
			g.Expect(cur.Finalizers).To(ContainElement(videov1alpha1.FinalizerCharge))
			jobID = cur.Status.JobID
		}, within(30*time.Second)).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(h.budget(g).Status.Reservations).To(ContainElement(HaveField("JobID", jobID)))
		}, within(10*time.Second)).Should(Succeed())

		By("the Secret now holds a key of another account; the render is deleted with its finalizer stripped")
		secret.StringData = map[string]string{videov1alpha1.DefaultAPIKeySecretKey: otherAccountKey}
		Expect(k8sClient.Update(ctx, secret)).To(Succeed())
		Expect(k8sClient.Patch(ctx, vr, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		Expect(k8sClient.Delete(ctx, vr)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key(vr), &videov1alpha1.VideoRender{})) }).Should(BeTrue())

		// Whatever the job does at the service meanwhile, the key read now cannot tell its end.
		Consistently(func(g Gomega) {
			_, ok := h.sim.Job(jobID)
			g.Expect(ok).To(BeTrue())
			b := h.budget(g)
			g.Expect(b.Status.Reservations).To(ContainElement(HaveField("JobID", jobID)),
				"the reservation of a job that runs at the service was ended (used %d s)", b.Status.Used.RenderSeconds)
		}, "3s", "100ms").Should(Succeed())
	})

	// Held: the uninstall over objects a 0.1.0 manager wrote (docs/uninstall.md: "An installation
	// that runs 0.1.0 uses the 0.2.0 image here"): 0.1.0 kept no reservation for running jobs and
	// put no finalizer on renders; the budget takes the ledger over in the uninstall's first write
	// and rebuilds the running job's reservation from the render, so its estimate is charged.
	It("charges the estimate of a job a 0.1.0 manager left running when the finalizers are released", func() {
		ns := newNamespace()
		b := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: videov1alpha1.VideoBudgetName},
			Spec: videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](100)}}
		Expect(k8sClient.Create(ctx, b)).To(Succeed())
		vr := storyRender(ns, "old", "Old")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		vr.Status.JobID = "job-old"
		vr.Status.SubmittedAt = &metav1.Time{Time: time.Now().Add(-time.Minute).Truncate(time.Second)}
		Expect(k8sClient.Status().Update(ctx, vr)).To(Succeed())
		now := time.Now().UTC()
		start := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		b.Status = videov1alpha1.VideoBudgetStatus{Period: videov1alpha1.BudgetPeriodMonthly,
			PeriodStart: &metav1.Time{Time: start}, PeriodEnd: &metav1.Time{Time: start.AddDate(0, 1, 0)},
			Used: videov1alpha1.BudgetUsage{Renders: 1}}
		Expect(k8sClient.Status().Update(ctx, b)).To(Succeed())

		_, err := ReleaseFinalizers(ctx, k8sClient, []string{ns}, managerNamespace)
		Expect(err).NotTo(HaveOccurred())
		got := h0budget(ns)
		Expect(got.Status.Used.Renders).To(Equal(int64(1)))
		Expect(got.Status.Used.RenderSeconds).To(BeNumerically(">", 0), "the running job's estimate")
		Expect(got.Status.ChargedJobs).To(ContainElement("job-old"))
		Expect(got.Status.Reservations).To(BeEmpty())
		_, err = ReleaseFinalizers(ctx, k8sClient, []string{ns}, managerNamespace)
		Expect(err).NotTo(HaveOccurred())
		Expect(h0budget(ns).Status.Used.RenderSeconds).To(Equal(got.Status.Used.RenderSeconds), "run again: nothing charged twice")
	})
})

// h0budget reads namespace ns's VideoBudget, its running jobs' lines read as reservations.
func h0budget(ns string) *videov1alpha1.VideoBudget {
	GinkgoHelper()
	b := &videov1alpha1.VideoBudget{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: videov1alpha1.VideoBudgetName}, b)).To(Succeed())
	b.Status.Reservations, b.Status.RunningJobs = b.Status.AllReservations(), nil
	return b
}
