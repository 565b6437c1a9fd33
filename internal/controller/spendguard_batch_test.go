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
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// Issue 30: docs/architecture.md "Load on the cluster" — the spend guard's writes are shared (group
// commit), and its promises (docs/architecture.md "The record travels with the object": every paid
// job charged, no burst past a limit by more than one render) hold as they are.
var _ = Describe("The spend guard's group commit", func() {
	var h *harness

	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak()
		}
	})

	It("keeps a burst in one guarded namespace within its limit with an exact account, in fewer budget writes than renders paid", func() {
		h = newHarness(simulator.Options{TimeScale: 0.01})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](25)})
		var budgetWrites atomic.Int32
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*videov1alpha1.VideoBudget); ok {
				budgetWrites.Add(1)
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}
		h.startManager()
		vrs := h.createRenders("burst", 40)

		settledRenders(vrs, 25, 15)
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.Renders).To(Equal(int64(25)), "renders counted")
			g.Expect(b.Status.Reservations).To(BeEmpty(), "no reservation left")
			g.Expect(b.Status.Reserved).To(Equal(videov1alpha1.BudgetReserved{}))
			g.Expect(b.Status.ChargedJobs).To(HaveLen(25), "every paid job's end charged once")
		}).Should(Succeed())
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "1s", "100ms").Should(Equal(25), "jobs paid = renders counted")
		expectEachSubmittedAtMostOnce(h, vrs)
		// Each paid render needs a reservation, a settlement and a charge: written one by one,
		// that is at least three budget writes per render; shared, fewer.
		Expect(int(budgetWrites.Load())).To(BeNumerically("<", 3*25), "budget writes for 25 paid renders")
		for _, vr := range vrs {
			if got := getRender(vr)(Default); got.Status.JobID != "" {
				Expect(got.Finalizers).To(ContainElement(videov1alpha1.FinalizerCharge), "%s: the charge finalizer travels with its record", vr.Name)
			}
		}
	})

	// Issue 37: the write bound must not need a burst. Renders that arrive one by one, none at the
	// gate while another's reservation is written, each wrote a budget write of their own.
	It("gathers the reservations of a steady stream of renders, none arriving with another, into fewer budget writes than renders", func() {
		h = newHarness(simulator.Options{TimeScale: 0.01})
		h.budgetGather = DefaultBudgetGather
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](30)})
		var budgetWrites atomic.Int32
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*videov1alpha1.VideoBudget); ok {
				budgetWrites.Add(1)
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}
		h.startManager()
		const n = 20
		var vrs []*videov1alpha1.VideoRender
		for i := range n {
			vr := storyRender(h.ns, fmt.Sprintf("stream-%02d", i), fmt.Sprintf("stream %d", i))
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			vrs = append(vrs, vr)
			// A steady stream of ten renders a second: each is alone at the gate for the few
			// milliseconds a budget write takes.
			time.Sleep(100 * time.Millisecond)
		}

		settledRenders(vrs, n, 0)
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.Renders).To(Equal(int64(n)), "renders counted")
			g.Expect(b.Status.Reservations).To(BeEmpty(), "no reservation left")
			g.Expect(b.Status.ChargedJobs).To(HaveLen(n), "every paid job's end charged once")
		}).Should(Succeed())
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "1s", "100ms").Should(Equal(n), "jobs paid = renders counted")
		expectEachSubmittedAtMostOnce(h, vrs)
		// Written one by one, the reservations alone are a write per render.
		Expect(int(budgetWrites.Load())).To(BeNumerically("<", n), "budget writes for %d renders paid one by one", n)
	})

	// A reservation written ahead stands for an attempt only this process knows: a render deleted
	// before it came back to pay certainly sent nothing, and its reservation is released at once,
	// not held for a submission's time and then charged as one that may have been sent.
	It("releases, not charges, the reservation written ahead for a render deleted before it paid", func() {
		h = newHarness(simulator.Options{TimeScale: 0.01})
		// Long enough that the render is still waiting when the spec deletes it.
		h.budgetGather = 10 * time.Second
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)})
		h.startManager()
		vr := storyRender(h.ns, "deleted-while-gathered", "deleted while gathered")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(h.budget(g).Status.Reservations).To(ContainElement(HaveField("UID", string(vr.UID))), "its reservation written ahead")
		}).Should(Succeed())
		Expect(k8sClient.Delete(ctx, vr)).To(Succeed())

		// Held while young, it would stay 25 s (a submission's time) and then count as used.
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Reservations).To(BeEmpty(), "the reservation of the deleted render")
			g.Expect(b.Status.Used.Renders).To(BeZero(), "renders counted")
		}).WithTimeout(within(15 * time.Second)).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(h.budget(g).Status.Used.Renders).To(BeZero(), "renders counted")
		}, "1s", "100ms").Should(Succeed())
		Expect(h.sim.Submissions(testAPIKey)).To(BeZero(), "jobs paid")
	})
})
