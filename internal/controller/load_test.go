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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

// writeCounter counts the manager's status writes (patches and updates of the status
// subresource) per object name.
type writeCounter struct {
	mu     sync.Mutex
	writes map[string]int
	// patches are the bodies written, per object, for the failure message.
	patches map[string][]string
}

func countStatusWrites(h *harness) *writeCounter {
	w := &writeCounter{writes: map[string]int{}, patches: map[string][]string{}}
	h.intercept = &interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, _ := patch.Data(obj)
			w.add(sub, obj, string(data))
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			w.add(sub, obj, "(update)")
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}
	return w
}

func (w *writeCounter) add(sub string, obj client.Object, body string) {
	if sub != "status" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes[obj.GetName()]++
	w.patches[obj.GetName()] = append(w.patches[obj.GetName()], body)
}

func (w *writeCounter) bodies(name string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.patches[name], "\n")
}

func (w *writeCounter) of(name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes[name]
}

// docs/architecture.md "Load on the cluster": the calm case of a render (no conflict, no fault, no
// budget) costs at most 3 status writes (in-flight record, job id, completion) and at most 1 Event.
var _ = Describe("Load on the cluster", func() {
	calmRender := func(h *harness, w *writeCounter, name string) {
		GinkgoHelper()
		vr := storyRender(h.ns, name, "Calm "+name)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted))
			g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReady).ObservedGeneration).To(Equal(got.Generation))
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		}).Should(Succeed())
		// Events are recorded asynchronously after the write they follow; what comes late is
		// counted too.
		Consistently(func(g Gomega) {
			g.Expect(w.of(name)).To(BeNumerically("<=", 3), "status writes of one render:\n%s", w.bodies(name))
			g.Expect(len(h.eventReasons(name))).To(BeNumerically("<=", 1), "events of one render: %v", h.eventReasons(name))
		}, 2*time.Second).Should(Succeed())
		Expect(w.of(name)).To(Equal(3), "the in-flight record, the job id and the completion are each written")
		Expect(h.jobsNamed("Calm " + name)).To(HaveLen(1))
	}

	It("writes the status of a polled render three times and records at most one event", func() {
		h := newHarness(simulator.Options{})
		w := countStatusWrites(h)
		h.createSecret(testAPIKey)
		h.startManager()
		calmRender(h, w, "calm-polled")
	})

	It("writes the status of a render that calls back three times and records at most one event", func() {
		h := newHarness(simulator.Options{})
		w := countStatusWrites(h)
		h.callbackPoll = time.Hour // only the callback ends the job
		h.createSecret(testAPIKey)
		h.startManager()
		calmRender(h, w, "calm-callback")
	})
})

// heldRenders answers "in-progress" for every completed render job while hold is set: a render
// that runs as long as a spec needs.
type heldRenders struct {
	apiclient.Interface
	hold *atomic.Bool
}

func (r heldRenders) GetJob(ctx context.Context, id string) (*apiclient.Job, error) {
	job, err := r.Interface.GetJob(ctx, id)
	if err == nil && r.hold.Load() && job.Status().IsCompleted() && job.Data.VideoURL != "" {
		held := *job
		held.Data.Status = "in-progress"
		return &held, nil
	}
	return job, err
}

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
		// The namespace's spend state is its ledger ConfigMap (internal/spendguard/ledger.go):
		// every write of it loses its lock while busy.
		h.intercept = &interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				if _, ok := obj.(*corev1.ConfigMap); ok && busy.Load() {
					return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, obj.GetName(), nil)
				}
				return c.Patch(ctx, obj, patch, opts...)
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

	// A render's completion has no event of its own since issue 23: its Ready condition says it.
	// When the storyboard it renders was edited while the job ran, the render goes on to wait
	// for the new preview's approval and Ready says that instead: the video that was paid for
	// and is done must still be told somewhere a person looks.
	It("tells that a render completed while it waits for the approval of a newer preview", func() {
		h := newHarness(simulator.Options{})
		var hold atomic.Bool
		hold.Store(true)
		h.wrap = func(api apiclient.Interface) apiclient.Interface { return heldRenders{api, &hold} }
		h.createSecret(testAPIKey)
		h.startManager()

		sb := storyPreview(h.ns, "reviewed", "Reviewed one")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)
		vr := refRender(h.ns, "approved", "reviewed", "approvedDigest: "+preview.Digest)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(getRender(vr)(g).Status.JobID).NotTo(BeEmpty())
		}).Should(Succeed())

		// While the render runs, the storyboard is edited: its new preview is not approved.
		edited := getStoryboard(sb)(Default)
		edited.Spec.VideoName = "Reviewed two"
		Expect(k8sClient.Update(ctx, edited)).To(Succeed())
		previewOfGeneration(sb, edited.Generation)

		hold.Store(false)
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.CompletedAt).NotTo(BeNil())
			g.Expect(got.Status.Outputs).NotTo(BeNil())
			g.Expect(got.Status.Failure).To(BeNil())
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			ready := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReady)
			if ready.Reason == string(videov1alpha1.ReasonCompleted) {
				return
			}
			g.Expect(h.eventReasons("approved")).To(ContainElement(string(videov1alpha1.ReasonCompleted)),
				"Ready says %s: %s, and no event tells that job %s completed", ready.Reason, ready.Message, got.Status.JobID)
		}).Should(Succeed())
		Expect(h.sim.Calls(simulator.EndpointRenderStoryboard)).To(Equal(1), "the new preview is not approved: nothing more is paid")
	})
})

// docs/architecture.md "Load on the cluster": an unchanged status is never written, so a refusal
// repeated by a 429 storm does not rewrite it on every try.
var _ = Describe("Load on the cluster during a 429 storm", func() {
	var h *harness
	start := keyedWorld(&h)

	It("backoff messages are stable, so a 429 storm does not rewrite the status on every try", func() {
		start(simulator.Options{Faults: simulator.Faults{RateLimitShare: 1, RetryAfter: 10 * time.Millisecond,
			Endpoints: []string{apiclient.EndpointRenderStoryboard}}})
		var writes atomic.Int32
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes.Add(1)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}
		h.startManager()
		vr := storyRender(h.ns, "storm", "Storm")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func() int { return h.sim.Counters().Faults["rate_limit"] }, within(30*time.Second)).Should(BeNumerically(">=", 6))
		refusals := h.sim.Counters().Faults["rate_limit"]
		// Each try writes the in-flight record and then its refusal; what must not grow is a
		// write per try for a message that changes.
		Expect(int(writes.Load())).To(BeNumerically("<=", 2*refusals+2))
		got := getRender(vr)(Default)
		Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReconciling).Message).NotTo(MatchRegexp(`[0-9]+(\.[0-9]+)?m?s\b`),
			"no delay in the message")
	})
})
