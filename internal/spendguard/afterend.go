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
	"math"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Charges written after the end. A render's job was counted when its reservation was settled,
// and the reservation of its running job holds the room of its bound (a render without one runs
// alone) until its charge lands: the next render's decision never sees less than the job may
// have cost, so nothing waits for the charge. A render writes its end at once, with a mark
// (status.chargeMark: where the budget's charges stood, as the cache shows the budget), and its
// charge rides with a later write of the namespace's budget (Charge with ChargeLater), shared
// with whatever else the namespace writes meanwhile. Only a budget that has not taken the
// namespace's ledger over holds no count a mark can be made on (endMark): there the charge is
// written before the end (ChargeNow).
//
// Why the mark makes a lost charge certain. chargedJobs lists the latest maxChargedJobs charged
// ids in the order they were charged (a charge appends, the oldest go). The mark names the id
// charged last when the end was written (after). A job is charged after its end, so after that
// id: while that id is still in chargedJobs, every id charged since is too, and a job missing
// from it is certainly not charged yet; it is then charged from the render's status (its
// videoDuration and aiCreditsUsed). Once that id is gone nothing is certain and nothing is
// charged again (never twice). Naming an id rather than a position keeps the argument whatever
// happens to the budget: a budget created again, restored without its status, or written by an
// older manager has another history, and a mark of the old one finds nothing there. A mark made
// on a budget that had charged nothing yet (after empty) reads its count instead
// (status.chargeCount, which counts every charge): fewer than maxChargedJobs charges since, and
// the job is missing, it is lost. An end whose charge the budget already shows is not marked.
//
// Who finds a lost charge (the manager stopped between a render's end and the write that
// carried its charge): the
// VideoBudget controller, at its first look at the budget in a new process and at most every
// recoverEvery after (recoverCharges); the render's charge finalizer when it is deleted
// (Charge); the render's next submission, which charges it before reserving, so that a
// render never moves on to a new job before the end it marked is in the budget; and an
// uninstall (SettleAll). A charge whose write fails is queued again, for as long as the process
// runs: given up, it could be found too late.

// chargeLaterDelay bounds how long a charge written after its render's end waits for another
// write of its namespace's budget to ride with.
const chargeLaterDelay = rideDelay

// flushQueued is how many changes a namespace's queue holds before it is written without
// waiting for its delay.
const flushQueued = 16

// chargeRetryMax bounds the wait between two tries of a charge whose write failed.
const chargeRetryMax = 30 * time.Second

// recoverEvery bounds how often the VideoBudget controller looks for charges lost after their
// render's end, and recoverAge how old such an end must be before it is taken for lost while
// the process runs (its own charge is on its way until then).
const (
	recoverEvery = 30 * time.Second
	recoverAge   = 10 * time.Second
)

// MarkedChargeOf is the charge obj's status marked, if it marked one: a VideoRender whose job
// ended and whose end was written before its charge.
func MarkedChargeOf(obj client.Object) (JobCharge, bool) {
	vr, ok := obj.(*videov1alpha1.VideoRender)
	if !ok || vr.Status.ChargeMark == nil || vr.Status.JobID == "" || vr.Status.CompletedAt == nil {
		return JobCharge{}, false
	}
	st := &vr.Status
	c := ChargeOf(vr)
	c.Mark = st.ChargeMark.DeepCopy()
	if st.Failure != nil {
		return c, true
	}
	var secs float64
	if st.VideoDuration != nil {
		secs = st.VideoDuration.Seconds()
	}
	c.Seconds, c.Credits = Cost(secs, st.AICreditsUsed)
	c.Unreported = st.BudgetEstimate != nil && st.BudgetEstimate.UnreportedCredits
	return c, true
}

// Cost is what a job's end charges: its video's seconds, rounded up (a length past maxSeconds is
// not one), and its AI credits (nil when none or unreadable), whether read from the job's answer
// or from the status that recorded it.
func Cost(seconds float64, credits string) (int64, *resource.Quantity) {
	var secs int64
	if seconds > 0 && seconds < maxSeconds {
		secs = int64(math.Ceil(seconds))
	}
	if q, err := resource.ParseQuantity(credits); err == nil && q.Sign() > 0 {
		return secs, &q
	}
	return secs, nil
}

// maxSeconds bounds a video's length as a charge reads it, as the controller bounds the one it
// records.
const maxSeconds = 1e9

// endMark reports whether budget b lets the end of jobID be written before its charge (no
// maxRenderSeconds, no maxAICredits), and the mark the end records then; nil when the budget
// already holds the charge (nothing to mark or charge). A budget that has not merged the
// namespace's ledger yet (created again, restored) does not: its count is not the namespace's,
// and a mark made on it would be lost with its charge in a crash (after the takeover the mark
// reads as another history's); the charge is written first. Standing asks it of the cached
// budget.
func endMark(b *videov1alpha1.VideoBudget, jobID string) (mark *videov1alpha1.ChargeMark, ok bool) {
	if b.UID == "" || b.Status.LedgerBudgetUID != string(b.UID) {
		return nil, false
	}
	if charged(b, jobID) {
		return nil, true
	}
	m := &videov1alpha1.ChargeMark{Count: b.Status.ChargeCount}
	if n := len(b.Status.ChargedJobs); n > 0 {
		m.After = b.Status.ChargedJobs[n-1]
	}
	return m, true
}

// chargeLaterQueued queues the charge of a render's ended job, whose end is written (or being
// written) with its mark, for a write of the namespace's budget within chargeLaterDelay. Nobody
// waits for it; a write that fails is tried again, for as long as the process runs.
func (g *Guard) chargeLaterQueued(ns string, c JobCharge) {
	g.chargeLater(ns, ChangeChargeAfterEnd, c, chargeLaterDelay)
}

// chargeMarkedSoon is chargeLaterQueued for a render whose marked end is about to leave its status:
// written sooner.
func (g *Guard) chargeMarkedSoon(ns string, c JobCharge) {
	g.chargeLater(ns, ChangeChargeMarked, c, settleDelay)
}

func (g *Guard) chargeLater(ns, kind string, c JobCharge, delay time.Duration) {
	g.mutateThen(ns, kind, c.change, func(err error) {
		if err == nil || errors.Is(err, errNoBudget) {
			return
		}
		// Its write failed: tried again, first within a second, with whatever else is queued.
		next := settleDelay
		if delay < chargeLaterDelay {
			next = min(2*delay, chargeRetryMax)
		}
		g.chargeLater(ns, kind, c, next)
	}, delay)
}

// unchargedMark is the charge obj's status marked (MarkedChargeOf) while the budget, as the cache
// shows it, may still lack it (lostCharge): its render must not move on to another job before it
// is written. False otherwise, and on a nil guard; the budget is read only for a marked end.
func (g *Guard) unchargedMark(ctx context.Context, obj client.Object) (JobCharge, bool) {
	if g == nil {
		return JobCharge{}, false
	}
	c, ok := MarkedChargeOf(obj)
	if !ok {
		return c, false
	}
	b, err := g.cachedBudget(ctx, obj.GetNamespace())
	return c, err == nil && lostCharge(b, c)
}

// lostCharge reports whether the budget certainly lacks the charge c marked (see above).
func lostCharge(b *videov1alpha1.VideoBudget, c JobCharge) bool {
	if charged(b, c.JobID) {
		return false
	}
	if c.Mark.After != "" {
		return charged(b, c.Mark.After)
	}
	count := b.Status.ChargeCount
	return c.Mark.Count <= count && count-c.Mark.Count < maxChargedJobs
}
