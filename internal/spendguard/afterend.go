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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Charges written after the end. Under a budget that limits neither seconds nor AI credits,
// nothing is decided on a render's charge: its job was counted when its reservation was settled,
// and its seconds and credits only add to used. Such a render writes its end at once, with a
// mark (status.chargeMark: the budget's status.chargeCount as the cache shows it), and its
// charge rides with a later write of the namespace's budget (ChargeLater), shared with whatever
// else the namespace writes meanwhile. Under a seconds or credits limit the charge still reaches
// the budget before the end is written (ChargeSoon): the next render's decision needs it.
//
// Why the mark makes a lost charge certain. A job is charged once per id, and the write that
// charges it adds its id to chargedJobs and one to chargeCount; chargedJobs keeps the latest
// maxChargedJobs ids, and chargeCount never goes down on a budget (a budget created again takes
// it from the ledger). A job charged after its mark m was charged at a count c > m. While the
// budget's count is at most m + maxChargedJobs, fewer than maxChargedJobs ids came after that
// job's, so its id is still in chargedJobs: a job missing from it then is not charged yet, and
// is charged from the render's status (its videoDuration and aiCreditsUsed). Past that bound
// nothing is certain and nothing is charged again (a job is never counted twice; a charge lost
// and found only after more than maxChargedJobs others is the one case that counts less, and
// the queue is flushed early, at flushQueued changes, so that a lost charge's own namespace
// cannot run that far ahead of it).
//
// Who finds a lost charge (the manager stopped between a render's end and the write that
// carried its charge; a manager that stops gracefully writes its queue first, Flush): the
// VideoBudget controller, at its first look at the budget in a new
// process and at most every recoverEvery after (RecoverCharges); the render's charge
// finalizer when it is deleted (ChargeMarked); and the render's own next submission, whose
// reservation is written together with its previous job's charge (ChargeMarkedLater), so that
// a render never moves on to a new job before the end it marked is in the budget.

// chargeLaterDelay bounds how long a charge written after its render's end waits for another
// write of its namespace's budget to ride with.
const chargeLaterDelay = rideDelay

// flushQueued is how many changes a namespace's queue holds before it is written without
// waiting for its delay.
const flushQueued = 16

// chargeLaterTries bounds how often a charge written after the end is queued again after its
// write failed; after that the VideoBudget controller finds it (RecoverCharges).
const chargeLaterTries = 5

// recoverEvery bounds how often the VideoBudget controller looks for charges lost after their
// render's end, and recoverAge how old such an end must be before it is taken for lost while
// the process runs (its own charge is on its way until then).
const (
	recoverEvery = 30 * time.Second
	recoverAge   = 10 * time.Second
)

// MarkedCharge is the charge of a render's ended job, as its status records it.
type MarkedCharge struct {
	JobID string
	// Mark is the budget's chargeCount when the end was written (status.chargeMark).
	Mark       int64
	Seconds    int64
	Credits    *resource.Quantity
	Unreported bool
}

// MarkedChargeOf is the charge obj's status marked, if it marked one: a VideoRender whose job
// ended and whose end was written before its charge.
func MarkedChargeOf(obj client.Object) (MarkedCharge, bool) {
	vr, ok := obj.(*videov1alpha1.VideoRender)
	if !ok || vr.Status.ChargeMark == nil || vr.Status.JobID == "" || vr.Status.CompletedAt == nil {
		return MarkedCharge{}, false
	}
	st := &vr.Status
	c := MarkedCharge{JobID: st.JobID, Mark: *st.ChargeMark}
	if st.Failure != nil {
		return c, true
	}
	if d := st.VideoDuration; d != nil && d.Seconds() > 0 && d.Seconds() < maxSeconds {
		c.Seconds = int64(math.Ceil(d.Seconds()))
	}
	if q, err := resource.ParseQuantity(st.AICreditsUsed); err == nil && q.Sign() > 0 {
		c.Credits = &q
	}
	c.Unreported = st.BudgetEstimate != nil && st.BudgetEstimate.UnreportedCredits
	return c, true
}

// maxSeconds bounds a video's length as a charge reads it from a status, as the controller
// bounds the one it records.
const maxSeconds = 1e9

// ChargeAfterEnd reports whether the namespace's budget, as the cache shows it, lets a render's
// end be written before its charge (no maxRenderSeconds, no maxAICredits), and the mark its end
// records then.
func (g *Guard) ChargeAfterEnd(ctx context.Context, ns string) (mark int64, ok bool) {
	var b videov1alpha1.VideoBudget
	if err := g.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: videov1alpha1.VideoBudgetName}, &b); err != nil {
		return 0, false
	}
	if limitsLength(&b) {
		return 0, false
	}
	return b.Status.ChargeCount, true
}

// ChargeLater queues the charge of a render's ended job, whose end is written (or being
// written) with its mark, for a write of the namespace's budget within chargeLaterDelay. Nobody
// waits for it; a write that fails is tried again, chargeLaterTries times.
func (g *Guard) ChargeLater(ns string, c MarkedCharge) {
	g.later.add(c.JobID)
	g.chargeLater(ns, c, 1)
}

func (g *Guard) chargeLater(ns string, c MarkedCharge, try int) {
	delay := chargeLaterDelay
	if try > 1 {
		// Its write failed: the next comes sooner, with whatever else is queued by then.
		delay = settleDelay
	}
	g.mutateThen(ns, ChangeChargeAfterEnd, chargeChange(c.JobID, c.Seconds, c.Credits, c.Unreported), func(err error) {
		if err == nil || errors.Is(err, errNoBudget) || try >= chargeLaterTries {
			g.later.done(c.JobID)
			return
		}
		g.chargeLater(ns, c, try+1)
	}, delay)
}

// Flush writes every namespace's queued changes now, and then the ledgers' held-back copies, for
// a manager that stops: a charge queued after its render's end would otherwise wait for the
// next manager to find it, and a ledger would stay an interval behind its budget.
func (g *Guard) Flush(ctx context.Context) {
	if g.ledgers != nil {
		defer g.ledgers.flushAll(ctx)
	}
	w := &g.writers
	w.mu.Lock()
	causes := map[string]string{}
	for ns, s := range w.slots {
		if len(s.queue) > 0 {
			causes[ns] = s.queue[0].kind
		}
	}
	w.mu.Unlock()
	for ns, cause := range causes {
		slot, err := w.acquire(ctx, ns)
		if err != nil {
			continue
		}
		g.flushTurn(ctx, slot, cause)
	}
}

// ChargePending reports whether this process queued the charge of jobID after its end and has
// not written it yet.
func (g *Guard) ChargePending(jobID string) bool { return g != nil && g.later.has(jobID) }

// ChargeMarked charges the job a render's status marked, if the budget shows that it is not
// charged yet (see above), and waits for the write.
func (g *Guard) ChargeMarked(ctx context.Context, ns string, c MarkedCharge) error {
	return ignoreNoBudget(g.mutateBudget(ctx, ns, ChangeChargeMarked, markedChargeChange(c)))
}

// ChargeMarkedLater queues ChargeMarked's change with the namespace's next budget write, for a
// render about to reserve its next submission: the reservation's write carries it.
func (g *Guard) ChargeMarkedLater(ns string, c MarkedCharge) {
	g.mutateThen(ns, ChangeChargeMarked, markedChargeChange(c), nil, settleDelay)
}

// NotCharged reports, from the budget as the cache shows it, whether the job c marked may still
// lack its charge: its render must not move on to another job before it is written.
func (g *Guard) NotCharged(ctx context.Context, ns string, c MarkedCharge) bool {
	var b videov1alpha1.VideoBudget
	if err := g.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: videov1alpha1.VideoBudgetName}, &b); err != nil {
		return false
	}
	return lostCharge(&b, c)
}

// lostCharge reports whether the budget certainly lacks the charge c marked.
func lostCharge(b *videov1alpha1.VideoBudget, c MarkedCharge) bool {
	count := b.Status.ChargeCount
	return c.Mark <= count && count-c.Mark <= maxChargedJobs && !charged(b, c.JobID)
}

// markedChargeChange charges the job c marked when the budget certainly lacks its charge, or
// still holds the reservation of its running job (a charge ends it in the same write).
func markedChargeChange(c MarkedCharge) func(b *videov1alpha1.VideoBudget) bool {
	charge := chargeChange(c.JobID, c.Seconds, c.Credits, c.Unreported)
	return func(b *videov1alpha1.VideoBudget) bool {
		if !lostCharge(b, c) && !holdsJob(b, c.JobID) {
			return false
		}
		return charge(b)
	}
}

// holdsJob reports whether b holds the reservation of jobID's running job.
func holdsJob(b *videov1alpha1.VideoBudget, jobID string) bool {
	for _, r := range b.Status.Reservations {
		if jobID != "" && r.JobID == jobID {
			return true
		}
	}
	return false
}

// laterCharges are the jobs whose charge this process queued after their end.
type laterCharges struct {
	mu    sync.Mutex
	byJob map[string]int
}

func (l *laterCharges) add(jobID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byJob == nil {
		l.byJob = map[string]int{}
	}
	l.byJob[jobID]++
}

func (l *laterCharges) done(jobID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byJob[jobID]--; l.byJob[jobID] <= 0 {
		delete(l.byJob, jobID)
	}
}

func (l *laterCharges) has(jobID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byJob[jobID] > 0
}
