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
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The spend guard's verbs, what the reconcilers of the job kinds call at the steps of a paid
// submission (internal/controller/spendguard.go): Standing reads what the guard knows of an
// object; Reserve holds room before the paid call; Release gives back the room of an attempt that
// certainly created no job; Charge posts the cost of a job whose end no status records (a
// preview's credits, a deleted render's job); SettleAll settles a namespace before an uninstall.
// What objects record in their status (their jobs, their ends) the budget's writes fold (fold.go).

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
// ahead. A reservation written ahead for this attempt is taken without a write of its own.
func (g *Guard) Reserve(ctx context.Context, s Submission) (Decision, error) {
	ns := s.Obj.GetNamespace()
	if s.CallIn > 0 {
		queued := g.budgeted(ctx, ns) && g.reserveAhead(s.Kind, s.Obj, s.Attempt, s.Digest, s.Est, s.Sent, s.CallIn)
		return Decision{Budgeted: queued}, nil
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
	// Unfolded is set while the budget, as the cache shows it, holds the reservation of the
	// ended job the object's status records: its end is not folded yet (fold.go).
	Unfolded bool
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
	s.Unfolded = unfolded(b, obj)
	return s
}

// Charge posts c, the cost of an ended job whose end no status records (JobCharge.change, the one
// charge), and waits for the write.
func (g *Guard) Charge(ctx context.Context, ns string, c JobCharge) error {
	return g.chargeNow(ctx, ns, c)
}
