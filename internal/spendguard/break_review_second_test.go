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
)

// The review's two cases with a second manager by mistake (docs/spend-guard.md "A second manager
// by mistake"): it writes the ledger and its view write fails, so neither this manager's view nor
// the last ledger it wrote shows that write. A grant decides on the later of that copy and the
// ledger as the watch last delivered it.

// A second manager whose clock is 5 min ahead releases a reservation written ahead by the first
// (to it, past the grace); its view write fails. The render must not pay on a reservation the
// ledger no longer holds, and every job at the service is counted.
func TestBreakReviewAGrantPaysOnAReservationASkewedManagerReleased(t *testing.T) {
	w := newSimWorld(t)
	w.steps(t, []simOp{
		{kind: opCreate, a: 100, b: 50},
		{kind: opGather, a: 0},
		{kind: opCreate, a: 100, b: 50},
		{kind: opAdmit, a: 1},
		{kind: opSwitch, a: int64(5 * time.Minute)},
		{kind: opFailWrites, a: 1},
		{kind: opReconcile}, // releases render #0's reservation in the ledger; its view write fails
		{kind: opSwitch, a: int64(5 * time.Minute)},
	})
	r0 := w.holding(t, 0)
	l, _, err := readLedgerAt(w.ctx, w.server, w.g.ledgers.at(simNS))
	if err != nil || l == nil {
		t.Fatalf("reading the ledger: %v", err)
	}
	for _, r := range l.Reservations {
		if r.UID == string(r0.uid) {
			t.Fatalf("precondition: the ledger still holds render #0's reservation: %+v", r)
		}
	}
	if err := w.step(simOp{kind: opAdmit, a: 0}); err != nil {
		t.Fatalf("admit: %v", err)
	}
	if got := w.g.observer.(*simGrants).last; got == GrantUsed {
		t.Fatalf("render #0 paid on its grant (%s) although the ledger held no reservation of it", got)
	}
	w.steps(t, []simOp{{kind: opReconcile}})
	w.clk.Step(2 * time.Minute)
	for _, r := range w.managers() {
		w.r = r
		w.reconcile()
	}
	b, ok := w.budget()
	if !ok {
		t.Fatal("no budget")
	}
	if b.Status.Used.Renders != int64(len(w.jobs)) {
		t.Fatalf("%d jobs at the service, the budget counts %d renders", len(w.jobs), b.Status.Used.Renders)
	}
}

// Seed 49026's hole with a second manager: the limit is lowered, the second manager (clock 30 s
// ahead: the reservation written ahead is still young to it) folds an unbounded job's 764 s into
// the ledger and its view write fails. The render must not pay under maxRenderSeconds 300.
func TestBreakReviewAGrantPaysPastALoweredLimitAnotherManagerFolded(t *testing.T) {
	w := newSimWorld(t)
	w.steps(t, append(aheadThenLowered(),
		simOp{kind: opEnd, a: 0}, // r0's job ends: 764 s, written in its status
		simOp{kind: opSwitch, a: int64(30 * time.Second)},
		simOp{kind: opFailWrites, a: 1},
		simOp{kind: opReconcile}, // folds 764 s into the ledger; its view write fails
		simOp{kind: opSwitch, a: int64(30 * time.Second)},
	))
	r1 := w.holding(t, 1)
	if l, _, err := readLedgerAt(w.ctx, w.server, w.g.ledgers.at(simNS)); err != nil || l == nil || l.Used.RenderSeconds < 764 {
		t.Fatalf("precondition: the ledger holds %+v (%v), not the other manager's fold of 764 s", l, err)
	}
	w.unpaid(t, r1, "under maxRenderSeconds 300 while the ledger held 764 s used")
}
