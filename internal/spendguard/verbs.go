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
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The spend guard's verbs, what the reconcilers of the job kinds call at the steps of a paid
// submission (internal/controller/spendguard.go): Standing reads what the guard knows of an
// object; Reserve holds room before the paid call; Settle turns it into usage once the job id is
// recorded (guard.go); Release gives back the room of an attempt that certainly created no job; Charge
// posts an ended job's cost; SettleAll settles a namespace before an uninstall.

// Submission is a paid submission the guard decides on.
type Submission struct {
	// Kind is VideoRender or VideoStoryboard.
	Kind string
	Obj  client.Object
	// Attempt is the submission's attempt id (status.submission.attemptId); Digest the approved
	// preview a storyboardRef render pays for, recorded on the reservation.
	Attempt, Digest string
	// Est is the render's estimate (zero for a preview).
	Est Estimate
	// Sent reports whether a reservation the object holds stands for an attempt that may have
	// reached the service: it is then counted as used rather than replaced.
	Sent func(videov1alpha1.BudgetReservation) bool
	// CallIn, when set, is how long the object waits before it pays (for its key's call budget,
	// or for other renders of its namespace to share the write): its reservation is queued with
	// the namespace's budget write that comes shortly before (grant.go), Reserve does not wait
	// for it and decides nothing (Decision.Budgeted only says that it was queued); when the
	// object comes back to pay, Reserve finds it written.
	CallIn time.Duration
}

// Reserve holds room for s before its paid call (see reserve), or, with s.CallIn, queues it
// ahead. Before a render moves on to a new job, the end its status marked is charged if the
// budget may still lack it (afterend.go); a reservation written ahead for this attempt is taken
// without a write of its own.
func (g *Guard) Reserve(ctx context.Context, s Submission) (Decision, error) {
	ns := s.Obj.GetNamespace()
	if s.CallIn > 0 {
		queued := g.budgeted(ctx, ns) && g.reserveAhead(s.Kind, s.Obj, s.Attempt, s.Digest, s.Est, s.Sent, s.CallIn)
		return Decision{Budgeted: queued}, nil
	}
	if prior, ok := g.unchargedMark(ctx, s.Obj); ok {
		// A charge still queued rides with this write.
		if err := g.chargeNow(ctx, ns, prior); err != nil {
			return Decision{}, errors.Join(ErrBusy, err)
		}
	}
	if d, ok := g.takeGrant(ctx, s.Kind, s.Obj, s.Attempt, s.Digest, s.Est); ok {
		return d, nil
	}
	g.usedAttempt(s.Obj.GetUID(), s.Attempt)
	d, err := g.reserve(ctx, s.Kind, s.Obj, s.Attempt, s.Digest, s.Est, s.Sent)
	if err == nil && !d.Wait {
		g.sentAttempt(s.Obj.GetUID(), s.Attempt)
	}
	return d, err
}

// Standing is what the guard knows of an object, from the cache and this process's memory.
type Standing struct {
	// Budgeted is set when the object's namespace has a VideoBudget.
	Budgeted bool
	// Attempt is the attempt a reservation was written or queued ahead for (Submission.CallIn),
	// to submit with; empty when there is none. AttemptAt is when the object comes back to pay
	// on it (the end of its wait for its call budget or of the gather window).
	Attempt   string
	AttemptAt time.Time
	// Uncharged is the charge of the end the object's status marked, while the budget may still
	// lack it (afterend.go); nil otherwise.
	Uncharged *JobCharge
	// EndFirst is set when the end of the object's current job may be written before its charge
	// (a budget without a seconds or credits limit, afterend.go), with EndMark the mark that end
	// records; EndMark is nil when the budget holds the charge already.
	EndFirst bool
	EndMark  *videov1alpha1.ChargeMark
}

// Standing reads what the guard knows of obj.
func (g *Guard) Standing(ctx context.Context, obj client.Object) Standing {
	if g == nil {
		return Standing{}
	}
	var s Standing
	s.Attempt, s.AttemptAt = g.grantOf(obj.GetUID())
	// One read of the budget from the cache answers the rest.
	b, err := g.cachedBudget(ctx, obj.GetNamespace())
	if err != nil {
		return s
	}
	s.Budgeted = true
	if c, ok := MarkedChargeOf(obj); ok && lostCharge(b, c) {
		s.Uncharged = &c
	}
	if st := videov1alpha1.JobStatusOf(obj); st != nil && st.JobID != "" {
		s.EndMark, s.EndFirst = endMark(b, st.JobID)
	}
	return s
}

// When says how Charge writes a charge.
type When int

const (
	// ChargeNow writes the charge and waits for the write.
	ChargeNow When = iota
	// ChargeLater queues the charge of an end written (or being written) before it, with its
	// mark, for a later write of the namespace's budget; nobody waits for it.
	ChargeLater
	// ChargeMarked is ChargeLater for a marked end about to leave its render's status: written
	// sooner.
	ChargeMarked
)

// Charge posts c, an ended job's cost, into the namespace's budget (JobCharge.change, the one
// change every charge makes), as when says.
func (g *Guard) Charge(ctx context.Context, ns string, c JobCharge, when When) error {
	switch when {
	case ChargeLater:
		g.chargeLaterQueued(ns, c)
		return nil
	case ChargeMarked:
		g.chargeMarkedSoon(ns, c)
		return nil
	}
	return g.chargeNow(ctx, ns, c)
}
