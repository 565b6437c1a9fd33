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
	"math"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
	"github.com/videoops/video-operator/internal/spendguard"
)

// shiftClock is the real clock moved forward by an offset: timers and rate limits keep running
// in real time, while a period boundary can be crossed at once.
type shiftClock struct {
	clock.RealClock
	offset atomic.Int64
}

func (c *shiftClock) Now() time.Time                  { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *shiftClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c *shiftClock) advance(d time.Duration)         { c.offset.Add(int64(d)) }

// createBudget creates the namespace's VideoBudget.
func (h *harness) createBudget(spec videov1alpha1.VideoBudgetSpec) {
	GinkgoHelper()
	b := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: videov1alpha1.VideoBudgetName}, Spec: spec}
	Expect(k8sClient.Create(ctx, b)).To(Succeed())
}

// budget reads the namespace's VideoBudget, its running jobs' lines read as reservations.
func (h *harness) budget(g Gomega) *videov1alpha1.VideoBudget {
	b := &videov1alpha1.VideoBudget{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: videov1alpha1.VideoBudgetName}, b)).To(Succeed())
	b.Status.Reservations, b.Status.RunningJobs = b.Status.AllReservations(), nil
	return b
}

// createRenders creates n story renders named prefix-NN at once.
func (h *harness) createRenders(prefix string, n int) []*videov1alpha1.VideoRender {
	GinkgoHelper()
	out := make([]*videov1alpha1.VideoRender, 0, n)
	for i := range n {
		vr := storyRender(h.ns, fmt.Sprintf("%s-%02d", prefix, i), fmt.Sprintf("%s %d", prefix, i))
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		out = append(out, vr)
	}
	return out
}

// budgetWaiting reports whether the object waits for budget: Stalled (only the next period or a
// person moves it on), and not Reconciling.
func budgetWaiting(st *videov1alpha1.JobStatus) bool {
	return stalledWith(st, videov1alpha1.ReasonBudgetExhausted) &&
		conditionOf(st, videov1alpha1.ConditionReconciling).Status == metav1.ConditionFalse
}

// settledRenders waits until exactly wantReady renders are Ready and wantWaiting wait for budget.
func settledRenders(vrs []*videov1alpha1.VideoRender, wantReady, wantWaiting int) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		ready, waiting := 0, 0
		for _, vr := range vrs {
			got := getRender(vr)(g)
			switch {
			case readyFor(&got.Status.JobStatus, got.Generation):
				ready++
			case budgetWaiting(&got.Status.JobStatus):
				waiting++
			}
		}
		g.Expect([]int{ready, waiting}).To(Equal([]int{wantReady, wantWaiting}), "ready, waiting for budget")
	}, within(30*time.Second)).Should(Succeed())
}

// expectEachSubmittedAtMostOnce checks that no render was paid for twice.
func expectEachSubmittedAtMostOnce(h *harness, vrs []*videov1alpha1.VideoRender) {
	GinkgoHelper()
	for _, vr := range vrs {
		Expect(len(h.jobsNamed(vr.Spec.Storyboard.VideoName))).To(BeNumerically("<=", 1), vr.Name)
	}
}

// Issue 15, "Spend guard", through the real reconcilers, a real API server and the simulator.
var _ = Describe("The spend guard of a namespace's VideoBudget", func() {
	var h *harness

	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak()
		}
	})

	It("refuses a VideoBudget not named default", func() {
		b := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: newNamespace(), Name: "team-a"}}
		err := k8sClient.Create(ctx, b)
		Expect(err).To(MatchError(ContainSubstring("must be named default")))
	})

	It("counts a recorded job whose own settle lost to a busy budget at once, not after the grace period", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenders: ptr.To[int64](5)})
		// Every write that counts usage is refused as a conflict until the job id is recorded and
		// a second more: the render's own settle gives up (as it did in CI with 20 renders at once).
		var busyUntil atomic.Int64
		busyUntil.Store(math.MaxInt64)
		var refused atomic.Int32
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*videov1alpha1.VideoBudget); ok && time.Now().UnixNano() < busyUntil.Load() {
				if data, _ := patch.Data(obj); strings.Contains(string(data), `"used"`) {
					refused.Add(1)
					return apierrors.NewConflict(schema.GroupResource{Group: videov1alpha1.GroupVersion.Group, Resource: "videobudgets"}, obj.GetName(), fmt.Errorf("injected: busy"))
				}
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}
		h.startManager()
		vr := h.createRenders("settle", 1)[0]
		Eventually(func(g Gomega) {
			g.Expect(getRender(vr)(g).Status.JobID).NotTo(BeEmpty())
		}).Should(Succeed())
		// The settle runs after the job-id write: wait until it was refused, then a second more.
		Eventually(refused.Load).Should(BeNumerically(">=", 1), "the render's settle was refused")
		busyUntil.Store(time.Now().Add(time.Second).UnixNano())

		// The grace period of an interrupted submission is SubmitBudget(5 s) = 25 s here.
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.Renders).To(Equal(int64(1)))
			g.Expect(b.Status.Reservations).To(BeEmpty())
		}, within(8*time.Second)).Should(Succeed())
		Expect(h.jobsNamed("settle 0")).To(HaveLen(1))
	})

	It("lets exactly maxRenders of 20 renders created at once submit; the rest wait, nothing is paid twice", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenders: ptr.To[int64](5)})
		h.startManager()
		vrs := h.createRenders("burst", 20)

		settledRenders(vrs, 5, 15)
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "2s", "100ms").Should(Equal(5))
		expectEachSubmittedAtMostOnce(h, vrs)
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.Renders).To(Equal(int64(5)))
			g.Expect(b.Status.Reservations).To(BeEmpty())
			ex := budgetCondition(b.Status.Conditions, videov1alpha1.ConditionExhausted)
			g.Expect(ex.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(ex.Reason).To(Equal(string(videov1alpha1.ReasonMaxRendersReached)))
		}).Should(Succeed())

		// The waiting ones say which limit, how much was used and when it resets, with one
		// Warning event each.
		for _, vr := range vrs {
			got := &videov1alpha1.VideoRender{}
			Expect(k8sClient.Get(ctx, key(vr), got)).To(Succeed())
			if !budgetWaiting(&got.Status.JobStatus) {
				continue
			}
			msg := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message
			Expect(msg).To(ContainSubstring("maxRenders reached: 5 of 5"))
			Expect(msg).To(ContainSubstring("period resets at"))
			Expect(got.Status.Phase).To(Equal(videov1alpha1.PhasePending))
			Eventually(func() []string { return h.eventReasons(vr.Name) }).Should(ContainElement(string(videov1alpha1.ReasonBudgetExhausted)))
		}
		Expect(h.metric("video_operator_budget_used", "namespace", h.ns, "limit", "maxRenders")).To(Equal(5.0))
		Expect(h.metric("video_operator_budget_remaining", "namespace", h.ns, "limit", "maxRenders")).To(Equal(0.0))
	})

	It("stops submissions once the completed renders reach maxRenderSeconds, and releases them when the budget is raised", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](1)})
		h.startManager()
		first := h.createRenders("first", 1)[0]
		eventuallyReady(first)
		done := getRender(first)(Default)
		secs := int64(math.Ceil(done.Status.VideoDuration.Seconds()))
		Expect(secs).To(BeNumerically(">=", 1))
		Eventually(func(g Gomega) {
			g.Expect(h.budget(g).Status.Used.RenderSeconds).To(Equal(secs))
		}).Should(Succeed())

		more := h.createRenders("more", 3)
		settledRenders(more, 0, 3)
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "1s", "100ms").Should(Equal(1))
		got := getRender(more[0])(Default)
		Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message).
			To(ContainSubstring(fmt.Sprintf("maxRenderSeconds reached: %d of 1 seconds", secs)))

		// Raising the limit wakes the waiting renders at once.
		Eventually(func(g Gomega) {
			b := h.budget(g)
			b.Spec.MaxRenderSeconds = ptr.To[int64](10_000)
			g.Expect(k8sClient.Update(ctx, b)).To(Succeed())
		}).Should(Succeed())
		settledRenders(more, 3, 0)
		Expect(h.sim.Submissions(testAPIKey)).To(Equal(4))
		expectEachSubmittedAtMostOnce(h, append(more, first))
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.Renders).To(Equal(int64(4)))
			g.Expect(b.Status.ChargedJobs).To(HaveLen(4))
			g.Expect(budgetCondition(b.Status.Conditions, videov1alpha1.ConditionExhausted).Status).To(Equal(metav1.ConditionFalse))
		}).Should(Succeed())
	})

	It("releases the waiting renders when maxRenders is raised", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](2)})
		h.startManager()
		vrs := h.createRenders("raise", 6)
		settledRenders(vrs, 2, 4)
		Eventually(func(g Gomega) {
			b := h.budget(g)
			b.Spec.MaxRenders = ptr.To[int64](6)
			g.Expect(k8sClient.Update(ctx, b)).To(Succeed())
		}).Should(Succeed())
		settledRenders(vrs, 6, 0)
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "1s", "100ms").Should(Equal(6))
		expectEachSubmittedAtMostOnce(h, vrs)
	})

	It("releases the waiting renders at the next period (injected clock)", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		clk := &shiftClock{}
		h.clock = clk
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenders: ptr.To[int64](1)})
		h.startManager()
		vrs := h.createRenders("daily", 3)
		settledRenders(vrs, 1, 2)
		var start metav1.Time
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.Renders).To(Equal(int64(1)))
			g.Expect(b.Status.PeriodStart).NotTo(BeNil())
			start = *b.Status.PeriodStart
			g.Expect(b.Status.PeriodEnd.Sub(start.Time)).To(Equal(24 * time.Hour))
		}).Should(Succeed())

		clk.advance(24 * time.Hour)
		// One more render fits the new period.
		settledRenders(vrs, 2, 1)
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.PeriodStart.Time).To(Equal(start.Add(24 * time.Hour)))
			g.Expect(b.Status.Used.Renders).To(Equal(int64(1)))
		}).Should(Succeed())
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "1s", "100ms").Should(Equal(2))
		expectEachSubmittedAtMostOnce(h, vrs)
	})

	It("keeps the usage when renders are deleted", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](3)})
		h.startManager()
		vrs := h.createRenders("gone", 2)
		settledRenders(vrs, 2, 0)
		var used videov1alpha1.BudgetUsage
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.Renders).To(Equal(int64(2)))
			g.Expect(b.Status.ChargedJobs).To(HaveLen(2))
			used = b.Status.Used
		}).Should(Succeed())
		for _, vr := range vrs {
			Expect(k8sClient.Delete(ctx, vr)).To(Succeed())
		}
		Consistently(func(g Gomega) {
			g.Expect(h.budget(g).Status.Used).To(Equal(used))
		}, "1s", "100ms").Should(Succeed())

		again := h.createRenders("again", 2)
		settledRenders(again, 1, 1)
		Expect(h.sim.Submissions(testAPIKey)).To(Equal(3))
	})

	// The end is charged from the render's status once a budget write folds it: a refused
	// completion write records nothing, and the job read again is charged once.
	It("charges a completion once when the render's own completion write fails", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](10_000)})
		var refused atomic.Int32
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if vr, ok := obj.(*videov1alpha1.VideoRender); ok && vr.Status.CompletedAt != nil && refused.CompareAndSwap(0, 1) {
				// The charge has landed; the completion does not, as if the manager crashed here.
				return apierrors.NewConflict(schema.GroupResource{Group: videov1alpha1.GroupVersion.Group, Resource: "videorenders"},
					obj.GetName(), fmt.Errorf("injected conflict"))
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}
		h.startManager()
		vr := h.createRenders("once", 1)[0]
		eventuallyReady(vr)
		Expect(refused.Load()).To(Equal(int32(1)), "the completion write was refused once")
		secs := int64(math.Ceil(getRender(vr)(Default).Status.VideoDuration.Seconds()))
		Eventually(func(g Gomega) {
			g.Expect(h.budget(g).Status.ChargedJobs).To(HaveLen(1))
		}).Should(Succeed())
		Consistently(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.RenderSeconds).To(Equal(secs))
			g.Expect(b.Status.ChargedJobs).To(HaveLen(1))
		}, "1s", "100ms").Should(Succeed())
	})

	It("charges a completed job once when its charge loses to a busy budget, and logs no reconcile error", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](10_000)})
		// The first spendguard.WriteTries charge writes are refused: the charge queued after the
		// render's end is tried again.
		var refused atomic.Int32
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*videov1alpha1.VideoBudget); ok {
				if data, _ := patch.Data(obj); strings.Contains(string(data), `"chargedJobs"`) && refused.Add(1) <= spendguard.WriteTries {
					return apierrors.NewConflict(schema.GroupResource{Group: videov1alpha1.GroupVersion.Group, Resource: "videobudgets"}, obj.GetName(), fmt.Errorf("injected: busy"))
				}
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}
		h.startManager()
		vr := h.createRenders("busy-charge", 1)[0]
		eventuallyReady(vr)
		secs := int64(math.Ceil(getRender(vr)(Default).Status.VideoDuration.Seconds()))
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.RenderSeconds).To(Equal(secs))
			g.Expect(b.Status.ChargedJobs).To(HaveLen(1))
		}).Should(Succeed())
		Expect(refused.Load()).To(BeNumerically(">", spendguard.WriteTries), "the charge's writes were refused, and a later one landed")
		// A busy budget is contention, not a failure: no error-level line with a stack trace.
		Expect(h.logs.String()).NotTo(ContainSubstring("Reconciler error"))
	})

	It("holds the room of reservations a crashed process left, then releases or charges them against their objects", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		clk := &shiftClock{}
		h.clock = clk
		h.createBudget(videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](2)})
		// A render that never reaches its submission (its storyboard does not exist) and one that
		// was deleted: a process crashed after reserving for each, before their in-flight write.
		stuck := fromYAML(&videov1alpha1.VideoRender{}, h.ns, `
metadata: {name: stuck}
spec: {storyboardRef: {name: missing}}
`)
		Expect(k8sClient.Create(ctx, stuck)).To(Succeed())
		Eventually(func(g Gomega) {
			b := h.budget(g)
			b.Status.Reservations = []videov1alpha1.BudgetReservation{
				{Kind: "VideoRender", Name: stuck.Name, UID: string(stuck.UID), AttemptID: "crashed-1", ReservedAt: metav1.NewTime(clk.Now())},
				{Kind: "VideoRender", Name: "gone", UID: "0b7c0d2e-gone", AttemptID: "crashed-2", ReservedAt: metav1.NewTime(clk.Now())},
			}
			g.Expect(k8sClient.Status().Update(ctx, b)).To(Succeed())
		}).Should(Succeed())
		h.startManager()

		later := h.createRenders("later", 1)
		settledRenders(later, 0, 1)
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "1s", "100ms").Should(BeZero())

		// Past the submission budget the reservations are checked against their objects.
		clk.advance(time.Minute)
		settledRenders(later, 1, 0)
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Reservations).To(BeEmpty())
			g.Expect(b.Status.Used.Renders).To(Equal(int64(2)), "the deleted object's reservation counts, the stuck one's is released")
		}).Should(Succeed())
		Expect(h.sim.Submissions(testAPIKey)).To(Equal(1))
	})

	It("keeps reservations and usage correct across a manager restart", func() {
		h = newHarness(simulator.Options{TimeScale: 0.02}) // renders of a few seconds
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](3), MaxPreviews: ptr.To[int64](1)})
		h.startManager()
		vrs := h.createRenders("restart", 5)
		Eventually(func() int { return h.sim.Submissions(testAPIKey) }, within(20*time.Second)).Should(Equal(3))
		// Stopped while the jobs run.
		h.stopManager()
		Expect(getRender(vrs[0])(Default).Status.CompletedAt).To(BeNil(), "the jobs were still running")

		h.startManager()
		settledRenders(vrs, 3, 2)
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }, "1s", "100ms").Should(Equal(3))
		expectEachSubmittedAtMostOnce(h, vrs)
		var secs int64
		for _, vr := range vrs {
			if d := getRender(vr)(Default).Status.VideoDuration; d != nil {
				secs += int64(math.Ceil(d.Seconds()))
			}
		}
		Eventually(func(g Gomega) {
			b := h.budget(g)
			g.Expect(b.Status.Used.Renders).To(Equal(int64(3)))
			g.Expect(b.Status.Used.RenderSeconds).To(Equal(secs), "each completion charged once")
			g.Expect(b.Status.Reservations).To(BeEmpty())
		}).Should(Succeed())

		// Previews count against maxPreviews, apart from renders.
		p1, p2 := storyPreview(h.ns, "preview-1", "Preview 1"), storyPreview(h.ns, "preview-2", "Preview 2")
		Expect(k8sClient.Create(ctx, p1)).To(Succeed())
		Expect(k8sClient.Create(ctx, p2)).To(Succeed())
		Eventually(func(g Gomega) {
			waiting := 0
			for _, p := range []*videov1alpha1.VideoStoryboard{p1, p2} {
				if budgetWaiting(&getStoryboard(p)(g).Status.JobStatus) {
					waiting++
				}
			}
			g.Expect(waiting).To(Equal(1))
			g.Expect(h.budget(g).Status.Used.Previews).To(Equal(int64(1)))
		}, within(20*time.Second)).Should(Succeed())
	})
})

// budgetCondition returns the condition of type t.
func budgetCondition(conds []metav1.Condition, t videov1alpha1.ConditionType) metav1.Condition {
	for _, c := range conds {
		if c.Type == string(t) {
			return c
		}
	}
	return metav1.Condition{}
}
