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
	"fmt"
	"testing"
	"time"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// A helper's review (breakc) of 9afbf33..4c1fc68: the failed write's re-queue (flushTurn), the
// copies' reservations (adoptLedger), usedElsewhere, BudgetRV and laterThanWritten
// (keepInLedger), dropSuperseded, and usage windows that never roll back. Both specs failed on
// 4c1fc68 and passed on 9afbf33; fixed: a copy held back is dropped for another budget's only when
// this process saw the held copy's budget take over, or the other is the namespace's budget now
// (C1); a fact dated after the period's end does not count in its usage (C2).

// budgetWithCharges is a copy of budget uid at resourceVersion rv that charged n jobs (n renders).
func budgetWithCharges(uid, rv string, n int, now time.Time) *videov1alpha1.VideoBudget {
	b := ledgerBudget(uid, rv, now)
	for i := range n {
		b = withCharge(b, rv, fmt.Sprintf("job-%d", i))
	}
	return b
}

// C1. Single manager, restarted. dropSuperseded drops the copy held back after a failed ledger
// write when the ledger holds a copy "of a budget this process never took over": lc.replaced is
// in memory only, so after a restart every predecessor counts as such.
//
// Budget b1 took over x0's ledger in the previous process, whose ledger writes failed until it
// stopped (the ledger still holds x0's copy, 1 render; ensure does not write b1's copy after the
// restart: behind() is false for copies of two budgets). In this process b1's usage is 3 renders;
// the write of its copy fails once (held back, pending). The budget is then replaced (GitOps
// delete + create) and its delete event is not delivered (a relist: DeleteStateUnknown, so no
// lastState). The controller's look at the deletion (keepAhead) and the new budget's takeover
// (readCurrent) both run dropSuperseded first: the ledger holds x0, never taken over in this
// process, so b1's copy is dropped instead of flushed, and b2 takes over 1 render of 3 used:
// under maxRenders 3 two more renders are paid in the period. On 9afbf33 the held-back copy was
// flushed over x0's (keepAhead) or merged as unwritten, and b2 took over 3.
func TestBreakCAHeldBackCopyIsNotDroppedForAPredecessorTakenOverBeforeARestart(t *testing.T) {
	now := time.Now()
	f := newFlakyLedgerServer(t)
	// The previous process: x0's copy is the last the ledger got.
	before := NewLedgers("ops")
	if err := before.write(t.Context(), f.c, budgetWithCharges("x0", "5", 1, now)); err != nil {
		t.Fatal(err)
	}
	// This process (restarted): b1's copy (3 renders, it took x0 over before the restart) fails
	// once and is held back.
	l := NewLedgers("ops")
	b1 := budgetWithCharges("b1", "40", 3, now)
	f.failing.Store(true)
	if err := l.write(t.Context(), f.c, b1); err == nil {
		t.Fatal("control: the failing write succeeded")
	}
	f.failing.Store(false)
	// b1 is deleted (its delete event not delivered); the controller looks at the deletion.
	if err := l.keepAhead(t.Context(), f.c, f.c, "team-a"); err != nil {
		t.Fatal(err)
	}
	// b2 is created and takes the ledger over.
	b2 := ledgerBudget("b2", "50", now)
	b2.Status.LedgerBudgetUID = ""
	if _, err := adoptLedger(t.Context(), f.c, f.c, l, b2, now); err != nil {
		t.Fatal(err)
	}
	if b2.Status.Used.Renders != 3 || b2.Status.ChargeCount != 3 {
		t.Errorf("the budget created again took over %d render(s) (chargeCount %d, chargedJobs %v) of the 3 its predecessor used: "+
			"the copy held back after a failed write was dropped for an older budget's ledger copy (dropSuperseded after a restart)",
			b2.Status.Used.Renders, b2.Status.ChargeCount, b2.Status.ChargedJobs)
	}
}

// C2. Single manager. addUsageAt now rolls the windows forward to the fact's time, while the
// period's usage still counts a fact at or after the period's start, with no bound at its end.
// A fact dated after the period's end therefore counts in this period's used AND, through the
// window rolled ahead, in the next period's (RollPeriod takes used from the window).
//
// The one future-dated fact of a single manager: a reservation written ahead (grant.go) has the
// time its render pays at (payAt, up to the call budget's wait ahead) as reservedAt, and
// chargeReserved counts it at reservedAt. SettleAll (uninstall) charges the reservation of a
// render deleted while it waited for its call budget, at once: at 23:59:58 the render's
// reservation for 00:00:03 is charged. Daily period, maxRenders 1: the render is counted in the
// day that ends and again in the day that starts, whose first render then waits. On 9afbf33 it
// counted once (the day's windows took it; the roll reset them).
func TestBreakCAReservationChargedAheadOfAPeriodsEndCountsInOnePeriod(t *testing.T) {
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	now := day.Add(24*time.Hour - 2*time.Second) // 23:59:58
	b := ledgerBudget("b1", "1", now)
	b.Spec.Period = videov1alpha1.BudgetPeriodDaily
	RollPeriod(b, now)
	res := videov1alpha1.BudgetReservation{Kind: "VideoRender", UID: "uid-0", Name: "r0", AttemptID: "a",
		EstimatedSeconds: 10}
	res.ReservedAt.Time = day.Add(24*time.Hour + 3*time.Second) // its payAt, after midnight
	chargeReserved(b, res)
	first := b.Status.Used.Renders
	RollPeriod(b, day.Add(24*time.Hour+10*time.Second))
	second := b.Status.Used.Renders
	if first+second != 1 {
		t.Errorf("one render charged at 23:59:58 for 00:00:03 counts %d in the day that ends and %d in the day that starts: "+
			"counted twice (a window rolled ahead by addUsageAt, used not bounded by the period's end)", first, second)
	}
}
