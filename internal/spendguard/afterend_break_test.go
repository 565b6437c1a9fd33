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

package spendguard

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The ways a charge written after its render's end could count less or twice, found by an
// adversarial review (each failed on the first version of afterend.go).

func reviewEnded(name, jobID string, mark int64, after string, secs int, completed time.Time) *videov1alpha1.VideoRender {
	vr := batchRender(0)
	vr.Name, vr.UID = name, types.UID("uid-"+name)
	vr.Status.JobID = jobID
	vr.Status.CompletedAt = &metav1.Time{Time: completed}
	vr.Status.ChargeMark = &videov1alpha1.ChargeMark{Count: mark, After: after}
	vr.Status.VideoDuration = &metav1.Duration{Duration: time.Duration(secs) * time.Second}
	return vr
}

func reviewReconcile(t *testing.T, h *batchHarness, clk *clocktesting.FakeClock, times int) {
	t.Helper()
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clk,
		Grace: time.Minute, Recheck: time.Hour, Retry: time.Second, Ledgers: NewLedgers("ops"), Guard: h.g})
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}
	for range times {
		if _, err := r.Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		clk.Step(recoverEvery + time.Second)
	}
}

// A budget created again after its ledger's period ended takes the ledger's chargeCount
// but not its chargedJobs (MergeLedger): every render marked within maxChargedJobs of that count,
// charged long ago in the previous period, now looks "certainly not charged" and is charged
// again, into the new period.
func TestABudgetCreatedAfterItsLedgersPeriodEndedDoesNotChargeOldJobsAgain(t *testing.T) {
	now := time.Now()
	old := reviewEnded("old", "j-old", 70, "j69", 40, now.AddDate(0, -2, 0))
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(1000))}, old)
	close(h.hold)
	// The new budget has not merged the ledger yet.
	b := h.budget(t)
	b.Status.LedgerBudgetUID = ""
	if err := h.server.Status().Update(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	// The replaced budget's ledger: an ended period in which j-old was charged (count 71).
	ids := []string{}
	for i := range 9 {
		ids = append(ids, fmt.Sprintf("j%d", 72+i))
	}
	l := ledger{Period: videov1alpha1.BudgetPeriod("Monthly"), PeriodStart: &metav1.Time{Time: now.AddDate(0, -2, 0)},
		PeriodEnd: &metav1.Time{Time: now.AddDate(0, -1, 0)}, Used: videov1alpha1.BudgetUsage{RenderSeconds: 400},
		ChargedJobs: append([]string{"j-old"}, ids...), ChargeCount: 80, BudgetUID: "b0"}
	raw, _ := json.Marshal(l)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: NewLedgers("ops").Name("team-a")},
		Data: map[string]string{ledgerKey: string(raw)}}
	if err := h.server.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	reviewReconcile(t, h, clocktesting.NewFakeClock(now), 2)
	b = h.budget(t)
	t.Logf("new budget: count %d, used %d s, chargedJobs %v", b.Status.ChargeCount, b.Status.Used.RenderSeconds, b.Status.ChargedJobs)
	if b.Status.Used.RenderSeconds != 0 || b.Status.ChargeCount != 80 {
		t.Fatalf("the new period counts %d s (count %d) of a job charged in the previous period", b.Status.Used.RenderSeconds, b.Status.ChargeCount)
	}
}

// A budget that starts its count afresh (ledger removed by the platform, the documented
// "explicit removal of the limits"; a restore without status; a rollback whose CRD pruned
// chargeCount) in a namespace whose ended renders still carry marks: every one of them is
// charged again as the count walks past its mark.
func TestABudgetWhoseHistoryStartsAgainDoesNotChargeOldMarkedRendersAgain(t *testing.T) {
	now := time.Now()
	var objs []client.Object
	for i := range 10 {
		// Each marked after the job charged before it under the earlier budget.
		after := "before-0"
		if i > 0 {
			after = fmt.Sprintf("old-%d", i-1)
		}
		objs = append(objs, reviewEnded(fmt.Sprintf("r%02d", i), fmt.Sprintf("old-%d", i), int64(i+1), after, 30, now.Add(-48*time.Hour)))
	}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(1000))}, objs...)
	close(h.hold)
	reviewReconcile(t, h, clocktesting.NewFakeClock(now), 12)
	b := h.budget(t)
	t.Logf("fresh budget: count %d, used %d s, chargedJobs %v", b.Status.ChargeCount, b.Status.Used.RenderSeconds, b.Status.ChargedJobs)
	if b.Status.Used.RenderSeconds != 0 {
		t.Fatalf("a fresh budget charged %d s (%d jobs) of renders that ended and were charged under an earlier budget",
			b.Status.Used.RenderSeconds, b.Status.ChargeCount)
	}
}

// The counting argument needs c > m (charged after the mark was read). A job charged
// at or before its mark (a charge written before its end, as a budget not taken over yet or the previous release does, then the end
// write was lost; the end is written again under the new path, whose mark reads the count that
// already includes it) is charged twice when the count is exactly m + maxChargedJobs.
func TestAJobChargedBeforeItsEndWasMarkedIsNotChargedAgain(t *testing.T) {
	t.Run("charged before the end write, which is written again", func(t *testing.T) {
		b := &videov1alpha1.VideoBudget{}
		chargeJobAt(b, "j", 10, nil, false, time.Time{})                          // charged before its end: count 1
		mark := videov1alpha1.ChargeMark{Count: b.Status.ChargeCount, After: "j"} // end written again under the new path
		for i := range maxChargedJobs {
			chargeJobAt(b, fmt.Sprintf("k%d", i), 1, nil, false, time.Time{})
		}
		if (JobCharge{JobID: "j", Mark: &mark, Seconds: 10}).change(b) {
			t.Fatalf("j charged twice at count %d (mark %+v): used %d s", b.Status.ChargeCount, mark, b.Status.Used.RenderSeconds)
		}
	})
	t.Run("upgrade: charged by the previous release, count 0", func(t *testing.T) {
		b := &videov1alpha1.VideoBudget{}
		b.Status.ChargedJobs = []string{"legacy-1", "j"} // previous release: no chargeCount
		b.Status.Used.RenderSeconds = 10
		mark := videov1alpha1.ChargeMark{After: "j"} // count 0
		for i := range maxChargedJobs {
			chargeJobAt(b, fmt.Sprintf("k%d", i), 1, nil, false, time.Time{})
		}
		if (JobCharge{JobID: "j", Mark: &mark, Seconds: 10}).change(b) {
			t.Fatalf("j charged twice at count %d (mark %+v)", b.Status.ChargeCount, mark)
		}
	})
}

// Lost wakeup: a charge queued after its end whose flush fires while another write holds the
// namespace's turn longer than the write timeout is left in the queue with no flush armed. It is
// never written while the namespace is quiet, and the VideoBudget controller will not recover it
// either: ChargePending stays true.
func TestAChargeWhoseFlushMeetsABusyTurnIsStillWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for rideDelay twice")
	}
	lost := reviewEnded("r-j1", "j1", 0, "", 12, time.Now().Add(-time.Hour))
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))}, lost)
	h.g.writers.timeout = 200 * time.Millisecond
	h.pump(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", Estimate{}, nil)
	}()
	<-h.held // a write holds the turn (a slow API server, client-side throttling)
	h.g.chargeLaterQueued("team-a", JobCharge{JobID: "j1", Seconds: 12})
	time.Sleep(chargeLaterDelay + 4*h.g.writers.timeout)
	close(h.hold)
	wg.Wait()
	time.Sleep(chargeLaterDelay + time.Second)
	h.g.writers.mu.Lock()
	s := h.g.writers.slots["team-a"]
	queued, flushing := len(s.queue), s.flushing
	h.g.writers.mu.Unlock()
	reviewReconcile(t, h, clocktesting.NewFakeClock(time.Now()), 2)
	b := h.budget(t)
	t.Logf("queue %d, flush armed %v, used %d s", queued, flushing, b.Status.Used.RenderSeconds)
	if !charged(b, "j1") {
		t.Fatalf("j1's charge stalled: queued %d with no flush armed (%v); used %d s",
			queued, flushing, b.Status.Used.RenderSeconds)
	}
}

// No crash needed: a charge after the end whose writes fail chargeLaterTries times (a busy
// budget: ErrBusy, 5xx) is handed to the VideoBudget controller, which finds it only at its next
// look (recoverEvery, ends older than recoverAge). A namespace that charged more than
// maxChargedJobs other jobs meanwhile (a few per second) never gets it: the budget counts less.
func TestAChargeWhoseWritesKeepFailingIsNotGivenUp(t *testing.T) {
	lost := reviewEnded("r-j1", "j1", 0, "", 12, time.Now().Add(-time.Hour))
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(1000))}, lost)
	close(h.hold)
	h.onWrite = func(n int32) error {
		if n <= 5 {
			return apierrors.NewServiceUnavailable("injected")
		}
		return nil
	}
	h.g.chargeLaterQueued("team-a", JobCharge{JobID: "j1", Seconds: 12})
	// The namespace's other renders keep writing (each write carries j1's charge, queued again
	// after each failure).
	for i := 0; !charged(h.budget(t), "j1"); i++ {
		_ = h.g.chargeNow(t.Context(), "team-a", JobCharge{JobID: fmt.Sprintf("busy-%d", i), Seconds: 1})
		if i > 50 {
			t.Fatal("j1 never left the queue")
		}
	}
	for i := range maxChargedJobs + 1 {
		if err := h.g.chargeNow(t.Context(), "team-a", JobCharge{JobID: fmt.Sprintf("k%d", i), Seconds: 1}); err != nil {
			t.Fatal(err)
		}
	}
	reviewReconcile(t, h, clocktesting.NewFakeClock(time.Now()), 2)
	b := h.budget(t)
	// Every other job is 1 s: what is above their count is j1's.
	if b.Status.Used.RenderSeconds-(b.Status.ChargeCount-1) != 12 {
		t.Fatalf("j1's 12 s are lost for good without any crash: count %d, used %d s", b.Status.ChargeCount, b.Status.Used.RenderSeconds)
	}
}

// A render about to submit again charges the end it marked first, and does not move on when
// that charge's write fails (reserveBudget stops): the mark stays until the charge is in.
func TestAFailedChargeOfAMarkedEndKeepsTheRenderFromMovingOn(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))})
	close(h.hold)
	h.onWrite = func(n int32) error {
		if n == 1 {
			return apierrors.NewServiceUnavailable("injected")
		}
		return nil
	}
	c := JobCharge{JobID: "j-prev", Seconds: 9, Mark: &videov1alpha1.ChargeMark{}}
	if err := h.g.chargeNow(t.Context(), "team-a", c); err == nil {
		t.Fatal("a charge whose write failed reported success: the render would move on without it")
	}
	if err := h.g.chargeNow(t.Context(), "team-a", c); err != nil {
		t.Fatal(err)
	}
	if b := h.budget(t); !charged(b, "j-prev") || b.Status.Used.RenderSeconds != 9 {
		t.Fatalf("used %d s, ids %v", b.Status.Used.RenderSeconds, b.Status.ChargedJobs)
	}
}
