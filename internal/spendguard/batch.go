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
	"cmp"
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

// Group commit (docs/architecture.md "Load on the cluster"): every change of a namespace's budget
// is an op queued on its slot; the writer holding the slot's turn applies the whole queue in order
// to one copy of the budget and writes it with one optimistic-locked status patch.

// op is one change of a budget waiting for the write that holds it.
type op struct {
	kind string // ChangeReserve, ..., for the write metrics
	// change applies the op (false: nothing to write), again after a conflict, deciding again.
	change func(b *videov1alpha1.VideoBudget) bool
	done   chan struct{} // closed once the write holding the op ended, with err
	err    error
	after  func(err error) // when set, learns the outcome (an op nobody waits for)
	due    time.Time       // when an op nobody waits for is written (flushDue); zero: at once
}

const (
	settleDelay = time.Second // the flush's retry when the controller is busy or the turn taken
	flushQueued = 16          // a queue this long is written without waiting
)

// mutateBudget applies change to the namespace's budget in one write with the changes queued
// meanwhile (errNoBudget without a VideoBudget), starting from this process's last copy: the
// cache sees a write late, and deciding on it lost a quarter of the locks at 10,000 renders.
func (g *Guard) mutateBudget(ctx context.Context, ns, kind string, change func(b *videov1alpha1.VideoBudget) bool) error {
	o := &op{kind: kind, change: change, done: make(chan struct{})}
	slot, err := g.writers.join(ctx, ns, o)
	if err != nil {
		return err
	}
	if slot != nil {
		_ = g.flushTurn(ctx, slot, kind) // o.err is o's outcome; changes kept for a retry wake the controller
	}
	return o.err
}

// mutateThen queues change for the namespace's next budget write, which comes within delay (at
// once when the queue holds flushQueued changes), and tells after its outcome. The delay is kept by
// the VideoBudget controller's workqueue (Ledgers.Source), whose reconcile writes the queue
// (flushDue): a timer never writes.
func (g *Guard) mutateThen(ns, kind string, change func(b *videov1alpha1.VideoBudget) bool, after func(error), delay time.Duration) {
	w := &g.writers
	w.mu.Lock()
	s := w.slotLocked(ns)
	if len(s.queue)+1 >= flushQueued {
		delay = 0
	}
	s.queue = append(s.queue, &op{kind: kind, change: change, done: make(chan struct{}), after: after, due: time.Now().Add(delay)})
	w.mu.Unlock()
	g.ledgers.wakeUp(ns, delay)
}

// flushDue writes ns's queue once a change in it is due, in the VideoBudget controller's
// reconcile; a busy budget is looked at again later. Its error is that of a write whose changes
// were queued again (flushTurn): the reconcile fails, and the workqueue's backoff retries them.
func (g *Guard) flushDue(ctx context.Context, ns string) error {
	w := &g.writers
	now, cause := time.Now(), ""
	w.mu.Lock()
	if s := w.slots[ns]; s != nil {
		if i := slices.IndexFunc(s.queue, func(o *op) bool { return !now.Before(o.due) }); i >= 0 {
			cause = s.queue[i].kind
		}
	}
	w.mu.Unlock()
	if cause == "" {
		return nil
	}
	slot, err := w.acquire(ctx, ns)
	if err != nil {
		g.ledgers.wakeUp(ns, settleDelay)
		return nil
	}
	return g.flushTurn(ctx, slot, cause)
}

// flushTurn writes slot's queue in the caller's turn, and gives it back; cause is for the metrics.
// A change nobody waits for or is told of (a deleted object's job: objectGone) is queued again
// when the write fails, and the error returned: only that change carries the fact.
func (g *Guard) flushTurn(ctx context.Context, slot *budgetSlot, cause string) error {
	w := &g.writers
	defer w.release(slot)
	w.mu.Lock()
	batch := slot.queue
	// A wake-up queued for a change taken here finds nothing due.
	slot.queue = nil
	w.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	err := g.writeBatch(ctx, slot, batch, cause)
	failed := err
	if errors.Is(err, errNoBudget) {
		failed = nil
	}
	if failed != nil {
		logf.FromContext(ctx).V(1).Info("A batch of budget changes was not written", "namespace", slot.ns, "changes", len(batch), "error", err.Error())
	}
	var again []*op
	for _, o := range batch {
		if failed != nil && o.after == nil && !o.due.IsZero() {
			again = append(again, &op{kind: o.kind, change: o.change, done: make(chan struct{}), due: time.Now()})
		}
		o.err = err
		close(o.done)
		if o.after != nil {
			o.after(err)
		}
	}
	if len(again) == 0 {
		return nil
	}
	w.mu.Lock()
	slot.queue = append(slot.queue, again...)
	w.mu.Unlock()
	g.ledgers.wakeUp(slot.ns, settleDelay) // a render's write failed: nothing else retries it
	return failed
}

// join queues o on ns's slot and waits for the turn (the caller then writes the queue), or for
// another writer's batch to hold o (nil, nil: o.err is its outcome). A turn that does not come
// within a status write's time is a busy budget (ErrBusy): the caller tries again later.
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
			return nil, nil
		default:
			return s, nil
		}
	case <-o.done:
	case <-wait.C:
		err = ErrBusy
	case <-ctx.Done():
		err = fmt.Errorf("waiting to write VideoBudget %s/%s: %w", ns, videov1alpha1.VideoBudgetName, ctx.Err())
	}
	if err != nil {
		w.mu.Lock()
		i := slices.Index(s.queue, o)
		if i >= 0 {
			s.queue = slices.Delete(s.queue, i, i+1)
		}
		w.mu.Unlock()
		if i < 0 {
			<-o.done // a writer took o already: its outcome is that write's
			err = nil
		}
	}
	w.leave(s)
	return nil, err
}

// leave ends a use of the slot that does not hold its turn.
func (w *budgetWriters) leave(s *budgetSlot) {
	w.mu.Lock()
	s.users--
	w.mu.Unlock()
}

// reserves reports whether o is a reservation.
func reserves(o *op) bool { return o.kind == ChangeReserve || o.kind == ChangeReserveAhead }

// writeBatch applies the batch in order and writes it, again on a fresh read after a conflict.
func (g *Guard) writeBatch(ctx context.Context, slot *budgetSlot, batch []*op, cause string) error {
	ns := slot.ns
	var reader client.Reader = g.client
	last := slot.latest
	gone := func() error {
		// Charges reach the ledger, reservations not: a ledger deleted to remove limits stays so.
		var err error
		slot.latest, err = g.keepInLedger(ctx, ns, last, slices.DeleteFunc(slices.Clone(batch), reserves))
		return cmp.Or(err, errNoBudget)
	}
	for range WriteTries {
		// base is the budget as read or as this process's last write left it, b the copy the batch
		// changes: last stays as it was for gone().
		base := slot.latest
		own := base != nil
		slot.latest = nil
		if !own {
			base = &videov1alpha1.VideoBudget{}
			if err := readBudget(ctx, reader, ns, base); err != nil {
				if apierrors.IsNotFound(err) {
					return gone()
				}
				return fmt.Errorf("reading VideoBudget %s/%s: %w", ns, videov1alpha1.VideoBudgetName, err)
			}
		}
		b := base.DeepCopy()
		RollPeriod(b, g.clock.Now())
		adopted, err := adoptLedger(ctx, g.client, g.reader, g.ledgers, b, g.clock.Now())
		if err != nil {
			return err
		}
		if slices.ContainsFunc(batch, reserves) {
			if err := countRunning(ctx, g.client, b, adopted, g.started); err != nil {
				return err
			}
			if !own && !g.ledgers.confirmed(ns) {
				// Fail closed: reserveChange refuses while the ledger's last write failed. Not from
				// this process's copy: its budget may be gone, and its ledger deleted on purpose.
				_ = g.ledgers.write(ctx, g.client, b)
			}
		}
		// Folded before the decisions: a render's ended job is posted before it reserves again.
		folded, _, err := foldRecorded(ctx, g.client, b, g.clock.Now(), 0)
		if err != nil {
			return err
		}
		changed := map[string]int{} // by kind, for the metrics
		if folded > 0 {
			changed[ChangeFold] = folded
		}
		recountReserved(b)
		for _, o := range batch {
			if o.change(b) {
				changed[o.kind]++
			}
			recountReserved(b) // the next op decides on the budget as this one left it
		}
		if len(changed) == 0 && !adopted {
			if own {
				continue // decided again on the cache's copy
			}
			return nil
		}
		err, lerr := g.ledgers.patchThrough(ctx, g.client, b, base, adopted)
		switch {
		case err == nil:
			g.observer.ObserveBudgetWrite(WriterGuard, cause, WriteWritten)
			for kind, n := range changed {
				g.observer.ObserveBudgetChanges(kind, n)
			}
			// b is the API server's answer: the budget as this write left it.
			b.SetManagedFields(nil)
			slot.latest = b
			if lerr != nil && slices.ContainsFunc(batch, reserves) {
				// Fail closed at once: nothing is paid on a reservation the ledger does not hold
				// (a budget replaced before the copy is written would not know it). The
				// controller releases it: its object never sends that attempt.
				return fmt.Errorf("copying VideoBudget %s/%s to its ledger: %w", ns, videov1alpha1.VideoBudgetName, lerr)
			}
			if lerr != nil {
				logf.FromContext(ctx).Info("Copying the budget's usage to the ledger failed; the next budget write copies it", "error", lerr.Error())
			}
			return nil
		case apierrors.IsConflict(err):
			g.observer.ObserveBudgetWrite(WriterGuard, cause, WriteConflict)
			reader = g.reader
		case apierrors.IsNotFound(err):
			return gone()
		default:
			return fmt.Errorf("writing VideoBudget %s/%s: %w", ns, videov1alpha1.VideoBudgetName, err)
		}
	}
	return ErrBusy
}

// wrote tells the guard that this process's VideoBudget controller wrote b over version from: the
// guard's next write starts from b if from is its own last copy (else it lost its lock: most of
// the conflicts of a guarded burst).
func (g *Guard) wrote(from string, b *videov1alpha1.VideoBudget) {
	if g == nil {
		return
	}
	w := &g.writers
	w.mu.Lock()
	s := w.slots[b.Namespace]
	if s == nil {
		w.mu.Unlock()
		return
	}
	s.users++
	w.mu.Unlock()
	select {
	case s.turn <- struct{}{}:
		if s.latest != nil && s.latest.ResourceVersion == from {
			s.latest = b.DeepCopy()
			s.latest.SetManagedFields(nil)
		}
		w.release(s)
	default:
		w.leave(s)
	}
}

// keepInLedger writes the batch's charges to the ledger of namespace ns's budget, deleted since
// this process last wrote it (last), for a budget created again to take over (Ledgers.keepGone).
// A process started since, or whose copy is of a budget another took over since, starts from the
// ledger. It returns the copy the next batch starts from, and the error of a ledger that cannot be
// read or written (the charge is then made again: its render keeps its finalizer).
func (g *Guard) keepInLedger(ctx context.Context, ns string, last *videov1alpha1.VideoBudget, batch []*op) (*videov1alpha1.VideoBudget, error) {
	if len(batch) == 0 {
		return last, nil
	}
	if gone, err := g.ledgers.removed(ctx, g.reader, ns); gone || err != nil {
		return nil, err // deleted with the budget on purpose: the namespace is no longer limited
	}
	base, err := g.ledgers.lastCopy(ctx, g.reader, ns)
	switch {
	case base == nil:
		return nil, err // no ledger: the namespace is no longer limited (none is created here)
	case last != nil && last.UID == base.UID && !g.ledgers.replacedBy(ns, last.UID) && (!olderCopy(last, base) || !g.ledgers.laterThanWritten(ns, base)):
		// Not when the ledger holds a later copy, of it or of a budget that took it over: another
		// manager over the namespace by mistake wrote one.
		base = last
	default:
		last = nil
	}
	now := g.clock.Now()
	changes := make([]func(*videov1alpha1.VideoBudget) bool, len(batch))
	for i, o := range batch {
		// The usage windows are rolled to now, so that a change counts in the day, week and month
		// it is made in; the period is not: at its end a namespace without a budget is no longer
		// limited. Each later copy gets the changes again, some rolled further (never back).
		changes[i] = func(b *videov1alpha1.VideoBudget) bool {
			rollWindows(b, now)
			return o.change(b)
		}
	}
	b := g.ledgers.keepGone(base, changes, now)
	if err = g.ledgers.write(ctx, g.client, b); err != nil {
		err = fmt.Errorf("copying a change of the deleted VideoBudget %s/%s to its ledger: %w", ns, videov1alpha1.VideoBudgetName, err)
	}
	if g.ledgers.replacedBy(ns, b.UID) || readBudget(ctx, g.reader, ns, &videov1alpha1.VideoBudget{}) == nil {
		// A budget created again took the ledger over, maybe without these (none is made twice).
		for _, o := range batch {
			g.mutateThen(ns, o.kind, o.change, nil, 0)
		}
	}
	if last == nil {
		// Made from the ledger, it has no resourceVersion to lock a write with: the next batch
		// reads the budget, or the ledger, again.
		return nil, err
	}
	return b, err
}
