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
	"strings"
	"sync"
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
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

// docs/architecture.md "Never pay twice": the in-flight record is written with an optimistic lock
// before the paid call, and the job id right after it. Each spec breaks one write around the call
// (a conflict, a lost answer, a stale read, a shutdown, another process) and counts the paid jobs,
// through the real reconcilers, a real API server and the simulated service.
var _ = Describe("Never pay twice: the in-flight record around the paid call", func() {
	var h *harness
	start := keyedWorld(&h)

	// neverUnknown asserts that the object never became Stalled(SubmissionUnknown): no such
	// event was emitted for it.
	neverUnknown := func(name string) {
		GinkgoHelper()
		Expect(h.eventReasons(name)).NotTo(ContainElement(string(videov1alpha1.ReasonSubmissionUnknown)))
	}

	It("a conflict on the locked in-flight write leaves the server's status as it was and sends nothing", func() {
		start(simulator.Options{})
		var conflicted sync.Map // attempt ids whose in-flight write was refused
		var landed patchLog
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, _ := patch.Data(obj)
			if attempt := inFlightAttempt(data); attempt != "" {
				if _, loaded := conflicted.LoadOrStore("first", attempt); !loaded {
					conflicted.Store(attempt, true)
					return apierrors.NewConflict(schema.GroupResource{Group: videov1alpha1.GroupVersion.Group, Resource: "videorenders"}, obj.GetName(),
						fmt.Errorf("injected conflict"))
				}
			}
			err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			if err == nil {
				landed.add(string(data))
			}
			return err
		}}
		h.startManager()
		vr := storyRender(h.ns, "conflict", "Conflict")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())

		eventuallyReady(vr)
		first, ok := conflicted.Load("first")
		Expect(ok).To(BeTrue(), "the in-flight write was refused once")
		Expect(landed.containing(first.(string))).To(BeEmpty(), "the refused attempt reached the server by a later write")
		Expect(h.jobsNamed("Conflict")).To(HaveLen(1))
		Expect(h.sim.Calls(apiclient.EndpointRenderStoryboard)).To(Equal(1), "no call was made for the refused attempt")
		neverUnknown("conflict")
	})

	It("after a failed job-id write and a stale read, the job is adopted, not replaced by a never-sent attempt", func() {
		start(simulator.Options{})
		var jobIDFailures atomic.Int32
		var stale atomic.Pointer[videov1alpha1.VideoRender]
		var staleServed atomic.Bool
		h.intercept = &interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				data, _ := patch.Data(obj)
				if inFlightAttempt(data) != "" && stale.Load() == nil {
					// Keep the object as it was before the in-flight write: what a lagging cache serves.
					before := &videov1alpha1.VideoRender{}
					Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), before)).To(Succeed())
					stale.Store(before)
				}
				if strings.Contains(string(data), `"jobId"`) && jobIDFailures.Add(1) <= 4 {
					return errInjected
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if vr, ok := obj.(*videov1alpha1.VideoRender); ok && jobIDFailures.Load() >= 3 && stale.Load() != nil && staleServed.CompareAndSwap(false, true) {
					stale.Load().DeepCopyInto(vr)
					return nil
				}
				return c.Get(ctx, key, obj, opts...)
			},
		}
		h.startManager()
		vr := storyRender(h.ns, "stale", "Stale")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())

		eventuallyReady(vr)
		Expect(staleServed.Load()).To(BeTrue(), "a stale read was served")
		jobs := h.jobsNamed("Stale")
		Expect(jobs).To(HaveLen(1))
		Expect(getRender(vr)(Default).Status.JobID).To(Equal(jobs[0].ID), "the paid job is the one recorded")
		Consistently(func() int { return len(h.jobsNamed("Stale")) }, "500ms").Should(Equal(1))
		neverUnknown("stale")
	})

	It("an in-flight write whose outcome is unknown, with no call made, is cleared without a human", func() {
		start(simulator.Options{})
		var unknownOnce atomic.Bool
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, _ := patch.Data(obj)
			err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			if err == nil && inFlightAttempt(data) != "" && unknownOnce.CompareAndSwap(false, true) {
				// The write landed, but the answer was lost: a timeout, as far as the process knows.
				return apierrors.NewTimeoutError("injected: the answer to the write was lost", 1)
			}
			return err
		}}
		h.startManager()
		vr := storyRender(h.ns, "unknown-write", "Unknown write")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())

		eventuallyReady(vr)
		Expect(unknownOnce.Load()).To(BeTrue())
		Expect(h.jobsNamed("Unknown write")).To(HaveLen(1))
		neverUnknown("unknown-write")
	})

	It("a shutdown during N in-flight submissions lets each call and its job-id write finish", func() {
		// Each render call takes 1.5 s, so the manager is stopped while all of them are in flight.
		start(simulator.Options{Faults: simulator.Faults{Latency: 1500 * time.Millisecond,
			Endpoints: []string{apiclient.EndpointRenderStoryboard}}})
		h.startManager()
		// A manager that has called the service before: the key's circuit is closed, so the
		// submissions go together rather than after a first trial.
		warm := storyRender(h.ns, "warm-up", "Warm up")
		Expect(k8sClient.Create(ctx, warm)).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(getRender(warm)(g).Status.JobID).NotTo(BeEmpty()) }).Should(Succeed())
		const n = 4
		var renders []*videov1alpha1.VideoRender
		for i := range n {
			vr := storyRender(h.ns, fmt.Sprintf("rolling-%d", i), fmt.Sprintf("Rolling %d", i))
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			renders = append(renders, vr)
		}
		Eventually(func(g Gomega) {
			for _, vr := range renders {
				g.Expect(getRender(vr)(g).Status.Submission).NotTo(BeNil(), "%s is in flight", vr.Name)
			}
		}).Should(Succeed())

		By("stopping the manager, as a rolling update does")
		h.stopManager()
		for _, vr := range renders {
			got := getRender(vr)(Default)
			Expect(got.Status.Submission).To(BeNil(), "%s: the job id was written before the manager exited", vr.Name)
			Expect(got.Status.JobID).NotTo(BeEmpty(), vr.Name)
			Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeFalse(), vr.Name)
		}

		By("starting the new manager")
		h.startManager()
		for i, vr := range renders {
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%s: %+v", vr.Name, got.Status.Conditions)
			}).Should(Succeed())
			Expect(h.jobsNamed(fmt.Sprintf("Rolling %d", i))).To(HaveLen(1), vr.Name)
			neverUnknown(vr.Name)
		}
	})

	It("a stall from a stale process does not orphan the job another process records", func() {
		start(simulator.Options{RenderDuration: 10 * time.Minute}) // 1.2 s here
		release := make(chan struct{})
		var called atomic.Bool
		h.wrap = func(c apiclient.Interface) apiclient.Interface {
			return &gatedRender{Interface: c, gate: release, entered: &called}
		}
		h.startManager()
		vr := storyRender(h.ns, "hand-over", "Hand over")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(called.Load).Should(BeTrue(), "the old leader is in its paid call")

		By("a new leader starting meanwhile: it cannot know the attempt and stalls")
		newLeader := h.startExtraManager(nil)
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())

		By("the old leader finishing its call and recording the job, then exiting")
		close(release)
		Eventually(func(g Gomega) { g.Expect(getRender(vr)(g).Status.JobID).NotTo(BeEmpty()) }).Should(Succeed())
		h.stop()
		Eventually(h.done, within(30*time.Second)).Should(BeClosed())
		h.stop = nil

		By("the new leader following the job to its end")
		eventuallyReady(vr)
		jobs := h.jobsNamed("Hand over")
		Expect(jobs).To(HaveLen(1))
		Expect(getRender(vr)(Default).Status.JobID).To(Equal(jobs[0].ID))
		h.stopExtra(newLeader)
		h.extra = nil
	})

	It("a refusal whose status write conflicts is not taken for an unknown outcome", func() {
		start(simulator.Options{Faults: simulator.Faults{RateLimitShare: 1, RetryAfter: 10 * time.Millisecond,
			Endpoints: []string{apiclient.EndpointRenderStoryboard}}})
		var bumped atomic.Bool
		var vr *videov1alpha1.VideoRender
		h.wrap = func(c apiclient.Interface) apiclient.Interface {
			return &renderHook{Interface: c, after: func(created *apiclient.JobCreated, err error) (*apiclient.JobCreated, error) {
				if bumped.CompareAndSwap(false, true) {
					// Someone labels the object while the call is under way: the write of its
					// refusal then conflicts.
					setLabel(vr, "touched", "yes")
				}
				return created, err
			}}
		}
		h.startManager()
		vr = storyRender(h.ns, "refused-conflict", "Refused conflict")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func() int { return h.sim.Counters().Faults["rate_limit"] }).Should(BeNumerically(">=", 2))
		h.sim.SetFaults(simulator.Faults{})
		eventuallyReady(vr)
		Expect(bumped.Load()).To(BeTrue())
		Expect(h.jobsNamed("Refused conflict")).To(HaveLen(1))
		neverUnknown("refused-conflict")
	})

	It("a lost answer to the in-flight write while the spec changes sends the spec the record names", func() {
		start(simulator.Options{})
		var once atomic.Bool
		var vr *videov1alpha1.VideoRender
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, _ := patch.Data(obj)
			// Patch a copy: the caller must not learn the outcome from its own object.
			err := c.SubResource(sub).Patch(ctx, obj.DeepCopyObject().(client.Object), patch, opts...)
			if err == nil && inFlightAttempt(data) != "" && once.CompareAndSwap(false, true) {
				// The write landed; while its answer is lost, the user edits the spec.
				updateObject(vr, func(o client.Object) {
					o.(*videov1alpha1.VideoRender).Spec.Storyboard.VideoName = "Edited"
				})
				return apierrors.NewTimeoutError("injected: the answer to the write was lost", 1)
			}
			return err
		}}
		h.startManager()
		vr = storyRender(h.ns, "edited-meanwhile", "Original")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Generation).To(Equal(int64(2)))
			g.Expect(readyFor(&got.Status.JobStatus, 2)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		Expect(h.jobsNamed("Original")).To(HaveLen(1), "generation 1 was sent as generation 1")
		Expect(h.jobsNamed("Edited")).To(HaveLen(1), "generation 2 was sent once")
	})

	It("adopts the job when the job id write fails, with one submission", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		var failures atomic.Int32
		h.intercept = &interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				data, _ := patch.Data(obj)
				if strings.Contains(string(data), `"jobId"`) && failures.Add(1) <= 8 {
					return errInjected
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}
		h.startManager()
		vr := storyRender(h.ns, "lost-write", "Lost write")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		Expect(failures.Load()).To(BeNumerically(">", 8), "the job id write failed repeatedly")
		Consistently(func() int { return len(h.jobsNamed("Lost write")) }, "500ms").Should(Equal(1))
	})
})

// docs/architecture.md "Never pay twice" and "Failures the controller handles by itself": an
// outcome the controller cannot know (a crash after the call, a 500, a job id too long to record)
// stalls with SubmissionUnknown until a person confirms, unless the opt-in takes the documented
// 500 for a refusal, and an outage pauses the key's paid calls until a cheap read succeeds.
var _ = Describe("Never pay twice after an unknown outcome or during an outage", func() {
	var h *harness
	start := keyedWorld(&h)

	It("ends Stalled(SubmissionUnknown) after a crash between the paid call and the job id write, with one submission", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		crashed := h.crashAfterRender(1) // the manager dies right after the service accepted the job
		h.startManager()
		vr := storyRender(h.ns, "crash", "Crash")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(crashed.Load).Should(BeTrue())
		h.stopManager()
		Expect(h.jobsNamed("Crash")).To(HaveLen(1))
		Expect(getRender(vr)(Default).Status.Submission).NotTo(BeNil(), "the in-flight record was written before the call")
		Expect(getRender(vr)(Default).Status.JobID).To(BeEmpty(), "the crash came before the job id write")

		By("restarting the manager")
		h.wrap = nil
		h.startManager()
		var attempt string
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(kstatusOf(got)).To(Equal(status.FailedStatus))
			attempt = got.Status.Submission.AttemptID
			g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message).To(ContainSubstring(videov1alpha1.AnnotationConfirmResubmit + "=" + attempt))
		}).Should(Succeed())
		Consistently(func() int { return len(h.jobsNamed("Crash")) }, "1s").Should(Equal(1), "never a second paid job by itself")
		By("exposing the stuck submission's start for the alert on its age")
		got := getRender(vr)(Default)
		Expect(h.oldestSubmissions()).To(Equal(map[string]float64{
			"VideoRender": float64(got.Status.Submission.StartedAt.UnixNano()) / 1e9}))
		Expect(h.metric("video_operator_submissions_total", "kind", "VideoRender", "result", "unknown")).To(Equal(1.0),
			"the interrupted call is counted once as unknown by the process that finds it")

		By("confirming the resubmission with the attempt id")
		Eventually(func() error {
			cur := getRender(vr)(Default)
			cur.Annotations = map[string]string{videov1alpha1.AnnotationConfirmResubmit: attempt}
			return k8sClient.Update(ctx, cur)
		}).Should(Succeed())
		eventuallyReady(vr)
		Consistently(func() int { return len(h.jobsNamed("Crash")) }, "500ms").Should(Equal(2))
		Expect(h.oldestSubmissions()).To(BeEmpty(), "the resubmission got its job id")
	})

	It("a documented 500 on submit is an unknown outcome by default: nothing is sent again", func() {
		start(simulator.Options{Faults: simulator.Faults{ServerErrorShare: 1, Endpoints: []string{apiclient.EndpointRenderStoryboard}}})
		h.startManager()
		vr := storyRender(h.ns, "five-hundred", "Five hundred")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue(), "%+v", got.Status.Conditions)
			msg := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message
			g.Expect(msg).To(ContainSubstring("INTERNAL_ERROR"))
			g.Expect(msg).To(ContainSubstring(`videoName "Five hundred"`), "the user can find the job at the service")
		}).Should(Succeed())
		Consistently(func() int { return h.sim.Calls(apiclient.EndpointRenderStoryboard) }, "500ms").Should(Equal(1),
			"the service may have created the job: it is not paid for again without a human")
	})

	It("with the opt-in, a documented 500 on submit is taken as refused and submitted again", func() {
		start(simulator.Options{Faults: simulator.Faults{ServerErrorShare: 1, Endpoints: []string{apiclient.EndpointRenderStoryboard}}})
		h.internalErrorIsRefusal = true
		h.startManager()
		vr := storyRender(h.ns, "opted-in", "Opted in")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func() int { return h.sim.Calls(apiclient.EndpointRenderStoryboard) }).Should(BeNumerically(">=", 2))
		Expect(getRender(vr)(Default).Status.Phase).NotTo(Equal(videov1alpha1.PhaseFailed))
		h.sim.SetFaults(simulator.Faults{})
		eventuallyReady(vr)
		Expect(h.jobsNamed("Opted in")).To(HaveLen(1))
	})

	It("a job id longer than status.jobId holds stalls with SubmissionUnknown naming it, and is not paid again", func() {
		start(simulator.Options{})
		h.wrap = func(c apiclient.Interface) apiclient.Interface {
			return &renderHook{Interface: c, after: func(created *apiclient.JobCreated, err error) (*apiclient.JobCreated, error) {
				if err == nil {
					created.JobID += strings.Repeat("x", 100)
				}
				return created, err
			}}
		}
		h.startManager()
		vr := storyRender(h.ns, "long-id", "Long id")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionStalled).Message).To(ContainSubstring(h.jobsNamed("Long id")[0].ID))
		}).Should(Succeed())
		Consistently(func() int { return h.sim.Calls(apiclient.EndpointRenderStoryboard) }, "500ms").Should(Equal(1))
	})

	It("an outage that began while the key was idle costs no paid call; after an unknown outcome, paid submissions pause until a cheap read succeeds", func() {
		outage := simulator.Faults{ServerErrorShare: 1, Endpoints: []string{apiclient.EndpointRenderStoryboard, apiclient.EndpointListBrands}}
		start(simulator.Options{Faults: outage})
		h.startManager()
		first := storyRender(h.ns, "outage-first", "Outage first")
		Expect(k8sClient.Create(ctx, first)).To(Succeed())
		// Issue 10: the key has no recent answer, so the service is checked before paying.
		expectPaused := func(vr *videov1alpha1.VideoRender) {
			Eventually(func(g Gomega) {
				got := getRender(vr)(g)
				rec := conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReconciling)
				g.Expect(rec.Reason).To(Equal(string(videov1alpha1.ReasonServiceUnavailable)), "%+v", got.Status.Conditions)
				g.Expect(rec.Message).To(ContainSubstring("paused"))
				g.Expect(got.Status.Submission).To(BeNil())
			}).Should(Succeed())
		}
		expectPaused(first)
		Consistently(func() int { return h.sim.Calls(apiclient.EndpointRenderStoryboard) }, "500ms").Should(BeZero(),
			"an outage that began while nothing was in flight costs no paid call")

		// The brand list answers again but renders still fail: the trial call's outcome is unknown.
		h.sim.SetFaults(simulator.Faults{ServerErrorShare: 1, Endpoints: []string{apiclient.EndpointRenderStoryboard}})
		Eventually(func(g Gomega) {
			g.Expect(stalledWith(&getRender(first)(g).Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue())
		}).Should(Succeed())
		Expect(h.sim.Calls(apiclient.EndpointRenderStoryboard)).To(Equal(1))

		h.sim.SetFaults(outage)
		second := storyRender(h.ns, "outage-second", "Outage second")
		Expect(k8sClient.Create(ctx, second)).To(Succeed())
		expectPaused(second)
		Consistently(func() int { return h.sim.Calls(apiclient.EndpointRenderStoryboard) }, "500ms").Should(Equal(1),
			"the outage costs only the call already made")
		Expect(h.sim.Calls(apiclient.EndpointListBrands)).To(BeNumerically(">=", 2))

		h.sim.SetFaults(simulator.Faults{})
		eventuallyReady(second)
		Expect(h.jobsNamed("Outage second")).To(HaveLen(1))
		Expect(stalledWith(&getRender(first)(Default).Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue(),
			"the unknown outcome still waits for a human")
	})

	It("an outage of the paid endpoint alone spaces its trials out", func() {
		start(simulator.Options{Faults: simulator.Faults{ServerErrorShare: 1, Endpoints: []string{apiclient.EndpointRenderStoryboard}}})
		h.startManager()
		for i := range 6 {
			Expect(k8sClient.Create(ctx, storyRender(h.ns, fmt.Sprintf("render-outage-%d", i), fmt.Sprintf("Render outage %d", i)))).To(Succeed())
		}
		// With the harness's backoff (20 ms doubling to 200 ms), trials are spaced out (at about
		// 0, 20, 60, 140 and 300 ms): within 200 ms only four of the six objects are tried, never
		// all at once.
		Eventually(func() int { return h.sim.Calls(apiclient.EndpointRenderStoryboard) }).Should(BeNumerically(">=", 1))
		time.Sleep(200 * time.Millisecond)
		Expect(h.sim.Calls(apiclient.EndpointRenderStoryboard)).To(BeNumerically("<=", 4),
			"each unknown outcome holds the key's next trial back")
		h.sim.SetFaults(simulator.Faults{})
		Eventually(func(g Gomega) {
			var list videov1alpha1.VideoRenderList
			g.Expect(k8sClient.List(ctx, &list, client.InNamespace(h.ns))).To(Succeed())
			for _, r := range list.Items {
				g.Expect(readyFor(&r.Status.JobStatus, 1) || stalledWith(&r.Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue(), r.Name)
			}
		}).Should(Succeed())
		for i := range 6 {
			Expect(len(h.jobsNamed(fmt.Sprintf("Render outage %d", i)))).To(BeNumerically("<=", 1))
		}
	})
})

// docs/scale-out.md "Disjoint groups": two managers given one namespace by mistake (two
// releases whose watchNamespaces overlap, each with its own Lease and its own fingerprint
// secret) both reconcile it. The in-flight record must keep each job from being paid twice and
// the budget from being overrun.
var _ = Describe("Several managers, attacked", func() {
	It("two managers leading over the same namespace pay each render once and stay within maxRenders", func() {
		h := newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.createBudget(videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily, MaxRenders: ptr.To[int64](6)})
		h.startManager()
		h.startExtraManager(nil)
		renders := h.createRenders("both", 10)
		// Which renders get the room is a race between the two leaders (a reservation one holds
		// may wait for the budget controller's grace before the other may use it): the promise
		// is about money, never pay twice and never beyond the limit, not about how fast the
		// room is used.
		Eventually(func(g Gomega) {
			ready := 0
			for _, vr := range renders {
				st := getRender(vr)(g).Status.JobStatus
				if readyFor(&st, 1) {
					ready++
				} else if st.JobID == "" {
					g.Expect(budgetWaiting(&st)).To(BeTrue(), "%+v", st.Conditions)
				}
			}
			g.Expect(ready).To(BeNumerically(">=", 5))
		}, within(30*time.Second)).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(h.sim.Submissions(testAPIKey)).To(BeNumerically("<=", 6), "never beyond maxRenders: 6")
			for _, vr := range renders {
				g.Expect(len(h.jobsNamed(getRender(vr)(g).Spec.Storyboard.VideoName))).To(BeNumerically("<=", 1), "each render paid once")
			}
		}, "2s", "100ms").Should(Succeed())
		b := h.budget(Default).Status
		Expect(b.Used.Renders+b.Reserved.Renders).To(BeNumerically(">=", int64(h.sim.Submissions(testAPIKey))), "never count less than was paid")
	})
})

// patchLog records the status patches that reached the server.
type patchLog struct {
	mu      sync.Mutex
	patches []string
}

func (l *patchLog) add(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.patches = append(l.patches, p)
}

func (l *patchLog) containing(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, p := range l.patches {
		if strings.Contains(p, s) {
			out = append(out, p)
		}
	}
	return out
}

// gatedRender holds a render call until gate is closed, as a process whose paid call is still
// under way.
type gatedRender struct {
	apiclient.Interface
	gate    <-chan struct{}
	entered *atomic.Bool
}

func (g *gatedRender) RenderStoryboard(ctx context.Context, body any) (*apiclient.JobCreated, error) {
	g.entered.Store(true)
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, &apiclient.NotSentError{Endpoint: apiclient.EndpointRenderStoryboard, Err: ctx.Err()}
	}
	return g.Interface.RenderStoryboard(ctx, body)
}

// renderHook lets a spec change what a render call returns, after the real call was made.
type renderHook struct {
	apiclient.Interface
	after func(*apiclient.JobCreated, error) (*apiclient.JobCreated, error)
}

func (r *renderHook) RenderStoryboard(ctx context.Context, body any) (*apiclient.JobCreated, error) {
	return r.after(r.Interface.RenderStoryboard(ctx, body))
}
