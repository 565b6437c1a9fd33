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
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// A helper's review of the deleted budget's last state (budgetGone, finalCopy, finalSupersedes),
// the changes made from the ledger while no budget exists (keepInLedger, lastCopy) and objectGone
// without a budget: B1, B2, B4, B6, B7 and B8 (restarted) failed on b78edea and passed before it;
// B3, B5, B5b and B8 (same manager) failed before it too. Each passes now.

// createBudgetUID creates the namespace's budget again with uid.
func createBudgetUID(t *testing.T, h *batchHarness, uid string, spec videov1alpha1.VideoBudgetSpec) {
	t.Helper()
	b := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName, UID: types.UID(uid)}, Spec: spec}
	if err := h.server.Create(t.Context(), b); err != nil {
		t.Fatal(err)
	}
}

// ledgerExists reports whether the namespace's ledger ConfigMap exists.
func ledgerExists(t *testing.T, c client.Reader) bool {
	t.Helper()
	err := c.Get(t.Context(), client.ObjectKey{Namespace: "ops", Name: NewLedgers("ops").Name("team-a")}, &corev1.ConfigMap{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// payRender reserves for render i and folds its recorded job (job-i): one render used.
func payRender(t *testing.T, h *batchHarness, i int) *videov1alpha1.VideoRender {
	t.Helper()
	vr := batchRender(i)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
		t.Fatalf("render %d: %+v %v", i, d, err)
	}
	recordFolded(t, h, vr, fmt.Sprintf("job-%d", i))
	return vr
}

// B1. docs/spend-guard.md "Removing the limits on purpose": "To remove a namespace's limits (or to
// start its period again from zero), the platform deletes the VideoBudget and its ledger". The
// platform deletes the ledger, then the budget (or both before the controller's look). The
// budget's delete event keeps its last state (lastState); keepAhead finds the ledger gone and
// returns without forgetting it. Later in the period the platform creates a budget again, from
// zero: it takes the deleted budget's last state over (then takeFinal, now finalCopy), and the period's usage the
// platform removed is back: under maxRenders 1 the first render of the fresh budget waits.
func TestBreakBALedgerDeletedToStartFromZeroIsNotRefilledByTheDeletedBudgetsLastState(t *testing.T) {
	spec := videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}
	h := newBatchHarness(t, spec)
	close(h.hold)
	payRender(t, h, 0)
	if !ledgerExists(t, h.server) {
		t.Fatal("control: the ledger was not written")
	}
	// The platform starts the namespace's period from zero: the ledger, then the budget.
	if err := h.server.Delete(t.Context(), storedLedger(t, h)); err != nil {
		t.Fatal(err)
	}
	deleteBudget(t, h)
	clk := clocktesting.NewFakeClock(time.Now())
	r := opsController(h, h.g, clk, nil)
	opsReconcile(t, r, clk, 1) // the controller's look at the deletion
	if ledgerExists(t, h.server) {
		t.Fatal("control: the deleted ledger is back after the deletion's look")
	}
	// Later in the period: a fresh budget.
	createBudget(t, h, spec, nil)
	opsReconcile(t, r, clk, 1)
	b := h.budget(t)
	if b.Status.Used.Renders != 0 {
		t.Errorf("the platform deleted the ledger and the budget to start the period from zero; the budget created again "+
			"says %d render(s) used (ledgerBudgetUID %q, chargedJobs %v): the deleted budget's last state was taken over",
			b.Status.Used.Renders, b.Status.LedgerBudgetUID, b.Status.ChargedJobs)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
		t.Errorf("maxRenders 1 in a period started from zero: the first render waits (%+v, %v)", d, err)
	}
}

// B2. A GitOps replace (kubectl replace --force): b1 deleted, b2 created at once. The guard,
// reading the API server after a conflict, takes the ledger over for b2 before b1's delete event
// reaches its handler (the informer's handlers run after its cache is updated, each listener in
// its own goroutine): b1's last state is kept (lastState) after the takeover, and nothing takes it
// (then takeFinal, run only in a takeover). b2 pays two more renders. b2 is then deleted, its delete
// event DeleteStateUnknown (a relist; budgetDeleted ignores it): the deletion's look (keepAhead)
// finds b1's stale state, not of the ledger's budget, no budget existing: finalSupersedes writes
// it over b2's ledger. The budget created again takes over 1 render of 3 paid; under maxRenders 3
// two more are paid.
func TestBreakBAStaleDeletedBudgetsLastStateIsNotWrittenOverALaterBudgetsLedger(t *testing.T) {
	spec := videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](3)}
	h := newBatchHarness(t, spec)
	close(h.hold)
	payRender(t, h, 0)
	// kubectl replace --force: b1 deleted, b2 created.
	deleteBudget(t, h)
	createBudgetUID(t, h, "b2", spec)
	// The guard takes the ledger over for b2 and pays two renders.
	payRender(t, h, 1)
	payRender(t, h, 2)
	if b := h.budget(t); b.UID != "b2" || b.Status.Used.Renders != 3 {
		t.Fatalf("control: b2 should have taken 1 render over and paid 2: uid %s, used %+v", b.UID, b.Status.Used)
	}
	clk := clocktesting.NewFakeClock(time.Now())
	r := opsController(h, h.g, clk, nil) // b1's delete event, handled after the takeover
	opsReconcile(t, r, clk, 1)           // b2 exists: an ordinary look
	// b2 deleted; its delete event is DeleteStateUnknown: ignored by budgetDeleted.
	deleteBudget(t, h)
	opsReconcile(t, r, clk, 1) // the deletion's look
	if l, _, _ := h.g.ledgers.read(t.Context(), h.server, "team-a"); l == nil || l.Used.Renders != 3 || l.BudgetUID != "b2" {
		t.Errorf("after b2's deletion the ledger holds %+v (budget %q), want b2's 3 renders", l.Used, l.BudgetUID)
	}
	createBudgetUID(t, h, "b3", spec)
	opsReconcile(t, r, clk, 1)
	if b := h.budget(t); b.Status.Used.Renders != 3 {
		t.Errorf("3 renders paid this period; the budget created again took over %d", b.Status.Used.Renders)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(3), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || !d.Wait {
		t.Errorf("maxRenders 3 with 3 renders paid: a fourth is admitted (%+v, %v)", d, err)
	}
}

// B4. docs/spend-guard.md "Removing the limits on purpose": "Nothing the manager still holds for
// the deleted budget (a copy held back after a failed write, a charge of a job that ends later)
// creates the ledger again". A budget write's ledger copy fails for a moment (held back), the
// ledger is writable again, and the platform deletes the budget and its ledger to remove the
// limits. A render's job ends before the controller's look at the deletion: its finalizer's
// Charge finds no budget; keepInLedger now starts from the ledger (lastCopy), whose readCurrent
// first writes the copy held back: the ledger is created again, and the namespace is limited
// again until the period ends.
func TestBreakBAChargeAfterTheLimitsWereRemovedDoesNotCreateTheLedgerAgainFromACopyHeldBack(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)})
	close(h.hold)
	writable := unwritableLedgers(t, h)
	writable.Store(true)
	vr := payRender(t, h, 0)
	writable.Store(false)
	// A charge of another job: its ledger write fails (its finalizer would charge it again).
	if err := h.g.Charge(t.Context(), "team-a", JobCharge{JobID: "job-x", Seconds: 5}); err == nil {
		t.Fatal("a charge whose ledger write failed reported success")
	}
	writable.Store(true)
	// The platform removes the limits: the ledger and the budget.
	if err := h.server.Delete(t.Context(), storedLedger(t, h)); err != nil {
		t.Fatal(err)
	}
	deleteBudget(t, h)
	// The render's job ends; its finalizer charges it.
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), vr); err != nil {
		t.Fatal(err)
	}
	c := ChargeOf(vr)
	c.Seconds = 10
	if err := h.g.Charge(t.Context(), "team-a", c); err != nil {
		t.Logf("the finalizer's charge: %v", err)
	}
	if ledgerExists(t, h.server) {
		l, _, _ := h.g.ledgers.read(t.Context(), h.server, "team-a")
		t.Errorf("the ledger the platform deleted with its budget was created again by a deleted render's charge: %+v (budget %q)",
			l.Used, l.BudgetUID)
	}
}

// B5 (pre-existing). docs/spend-guard.md "Removing the limits on purpose": "Nothing the manager
// still holds for the deleted budget (a copy held back after a failed write, ...) creates the
// ledger again". A ledger copy fails for a moment (the namespace's failure is set), the ledger is
// writable again, and the platform removes the limits (the budget and its ledger); the
// controller's look at the deletion drops the copy held back. A render then asks to pay: the
// guard's write starts from its own copy of the deleted budget (slot.latest), and, the ledger not
// confirmed, writes that copy to the ledger before deciding (writeBatch: "Fail closed"): the
// ledger is created again and the namespace is limited again until the period ends.
func TestBreakBAReservationAfterTheLimitsWereRemovedDoesNotCreateTheLedgerAgain(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)})
	close(h.hold)
	writable := unwritableLedgers(t, h)
	writable.Store(true)
	payRender(t, h, 0)
	writable.Store(false)
	if err := h.g.Charge(t.Context(), "team-a", JobCharge{JobID: "job-x", Seconds: 5}); err == nil {
		t.Fatal("a charge whose ledger write failed reported success")
	}
	writable.Store(true)
	if err := h.server.Delete(t.Context(), storedLedger(t, h)); err != nil {
		t.Fatal(err)
	}
	deleteBudget(t, h)
	clk := clocktesting.NewFakeClock(time.Now())
	r := opsController(h, h.g, clk, nil)
	opsReconcile(t, r, clk, 1) // the deletion's look: the ledger stays deleted
	if ledgerExists(t, h.server) {
		t.Fatal("control: the ledger is back")
	}
	d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(10), "a", "", bound.Estimate{Seconds: 10}, nil)
	if ledgerExists(t, h.server) {
		t.Errorf("the ledger the platform deleted was created again by a render's reservation (decision %+v, %v)", d, err)
	}
	if err != nil || d.Wait {
		t.Errorf("the platform removed the limits (budget and ledger deleted), yet a render waits: %+v, %v", d, err)
	}
}

// B5b (pre-existing). As B5, but the guard holds no copy of the deleted budget when the render
// asks (here a release while no budget existed dropped it; a manager with more than 256 guarded
// namespaces drops idle copies too): the reservation finds no budget, and withoutBudget refuses on
// the namespace's failed ledger write, which nothing will ever clear (the ledger is gone, no budget
// is written): "admissions resume by themselves once a write succeeds" never happens; the
// namespace, whose limits were removed, pays nothing until the manager restarts.
func TestBreakBLimitsRemovedAfterAFailedLedgerCopyDoNotStopTheNamespaceForEver(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)})
	close(h.hold)
	writable := unwritableLedgers(t, h)
	writable.Store(true)
	payRender(t, h, 0)
	writable.Store(false)
	if err := h.g.Charge(t.Context(), "team-a", JobCharge{JobID: "job-x", Seconds: 5}); err == nil {
		t.Fatal("a charge whose ledger write failed reported success")
	}
	writable.Store(true)
	if err := h.server.Delete(t.Context(), storedLedger(t, h)); err != nil {
		t.Fatal(err)
	}
	deleteBudget(t, h)
	clk := clocktesting.NewFakeClock(time.Now())
	r := opsController(h, h.g, clk, nil)
	opsReconcile(t, r, clk, 1) // the deletion's look: the ledger stays deleted
	// A refused submission's release, while no budget exists.
	if err := h.g.Release(t.Context(), "team-a", "uid-7", "a"); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		opsReconcile(t, r, clk, 1)
		clk.Step(time.Minute)
		d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(10+i), "a", "", bound.Estimate{Seconds: 10}, nil)
		if err != nil || d.Wait {
			t.Fatalf("look %d: the platform removed the limits (budget and ledger deleted; ledger exists: %v) and the ledger is writable, "+
				"yet a render waits: %+v, %v", i, ledgerExists(t, h.server), d, err)
		}
	}
}

// B6. The manager's namespace restored from a backup taken before b1 replaced b0 (Velero's default
// includes ConfigMaps): the ledger holds b0's copy (1 render). b1 (2 renders) is deleted (a
// replace). Render 1's job ends before the controller's look at the deletion: its finalizer
// charges 450 s; keepInLedger starts from the ledger (lastCopy: b0's, this process's copy is of
// b1) and writes the charge there. Then b1's delete event and the deletion's look: b1's last state
// is not of the ledger's budget, and no budget exists: finalSupersedes writes it over the ledger,
// without the charge (kept for b0's copies only). The budget created again charges render 1's job
// its 10 s estimate (the service no longer reads it): 440 s lost. At 7e91e7b the charge went onto
// this process's copy of b1 and was written: kept.
func TestBreakBAChargeKeptInTheLedgerWhileNoBudgetExistsIsNotOverwrittenByTheDeletedBudgetsLastState(t *testing.T) {
	spec := videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)}
	h := newBatchHarness(t, spec)
	close(h.hold)
	payRender(t, h, 0)
	older := storedLedger(t, h).DeepCopy()
	vr := payRender(t, h, 1)
	// The restore: the ledger goes back to its copy before render 1, of budget b0.
	var l ledger
	if err := json.Unmarshal([]byte(older.Data[ledgerKey]), &l); err != nil {
		t.Fatal(err)
	}
	l.BudgetUID = "b0"
	raw, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	cm := storedLedger(t, h)
	cm.Data = map[string]string{ledgerKey: string(raw)}
	if err := h.server.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	deleteBudget(t, h)
	// Render 1's job ended at 450 s; its finalizer charges it.
	clk := clocktesting.NewFakeClock(time.Now())
	r := opsController(h, h.g, clk, nil) // the service's answers are not read (nil): a gone job is charged its estimate
	finalizerCharge(t, h, r, vr, 450, nil)
	opsReconcile(t, r, clk, 1) // the deletion's look
	createBudget(t, h, spec, nil)
	opsReconcile(t, r, clk, 3)
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 450 || len(b.Status.Reservations) != 1 {
		t.Errorf("job-1 cost 450 s, charged by its finalizer while no budget existed; the budget created again used %d s "+
			"(renders %d, reservations %+v, chargedJobs %v)", b.Status.Used.RenderSeconds, b.Status.Used.Renders,
			b.Status.Reservations, b.Status.ChargedJobs)
	}
}

// B7. Issue 30 (ledger.go holds): "unguarded renders do not each cost an API read". objectGone
// now queues a change for every deleted render or preview that recorded a job, in namespaces
// without a VideoBudget too (most namespaces); its write (keepInLedger) reads the ledger from the
// API server (lastCopy: uncached, no free answer kept) and wakes the VideoBudget controller. 20
// renders deleted in a namespace that never had a budget: 20 ledger reads (none at 7e91e7b). With
// the ledgers' watch synced, none.
func TestBreakBRendersDeletedInANamespaceWithoutABudgetCostNoLedgerReads(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{videov1alpha1.AddToScheme, corev1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	server := fake.NewClientBuilder().WithScheme(s).Build()
	var reads atomic.Int32
	c := interceptor.NewClient(server, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				reads.Add(1)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	g := New(c, c, clocktesting.NewFakeClock(time.Now()), 10*time.Second, NewLedgers("ops"))
	r := NewReconciler(ReconcilerOptions{Client: c, Reader: c, Clock: clocktesting.NewFakeClock(time.Now()), Grace: time.Minute,
		Recheck: time.Hour, Retry: time.Second, Ledgers: g.ledgers, Guard: g})
	inf := &fakeInformer{} // the manager's ledger watch, synced: it sent no ledger of this namespace
	inf.synced.Store(true)
	if err := g.ledgers.Watch(inf); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		vr := batchRender(i)
		vr.Status.JobID, vr.Status.SubmittedAt = fmt.Sprintf("job-%d", i), &metav1.Time{Time: time.Now()}
		r.objectGone(vr, false) // its delete event
		// Whatever it queued is written by the controller's next reconcile (its first step).
		_ = g.flushDue(t.Context(), "team-a")
	}
	if n := reads.Load(); n > 0 {
		t.Errorf("20 renders deleted in a namespace that never had a VideoBudget cost %d ledger reads from the API server, want none", n)
	}
	r.unsent.mu.Lock()
	kept := len(r.unsent.m)
	r.unsent.mu.Unlock()
	t.Logf("last states kept in memory for the unguarded namespace: %d", kept)
}

// B8. docs/spend-guard.md "While no budget exists": "At the end of the period in which the budget
// was deleted, the namespace is no longer limited: it has no budget." A monthly budget is deleted
// in November with a render's job running. On December 1 the job's end (November 30) is charged by
// the render's finalizer: the ledger's copy is rolled to the period the change is made in
// (December) before the change is applied, so the ledger names a budget of the current period, and
// the namespace, which has had no budget since November, is limited through December: its renders
// wait "until a VideoBudget named default is created again". Two cases: the same manager (its
// copy of the deleted budget, rolled by writeBatch before the NotFound: 7e91e7b too), and a manager
// started since (keepInLedger from the ledger rolls it: new in b78edea; 7e91e7b dropped the charge).
func TestBreakBAChargeAfterThePeriodOfTheDeletionDoesNotExtendTheDeletedBudgetsLimits(t *testing.T) {
	for _, restarted := range []bool{false, true} {
		t.Run(fmt.Sprintf("restarted=%v", restarted), func(t *testing.T) {
			h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)})
			close(h.hold)
			vr := payRender(t, h, 0)
			deleteBudget(t, h)
			clk := clocktesting.NewFakeClock(time.Now())
			opsReconcile(t, opsController(h, h.g, clk, nil), clk, 1) // the deletion's look
			// The next period begins.
			_, end := PeriodBounds(videov1alpha1.BudgetPeriodMonthly, h.g.clock.Now())
			if restarted {
				h.g = New(h.server, h.server, clocktesting.NewFakeClock(end.Add(time.Hour)), 10*time.Second, NewLedgers("ops"))
			} else {
				h.g.clock.(*clocktesting.FakeClock).SetTime(end.Add(time.Hour))
			}
			if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
				t.Fatalf("control: in the period after the deletion's the namespace is not limited: %+v, %v", d, err)
			}
			// Render 0's job ended on the last day of the deletion's period; its finalizer charges it.
			if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), vr); err != nil {
				t.Fatal(err)
			}
			c := ChargeOf(vr)
			c.Seconds, c.EndedAt = 10, end.Add(-time.Hour)
			if err := h.g.Charge(t.Context(), "team-a", c); err != nil {
				t.Fatal(err)
			}
			d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(2), "a", "", bound.Estimate{Seconds: 10}, nil)
			if err != nil || d.Wait {
				l, _, _ := h.g.ledgers.read(t.Context(), h.server, "team-a")
				t.Errorf("the budget was deleted in the previous period, yet after a charge of that period's job a render waits: %+v, %v "+
					"(the ledger's period now ends %v)", d, err, l.PeriodEnd)
			}
		})
	}
}
