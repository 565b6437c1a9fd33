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
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// An adversarial review of reservations written ahead (grants): sequences written by hand from a
// reading of grant.go, each failing on acb9f8d.
func TestBreakReviewSimulationCases(t *testing.T) {
	cases := []simCase{{
		// spec.period changed from daily to monthly while a reservation written ahead waits: the
		// month holds 3 renders of maxRenders 3, the day 1. The simulation checks a render that
		// pays against the period as set (spec.period), rolled or not.
		name: "a reservation written ahead, then the period changed from daily to monthly",
		ops: []simOp{
			{kind: opSetPeriod, a: daily},
			{kind: opSetRenders, a: 3},
			{kind: opCreate, a: 100, b: 50}, {kind: opAdmit, a: 0},
			{kind: opCreate, a: 100, b: 50}, {kind: opAdmit, a: 1},
			{kind: opClock, a: int64(26 * time.Hour)},
			{kind: opCreate, a: 100, b: 50}, {kind: opAdmit, a: 2},
			{kind: opCreate, a: 100, b: 50},
			{kind: opGather, a: 3},
			{kind: opPreview, a: 0},
			{kind: opSetPeriod, a: monthly},
			{kind: opAdmit, a: 3},
		},
	}}
	runSimCases(t, cases)
}

// spec.period changed from daily to monthly while a reservation written ahead waits: the render
// pays on it although the month's renders reached maxRenders. noRoomNow decides on the view and
// the ledger copy as they are, not rolled to the budget's new period (the day's usage, not the
// month's); the ordinary way (writeBatch) rolls first and waits.
func TestBreakReviewAGrantPaysAfterThePeriodChangedToALongerOne(t *testing.T) {
	w := newSimWorld(t)
	steps := []simOp{
		{kind: opSetPeriod, a: daily},
		{kind: opSetRenders, a: 3},
		{kind: opCreate, a: 100, b: 50}, {kind: opAdmit, a: 0}, // r0, today
		{kind: opCreate, a: 100, b: 50}, {kind: opAdmit, a: 1}, // r1, today
		{kind: opClock, a: int64(26 * time.Hour)},              // the next day: 0 renders in the day, 2 in the month
		{kind: opCreate, a: 100, b: 50}, {kind: opAdmit, a: 0}, // r2: 1 in the day, 3 in the month
		{kind: opCreate, a: 100, b: 50},
		{kind: opGather, a: 0},  // r3 queues its reservation ahead (room in the day)
		{kind: opPreview, a: 0}, // a write carries it
		{kind: opSetPeriod, a: monthly},
	}
	w.steps(t, steps)
	r3 := w.holding(t, 3)
	if err := w.step(simOp{kind: opAdmit, a: 0}); err != nil { // r3 comes back to pay
		t.Fatalf("admit: %v", err)
	}
	grant := w.g.observer.(*simGrants).last
	// The ordinary way, for comparison: a render of the same namespace reserving now waits.
	if err := w.step(simOp{kind: opCreate, a: 100, b: 50}); err != nil {
		t.Fatal(err)
	}
	obj := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: simNS, Name: w.renders[4].name, UID: w.renders[4].uid}}
	if d, err := w.g.reserve(w.ctx, "VideoRender", obj, "probe", "", w.renders[4].est, nil); err == nil && d.Wait {
		t.Logf("the ordinary way waits: %s", d.Message)
	}
	w.reconcile()
	b, _ := w.budget()
	var month int64
	start, _ := PeriodBounds(videov1alpha1.BudgetPeriodMonthly, w.now())
	for _, j := range w.jobs {
		if !j.submitted.Before(start) {
			month++
		}
	}
	if r3.job != nil {
		t.Fatalf("render #3 paid on its grant (%s) under monthly maxRenders %d while %d jobs were submitted in the month (budget used %d renders)",
			grant, *b.Spec.MaxRenders, month-1, b.Status.Used.Renders)
	}
}

// The same with ONE manager: the VideoBudget controller folds the unbounded job's 764 s into the
// ledger while a guard write of the namespace holds the slot's turn (here: held by hand), so
// learn() did not give the guard its new copy (on acb9f8d; since ed18289 both write one copy); the controller's view write then fails (in the
// real race: a conflict with that guard write's own view write; the controller retries after
// Retry). Until then the view and the guard's copy both show 30 s, and a grant pays past the
// lowered limit.
func TestBreakReviewAGrantPaysPastALoweredLimitWhenLearnFindsTheTurnTaken(t *testing.T) {
	w := newSimWorld(t)
	steps := append(aheadThenLowered(),
		simOp{kind: opEnd, a: 0},
	)
	w.steps(t, steps)
	r1 := w.holding(t, 1)
	w.clk.Step(6 * time.Second) // the end is foldAge old: the controller folds it
	w.g.writers.mu.Lock()
	slot := w.g.writers.slots[simNS]
	w.g.writers.mu.Unlock()
	slot.turn <- struct{}{} // a guard write of the namespace is in progress
	w.failWrites = 1
	w.reconcile()
	<-slot.turn
	l := w.ledgerHolding(t, 764)
	w.unpaid(t, r1, fmt.Sprintf("under maxRenderSeconds 300 while the ledger held %d s used", l.Used.RenderSeconds))
}

// One manager, no injected failure: only the order of two writers. A guard write of the namespace
// (another render's reservation) has written the ledger and is about to write its view; meanwhile
// a render's unbounded job ends (764 s) and the VideoBudget controller folds it into the ledger
// and writes its view. learn() found the turn taken (acb9f8d), so the guard's copy stayed without the fold;
// the guard's view write then loses its lock, reads the controller's view and writes its own
// state over it: the view goes back (764 s used in the ledger, 0 s in the status), and a render
// holding a grant pays under the lowered maxRenderSeconds 300.
func TestBreakReviewAGuardViewWriteOverwritesTheControllersFoldAndAGrantPays(t *testing.T) {
	w := newSimWorld(t)
	steps := append(aheadThenLowered(),
		simOp{kind: opCreate, a: 10, b: 5}, // r2
	)
	w.steps(t, steps)
	r1, r2 := w.holding(t, 1), w.renders[2]
	// The guard's view writes pause once, before the API server sees the first one.
	var armed atomic.Bool
	reached, proceed := make(chan struct{}), make(chan struct{})
	w.g.client = interceptor.NewClient(w.c.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*videov1alpha1.VideoBudget); ok && armed.CompareAndSwap(true, false) {
				close(reached)
				<-proceed
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	armed.Store(true)
	done := make(chan error, 1)
	go func() {
		obj := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: simNS, Name: r2.name, UID: r2.uid}}
		d, err := w.g.reserve(w.ctx, "VideoRender", obj, "a1", "", r2.est, nil)
		if err == nil && d.Wait {
			err = fmt.Errorf("render #2 waits: %s", d.Message)
		}
		done <- err
	}()
	<-reached                                                // render #2's reservation is in the ledger; its view write is next
	if err := w.step(simOp{kind: opEnd, a: 0}); err != nil { // r0's job ends: 764 s in its status
		t.Fatal(err)
	}
	w.clk.Step(6 * time.Second) // foldAge: the controller, woken by the render's update, folds it
	w.reconcile()
	if b := w.viewOf(t); b.Status.Used.RenderSeconds < 764 {
		t.Fatalf("precondition: the controller's view shows %d s", b.Status.Used.RenderSeconds)
	}
	close(proceed)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	l := w.ledgerHolding(t, 764)
	if v := w.viewOf(t); v.Status.Used.RenderSeconds < l.Used.RenderSeconds {
		t.Errorf("the budget's status went back: it shows %d s used, the ledger holds %d s", v.Status.Used.RenderSeconds, l.Used.RenderSeconds)
	}
	if err := w.step(simOp{kind: opAdmit, a: 0}); err != nil {
		t.Fatalf("admit: %v", err)
	}
	if r1.job != nil {
		t.Errorf("render #1 paid on its grant (%s) under maxRenderSeconds 300 while the ledger held %d s used",
			w.g.observer.(*simGrants).last, l.Used.RenderSeconds)
	}
}

// viewOf is the budget's status as the API server holds it (the view, not the ledger).
func (w *simWorld) viewOf(t *testing.T) *videov1alpha1.VideoBudget {
	var b videov1alpha1.VideoBudget
	if err := w.server.Get(w.ctx, client.ObjectKey{Namespace: simNS, Name: videov1alpha1.VideoBudgetName}, &b); err != nil {
		t.Fatal(err)
	}
	return &b
}

// A ledger restored from a backup taken after a reservation was written ahead holds it, but not
// what was folded since: an unbounded job's 764 s under maxRenderSeconds lowered to 300. The
// render pays on its reservation only as the ordinary way would after catching the ledger up to
// this process's later copy: it waits.
func TestBreakReviewAGrantDoesNotPayOnALedgerRestoredBehindIt(t *testing.T) {
	w := newSimWorld(t)
	steps := []simOp{
		{kind: opCreate, a: 0, b: 764}, {kind: opAdmit, a: 0}, // r0, unbounded (30 s guessed), runs
		{kind: opCreate, a: 100, b: 50},
		{kind: opGather, a: 0},  // r1 queues its reservation ahead
		{kind: opPreview, a: 0}, // a write carries it
	}
	w.steps(t, steps)
	at := w.g.ledgers.at(simNS)
	var backup corev1.ConfigMap
	if err := w.server.Get(w.ctx, at, &backup); err != nil {
		t.Fatal(err)
	}
	for _, o := range []simOp{{kind: opSetSeconds, a: 300}, {kind: opEnd, a: 0}} {
		if err := w.step(o); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
	}
	w.clk.Step(6 * time.Second) // the end is foldAge old: the controller folds it
	w.reconcile()
	w.ledgerHolding(t, 764)
	var cur corev1.ConfigMap
	if err := w.server.Get(w.ctx, at, &cur); err != nil {
		t.Fatal(err)
	}
	cur.Data = backup.Data
	if err := w.server.Update(w.ctx, &cur); err != nil {
		t.Fatal(err)
	}
	if err := w.step(simOp{kind: opAdmit, a: 0}); err != nil {
		t.Fatalf("admit: %v", err)
	}
	if r1 := w.renders[1]; r1.job != nil {
		t.Fatalf("render #1 paid on its grant (%s) on a ledger restored behind 764 s used under maxRenderSeconds 300", w.g.observer.(*simGrants).last)
	}
}

// steps runs ops in w, failing t at the first step that returns an error.
func (w *simWorld) steps(t *testing.T, ops []simOp) {
	t.Helper()
	for i, o := range ops {
		if err := w.step(o); err != nil {
			t.Fatalf("step %d (%s): %v", i, o, err)
		}
	}
}

// ledgerHolding is the namespace's ledger as the API server holds it, which must hold at least
// seconds used (a spec's precondition).
func (w *simWorld) ledgerHolding(t *testing.T, seconds int64) *ledger {
	t.Helper()
	l, _, err := readLedgerAt(w.ctx, w.server, w.g.ledgers.at(simNS))
	if err != nil || l == nil || l.Used.RenderSeconds < seconds {
		t.Fatalf("precondition: the ledger holds %+v (%v), not %d s used", l, err, seconds)
	}
	return l
}

// aheadThenLowered starts an unbounded render (30 s guessed, 764 s really) and writes a second
// render's reservation ahead, then lowers maxRenderSeconds to 300.
func aheadThenLowered() []simOp {
	return []simOp{
		{kind: opCreate, a: 0, b: 764}, {kind: opAdmit, a: 0}, // r0, unbounded, runs
		{kind: opCreate, a: 100, b: 50},
		{kind: opGather, a: 0},  // r1 queues its reservation ahead
		{kind: opPreview, a: 0}, // a write carries it
		{kind: opSetSeconds, a: 300},
	}
}

// holding is render #i, which must hold a grant (its reservation queued or written ahead).
func (w *simWorld) holding(t *testing.T, i int) *simRender {
	t.Helper()
	r := w.renders[i]
	if r.gathered == "" {
		t.Fatalf("render #%d holds no grant", i)
	}
	return r
}

// unpaid brings r back to pay (the next admit step), and fails t if it paid: why says on what.
func (w *simWorld) unpaid(t *testing.T, r *simRender, why string) {
	t.Helper()
	if err := w.step(simOp{kind: opAdmit, a: 0}); err != nil {
		t.Fatalf("admit: %v", err)
	}
	if r.job != nil {
		t.Fatalf("%s paid on its grant (%s) %s", r.name, w.g.observer.(*simGrants).last, why)
	}
}
