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
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Reservations written ahead. During a burst, a render that is ready to pay usually waits for
// its API key's call budget first (the service's rate limit), for seconds. Reserve with Submission.CallIn queues its
// reservation then, for the attempt it will submit with, without waiting: it rides with the
// namespace's next budget write. When the render comes back to pay, Reserve finds it written (takeGrant)
// and the render goes on without a budget write of its own, still reserved before its paid call.
//
// A grant is used only when the budget as the cache shows it holds the reservation (so it is on
// the API server: a budget replaced meanwhile does not hold it), its spec is the one the decision
// was taken on (a limit lowered meanwhile is decided again), the budget as it is now still has
// room for the render and its ledger can be written (noRoomNow), the decision was room, and the
// render came back within grantTTL, before the VideoBudget controller decided to release the
// reservation; anything else (not written yet, a wait, a changed request or budget, a released
// reservation) takes the ordinary way (Reserve), which decides again. Until its wait and
// grantSlack are over, and for takenHold once the render took it (its in-flight write), the
// VideoBudget controller of this process does not release its reservation as one whose
// submission never came (granted): the render may wait for the call budget longer than a
// submission's time. A render that never comes back (it stalled at an earlier gate) has its
// reservation released once its wait and grantSlack are over; one back later still pays on it if
// the controller has not decided that yet (the decision spends the grant). A process that stops
// forgets its grants; their reservations are then released as any a crash left.

// grantSlack is how much later than its wait a render may come back and still pay on its grant:
// a busy workqueue delays a requeue by seconds.
const grantSlack = 15 * time.Second

// grantTTL bounds how long a grant is kept and may be used, however long its render waits.
const grantTTL = 10 * time.Minute

// takenHold is how long a grant taken keeps its reservation from the VideoBudget controller's
// release of one whose submission never came: its render's in-flight write, bounded by a write's
// timeout, lands well within it, and from then on that record keeps the reservation; one that
// failed sent nothing, and its reservation is released like any other.
const takenHold = time.Minute

// maxGrants bounds the grants kept; beyond it renders reserve the ordinary way.
const maxGrants = 100_000

type grant struct {
	ns, kind, attempt, digest string
	est                       Estimate
	asked                     time.Time
	// payAt is when the render comes back to pay (asked and its wait).
	payAt time.Time
	// due is when the render should have come back to pay (its wait and grantSlack after asked):
	// later, the grant no longer protects its reservation; it is still used until the VideoBudget
	// controller decides to release that (granted).
	due time.Time
	// generation is the budget's metadata.generation the decision was taken on.
	generation int64
	// decided is the decision of the last application of the op; done once its write ended.
	decided Decision
	// budget is the uid of the budget the op was last applied to, and version its
	// resourceVersion then: once its write is done, the reservation is on that budget's API
	// server copy, and a copy of it newer than version that lacks it had it removed since.
	budget  types.UID
	version string
	done    bool
	err     error
	// taken is set once the render went on with it (at takenAt: it is kept, protected, for
	// takenHold), or reserved the ordinary way, or was released (takenAt zero: nothing to protect);
	// its attempt is not offered again.
	taken   bool
	takenAt time.Time
	// released is set on a spent grant whose attempt nothing can have paid with: the VideoBudget
	// controller decided to release its reservation (granted, forgetUnsent), or its render
	// reserves the attempt the ordinary way and that reservation is not written yet (usedAttempt,
	// until sentAttempt). A render deleted meanwhile had sent nothing with it, so its reservation
	// is released, not charged (forgetUnsent), even if an earlier release's write failed.
	released bool
}

// usable reports whether the render may still pay on the grant: within grantTTL, until it is
// taken or the VideoBudget controller decided to release its reservation (granted). A render back
// later than due still may: in a workqueue backlog most do (8,711 of 10,000 renders of make
// bench at N=10,000 with budgets), and each then wrote a reservation of its own beside the one
// written ahead for it.
func (gr *grant) usable(now time.Time) bool {
	return !gr.taken && now.Sub(gr.asked) < grantTTL
}

// protects reports whether the grant keeps its reservation from being released as one whose
// submission never came: until due, and for takenHold once taken, the time its render's
// in-flight write takes to land.
func (gr *grant) protects(now time.Time) bool {
	if gr.taken {
		return now.Sub(gr.takenAt) < takenHold
	}
	return now.Before(gr.due) && now.Sub(gr.asked) < grantTTL
}

type grants struct {
	mu    sync.Mutex
	byUID map[types.UID]*grant
}

// sweepLocked drops the grants older than grantTTL.
func (gs *grants) sweepLocked(now time.Time) {
	for uid, gr := range gs.byUID {
		if now.Sub(gr.asked) > grantTTL && !gr.protects(now) {
			delete(gs.byUID, uid)
		}
	}
}

// aheadLead is how long before its call a render's reservation is queued: long enough for the
// namespace's next budget write (a reservation queued ahead waits at most aheadWindow), short enough that
// the budget, which every write sends whole, does not carry the reservations of every render
// queued behind the call budget of a burst.
const aheadLead = 3 * time.Second

// aheadWindow bounds how long a reservation written ahead waits in its namespace's queue for
// others: the renders turned away by their call budget within it share one write.
const aheadWindow = 2 * time.Second

// grantMargin is how long before its render's call a reservation written ahead must be written:
// one budget write. A render that waits for less than aheadWindow has its reservation's write
// come sooner, though at least minGrantDelay after it was queued, so that renders turned away
// together still share it: one written after its render came back to pay is not used, and the
// render writes one of its own (a third of the guarded renders of the N=2,000 bench did).
const (
	grantMargin   = 250 * time.Millisecond
	minGrantDelay = 100 * time.Millisecond
)

// grantDelay is how long a reservation queued for a render that calls in wait may wait for
// other changes of its namespace.
func grantDelay(wait time.Duration) time.Duration {
	return min(max(wait-grantMargin, minGrantDelay), aheadWindow)
}

// reserveAhead queues a reservation for attempt of obj, which waits for its key's call budget
// for wait, with the namespace's budget write that comes aheadLead before its call; it does not
// wait for it. Asking again for the same attempt and request only moves its time to pay later,
// when the render now waits longer (for its key's call budget). It reports whether a
// reservation is queued or written ahead for that attempt (false when too many grants are kept).
func (g *Guard) reserveAhead(kind string, obj client.Object, attempt, digest string, est Estimate,
	sent func(videov1alpha1.BudgetReservation) bool, wait time.Duration) bool {
	now := time.Now()
	gs := &g.grants
	gs.mu.Lock()
	if gs.byUID == nil {
		gs.byUID = map[types.UID]*grant{}
	}
	if cur := gs.byUID[obj.GetUID()]; cur != nil && !cur.taken && cur.attempt == attempt && cur.kind == kind && cur.digest == digest && cur.est == est {
		// Its call slot moved later (a 429 paused its key): it waits for that now, on the
		// reservation already queued or written, within grantTTL.
		if at := now.Add(wait); at.After(cur.payAt) {
			cur.payAt, cur.due = at, at.Add(grantSlack)
		}
		gs.mu.Unlock()
		return true
	}
	if len(gs.byUID) >= maxGrants {
		gs.sweepLocked(now)
		if len(gs.byUID) >= maxGrants {
			gs.mu.Unlock()
			return false
		}
	}
	gr := &grant{ns: obj.GetNamespace(), kind: kind, attempt: attempt, digest: digest, est: est, asked: now, payAt: now.Add(wait), due: now.Add(wait + grantSlack)}
	gs.byUID[obj.GetUID()] = gr
	gs.mu.Unlock()
	obj = obj.DeepCopyObject().(client.Object)
	queue := func() {
		g.mutateThen(obj.GetNamespace(), ChangeReserveAhead, func(b *videov1alpha1.VideoBudget) bool {
			gs.mu.Lock()
			current := gs.byUID[obj.GetUID()] == gr
			gs.mu.Unlock()
			if !current {
				// Replaced by a grant for another request of its object: that one writes.
				return false
			}
			d, write := g.reserveChange(b, kind, obj, attempt, digest, est, sent)
			gs.mu.Lock()
			gr.decided, gr.budget, gr.version, gr.generation = d, b.UID, b.ResourceVersion, b.Generation
			gs.mu.Unlock()
			return write
		}, func(err error) {
			gs.mu.Lock()
			gr.done, gr.err = true, err
			gs.mu.Unlock()
		}, grantDelay(min(wait, aheadLead)))
	}
	if wait > aheadLead {
		time.AfterFunc(wait-aheadLead, func() {
			gs.mu.Lock()
			taken := gr.taken || gs.byUID[obj.GetUID()] != gr
			gs.mu.Unlock()
			if !taken {
				queue()
			}
		})
		return true
	}
	queue()
	return true
}

// grantOf is the attempt of the reservation written or queued ahead for uid, to submit with, and
// when its render comes back to pay on it; empty when there is none.
func (g *Guard) grantOf(uid types.UID) (attempt string, payAt time.Time) {
	gs := &g.grants
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gr := gs.byUID[uid]; gr != nil && gr.usable(time.Now()) {
		return gr.attempt, gr.payAt
	}
	return "", time.Time{}
}

// takeGrant reports whether the reservation written ahead for attempt of obj holds room for
// this request on the API server: the render then goes on to pay without a budget write.
func (g *Guard) takeGrant(ctx context.Context, kind string, obj client.Object, attempt, digest string, est Estimate) (Decision, bool) {
	gs := &g.grants
	gs.mu.Lock()
	gr := gs.byUID[obj.GetUID()]
	ok := gr != nil && gr.usable(time.Now()) && gr.done && gr.err == nil && !gr.decided.Wait && gr.decided.Budgeted &&
		gr.attempt == attempt && gr.kind == kind && gr.digest == digest && gr.est == est
	var d Decision
	var written types.UID
	var version string
	var generation int64
	outcome := GrantUsed
	switch {
	case ok:
		d, written, version, generation = gr.decided, gr.budget, gr.version, gr.generation
	case gr == nil:
		outcome = GrantNone
	case !gr.done:
		outcome = GrantUnwritten
	case gr.err != nil || gr.decided.Wait:
		outcome = GrantRefused
	default:
		outcome = GrantChanged
	}
	gs.mu.Unlock()
	if !ok {
		if outcome != GrantNone || g.budgeted(ctx, obj.GetNamespace()) {
			// Counted for guarded namespaces only: elsewhere nothing is reserved.
			g.observeGrant(outcome)
		}
		return Decision{}, false
	}
	b, err := g.cachedBudget(ctx, obj.GetNamespace())
	if err != nil {
		return Decision{}, false
	}
	// The write that held the reservation succeeded on this budget (an optimistic-locked patch
	// lands on the budget it read, never on one created since): the reservation is on the API
	// server though the cache may not show it yet. This process's VideoBudget controller keeps
	// it meanwhile (granted), but another manager's, run beside this one by mistake, does not:
	// a copy newer than the one the write was decided on holds the write, so when it lacks the
	// reservation, the reservation was removed since and the render reserves again.
	held := written != "" && b.UID == written && !newerCopy(b.ResourceVersion, version)
	for _, r := range b.Status.Reservations {
		if r.UID == string(obj.GetUID()) && r.AttemptID == attempt && r.JobID == "" {
			held = true
			break
		}
	}
	// A budget whose spec changed since the decision (a limit lowered, "stop paying") is decided
	// on again, the ordinary way; so is a render whose ended job is not folded yet: its new job's
	// record would take the end from its status, and a write of its own folds it first.
	if !held || b.Generation != generation || unfolded(b, obj) {
		g.observeGrant(GrantChanged)
		return Decision{}, false
	}
	if g.noRoomNow(b, kind, obj.GetUID(), est) {
		g.observeGrant(GrantRefused)
		return Decision{}, false
	}
	gs.mu.Lock()
	if gr.taken || gs.byUID[obj.GetUID()] != gr {
		// The VideoBudget controller decided to release its reservation while the budget was
		// read (granted spends it under this lock, before the release is written): the held
		// copy above may already be on its way out.
		gs.mu.Unlock()
		g.observeGrant(GrantChanged)
		return Decision{}, false
	}
	gr.taken, gr.takenAt = true, time.Now()
	gs.mu.Unlock()
	g.observeGrant(GrantUsed)
	return d, true
}

// newerCopy reports whether resourceVersion rv is newer than than; false when they cannot be
// compared.
func newerCopy(rv, than string) bool {
	cmp, err := resourceversion.CompareResourceVersion(rv, than)
	return err == nil && cmp > 0
}

// noRoomNow reports whether the budget as it is now, without the render's own reservation, has
// no room for it (or its ledger cannot be written). Renders that reserved the ordinary way after
// the grant was decided may have used the room since: a render pays only while its budget has
// room, as when it reserves at its gate, and the ordinary way then decides again.
func (g *Guard) noRoomNow(b *videov1alpha1.VideoBudget, kind string, uid types.UID, est Estimate) bool {
	if g.ledgers.failure(b.Namespace) != nil {
		return true
	}
	now := b.DeepCopy()
	now.Status.Reservations = slices.DeleteFunc(now.Status.Reservations, func(r videov1alpha1.BudgetReservation) bool {
		return r.UID == string(uid) && r.JobID == ""
	})
	recountReserved(now)
	_, _, reached := exhausted(now, kind, est)
	return reached
}

// granted reports whether this process holds a grant for the reservation of uid and attempt:
// its render may still be waiting for the call budget, so the reservation is not released as
// one whose submission never came.
func (g *Guard) granted(uid, attempt string) bool {
	if g == nil {
		return false
	}
	gs := &g.grants
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gr := gs.byUID[types.UID(uid)]
	if gr == nil || gr.attempt != attempt {
		return false
	}
	if gr.protects(time.Now()) {
		return true
	}
	// The controller releases the reservation: its render, back later, must not pay on it (it
	// reserves the ordinary way, which decides again). Spent here, under the lock takeGrant
	// takes to look and again to take, before the release is written.
	if !gr.taken {
		gr.taken, gr.released = true, true
	}
	return false
}

// forgetUnsent reports whether this process holds the grant of uid for attempt and its render
// never came back to take it: that attempt reached no service (its id lives in this process's
// memory and in the reservation alone), so a reservation of a deleted object written ahead for
// it is released, not charged: also when the controller decided to release it before (granted, or
// an earlier forgetUnsent) and that write failed. The grant is spent: nothing takes it afterwards.
func (g *Guard) forgetUnsent(uid, attempt string) bool {
	if g == nil {
		return false
	}
	gs := &g.grants
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gr := gs.byUID[types.UID(uid)]
	if gr == nil || gr.attempt != attempt || (gr.taken && !gr.released) {
		return false
	}
	// Spent as released: the release's write may fail, and the next look decides the same.
	gr.taken, gr.released = true, true
	return true
}

// usedAttempt marks the grant of uid for attempt as used: the render reserves it the ordinary way
// now, and its attempt is never offered again.
func (g *Guard) usedAttempt(uid types.UID, attempt string) {
	gs := &g.grants
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gr := gs.byUID[uid]; gr != nil && gr.attempt == attempt {
		// Its own reservation replaces the grant's: the usual rules keep it, not the grant.
		// Nothing is sent on it until that reservation is written (sentAttempt).
		gr.taken, gr.released = true, true
	}
}

// sentAttempt marks the grant of uid for attempt as paid for by the render's own reservation, now
// written: from now on the render may pay with that attempt, so a deleted render's reservation of it
// is charged, not released as unsent (forgetUnsent).
func (g *Guard) sentAttempt(uid types.UID, attempt string) {
	gs := &g.grants
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gr := gs.byUID[uid]; gr != nil && gr.attempt == attempt {
		gr.released = false
	}
}
