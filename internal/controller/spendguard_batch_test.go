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
	"sync/atomic"

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
})
