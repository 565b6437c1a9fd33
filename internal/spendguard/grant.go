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
	"maps"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// Reservations written ahead (Submission.CallIn, docs/spend-guard.md) need no memory to be safe: the
// controller keeps one younger than its grace, its render pays on it only within takeWithin of its
// reservedAt, and a stopped process's are released like any a crash left (its renders start anew).

const (
	defaultTakeWithin = 10 * time.Second // until a VideoBudget controller tells its grace
	maxGrants         = 100_000          // beyond it renders reserve the ordinary way
	aheadLead         = 3 * time.Second  // time for the next write; longer, every write of the state carries a burst
	aheadWindow       = 2 * time.Second  // bounds how long a reservation queued ahead waits for others
	// Written grantMargin before the call, yet minGrantDelay after queueing: a burst shares a write.
	grantMargin, minGrantDelay = 250 * time.Millisecond, 100 * time.Millisecond
)

// request is what a grant was asked for; paying on it asks for the same.
type request struct {
	kind, attempt, digest string
	est                   bound.Estimate
}

// grant is a reservation queued ahead, until its render comes back to pay.
type grant struct {
	request
	payAt          time.Time // the reservation's reservedAt
	ended, refused bool      // for the metrics: its write ended; it failed or found no room
}

type grants struct {
	mu    sync.Mutex
	byUID map[types.UID]*grant
	// takeWithin bounds how late a render pays on a reservation written ahead: the controller's
	// grace less two writes, so its in-flight record is written before a release.
	takeWithin time.Duration
}

// setGrace bounds the grants by the VideoBudget controller's grace (takeWithin).
func (g *Guard) setGrace(grace time.Duration) {
	g.grants.mu.Lock()
	defer g.grants.mu.Unlock()
	// Not zero, which withinLocked reads as the default: a grace this short leaves no time to pay.
	g.grants.takeWithin = max(grace-2*g.writers.timeout, time.Nanosecond)
}

// withinLocked is takeWithin, or its default before a controller told its grace; gs.mu is held.
func (gs *grants) withinLocked() time.Duration { return cmp.Or(gs.takeWithin, defaultTakeWithin) }

// usableLocked reports whether a render may still pay on gr at now; gs.mu is held.
func (gs *grants) usableLocked(gr *grant, now time.Time) bool {
	return gr != nil && now.Before(gr.payAt.Add(gs.withinLocked()))
}

// reserveAhead queues a reservation for attempt of obj, whose call comes in wait, aheadLead before
// it; a grant for the same request still usable then is kept. False with too many grants.
func (g *Guard) reserveAhead(kind string, obj client.Object, attempt, digest string, est bound.Estimate,
	sent func(videov1alpha1.BudgetReservation) bool, wait time.Duration) bool {
	now, req, uid := g.clock.Now(), request{kind, attempt, digest, est}, obj.GetUID()
	gs := &g.grants
	gs.mu.Lock()
	if cur := gs.byUID[uid]; cur != nil && cur.request == req && gs.usableLocked(cur, now.Add(wait)) {
		gs.mu.Unlock()
		return true // it comes back in time to pay on it
	}
	if len(gs.byUID) >= maxGrants {
		maps.DeleteFunc(gs.byUID, func(_ types.UID, gr *grant) bool { return !gs.usableLocked(gr, now) })
		if len(gs.byUID) >= maxGrants {
			gs.mu.Unlock()
			return false
		}
	}
	// To the second, as stored: paying at payAt or later, its job counts as since it (recordedFor).
	gr := &grant{request: req, payAt: now.Add(wait).Truncate(time.Second)}
	gs.byUID[uid] = gr
	gs.mu.Unlock()
	obj = obj.DeepCopyObject().(client.Object)
	queue := func() {
		g.mutateThen(obj.GetNamespace(), ChangeReserveAhead, func(b *videov1alpha1.VideoBudget) bool {
			gs.mu.Lock()
			current := gs.byUID[uid] == gr
			gs.mu.Unlock()
			if !current || g.usedElsewhere(obj, attempt) {
				return false // taken, or replaced by a grant for another request of obj
			}
			d, write := g.reserveChange(b, kind, obj, attempt, digest, est, sent, gr.payAt)
			gs.mu.Lock()
			gr.refused = d.Wait
			gs.mu.Unlock()
			return write
		}, func(err error) {
			gs.mu.Lock()
			gr.ended, gr.refused = true, gr.refused || err != nil
			gs.mu.Unlock()
		}, min(max(min(wait, aheadLead)-grantMargin, minGrantDelay), aheadWindow))
	}
	if wait <= aheadLead {
		queue()
		return true
	}
	g.timers.AfterFunc(wait-aheadLead, func() {
		gs.mu.Lock()
		stale := gs.byUID[uid] != gr
		gs.mu.Unlock()
		if !stale {
			queue()
		}
	})
	return true
}

// usedElsewhere reports whether obj, in the cache, is gone, sends attempt or recorded another job:
// a second manager by mistake paid for it, and a reservation now would hold room for nothing.
func (g *Guard) usedElsewhere(obj client.Object, attempt string) bool {
	cur := obj.DeepCopyObject().(client.Object)
	if err := g.client.Get(context.Background(), client.ObjectKeyFromObject(obj), cur); err != nil || cur.GetUID() != obj.GetUID() {
		return apierrors.IsNotFound(err) || err == nil
	}
	st, was := videov1alpha1.JobStatusOf(cur), videov1alpha1.JobStatusOf(obj)
	return st != nil && was != nil && (st.Submission != nil && st.Submission.AttemptID == attempt || st.JobID != was.JobID)
}

// grantOf is the attempt written or queued ahead for uid and when its render pays; empty if none.
func (g *Guard) grantOf(uid types.UID) (attempt string, payAt time.Time) {
	gs := &g.grants
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gr := gs.byUID[uid]; gs.usableLocked(gr, g.clock.Now()) {
		return gr.attempt, gr.payAt
	}
	return "", time.Time{}
}

// takeGrant reports whether the cached budget holds the reservation written ahead for this request:
// the render pays without a write. The grant is spent either way (a queued write of it is void).
func (g *Guard) takeGrant(ctx context.Context, kind string, obj client.Object, attempt, digest string, est bound.Estimate) (Decision, bool) {
	gs := &g.grants
	gs.mu.Lock()
	gr := gs.byUID[obj.GetUID()]
	delete(gs.byUID, obj.GetUID())
	spent, within := *cmp.Or(gr, &grant{}), gs.withinLocked() // a copy: its write's callback sets it
	gs.mu.Unlock()
	b, err := g.cachedBudget(ctx, obj.GetNamespace())
	if err != nil {
		return Decision{}, false // unguarded, or unreadable: the ordinary way decides
	}
	i := slices.IndexFunc(b.Status.Reservations, func(r videov1alpha1.BudgetReservation) bool {
		return r.UID == string(obj.GetUID()) && r.AttemptID == attempt && r.JobID == ""
	})
	outcome, now := "", g.clock.Now()
	switch {
	case gr == nil:
		outcome = GrantNone
	case spent.refused:
		outcome = GrantRefused
	case i < 0 && !spent.ended:
		outcome = GrantUnwritten
	case i < 0 || spent.request != (request{kind, attempt, digest, est}):
		outcome = GrantChanged
	case now.Before(b.Status.Reservations[i].ReservedAt.Time) || !now.Before(b.Status.Reservations[i].ReservedAt.Add(within)):
		// Earlier, its job would not count as recorded since it; later, the controller may release it.
		outcome = GrantChanged
	case unfolded(b, obj):
		outcome = GrantChanged // the ended job is folded first, in the ordinary way's write
	default:
		outcome = g.noRoomNow(b, kind, obj.GetUID(), attempt, est) // a limit lowered since, the ledger failing
	}
	g.observer.ObserveGrant(cmp.Or(outcome, GrantUsed))
	return Decision{Budgeted: outcome == ""}, outcome == ""
}

// newerCopy reports whether resourceVersion rv is newer than than (false when not comparable).
func newerCopy(rv, than string) bool {
	order, err := resourceversion.CompareResourceVersion(rv, than)
	return err == nil && order > 0
}

// noRoomNow is why a grant may not pay now ("": it may): its ledger failing, or its view or the
// latest ledger this process wrote or was sent (Ledgers.Watch) no longer holding the render's
// reservation, or without it no room for it. No read: a round trip per payment halved a burst's pace.
func (g *Guard) noRoomNow(b *videov1alpha1.VideoBudget, kind string, uid types.UID, attempt string, est bound.Estimate) string {
	sent := g.ledgers.copyOf(b.Namespace)
	if g.ledgers.failure(b.Namespace) != nil || sent == nil || sent.l.Version < ledgerVersion {
		return GrantRefused // without a copy of this version's, this process cannot tell the ledger from its view
	}
	for _, now := range []*videov1alpha1.VideoBudget{b.DeepCopy(), working(b.Namespace, b, &sent.l)} {
		RollPeriod(now, g.clock.Now()) // to the period as set: spec.period may have changed since
		held := len(now.Status.Reservations)
		now.Status.Reservations = slices.DeleteFunc(now.Status.Reservations, func(r videov1alpha1.BudgetReservation) bool {
			return r.UID == string(uid) && r.AttemptID == attempt && r.JobID == ""
		})
		if len(now.Status.Reservations) == held {
			return GrantChanged // released, or never written: another manager by mistake wrote the ledger
		}
		recountReserved(now)
		if _, _, reached := exhausted(now, kind, est); reached {
			return GrantRefused
		}
	}
	return ""
}
