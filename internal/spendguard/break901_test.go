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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// chargeOps are n synthetic charges (a render counted, its job id recorded), as a batch.
func chargeOps(prefix string, n int) []*op {
	ops := make([]*op, 0, n)
	for i := range n {
		job := fmt.Sprintf("%s-%d", prefix, i)
		ops = append(ops, &op{kind: ChangeCharge, change: func(b *videov1alpha1.VideoBudget) bool {
			if charged(b, job) {
				return false
			}
			b.Status.Used.Renders++
			b.Status.ChargedJobs = append(b.Status.ChargedJobs, job)
			b.Status.ChargeCount++
			return true
		}, done: make(chan struct{})})
	}
	return ops
}

// Break 901, finding 1. keepGone folds the changes made while the budget is gone into the copy
// once more than maxGone are kept, and forgets them (lc.gone = nil). The folded copy keeps the
// resourceVersion of the copy it was derived from, and the cadence's held-back copy is normally
// that very version (writeBatch records the API server's answer, which is also slot.latest: a
// second write within the interval is held back). olderCopy is a strict "<": the folded copy does
// not supersede the held-back one, so writeLocked keeps it pending, and the next flush (the
// VideoBudget controller's look, or readCurrent: a budget taking over, a render of the namespace
// without a budget) writes the unfolded copy over the folded one. Every change folded is gone
// from the ledger, and the budget created again takes over less than was charged. Now the fold
// is one merge that stays among the changes every later copy gets.
func TestBreak901FoldedGoneChangesAreNotUndoneByTheHeldBackCopyOfTheSameVersion(t *testing.T) {
	now := time.Now()
	f := newFlakyLedgerServer(t)
	ledgers := NewLedgers("ops")
	g := New(f.c, f.c, clocktesting.NewFakeClock(now), 10*time.Second, ledgers)
	a := ledgerBudget("b1", "10", now)
	if err := ledgers.write(t.Context(), f.c, a); err != nil {
		t.Fatal(err)
	}
	// The guard's last write of the budget (version 11): slot.latest, and its ledger copy held
	// back as a copy of its own after a failed write (then: by the ledger's cadence).
	latest := withCharge(a, "11", "job-0")
	f.failing.Store(true)
	if err := ledgers.write(t.Context(), f.c, latest); err == nil {
		t.Fatal("the failing write succeeded")
	}
	f.failing.Store(false)
	// The budget is deleted; a burst of ends (more than maxGone) is charged into its ledger.
	_, _ = g.keepInLedger(t.Context(), "team-a", latest, chargeOps("job-gone", maxGone+1))
	if l, _, _ := ledgers.read(t.Context(), f.c, "team-a"); l == nil || l.Used.Renders != int64(maxGone+2) {
		t.Fatalf("the charges made while the budget is gone were not written: %+v", l)
	}
	// The next read that decides on the ledger (a budget created again, a render of the
	// namespace meanwhile) first writes the copy held back.
	if _, _, err := ledgers.holds(t.Context(), f.c, "team-a", now); err != nil {
		t.Fatal(err)
	}
	l, _, err := ledgers.read(t.Context(), f.c, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	if l.Used.Renders != int64(maxGone+2) || l.ChargeCount != int64(maxGone+2) {
		t.Fatalf("the ledger holds renders %d, chargeCount %d after the held-back copy of version 11 was flushed; the %d charges made "+
			"while the budget was gone (folded into a copy of version 11 too) are lost: a budget created again takes over %d renders "+
			"fewer than were paid", l.Used.Renders, l.ChargeCount, maxGone+1, int64(maxGone+2)-l.Used.Renders)
	}
}

// Break 901, finding 2. A change made while the budget is gone (keepInLedger) is kept in
// lc.gone only until "a copy of another budget is written" (writeLocked: that budget took the
// ledger over, and the change with it). That holds only when the takeover read the ledger after
// the change was written. The VideoBudget controller's adoption (reconciler.go: adoptLedger)
// does not hold the guard's turn, and lc.io is a FIFO queue: on a GitOps replace (delete, create
// at once) the new budget's reconcile can queue its readCurrent behind the deleted budget's last
// flush (the controller's deletion look) ahead of the guard's keepInLedger write, whose batch met
// NotFound a moment earlier. The new budget then merges the ledger without the change; the
// change is written over it; the new budget's first copy (urgent, after its status write) is
// written over that and clears lc.gone. The change is in neither the new budget nor its ledger.
// Here the change is a charge: the render it counted is not counted by the budget created again.
// Now a change kept for a budget whose ledger was taken over is queued on the namespace's
// budget too (keepInLedger), where a charge is made once.
func TestBreak901AChangeMadeWhileTheBudgetIsGoneIsNotDroppedByATakeoverThatReadTheLedgerBeforeIt(t *testing.T) {
	now := time.Now()
	f := newFlakyLedgerServer(t)
	ledgers := NewLedgers("ops")
	g := New(f.c, f.c, clocktesting.NewFakeClock(now), 10*time.Second, ledgers)
	a := ledgerBudget("b1", "10", now)
	if err := ledgers.write(t.Context(), f.c, a); err != nil {
		t.Fatal(err)
	}
	// The budget is replaced. The new one's reconcile reads the ledger (its readCurrent got
	// lc.io first) ...
	b := ledgerBudget("b2", "20", now)
	b.Status.LedgerBudgetUID = ""
	if _, err := adoptLedger(t.Context(), f.c, f.c, ledgers, b, now); err != nil {
		t.Fatal(err)
	}
	// ... then the guard's batch, whose status write found the old budget gone, writes its
	// charge to the old budget's ledger copy ...
	_, _ = g.keepInLedger(t.Context(), "team-a", a, chargeOps("job-x", 1))
	// ... then the new budget's status write lands and its first copy is written (urgent).
	b.ResourceVersion = "21"
	if err := ledgers.write(t.Context(), f.c, b); err != nil {
		t.Fatal(err)
	}
	// The new budget as the API server holds it: the guard's next write of the namespace
	// (here a release of nothing) carries what was queued for it.
	stored := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName, UID: b.UID}, Spec: b.Spec}
	if err := f.c.Create(t.Context(), stored); err != nil {
		t.Fatal(err)
	}
	stored.Status = b.Status
	stored.Status.LedgerBudgetUID = string(b.UID)
	if err := f.c.Status().Update(t.Context(), stored); err != nil {
		t.Fatal(err)
	}
	if err := g.Release(t.Context(), "team-a", "nobody", "nothing"); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Get(t.Context(), client.ObjectKeyFromObject(stored), b); err != nil {
		t.Fatal(err)
	}
	l, _, err := ledgers.read(t.Context(), f.c, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	ledgers.mu.Lock()
	kept := len(ledgers.tenants["team-a"].gone)
	ledgers.mu.Unlock()
	if !charged(b, "job-x-0") && !slicesContains(l.ChargedJobs, "job-x-0") {
		t.Fatalf("job-x, charged while no budget existed, is in neither the new budget (renders %d) nor its ledger (renders %d, charged %v), "+
			"and the cadence keeps %d changes for later copies: the render is never counted", b.Status.Used.Renders, l.Used.Renders, l.ChargedJobs, kept)
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
