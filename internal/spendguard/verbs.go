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
	"github.com/videoops/video-operator/internal/bound"
)

// The spend guard's verbs, for the job kinds' reconcilers (internal/controller/spendguard.go). There
// is none for a job's end: what objects record in their status the namespace's writes fold (fold.go).

// Submission is a paid submission the guard decides on.
type Submission struct {
	Kind string // VideoRender or VideoStoryboard
	Obj  client.Object
	// Attempt is status.submission.attemptId; Digest the approved preview a storyboardRef render pays.
	Attempt, Digest string
	Est             bound.Estimate // the render's (zero for a preview)
	// Sent reports whether a reservation it holds may have reached the service: used, not replaced.
	Sent func(videov1alpha1.BudgetReservation) bool
	// CallIn, when set, is how long the object waits before it pays: Reserve only queues its
	// reservation to be written ahead (grant.go), and Decision.Budgeted says whether it was queued.
	CallIn time.Duration
}

// Reserve holds room for s before its paid call, or, with s.CallIn, queues it ahead.
func (g *Guard) Reserve(ctx context.Context, s Submission) (Decision, error) {
	ns := s.Obj.GetNamespace()
	if s.CallIn > 0 {
		queued := g.budgeted(ctx, ns) && g.reserveAhead(s.Kind, s.Obj, s.Attempt, s.Digest, s.Est, s.Sent, s.CallIn)
		return Decision{Budgeted: queued}, nil
	}
	if d, ok := g.takeGrant(ctx, s.Kind, s.Obj, s.Attempt, s.Digest, s.Est); ok {
		return d, nil
	}
	return g.reserve(ctx, s.Kind, s.Obj, s.Attempt, s.Digest, s.Est, s.Sent)
}

// Standing is what the guard knows of an object, from the cache and this process's memory.
type Standing struct {
	Budgeted bool // the object's namespace has a VideoBudget
	// Attempt is the attempt written or queued ahead, to submit with; AttemptAt when it pays; or none.
	Attempt   string
	AttemptAt time.Time
	// Unfolded: the budget, as the cache shows it, has not folded the end the status records.
	Unfolded bool
}

// Standing reads what the guard knows of obj.
func (g *Guard) Standing(ctx context.Context, obj client.Object) Standing {
	var s Standing
	if g == nil {
		return s
	}
	s.Attempt, s.AttemptAt = g.grantOf(obj.GetUID())
	if b, err := g.cachedBudget(ctx, obj.GetNamespace()); err == nil {
		s.Budgeted, s.Unfolded = true, unfolded(b, obj)
	}
	return s
}

// Adopt holds the running job obj recorded from its annotations, paid outside the guard (a restore
// without status, a record written by hand), until its end is folded, unless already held or charged.
func (g *Guard) Adopt(ctx context.Context, obj client.Object) error {
	st := videov1alpha1.JobStatusOf(obj)
	if st == nil || st.JobID == "" || st.CompletedAt != nil || st.SubmittedAt == nil {
		return nil
	}
	kind, est := estimateOf(obj)
	r := reservationOf(kind, obj, "adopted", *st.SubmittedAt, est)
	r.JobID = st.JobID
	return ignoreNoBudget(g.mutateBudget(ctx, obj.GetNamespace(), ChangeReserve, func(b *videov1alpha1.VideoBudget) bool {
		if known(b, st.JobID) || len(b.Status.Reservations) >= maxReservations {
			return false
		}
		b.Status.Reservations = append(b.Status.Reservations, r)
		return true
	}))
}

// Charge posts c, the cost of an ended job whose end no status records, and waits for the write.
func (g *Guard) Charge(ctx context.Context, ns string, c JobCharge) error {
	kind := ChangeCharge
	if c.Estimate {
		kind = ChangeGiveUp
	}
	return ignoreNoBudget(g.mutateBudget(ctx, ns, kind, c.change))
}
