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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// Issue 23 attacked: what the quieter writes and the polls' share could make status say that is
// not so.
var _ = Describe("Load on the cluster, attacked", func() {
	// During a burst, the renders of one namespace take turns at its VideoBudget, and a turn not
	// had within a write's time is spendguard.ErrBusy: the submission comes back shortly. That
	// reconcile decided nothing about the new spec, so observedGeneration must not move: with
	// Ready still True for the old generation, kstatus, Flux and Argo CD would take the old video
	// for the new spec (Current) while nothing of it was sent.
	It("does not call a spec edit current while the VideoBudget is busy", func() {
		h := newHarness(simulator.Options{})
		var busy atomic.Bool
		h.intercept = &interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				if _, ok := obj.(*videov1alpha1.VideoBudget); ok && busy.Load() {
					return apierrors.NewConflict(schema.GroupResource{Group: videov1alpha1.GroupVersion.Group, Resource: "videobudgets"},
						obj.GetName(), nil)
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenders: ptr.To[int64](100)})
		h.startManager()

		vr := storyRender(h.ns, "busy-budget", "Busy budget one")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted))
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		}).Should(Succeed())

		busy.Store(true)
		got := getRender(vr)(Default)
		got.Spec.Storyboard.VideoName = "Busy budget two"
		Expect(k8sClient.Update(ctx, got)).To(Succeed())
		gen := got.Generation // the update's answer

		// The reservation keeps losing its turn: nothing is sent, and status must not say the
		// new spec is current.
		Consistently(func(g Gomega) {
			now := getRender(vr)(g)
			g.Expect(now.Generation).To(Equal(gen))
			if now.Status.ObservedGeneration == gen {
				g.Expect(kstatusOf(now)).NotTo(Equal(status.CurrentStatus),
					"observedGeneration %d with Ready %+v", now.Status.ObservedGeneration,
					conditionOf(&now.Status.JobStatus, videov1alpha1.ConditionReady))
			}
		}, 3*time.Second, 50*time.Millisecond).Should(Succeed())
		Expect(h.jobsNamed("Busy budget two")).To(BeEmpty())

		// Once the budget has room for a turn, the edit is submitted once.
		busy.Store(false)
		Eventually(func(g Gomega) {
			now := getRender(vr)(g)
			g.Expect(now.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted))
			g.Expect(now.Status.JobGeneration).To(Equal(gen))
			g.Expect(kstatusOf(now)).To(Equal(status.CurrentStatus))
		}).Should(Succeed())
		Expect(h.jobsNamed("Busy budget two")).To(HaveLen(1))
	})
})
