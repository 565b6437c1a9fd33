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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// Adversarial review of f767cdf (the ledger copy's send rules).

// seqOf is the write count of the namespace's ledger as the API server holds it.
func (w *simWorld) seqOf(t *testing.T) int64 {
	t.Helper()
	l, _, err := readLedgerAt(w.ctx, w.server, w.g.ledgers.at(simNS))
	if err != nil || l == nil {
		t.Fatalf("reading the ledger: %+v %v", l, err)
	}
	return l.Seq
}

// X1. Two managers (a second one by mistake, docs/spend-guard.md). The ledger is edited by hand
// into nonsense (or an older manager writes it): the manager that writes next rebuilds it
// (migrate), and its write count starts again from 1. The other manager's watch sends that write
// and the ones after, all with fewer writes than its copy: send ignores them as "a restore".
// Its next write loses its lock, reads the ledger, and load "brings it up" to that stale copy,
// whole: the first manager's writes since the rebuild are gone from the ledger. Here the first
// manager paid render r3 on a reservation; the second's look erases it (its view was not later:
// a reservation counts no usage), so r3's job is never charged (runningReserved: posted).
func TestBreakWatch2ASecondManagerIgnoresTheRebuiltLedgerAndWritesItsStaleCopyOverIt(t *testing.T) {
	for _, edit := range []string{"", "nonsense", "older"} {
		t.Run(map[string]string{"": "control, no hand edit", "nonsense": "the ledger edited into nonsense",
			"older": "an older manager writes the ledger"}[edit], func(t *testing.T) {
			w := newSimWorld(t)
			w.steps(t, []simOp{
				{kind: opCreate, a: 100, b: 50}, {kind: opCreate, a: 100, b: 50}, {kind: opCreate, a: 100, b: 50},
				{kind: opCreate, a: 100, b: 60},
				{kind: opAdmit, a: 0}, {kind: opAdmit, a: 0}, {kind: opAdmit, a: 0}, {kind: opEnd, a: 0}, {kind: opReconcile},
				{kind: opClock, a: int64(time.Minute)}, {kind: opReconcile}, // the records folded
				{kind: opSwitch, a: 0}, {kind: opReconcile}, // the second manager starts, sent the ledger
				{kind: opSwitch, a: 0}, {kind: opReconcile}, // the first one again
			})
			if seq := w.seqOf(t); seq < 3 {
				t.Fatalf("precondition: the ledger was written %d times", seq)
			}
			t.Logf("before: ledger seq %d, %d renders, %d reservations", w.seqOf(t), w.ledgerHolding(t, 0).Used.Renders, len(w.ledgerHolding(t, 0).Reservations))
			if b, _ := w.budget(); edit == "older" {
				writeOlderLedger(t, w.server, b)
			} else if edit == "nonsense" {
				cm := &corev1.ConfigMap{}
				if err := w.server.Get(w.ctx, w.g.ledgers.at(simNS), cm); err != nil {
					t.Fatal(err)
				}
				cm.Data[ledgerKey] = "not a ledger"
				if err := w.server.Update(w.ctx, cm); err != nil {
					t.Fatal(err)
				}
			}
			// The first manager pays r3 (its write rebuilds the ledger after the hand edit).
			w.steps(t, []simOp{{kind: opAdmit, a: 0}})
			r3 := w.renders[3]
			if r3.job == nil {
				t.Fatal("precondition: r3 paid")
			}
			t.Logf("after r3 paid: ledger seq %d; other manager's copy seq %d; this one's %d", w.seqOf(t), w.og.ledgers.copyOf(simNS).l.Seq, w.g.ledgers.copyOf(simNS).l.Seq)
			// The second manager looks.
			w.steps(t, []simOp{{kind: opSwitch, a: 0}, {kind: opReconcile}})
			l, _, err := readLedgerAt(w.ctx, w.server, w.g.ledgers.at(simNS))
			if err != nil || l == nil {
				t.Fatalf("reading the ledger: %v", err)
			}
			t.Logf("after the look: ledger seq %d, %d renders, %d reservations", l.Seq, l.Used.Renders, len(l.Reservations))
			held := false
			for _, r := range l.Reservations {
				held = held || r.UID == string(r3.uid)
			}
			if !held && l.Used.Renders < 4 {
				t.Errorf("r3's job runs at the service, the ledger (%d writes) holds neither its reservation nor its render (%d renders used, %d reservations)",
					l.Seq, l.Used.Renders, len(l.Reservations))
			}
			if err := w.drain(); err != nil {
				t.Errorf("drain: %v", err)
			}
		})
	}
}

// X2. The ledgers' watch is down a while (an API server restarted, a network cut) and comes back
// with a relist (its resourceVersion too old: 410 Gone), as an informer does. Within the gap,
// this process created team-a's ledger (its budget's first write) and the platform then removed
// the limits on purpose (docs/spend-guard.md: deletes the VideoBudget and its ledger). The relist
// lists no ledger and the informer never held that one, so no event of it ever comes: not its
// add, not its delete (no DeletedFinalStateUnknown for an object the store never had). The copy
// keeps this process's own write of the deleted ConfigMap (send: never streamed, never gone),
// and holds answers from it once synced: the namespace waits until the period ends (or a
// restart), the ledger gone.
func TestBreakWatch2ALedgerCreatedAndDeletedWhileTheWatchWasDownStaysHeldUntilThePeriodEnds(t *testing.T) {
	for _, events := range []bool{true, false} {
		t.Run(map[bool]string{true: "control, the watch sends the add and the delete", false: "the watch relisted after the gap"}[events], func(t *testing.T) {
			now := time.Now()
			live := deletedBudgetThisMonth(now) // maxRenders 3 reached this month
			live.Status = videov1alpha1.VideoBudgetStatus{}
			server := withUIDs(fake.NewClientBuilder().WithScheme(recordsScheme(t)).WithObjects(live, batchRender(0), batchRender(1), batchRender(2), batchRender(3)).
				WithStatusSubresource(live).Build())
			ledgers := NewLedgers("ops")
			clk := clocktesting.NewFakeClock(now)
			g := New(server, server, clk, 10*time.Second, ledgers)
			inf := &fakeInformer{}
			if err := ledgers.Watch(inf); err != nil {
				t.Fatal(err)
			}
			inf.synced.Store(true) // listed: no ledger yet
			for i := range 3 {
				if d, err := g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
					t.Fatalf("render %d: %+v %v", i, d, err)
				}
			}
			if d, err := g.reserve(t.Context(), "VideoRender", batchRender(3), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || !d.Wait {
				t.Fatalf("control: maxRenders 3 reached: %+v %v", d, err)
			}
			cm := ledgerCM(t, server)
			if events {
				ledgers.watcher().OnAdd(cm, false)
			}
			// The platform removes the limits: the budget, then its ledger.
			if err := server.Delete(t.Context(), live); err != nil {
				t.Fatal(err)
			}
			if d, err := g.reserve(t.Context(), "VideoRender", batchRender(3), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || !d.Wait {
				t.Fatalf("control: the deleted budget's limits hold while its ledger exists: %+v %v", d, err)
			}
			if err := server.Delete(t.Context(), cm); err != nil {
				t.Fatal(err)
			}
			if events {
				ledgers.watcher().OnDelete(cm)
			}
			clk.Step(time.Hour)
			d, err := g.reserve(t.Context(), "VideoRender", batchRender(3), "a", "", bound.Estimate{Seconds: 10}, nil)
			if err != nil || d.Wait {
				t.Errorf("the platform deleted the budget and its ledger to remove the limits; an hour later a render still waits "+
					"(%q, until %v): holds answers from this process's copy of the deleted ConfigMap (%v)", d.Message, d.ResetAt, ledgers.copyOf("team-a") != nil)
			}
		})
	}
}

// X3. A ledger that leaves the watch's label selector (replaced by hand from a file without the
// label, `kubectl replace`, or its label removed) is still the ledger: load reads it by name and
// every write patches it. The informer sends a delete for it (an object leaving a selector is
// deleted to a watch); send marks its uid deleted for good and drops the copy, and ignores every
// later write of this process to it. Budget b1 was deleted this month with maxRenders reached:
// holds, synced, answers "free" from no copy, and the namespace pays without limits.
func TestBreakWatch2ALedgerThatLostItsLabelIsFreeOnceTheWatchSynced(t *testing.T) {
	for _, unlabel := range []bool{false, true} {
		t.Run(map[bool]string{false: "control, labelled", true: "its label removed"}[unlabel], func(t *testing.T) {
			server := withUIDs(fake.NewClientBuilder().WithScheme(recordsScheme(t)).Build())
			now := time.Now()
			ledgers := NewLedgers("ops")
			if err := ledgers.write(t.Context(), server, deletedBudgetThisMonth(now)); err != nil {
				t.Fatal(err)
			}
			g := New(server, server, clocktesting.NewFakeClock(now), 10*time.Second, ledgers)
			inf := &fakeInformer{}
			if err := ledgers.Watch(inf); err != nil {
				t.Fatal(err)
			}
			ledgers.watcher().OnAdd(ledgerCM(t, server), true)
			inf.synced.Store(true)
			if d, err := g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || !d.Wait {
				t.Fatalf("control: the deleted budget's limits hold: %+v %v", d, err)
			}
			if unlabel {
				cm := ledgerCM(t, server)
				cm.Labels = nil
				if err := server.Update(t.Context(), cm); err != nil {
					t.Fatal(err)
				}
				ledgers.watcher().OnDelete(cm) // it left the selector
			}
			if l, _, err := readLedgerAt(t.Context(), server, ledgers.at("team-a")); err != nil || l == nil || l.BudgetUID != "b1" {
				t.Fatalf("precondition: the ledger holds b1's limits: %+v %v", l, err)
			}
			d, err := g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{Seconds: 10}, nil)
			if err != nil || !d.Wait {
				t.Errorf("a namespace whose deleted budget's ledger (maxRenders 3 reached this month) holds its limits is admitted: %+v %v", d, err)
			}
		})
	}
}
