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
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

// Issue 11, "A call budget per API key that never blocks a worker", through the real reconcilers
// (4 workers per kind), a real API server and the simulated service.
var _ = Describe("The call budget of an API key", func() {
	const tenantBKey = "sk-video-tenant-b-0c8e2f6a91d3"
	var h *harness

	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak(tenantBKey)
		}
	})

	It("never makes another tenant wait behind one tenant's backlog, and keeps each key within its rate", func() {
		h = newHarness(simulator.Options{APIKeys: []string{testAPIKey, tenantBKey}})
		h.createSecret(testAPIKey)
		h.createNamedSecret("tenant-b", tenantBKey)
		h.serviceRate, h.serviceBurst = 4, 1 // one call every quarter second per key
		h.startManager()

		const backlog = 16
		began := time.Now()
		for i := range backlog {
			Expect(k8sClient.Create(ctx, storyRender(h.ns, fmt.Sprintf("a-%02d", i), fmt.Sprintf("A %d", i)))).To(Succeed())
		}
		Eventually(func() int { return h.sim.Submissions(testAPIKey) }).Should(BeNumerically(">=", 1))

		// Tenant B arrives behind tenant A's backlog, in the same queues and workers.
		var bs []*videov1alpha1.VideoRender
		for i := range 2 {
			vr := storyRender(h.ns, fmt.Sprintf("b-%d", i), fmt.Sprintf("B %d", i))
			vr.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "tenant-b", Key: videov1alpha1.DefaultAPIKeySecretKey}
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			bs = append(bs, vr)
		}
		for _, vr := range bs {
			Eventually(func(g Gomega) {
				g.Expect(readyFor(&getRender(vr)(g).Status.JobStatus, 1)).To(BeTrue())
			}, within(15*time.Second)).Should(Succeed())
		}
		elapsed := time.Since(began)
		aSubmitted := h.sim.Submissions(testAPIKey)
		Expect(aSubmitted).To(BeNumerically("<", backlog), "tenant B finished before tenant A's backlog was through")
		// Every call of A (a check, submissions, reads) took a slot: submissions alone cannot
		// outrun the rate.
		Expect(float64(aSubmitted)).To(BeNumerically("<=", 4*elapsed.Seconds()+1),
			"tenant A made %d submissions in %s at 4 calls/s", aSubmitted, elapsed)
		Expect(h.sim.Submissions(tenantBKey)).To(Equal(2))

		// A's backlog drains, each object submitted once.
		Eventually(func() int { return h.sim.Submissions(testAPIKey) }, within(60*time.Second)).Should(Equal(backlog))
		for i := range backlog {
			Expect(h.jobsNamed(fmt.Sprintf("A %d", i))).To(HaveLen(1))
		}
	})

	It("pauses the whole key on a 429 until Retry-After, instead of each object retrying on its own", func() {
		h = newHarness(simulator.Options{Faults: simulator.Faults{RateLimitShare: 1, RetryAfter: 3 * time.Second}})
		h.createSecret(testAPIKey)
		h.startManager()
		var vrs []*videov1alpha1.VideoRender
		for i := range 6 {
			vr := storyRender(h.ns, fmt.Sprintf("storm-%d", i), fmt.Sprintf("Storm %d", i))
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			vrs = append(vrs, vr)
		}
		limited := func() int { return h.sim.Counters().Faults["rate_limit"] }
		Eventually(limited).Should(BeNumerically(">=", 1))
		first := limited()
		// The backoff of one object is 20 ms here: without the pause, six objects would make
		// dozens of calls in two seconds.
		Consistently(limited, "2s", "100ms").Should(Equal(first), "calls made while the key was paused")

		h.sim.SetFaults(simulator.Faults{})
		for _, vr := range vrs {
			eventuallyReady(vr)
			Expect(h.jobsNamed(vr.Spec.Storyboard.VideoName)).To(HaveLen(1))
		}
	})

	It("spaces the reads of a key's running jobs beyond the poll interval when the budget needs it, and says so once", func() {
		h = newHarness(simulator.Options{TimeScale: 0.05}) // renders of about 6 s
		h.createSecret(testAPIKey)
		h.serviceRate, h.serviceBurst = 5, 1
		h.startManager()
		const n = 10
		for i := range n {
			Expect(k8sClient.Create(ctx, storyRender(h.ns, fmt.Sprintf("spaced-%d", i), fmt.Sprintf("Spaced %d", i)))).To(Succeed())
		}
		// 10 running jobs at 5 calls/s, 80% for polls: each read about every 2.5 s, more than the
		// 60 ms poll interval of these specs.
		Eventually(func(g Gomega) []string {
			var list videov1alpha1.VideoRenderList
			g.Expect(k8sClient.List(ctx, &list, client.InNamespace(h.ns))).To(Succeed())
			var msgs []string
			for _, vr := range list.Items {
				if rec := conditionOf(&vr.Status.JobStatus, videov1alpha1.ConditionReconciling); rec.Message != "" {
					msgs = append(msgs, rec.Message)
				}
			}
			return msgs
		}, within(20*time.Second)).Should(ContainElement(ContainSubstring("running jobs share this API key's budget of 5 calls/s")))
		began, reads := time.Now(), h.sim.Calls(apiclient.EndpointGetJob)
		for i := range n {
			eventuallyReady(storyRender(h.ns, fmt.Sprintf("spaced-%d", i), ""))
		}
		elapsed := time.Since(began)
		Expect(float64(h.sim.Calls(apiclient.EndpointGetJob)-reads)).To(BeNumerically("<=", 5*elapsed.Seconds()+1),
			"reads stayed within the key's rate")
	})
})

// The call budget while calls wait, through the reconcilers: a wait claims no generation, a rate
// under one call a second still submits, running jobs are read while submissions wait, a 429
// pauses every caller of the key, and neither a restart nor a failed write of a job's end delays
// its read. R1 to R10 number these findings across this file and
// internal/callgate/review_unit_test.go.
var _ = Describe("The call budget of an API key while calls wait", func() {
	var h *harness

	// R1. The idle-key check before a paid call (admitSubmission, callgate.AdmitProbe) now returns after
	// the check with nothing set in status, and Reconcile then sets status.observedGeneration to
	// the new generation: the old generation's Ready=True is written as if it were the new one's,
	// and kstatus (Argo CD, Flux) reports the new spec Current before it was even submitted. The
	// budget's own short waits (budgetWait <= PollMin, checkBrand's slot, a poll turned away) do
	// the same.
	It("never writes the new generation as observed while only the old generation's Ready is set", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		type snap struct {
			gen, observed, readyGen int64
			ready                   metav1.ConditionStatus
			kstatus                 status.Status
		}
		var mu sync.Mutex
		var seen []snap
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			if vr, ok := obj.(*videov1alpha1.VideoRender); ok && err == nil {
				r := conditionOf(&vr.Status.JobStatus, videov1alpha1.ConditionReady)
				mu.Lock()
				seen = append(seen, snap{vr.Generation, vr.Status.ObservedGeneration, r.ObservedGeneration, r.Status, kstatusOf(vr)})
				mu.Unlock()
			}
			return err
		}}
		h.startManager()
		vr := storyRender(h.ns, "observed", "Observed")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		// The key goes idle: its last answer is older than the one-second fresh window.
		time.Sleep(1500 * time.Millisecond)
		got := getRender(vr)(Default)
		got.Spec.Storyboard.VideoName = "Observed 2"
		Expect(k8sClient.Update(ctx, got)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(readyFor(&getRender(vr)(g).Status.JobStatus, 2)).To(BeTrue())
		}, within(15*time.Second)).Should(Succeed())
		mu.Lock()
		defer mu.Unlock()
		for _, s := range seen {
			if s.gen == 2 && s.observed == 2 && s.ready == metav1.ConditionTrue {
				Expect(s.readyGen).To(Equal(int64(2)),
					"status written with observedGeneration 2 and generation 1's Ready=True (kstatus %s): %+v", s.kstatus, seen)
			}
		}
	})

	// R2. Below one call a second the slot that follows the idle-key check always comes more than
	// a second after the check's answer, so every slot is spent on another check: the paid call
	// never goes. Any --service-rate-limit under 1 with --service-burst 1 (or a backlog longer
	// than the burst) livelocks the key on brand-list reads.
	It("submits at a rate under one call a second", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.serviceRate, h.serviceBurst = 0.5, 1
		h.startManager()
		vr := storyRender(h.ns, "slow-key", "Slow key")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func() int { return h.sim.Submissions(testAPIKey) }, within(15*time.Second)).Should(Equal(1), func() string {
			return fmt.Sprintf("no submission after %d brand-list checks", h.sim.Calls(simulator.EndpointListBrands))
		})
	})

	// R3. A submission that finds its key's circuit waiting (a paid call unanswered past the slow
	// threshold, a trial under way, a probe under way, an open circuit) has already taken an
	// urgent slot, makes no call with it, and takes a new one on its next look a few ms later:
	// waiting submissions consume the whole budget for nothing, and routine polls of running
	// jobs, which never reserve, get no token for as long as the wait lasts.
	It("keeps polling running jobs while submissions wait for an unanswered paid call", func() {
		h = newHarness(simulator.Options{TimeScale: 0.25}) // renders of about 30 s
		h.createSecret(testAPIKey)
		h.serviceRate, h.serviceBurst = 10, 1
		var hangStarted atomic.Int64
		h.wrap = func(in apiclient.Interface) apiclient.Interface {
			return &hangingRender{Interface: in, started: &hangStarted}
		}
		h.startManager()
		for i := range 3 {
			vr := storyRender(h.ns, fmt.Sprintf("running-%d", i), fmt.Sprintf("Running %d", i))
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			Eventually(func(g Gomega) string { return getRender(vr)(g).Status.JobID }, within(10*time.Second)).ShouldNot(BeEmpty())
		}
		Expect(k8sClient.Create(ctx, storyRender(h.ns, "hang", "Hang"))).To(Succeed())
		Eventually(hangStarted.Load, within(10*time.Second)).ShouldNot(BeZero())
		// Past the slow threshold (a fifth of the 5 s call timeout): the key is suspect.
		time.Sleep(1200 * time.Millisecond)
		for i := range 20 {
			Expect(k8sClient.Create(ctx, storyRender(h.ns, fmt.Sprintf("waiting-%02d", i), fmt.Sprintf("Waiting %d", i)))).To(Succeed())
		}
		time.Sleep(500 * time.Millisecond)
		before := h.sim.Calls(simulator.EndpointGetJob)
		time.Sleep(2 * time.Second)
		reads := h.sim.Calls(simulator.EndpointGetJob) - before
		// 3 running jobs at 10 calls/s, 80% for polls: a read about every 375 ms each, about 16 in
		// two seconds. Waiting submissions make no call.
		Expect(reads).To(BeNumerically(">=", 4), "routine polls of running jobs while submissions wait")
	})

	// R8 through the reconcilers: a submission gets a 429 (Retry-After 3 s) while the objects
	// behind it hold slots of a 4 calls/s, burst 1 budget; none of them may call during the pause.
	It("makes no call while the key is paused, also for objects that held a slot before the 429", func() {
		h = newHarness(simulator.Options{TimeScale: 0.25}) // renders of about 30 s
		h.createSecret(testAPIKey)
		h.serviceRate, h.serviceBurst = 4, 1
		var limitedAt atomic.Int64
		h.wrap = func(in apiclient.Interface) apiclient.Interface {
			return &limitedRender{Interface: in, at: &limitedAt}
		}
		h.startManager()
		// The key is busy: its running jobs are read, so its circuit is closed and fresh, as at scale.
		for i := range 2 {
			vr := storyRender(h.ns, fmt.Sprintf("busy-%d", i), fmt.Sprintf("Busy %d", i))
			Expect(k8sClient.Create(ctx, vr)).To(Succeed())
			Eventually(func(g Gomega) string { return getRender(vr)(g).Status.JobID }, within(10*time.Second)).ShouldNot(BeEmpty())
		}
		Expect(k8sClient.Create(ctx, storyRender(h.ns, "limited", "Limited"))).To(Succeed())
		for i := range 6 {
			Expect(k8sClient.Create(ctx, storyRender(h.ns, fmt.Sprintf("behind-%d", i), fmt.Sprintf("Behind %d", i)))).To(Succeed())
		}
		Eventually(limitedAt.Load, within(10*time.Second)).ShouldNot(BeZero())
		calls := func() int {
			return h.sim.Calls(simulator.EndpointRenderStoryboard) + h.sim.Calls(simulator.EndpointGetJob) +
				h.sim.Calls(simulator.EndpointListBrands)
		}
		time.Sleep(100 * time.Millisecond)
		before := calls()
		time.Sleep(2 * time.Second) // the pause lasts 3 s from the 429
		Expect(calls()-before).To(BeZero(), "calls made while the key was paused by a 429")
	})

	// R9. status.callbackKeyId (callsBack when found) now survives a restart (it used to be in memory, "false after a
	// restart, so such jobs are polled at the normal pace: the safe side"). Without
	// --callback-key-file the manager signs callback URLs with a key drawn at each start
	// (cmd/manager callbackOptions), so after a restart the callbacks of running jobs are refused,
	// yet those jobs are read only at the callback fallback interval (5 min by default).
	It("reads a job submitted before a restart at the normal pace when its callback cannot be recognised", func() {
		h = newHarness(simulator.Options{TimeScale: 0.05}) // renders of about 6 s
		h.createSecret(testAPIKey)
		h.callbackPoll = 30 * time.Second
		h.callbackKey = []byte(strings.Repeat("a", 32))
		h.startManager()
		vr := storyRender(h.ns, "restarted", "Restarted")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) string { return getRender(vr)(g).Status.CallbackKeyID }, within(10*time.Second)).ShouldNot(BeEmpty())
		h.stopManager()
		h.callbackKey = []byte(strings.Repeat("b", 32)) // a new start without --callback-key-file
		h.startManager()
		// The job ends about 6 s after its submission; polling at the normal pace sees it at once.
		Eventually(func(g Gomega) {
			g.Expect(readyFor(&getRender(vr)(g).Status.JobStatus, 1)).To(BeTrue())
		}, within(15*time.Second)).Should(Succeed())
	})

	// R10. poll forgets a job in the budget (budgets.done, deferred) as soon as it read that the
	// job ended, before the status write that records it has landed. When that write fails (a
	// conflict: the other replica wrote status.callback, a user edit), the next reconcile finds
	// the job untracked and takes it for one it sees for the first time after a restart: its read
	// is spread over the poll window (up to the key's spacing, 20 min at 10,000 jobs and 10
	// calls/s), though this process just read it and knows it ended.
	It("reads a job again at once when the write of its end failed", func() {
		// Previews that run for the whole spec beside one render of 5 s.
		h = newHarness(simulator.Options{PreviewDuration: time.Hour, RenderDuration: 5 * time.Second})
		h.createSecret(testAPIKey)
		h.callbackPoll = time.Hour // only callbacks end the jobs
		h.serviceRate, h.serviceBurst = 2, 1
		var conflictAt atomic.Int64
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, _ := patch.Data(obj)
			if obj.GetName() == "conflicted" && strings.Contains(string(data), `"completedAt"`) && conflictAt.CompareAndSwap(0, time.Now().UnixNano()) {
				return apierrors.NewConflict(schema.GroupResource{Group: videov1alpha1.GroupVersion.Group, Resource: "videorenders"},
					obj.GetName(), fmt.Errorf("injected conflict"))
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}
		h.startManager()
		// 16 running jobs at 2 calls/s: a spacing of 10 s.
		for i := range 15 {
			Expect(k8sClient.Create(ctx, storyPreview(h.ns, fmt.Sprintf("other-%02d", i), fmt.Sprintf("Other %d", i)))).To(Succeed())
		}
		Eventually(func() int { return h.sim.Submissions(testAPIKey) }, within(30*time.Second)).Should(Equal(15))
		vr := storyRender(h.ns, "conflicted", "Conflicted")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(conflictAt.Load, within(60*time.Second)).ShouldNot(BeZero())
		Eventually(func(g Gomega) {
			g.Expect(readyFor(&getRender(vr)(g).Status.JobStatus, 1)).To(BeTrue())
		}, within(30*time.Second), "20ms").Should(Succeed())
		// A routine read would come after the key's 10 s spacing; "at once" is well under it,
		// with room for a loaded machine (2 s was once exceeded by 80 ms beside a benchmark).
		Expect(time.Since(time.Unix(0, conflictAt.Load()))).To(BeNumerically("<", 5*time.Second),
			"from the failed write of the job's end to its status")
	})
})

// hangingRender holds the render of the video named "Hang" until its call's deadline.
type hangingRender struct {
	apiclient.Interface
	started *atomic.Int64
}

func (h *hangingRender) RenderStoryboard(ctx context.Context, body any) (*apiclient.JobCreated, error) {
	data, _ := json.Marshal(body)
	if strings.Contains(string(data), `"Hang"`) {
		h.started.Store(time.Now().UnixNano())
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return h.Interface.RenderStoryboard(ctx, body)
}

// limitedRender answers the first render of the video named "Limited" with a 429 and a
// Retry-After of 3 s, 300 ms after it was sent, so that the objects behind it hold slots by then.
type limitedRender struct {
	apiclient.Interface
	at *atomic.Int64
}

func (l *limitedRender) RenderStoryboard(ctx context.Context, body any) (*apiclient.JobCreated, error) {
	data, _ := json.Marshal(body)
	if strings.Contains(string(data), `"Limited"`) && l.at.Load() == 0 {
		time.Sleep(300 * time.Millisecond)
		l.at.Store(time.Now().UnixNano())
		return nil, &apiclient.APIError{StatusCode: http.StatusTooManyRequests, RetryAfter: 3 * time.Second}
	}
	return l.Interface.RenderStoryboard(ctx, body)
}
