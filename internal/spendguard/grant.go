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
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Reservations written ahead: a render waiting for its API key's call budget (Submission.CallIn)
// has its reservation queued with the next budget write and, back to pay, takes it (takeGrant)
// without a write of its own. A stopped process's grants are gone; their reservations are released
// as any a crash left.

const (
	// grantSlack is how long after its wait a grant still protects its reservation: a busy
	// workqueue delays a requeue by seconds.
	grantSlack = 15 * time.Second
	// grantTTL bounds how long a grant is kept and may be used, however long its render waits.
	grantTTL = 10 * time.Minute
	// takenHold is how long a grant taken protects its reservation: its render's in-flight
	// write, which keeps it from then on, lands well within it.
	takenHold = time.Minute
	maxGrants = 100_000 // beyond it renders reserve the ordinary way
	// aheadLead is how long before its call a reservation is queued: enough for the next budget
	// write, short enough that the budget, sent whole by every write, does not carry a burst.
	aheadLead   = 3 * time.Second
	aheadWindow = 2 * time.Second // bounds how long a reservation queued ahead waits for others
	// A reservation queued ahead is written grantMargin before its render's call, but at least
	// minGrantDelay after it was queued, so renders turned away together share the write: one
	// written late is not used (a third of the guarded renders of the N=2,000 bench were).
	grantMargin   = 250 * time.Millisecond
	minGrantDelay = 100 * time.Millisecond
)

// request is what a grant was asked for; paying on it asks for the same.
type request struct {
	kind, attempt, digest string
	est                   Estimate
}

type grant struct {
	request
	asked, payAt, due time.Time // due: payAt and grantSlack
	// decided is the op's last decision, on the budget of uid budget at version and generation.
	decided    Decision
	budget     types.UID
	version    string
	generation int64
	done       bool // the write ended, with err
	err        error
	// taken: paid on (at takenAt), reserved the ordinary way, or released (takenAt zero).
	taken   bool
	takenAt time.Time
	// released: spent, and nothing can have paid with its attempt (usedAttempt until sentAttempt).
	released bool
}

// usable reports whether the render may still pay on the grant, also back later than due: in a
// workqueue backlog most are (8,711 of 10,000 renders of make bench at N=10,000).
func (gr *grant) usable(now time.Time) bool {
	return !gr.taken && now.Sub(gr.asked) < grantTTL
}

// protects reports whether the grant keeps its reservation from release as never submitted.
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

// reserveAhead queues a reservation for attempt of obj, whose call comes in wait, aheadLead
// before it; asking again only moves its time to pay later. False when too many grants are kept.
func (g *Guard) reserveAhead(kind string, obj client.Object, attempt, digest string, est Estimate,
	sent func(videov1alpha1.BudgetReservation) bool, wait time.Duration) bool {
	now := time.Now()
	req := request{kind, attempt, digest, est}
	uid := obj.GetUID()
	gs := &g.grants
	gs.mu.Lock()
	if gs.byUID == nil {
		gs.byUID = map[types.UID]*grant{}
	}
	if cur := gs.byUID[uid]; cur != nil && !cur.taken && cur.request == req {
		if at := now.Add(wait); at.After(cur.payAt) {
			cur.payAt, cur.due = at, at.Add(grantSlack)
		}
		gs.mu.Unlock()
		return true
	}
	if len(gs.byUID) >= maxGrants {
		maps.DeleteFunc(gs.byUID, func(_ types.UID, gr *grant) bool {
			return now.Sub(gr.asked) > grantTTL && !gr.protects(now)
		})
		if len(gs.byUID) >= maxGrants {
			gs.mu.Unlock()
			return false
		}
	}
	gr := &grant{request: req, asked: now, payAt: now.Add(wait), due: now.Add(wait + grantSlack)}
	gs.byUID[uid] = gr
	gs.mu.Unlock()
	obj = obj.DeepCopyObject().(client.Object)
	queue := func() {
		g.mutateThen(obj.GetNamespace(), ChangeReserveAhead, func(b *videov1alpha1.VideoBudget) bool {
			gs.mu.Lock()
			current := gs.byUID[uid] == gr
			gs.mu.Unlock()
			if !current {
				return false // replaced by a grant for another request of obj: that one writes
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
		}, min(max(min(wait, aheadLead)-grantMargin, minGrantDelay), aheadWindow))
	}
	if wait <= aheadLead {
		queue()
		return true
	}
	time.AfterFunc(wait-aheadLead, func() {
		gs.mu.Lock()
		stale := gr.taken || gs.byUID[uid] != gr
		gs.mu.Unlock()
		if !stale {
			queue()
		}
	})
	return true
}

// grantOf is the attempt of the reservation written or queued ahead for uid, and when its render
// pays on it; empty when there is none.
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
// this request on the API server: the render then pays without a budget write.
func (g *Guard) takeGrant(ctx context.Context, kind string, obj client.Object, attempt, digest string, est Estimate) (Decision, bool) {
	refuse := func(outcome string) (Decision, bool) {
		g.observeGrant(outcome)
		return Decision{}, false
	}
	gs := &g.grants
	gs.mu.Lock()
	gr := gs.byUID[obj.GetUID()]
	var outcome string
	var snap grant // the decision, read under the lock
	switch {
	case gr == nil:
		outcome = GrantNone
	case !gr.done:
		outcome = GrantUnwritten
	case gr.err != nil || gr.decided.Wait:
		outcome = GrantRefused
	case !gr.usable(time.Now()) || !gr.decided.Budgeted || gr.request != (request{kind, attempt, digest, est}):
		outcome = GrantChanged
	default:
		snap = *gr
	}
	gs.mu.Unlock()
	if outcome == GrantNone && !g.budgeted(ctx, obj.GetNamespace()) {
		return Decision{}, false // counted for guarded namespaces only: elsewhere nothing is reserved
	}
	if outcome != "" {
		return refuse(outcome)
	}
	b, err := g.cachedBudget(ctx, obj.GetNamespace())
	if err != nil {
		return Decision{}, false
	}
	// The write landed on the budget it read, so the reservation is there though the cache may
	// not show it yet; a newer copy lacking it had it removed since (by another manager).
	held := snap.budget != "" && b.UID == snap.budget && !newerCopy(b.ResourceVersion, snap.version) ||
		slices.ContainsFunc(b.Status.Reservations, func(r videov1alpha1.BudgetReservation) bool {
			return r.UID == string(obj.GetUID()) && r.AttemptID == attempt && r.JobID == ""
		})
	// A changed spec (a limit lowered) decides again; an unfolded ended job is folded first.
	if !held || b.Generation != snap.generation || unfolded(b, obj) {
		return refuse(GrantChanged)
	}
	if g.noRoomNow(b, kind, obj.GetUID(), est) {
		return refuse(GrantRefused)
	}
	gs.mu.Lock()
	// granted may have spent the grant (its release decided) while the budget was read.
	taken := gr.taken || gs.byUID[obj.GetUID()] != gr
	if !taken {
		gr.taken, gr.takenAt = true, time.Now()
	}
	gs.mu.Unlock()
	if taken {
		return refuse(GrantChanged)
	}
	g.observeGrant(GrantUsed)
	return snap.decided, true
}

// newerCopy reports whether resourceVersion rv is newer than than (false when not comparable).
func newerCopy(rv, than string) bool {
	cmp, err := resourceversion.CompareResourceVersion(rv, than)
	return err == nil && cmp > 0
}

// noRoomNow reports whether the budget, without the render's own reservation, has no room for
// it now (or its ledger cannot be written): others may have used the room since.
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

// withGrant calls f, under the grants' lock, on the grant of uid for attempt; false without one.
func (g *Guard) withGrant(uid types.UID, attempt string, f func(gr *grant) bool) bool {
	if g == nil {
		return false
	}
	g.grants.mu.Lock()
	defer g.grants.mu.Unlock()
	gr := g.grants.byUID[uid]
	return gr != nil && gr.attempt == attempt && f(gr)
}

// granted reports whether a grant protects the reservation of uid and attempt from release.
func (g *Guard) granted(uid, attempt string) bool {
	return g.withGrant(types.UID(uid), attempt, func(gr *grant) bool {
		if gr.protects(time.Now()) {
			return true
		}
		// Released: spent before the release is written, so its render does not pay on it.
		if !gr.taken {
			gr.taken, gr.released = true, true
		}
		return false
	})
}

// forgetUnsent reports whether the grant of uid for attempt was never paid on, so a deleted
// object's reservation of it is released, not charged; spent as released, a later look (after a
// failed release) decides the same.
func (g *Guard) forgetUnsent(uid, attempt string) bool {
	return g.withGrant(types.UID(uid), attempt, func(gr *grant) bool {
		if gr.taken && !gr.released {
			return false
		}
		gr.taken, gr.released = true, true
		return true
	})
}

// usedAttempt marks the grant of uid for attempt as used: the render reserves it the ordinary way,
// and sends nothing on it until that is written (sentAttempt).
func (g *Guard) usedAttempt(uid types.UID, attempt string) {
	g.withGrant(uid, attempt, func(gr *grant) bool {
		gr.taken, gr.released = true, true
		return false
	})
}

// sentAttempt marks the grant of uid for attempt as paid for by the render's own reservation:
// a deleted render's reservation of it is charged, not released as unsent.
func (g *Guard) sentAttempt(uid types.UID, attempt string) {
	g.withGrant(uid, attempt, func(gr *grant) bool {
		gr.released = false
		return false
	})
}
