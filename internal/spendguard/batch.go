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
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Group commit (docs/architecture.md "Load on the cluster": the spend guard's writes are shared).
// Every change of a namespace's budget (a reservation, a release, a charge) is an op queued on
// the namespace's slot. One writer at a time holds the slot's turn; it takes every op queued so
// far, applies them in order to one copy of the budget, each deciding on the budget as the ops
// before it left it (a limit reached inside a batch admits only the renders that fit), and
// writes them with one optimistic-locked status patch. A conflict applies the whole batch again
// to the budget read afresh: each op's decision is taken again, so nothing is counted twice.
// Each op's caller learns its own outcome once the write that holds it is done: a reservation
// is durable before its paid call, a charge under a seconds or credits limit before the render's
// end is written.
//
// Ops that nobody waits for (reservations written ahead, grant.go) ride with the next write, or a
// flush shortly after when none comes. Every write also folds what the namespace's objects
// recorded since (fold.go): their jobs and their ends ride with it.

// op is one change of a budget waiting for the write that holds it.
type op struct {
	// kind is what the op changes (ChangeReserve, ...), for the write metrics.
	kind string
	// changed says whether the last application of change had something to write.
	changed bool
	// change applies the op to the budget; false when it has nothing to write. It may be
	// applied again (after a conflict) and must take its decision again each time.
	change func(b *videov1alpha1.VideoBudget) bool
	// done is closed once the write that holds the op ended; err is its outcome.
	done chan struct{}
	err  error
	// after, when set, learns the outcome of the write that held the op (an op nobody waits for).
	after func(err error)
}

// settleDelay bounds how long a reservation written ahead stays queued when no other write of
// its budget comes.
const settleDelay = time.Second

// flushQueued is how many changes a namespace's queue holds before it is written without
// waiting for its delay.
const flushQueued = 16

// errWritten is join's answer when another writer's batch held the op.
var errWritten = errors.New("written by another batch")

// mutateBudget applies change to the namespace's budget and writes its status with an
// optimistic lock, in one write with the other changes of the namespace queued meanwhile, reading
// it again and re-deciding after each conflict. change returns false when there is nothing to
// write; it is not called when the namespace has no VideoBudget, and errNoBudget is returned then
// (also when the budget is deleted before the write).
//
// This process's writes of one budget take turns, each starting from the budget as the previous
// one left it: the cache sees a write only later, and a decision taken on it would lose its lock
// (a quarter of the budget writes did, at 10,000 renders). The lock still guards every write
// against changes made elsewhere, and a decision to write nothing is not taken on this
// process's own copy alone: it may be behind a raised limit.
func (g *Guard) mutateBudget(ctx context.Context, ns, kind string, change func(b *videov1alpha1.VideoBudget) bool) error {
	o := &op{kind: kind, change: change, done: make(chan struct{})}
	slot, err := g.writers.join(ctx, ns, o)
	switch {
	case errors.Is(err, errWritten):
		return o.err
	case err != nil:
		return err
	}
	g.flushTurn(ctx, slot, kind)
	return o.err
}

// mutateThen queues change for the next write of the namespace's budget, which comes within
// delay at the latest, or at once when the queue holds flushQueued changes, and tells after its
// outcome.
func (g *Guard) mutateThen(ns, kind string, change func(b *videov1alpha1.VideoBudget) bool, after func(error), delay time.Duration) {
	o := &op{kind: kind, change: change, done: make(chan struct{}), after: after}
	w := &g.writers
	w.mu.Lock()
	s := w.slotLocked(ns)
	s.queue = append(s.queue, o)
	if len(s.queue) >= flushQueued {
		delay = 0
	}
	g.armLocked(s, o, delay)
	w.mu.Unlock()
}

// armLocked makes s's queue due delay from now, for o, unless it is due sooner. The caller holds
// the writers' lock. Nothing here writes the budget: when the queue is due, the timer wakes the
// VideoBudget controller, whose reconcile writes it (flushDue), so every write of the API is a
// reconcile's or its caller's, never a timer's.
func (g *Guard) armLocked(s *budgetSlot, o *op, delay time.Duration) {
	w := &g.writers
	due := time.Now().Add(delay)
	if s.flushing && !due.Before(s.flushAt) {
		return
	}
	s.flushing, s.flushAt = true, due
	time.AfterFunc(delay, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if s.flushAt.After(due) || !slices.Contains(s.queue, o) {
			// A sooner wake-up is armed, or another write took o and everything queued before it.
			return
		}
		if !g.ledgers.wakeUp(s.ns) {
			s.flushing = false
			if g.ledgers.listening() {
				// The controller has many wake-ups queued: try again shortly.
				g.armLocked(s, o, settleDelay)
			}
			// Without a VideoBudget controller (a Guard of its own, as an uninstall's), the next
			// write of the namespace takes the queue; a timer that woke nobody every second would
			// keep the Guard alive for ever.
		}
	})
}

// flushDue writes ns's queued changes when they are due (armLocked), in the VideoBudget
// controller's reconcile: a write that cannot get its turn now is woken again later.
func (g *Guard) flushDue(ctx context.Context, ns string) {
	w := &g.writers
	w.mu.Lock()
	s, ok := w.slots[ns]
	due := ok && len(s.queue) > 0 && !time.Now().Before(s.flushAt)
	var cause string
	if due {
		cause = s.queue[0].kind
	}
	w.mu.Unlock()
	if !due {
		return
	}
	slot, err := w.acquire(ctx, ns)
	if err != nil {
		w.mu.Lock()
		if len(s.queue) > 0 {
			s.flushing = false
			g.armLocked(s, s.queue[0], settleDelay)
		}
		w.mu.Unlock()
		return
	}
	g.flushTurn(ctx, slot, cause)
}

// flushTurn writes what is queued on slot, whose turn the caller holds, and gives the turn back.
// cause is the kind of the op whose caller, or whose delay, made the write happen.
func (g *Guard) flushTurn(ctx context.Context, slot *budgetSlot, cause string) {
	defer g.writers.release(slot)
	batch := g.writers.take(slot)
	if len(batch) == 0 {
		return
	}
	err := g.writeBatch(ctx, slot, batch, cause)
	if err != nil && !errors.Is(err, errNoBudget) {
		logf.FromContext(ctx).V(1).Info("A batch of budget changes was not written", "namespace", slot.ns, "changes", len(batch), "error", err.Error())
	}
	for _, o := range batch {
		o.err = err
		close(o.done)
		if o.after != nil {
			o.after(err)
		}
	}
}

// join queues o on ns's slot and waits until either the caller holds the turn (it then writes
// the queue, o included) or another writer's batch held o (errWritten). A turn that does not
// come within a status write's time is a busy budget, as a lock lost WriteTries times is: the
// caller tries again later instead of holding its worker, unless o is being written already.
func (w *budgetWriters) join(ctx context.Context, ns string, o *op) (*budgetSlot, error) {
	w.mu.Lock()
	s := w.slotLocked(ns)
	s.users++
	s.queue = append(s.queue, o)
	w.mu.Unlock()
	wait := time.NewTimer(w.timeout)
	defer wait.Stop()
	var err error
	select {
	case s.turn <- struct{}{}:
		select {
		case <-o.done:
			w.release(s)
			return nil, errWritten
		default:
			return s, nil
		}
	case <-o.done:
		w.leave(s)
		return nil, errWritten
	case <-wait.C:
		err = ErrBusy
	case <-ctx.Done():
		err = fmt.Errorf("waiting to write VideoBudget %s/%s: %w", ns, videov1alpha1.VideoBudgetName, ctx.Err())
	}
	if !w.withdraw(s, o) {
		// A writer took o already: its outcome is that write's.
		<-o.done
		w.leave(s)
		return nil, errWritten
	}
	w.leave(s)
	return nil, err
}

// take empties slot's queue.
func (w *budgetWriters) take(s *budgetSlot) []*op {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := s.queue
	s.queue = nil
	// The queue is written: the next change arms a flush of its own. One armed for a change
	// this write takes finds it written and writes nothing (mutateThen).
	s.flushing = false
	return q
}

// withdraw removes o from the queue; false when a writer took it.
func (w *budgetWriters) withdraw(s *budgetSlot, o *op) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, q := range s.queue {
		if q == o {
			s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
			return true
		}
	}
	return false
}

// leave ends a use of the slot that does not hold its turn.
func (w *budgetWriters) leave(s *budgetSlot) {
	w.mu.Lock()
	s.users--
	w.mu.Unlock()
}

// writeBatch applies the batch's changes in order to the namespace's budget and writes them in
// one optimistic-locked status patch, applying them again to the budget read afresh after a
// conflict.
func (g *Guard) writeBatch(ctx context.Context, slot *budgetSlot, batch []*op, cause string) error {
	ns := slot.ns
	var reader client.Reader = g.client
	last := slot.latest
	gone := func() error {
		// The next batch of a namespace whose budget is gone applies its changes on top of this
		// one's: every charge made meanwhile reaches the ledger. Reservations are not kept (a
		// namespace without a budget decides on its ledger, withoutBudget), so a batch of them
		// writes nothing: a ledger the platform deleted to remove the limits stays deleted.
		slot.latest = g.keepInLedger(ctx, last, usageOps(batch))
		return errNoBudget
	}
	for range WriteTries {
		b, own := slot.latest, true
		slot.latest = nil
		if b == nil {
			own = false
			b = &videov1alpha1.VideoBudget{}
			if err := readBudget(ctx, reader, ns, b); err != nil {
				if apierrors.IsNotFound(err) {
					return gone()
				}
				return fmt.Errorf("reading VideoBudget %s/%s: %w", ns, videov1alpha1.VideoBudgetName, err)
			}
		}
		base := b.DeepCopy()
		RollPeriod(b, g.clock.Now())
		adopted, err := adoptLedger(ctx, g.client, g.reader, g.ledgers, b, g.clock.Now())
		if err != nil {
			return err
		}
		if admits(batch) {
			if err := countRunning(ctx, g.client, b, startedUnless(adopted, g.started)); err != nil {
				return err
			}
			if !g.ledgers.confirmed(ns) {
				// Fail closed: before this process admits anything in the namespace, its ledger
				// must be writable (a budget replaced meanwhile takes its usage over from there).
				// The outcome is recorded; reserveChange refuses while the last write failed. A
				// budget that adopted the ledger just now writes what it merged: never less than
				// the ledger.
				_ = g.ledgers.write(ctx, g.client, b)
			}
		}
		// What the namespace's objects recorded since rides with this write, before the
		// decisions: a render's ended job is posted before its next reservation decides.
		folded, _, err := foldRecorded(ctx, g.client, b, g.clock.Now(), 0)
		if err != nil {
			return err
		}
		changed := folded > 0
		recountReserved(b)
		for _, o := range batch {
			o.changed = o.change(b)
			if o.changed {
				changed = true
			}
			// The next op decides on the budget as this one left it.
			recountReserved(b)
		}
		if !changed && !adopted {
			if own {
				continue // decided again on the cache's copy
			}
			return nil
		}
		err = patchBudgetStatus(ctx, g.client, b, base)
		switch {
		case err == nil:
			g.observeBatch(cause, batch, folded)
			// b is the API server's answer: the budget as this write left it.
			b.SetManagedFields(nil)
			slot.latest = b
			if adopted || ledgerChanged(base, b) {
				if lerr := g.ledgers.write(ctx, g.client, b); lerr != nil {
					logf.FromContext(ctx).Info("Copying the budget's usage to the ledger failed; the next budget write copies it", "error", lerr.Error())
				}
			}
			return nil
		case apierrors.IsConflict(err):
			g.observed().ObserveBudgetWrite(WriterGuard, cause, WriteConflict)
			reader = g.reader
			continue
		case apierrors.IsNotFound(err):
			return gone()
		default:
			return fmt.Errorf("writing VideoBudget %s/%s: %w", ns, videov1alpha1.VideoBudgetName, err)
		}
	}
	return ErrBusy
}

// usageOps are the batch's changes other than reservations.
func usageOps(batch []*op) []*op {
	var out []*op
	for _, o := range batch {
		if o.kind != ChangeReserve && o.kind != ChangeReserveAhead {
			out = append(out, o)
		}
	}
	return out
}

// admits reports whether a batch holds a reservation.
func admits(batch []*op) bool {
	for _, o := range batch {
		if o.kind == ChangeReserve || o.kind == ChangeReserveAhead {
			return true
		}
	}
	return false
}

// wrote tells the guard that the VideoBudget controller of this process wrote b (the API
// server's answer) over the version from: when that version is the one the guard's last write
// left, the guard's next write starts from b, not from a copy the controller's write made stale
// (each of the controller's writes cost the guard's next one its lock: most of the conflicts of
// a guarded burst). A guard write in flight meanwhile meets the lock and reads the budget again.
func (g *Guard) wrote(from string, b *videov1alpha1.VideoBudget) {
	if g == nil {
		return
	}
	w := &g.writers
	w.mu.Lock()
	s, ok := w.slots[b.Namespace]
	if ok {
		s.users++
	}
	w.mu.Unlock()
	if !ok {
		return
	}
	select {
	case s.turn <- struct{}{}:
		if s.latest != nil && s.latest.ResourceVersion == from {
			latest := b.DeepCopy()
			latest.SetManagedFields(nil)
			s.latest = latest
		}
		w.release(s)
	default:
		w.leave(s)
	}
}

// keepInLedger is the batch's part for a budget deleted since this process last wrote it (last):
// the ledger gets what the batch would have written to it (a charge) and a copy
// held back after a failed write, so that a budget created again takes it over. The
// changes are kept for every later copy of the deleted budget (Ledgers.keepGone): a copy of its
// last write that reaches the ledger after them must not drop them. A batch of a namespace whose
// budget this process never wrote changes nothing. It returns the copy the next batch starts
// from.
func (g *Guard) keepInLedger(ctx context.Context, last *videov1alpha1.VideoBudget, batch []*op) *videov1alpha1.VideoBudget {
	if last == nil || len(batch) == 0 {
		return last
	}
	if gone, err := g.ledgers.removed(ctx, g.reader, last.Namespace); gone && err == nil {
		// Deleted with the budget on purpose: the namespace is no longer limited, and a
		// change of the deleted budget does not create the ledger again.
		return nil
	}
	changes := make([]func(*videov1alpha1.VideoBudget) bool, 0, len(batch))
	for _, o := range batch {
		changes = append(changes, o.change)
	}
	b := g.ledgers.keepGone(last, changes, g.clock.Now())
	if err := g.ledgers.write(ctx, g.client, b); err != nil {
		logf.FromContext(ctx).Info("Copying a deleted budget's last usage to the ledger failed", "namespace", b.Namespace, "error", err.Error())
	}
	if g.ledgers.replacedBy(b.Namespace, b.UID) {
		// A budget created again took the ledger over, perhaps before these changes reached it:
		// they go to that budget too (a charge finds its reservation, or its job among the
		// charged, and is not made twice).
		for _, o := range batch {
			g.mutateThen(b.Namespace, o.kind, o.change, nil, 0)
		}
	}
	return b
}

// observeBatch counts a written batch: one write, and the changes it carried by kind.
func (g *Guard) observeBatch(cause string, batch []*op, folded int) {
	o := g.observed()
	o.ObserveBudgetWrite(WriterGuard, cause, WriteWritten)
	n := map[string]int{}
	if folded > 0 {
		n[ChangeFold] = folded
	}
	for _, op := range batch {
		if op.changed {
			n[op.kind]++
		}
	}
	for kind, c := range n {
		o.ObserveBudgetChanges(kind, c)
	}
}
