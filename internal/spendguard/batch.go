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
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Group commit (docs/architecture.md "Load on the cluster"): every change of a namespace's state
// is an op queued on its slot; the writer holding the slot's turn applies the queue in order to
// one working copy and writes the ledger once, then the budget's view.

// op is one change waiting for the write that holds it.
type op struct {
	kind   string                                  // ChangeReserve, ..., for the write metrics
	change func(b *videov1alpha1.VideoBudget) bool // false: nothing to write, and it leaves nothing
	done   chan struct{}                           // closed once the write holding the op ended, with err
	err    error
	after  func(err error) // when set, learns the outcome (an op nobody waits for)
	due    time.Time       // when an op nobody waits for is written (flushDue); zero: at once
}

const (
	settleDelay = time.Second // the flush's retry when the controller is busy or the turn taken
	flushQueued = 16          // a queue this long is written without waiting
)

// mutateBudget applies change in one write with the changes queued meanwhile (errNoBudget without
// a VideoBudget).
func (g *Guard) mutateBudget(ctx context.Context, ns, kind string, change func(b *videov1alpha1.VideoBudget) bool) error {
	o := &op{kind: kind, change: change, done: make(chan struct{})}
	slot, err := g.writers.join(ctx, ns, o)
	if err == nil && slot != nil {
		_ = g.flushTurn(ctx, slot, kind) // o.err is o's outcome; changes kept for a retry wake the controller
	}
	return cmp.Or(err, o.err) // an error of join's left o unwritten
}

// mutateThen queues change for the namespace's next write, within delay (at once when flushQueued
// wait), and tells after its outcome: the VideoBudget controller's reconcile writes it (flushDue).
func (g *Guard) mutateThen(ns, kind string, change func(b *videov1alpha1.VideoBudget) bool, after func(error), delay time.Duration) {
	w := &g.writers
	w.mu.Lock()
	s := w.slotLocked(ns)
	if len(s.queue)+1 >= flushQueued {
		delay = 0
	}
	s.queue = append(s.queue, &op{kind: kind, change: change, done: make(chan struct{}), after: after, due: g.timers.Now().Add(delay)})
	w.mu.Unlock()
	g.ledgers.wakeUp(ns, delay)
}

// flushDue writes ns's queue once a change in it is due (a busy slot later). Its error is a failed
// write's whose changes were queued again: the workqueue's backoff retries them.
func (g *Guard) flushDue(ctx context.Context, ns string) error {
	w := &g.writers
	now, cause := g.timers.Now(), ""
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
	slot, err := w.join(ctx, ns, nil)
	if err != nil {
		g.ledgers.wakeUp(ns, settleDelay)
		return nil
	}
	return g.flushTurn(ctx, slot, cause)
}

// flushTurn writes slot's queue in the caller's turn, and gives it back. A change nobody waits for
// nor is told of (objectGone's) is queued again when its write fails: only it carries the fact.
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
			again = append(again, &op{kind: o.kind, change: o.change, done: make(chan struct{}), due: g.timers.Now()})
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
// another writer's batch to hold o (nil, nil: o.err is its outcome); o nil only waits for the turn.
// A turn that does not come within a status write's time is a busy budget (ErrBusy): the caller
// tries again later.
func (w *budgetWriters) join(ctx context.Context, ns string, o *op) (*budgetSlot, error) {
	var held chan struct{} // nil, for no op: never ready
	w.mu.Lock()
	s := w.slotLocked(ns)
	s.users++
	if o != nil {
		s.queue, held = append(s.queue, o), o.done
	}
	w.mu.Unlock()
	wait := time.NewTimer(w.timeout)
	defer wait.Stop()
	var err error
	select {
	case s.turn <- struct{}{}:
		select {
		case <-held:
			w.release(s)
			return nil, nil
		default:
			return s, nil
		}
	case <-held:
	case <-wait.C:
		err = ErrBusy
	case <-ctx.Done():
		err = fmt.Errorf("waiting to write VideoBudget %s/%s: %w", ns, videov1alpha1.VideoBudgetName, ctx.Err())
	}
	if err != nil && o != nil {
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

// writeBatch applies the batch in order to the namespace's state and writes its ledger, then the
// view; again on a fresh read after a conflict. Without a budget, charges go to the ledger and
// reservations get errNoBudget (withoutBudget decides); without either, every op.
func (g *Guard) writeBatch(ctx context.Context, slot *budgetSlot, batch []*op, cause string) error {
	ns := slot.ns
	fresh := false // read from the API server: after a conflict, or to make sure of a wait
	for range WriteTries {
		var reader client.Reader = g.client
		if fresh {
			reader = g.reader
		}
		live := &videov1alpha1.VideoBudget{}
		if err := readBudget(ctx, reader, ns, live); apierrors.IsNotFound(err) {
			live = nil
		} else if err != nil {
			return fmt.Errorf("reading VideoBudget %s/%s: %w", ns, videov1alpha1.VideoBudgetName, err)
		}
		ops := batch
		if live == nil {
			// Reservations are decided without a budget (withoutBudget); charges go to the ledger.
			if ops = slices.DeleteFunc(slices.Clone(batch), reserves); len(ops) == 0 {
				return errNoBudget
			}
		}
		now := g.clock.Now()
		b, from, err := g.ledgers.load(ctx, g.client, g.reader, ns, live, g.ledgers.copyOf(ns), fresh, now, g.started)
		if err != nil || b == nil {
			return cmp.Or(err, errNoBudget)
		}
		if live == nil {
			// The period is not rolled: at its end a namespace without a budget is no longer limited.
			rollWindows(b, now)
		} else {
			RollPeriod(b, now)
		}
		if err := countRunning(ctx, g.client, b, false, g.started); err != nil {
			return err
		}
		// Folded before the decisions: a render's ended job is posted before it reserves again.
		folded, _, err := foldRecorded(ctx, g.client, b, now, 0)
		if err != nil {
			return err
		}
		changes := map[string]int{} // by kind, for the metrics
		if folded > 0 {
			changes[ChangeFold] = folded
		}
		recountReserved(b)
		for _, o := range ops {
			// An op that has nothing to write leaves nothing (a wait keeps the reservation it held).
			if c := b.DeepCopy(); o.change(c) {
				b = c
				changes[o.kind]++
				recountReserved(b) // the next op decides on the budget as this one left it
			}
		}
		dirty := changed(b, from)
		if !dirty && !fresh && slices.ContainsFunc(ops, reserves) {
			// A wait decided on the cache or this process's copy: decided again on the API server's.
			fresh = true
			continue
		}
		if dirty {
			err := g.ledgers.store(ctx, g.client, ns, next(b, from), from.rv)
			if errors.Is(err, errMoved) {
				g.observer.ObserveBudgetWrite(WriterGuard, cause, WriteConflict)
				fresh = true // deleted (errDeleted): the watch forgets this process's copy
				continue
			}
			if err != nil {
				return err
			}
			for kind, n := range changes {
				g.observer.ObserveBudgetChanges(kind, n)
			}
		}
		if live == nil {
			return errNoBudget
		}
		g.writeView(ctx, slot, live, b, cause)
		return nil
	}
	return ErrBusy
}

// writeView writes b's status, the ledger's state, as the view of live, over this process's last
// view write (the cache sees it late). A view not written is left to the VideoBudget controller:
// nothing decides on it but grants, checked again (takeGrant), and a render's wait for its fold.
func (g *Guard) writeView(ctx context.Context, slot *budgetSlot, live, b *videov1alpha1.VideoBudget, cause string) {
	base := live
	g.writers.mu.Lock()
	v := slot.view
	g.writers.mu.Unlock()
	if v != nil && v.UID == live.UID && !newerCopy(live.ResourceVersion, v.ResourceVersion) {
		base = v
	}
	for range 3 {
		if equality.Semantic.DeepEqual(base.Status, b.Status) {
			return
		}
		view := base.DeepCopy()
		view.Status = *b.Status.DeepCopy()
		view.Status.Conditions, view.Status.ObservedGeneration = base.Status.Conditions, base.Status.ObservedGeneration
		err := patchBudgetStatus(ctx, g.client, view, base)
		if err == nil {
			g.observer.ObserveBudgetWrite(WriterGuard, cause, WriteWritten)
			g.writers.showView(slot.ns, view)
			return
		}
		if !apierrors.IsConflict(err) {
			break
		}
		g.observer.ObserveBudgetWrite(WriterGuard, cause, WriteConflict)
		shown := ledgerOf(base)
		base = &videov1alpha1.VideoBudget{}
		// Another writer's view of the ledger may be later than b: written over, the view would go back.
		if readBudget(ctx, g.reader, live.Namespace, base) != nil || base.UID != live.UID ||
			!equality.Semantic.DeepEqual(ledgerOf(base), shown) {
			break
		}
	}
	g.writers.showView(slot.ns, nil)
	g.ledgers.wakeUp(live.Namespace, 0)
}

// The view keeps running jobs' reservations as lines of status.runningJobs (v1alpha1.RunningJobLine):
// a list of objects costs the API server several times the CPU on every write (docs/benchmarks.md
// "API server CPU per render, guarded and unguarded"). The guard itself works on objects.

// readBudget reads the namespace's budget with r, its running jobs expanded.
func readBudget(ctx context.Context, r client.Reader, ns string, b *videov1alpha1.VideoBudget) error {
	if err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: videov1alpha1.VideoBudgetName}, b); err != nil {
		return err
	}
	b.Status.ExpandRunningJobs()
	return nil
}

// patchBudgetStatus writes b's status, the view, over base's (both expanded, base as read) with an
// optimistic lock, and leaves the answer, expanded, in b. Reservations and lines are sent together
// when either changed: a merge patch replaces a list whole, and the two lists are one.
func patchBudgetStatus(ctx context.Context, c client.Client, b, base *videov1alpha1.VideoBudget) error {
	wb, wbase := b.DeepCopy(), base.DeepCopy()
	wb.Status.CompactRunningJobs()
	wbase.Status.CompactRunningJobs()
	patch, err := client.MergeFromWithOptions(wbase, client.MergeFromWithOptimisticLock{}).Data(wb)
	if err != nil {
		return fmt.Errorf("computing the patch of VideoBudget %s/%s: %w", b.Namespace, b.Name, err)
	}
	if !equality.Semantic.DeepEqual(wbase.Status.Reservations, wb.Status.Reservations) ||
		!equality.Semantic.DeepEqual(wbase.Status.RunningJobs, wb.Status.RunningJobs) {
		var p map[string]any
		if err := json.Unmarshal(patch, &p); err != nil {
			return fmt.Errorf("reading the patch of VideoBudget %s/%s: %w", b.Namespace, b.Name, err)
		}
		st, _ := p["status"].(map[string]any)
		if st == nil {
			st = map[string]any{}
			p["status"] = st
		}
		st["reservations"], st["runningJobs"] = wb.Status.Reservations, wb.Status.RunningJobs
		if patch, err = json.Marshal(p); err != nil {
			return fmt.Errorf("writing the patch of VideoBudget %s/%s: %w", b.Namespace, b.Name, err)
		}
	}
	// A fresh object, as a client decodes without zeroing (wb's unsent lists would stay). The UID
	// names the budget the view is for: the simulation's API server refuses a deleted budget's view.
	out := &videov1alpha1.VideoBudget{}
	out.Namespace, out.Name, out.UID = b.Namespace, b.Name, b.UID
	if err := c.Status().Patch(ctx, out, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return err
	}
	out.Status.ExpandRunningJobs()
	*b = *out
	return nil
}

// showView keeps v as ns's last view write (the guard's, or its VideoBudget controller's) unless a
// later one is kept; nil forgets it.
func (w *budgetWriters) showView(ns string, v *videov1alpha1.VideoBudget) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := w.slots[ns]; s != nil && (v == nil || s.view == nil || newerCopy(v.ResourceVersion, s.view.ResourceVersion)) {
		s.view = v.DeepCopy()
		if v != nil {
			s.view.SetManagedFields(nil)
		}
	}
}
