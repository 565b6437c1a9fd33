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
	"fmt"
	"math"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// A reservation proves its fact (a job, its end) unfolded: the ledger write that folds the fact
// gives it the job id or removes it, so each fact is folded once and a crash loses nothing
// (docs/spend-guard.md, "Durable, and folded from facts").

// foldAge is how old a fact is before the controller folds it itself: until then a guard write
// usually carries it, and a stream of ends costs one write per foldAge.
const foldAge = 5 * time.Second

// EndOf is the charge of the ended job obj's status records: nothing for a failed job, the
// estimate when its end was never read, a preview's credits only (counted, not timed).
func EndOf(obj client.Object) (JobCharge, bool) {
	st := videov1alpha1.JobStatusOf(obj)
	if st == nil || st.JobID == "" || st.CompletedAt == nil {
		return JobCharge{}, false
	}
	c := ChargeOf(obj)
	if st.Failure != nil && !givenUp(st.Failure.Code) {
		return c, true // the charge only posts its reservation
	}
	vr, ok := obj.(*videov1alpha1.VideoRender)
	if !ok {
		if sb, ok := obj.(*videov1alpha1.VideoStoryboard); ok && st.Failure == nil {
			_, c.Credits = Cost(0, sb.Status.AICreditsUsed)
		}
		return c, true
	}
	rec := vr.Status.BudgetEstimate
	c.Unreported = rec != nil && rec.UnreportedCredits
	if st.Failure != nil {
		c.Estimate = true
		if rec != nil {
			c.Seconds = rec.Seconds
		}
		return c, true
	}
	var secs float64
	if vr.Status.VideoDuration != nil {
		secs = vr.Status.VideoDuration.Seconds()
	}
	c.Seconds, c.Credits = Cost(secs, vr.Status.AICreditsUsed)
	return c, true
}

// Cost is what a job's end charges: its video's seconds, rounded up (past maxSeconds: none), and
// its AI credits (nil when none or unreadable).
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

// maxSeconds bounds a video's length as a charge reads it, as the controller bounds the one it records.
const maxSeconds = 1e9

// foldRecorded folds every fact the namespace's objects recorded once the oldest is minAge old;
// it returns how many it folded, or when the oldest will be due.
func foldRecorded(ctx context.Context, r client.Reader, b *videov1alpha1.VideoBudget, now time.Time, minAge time.Duration) (int, time.Time, error) {
	if len(b.Status.Reservations) == 0 {
		return 0, time.Time{}, nil
	}
	_, holders, err := listHolders(ctx, r, b.Namespace)
	if err != nil {
		return 0, time.Time{}, err
	}
	var oldest time.Time
	for _, res := range b.Status.Reservations {
		if obj := holders[res.UID]; obj != nil {
			if at, ok := unfoldedFact(b, res, videov1alpha1.JobStatusOf(obj)); ok && (oldest.IsZero() || at.Before(oldest)) {
				oldest = at
			}
		}
	}
	if oldest.IsZero() {
		return 0, time.Time{}, nil
	}
	if due := oldest.Add(minAge); now.Before(due) {
		return 0, due, nil
	}
	var n int
	for _, res := range slices.Clone(b.Status.Reservations) {
		obj := holders[res.UID]
		if obj == nil {
			continue
		}
		st := videov1alpha1.JobStatusOf(obj)
		if res.JobID == "" {
			if !paidWith(b, st, res) {
				continue
			}
			if settleRecorded(b, res, obj, st) {
				n++
			}
			res.JobID = st.JobID
		}
		c, ok := EndOf(obj)
		if !ok || st.JobID != res.JobID {
			continue
		}
		if c.Estimate || st.Failure == nil {
			// An older manager's render recorded no estimate: its reservation's flags (fillEstimate).
			c.Unreported = c.Unreported || res.UnreportedCredits
		}
		if c.change(b) {
			n++
		}
	}
	return n, time.Time{}, nil
}

// paidWith reports whether res paid for st's job: recorded since res was reserved, and neither
// posted nor held by another reservation already.
func paidWith(b *videov1alpha1.VideoBudget, st *videov1alpha1.JobStatus, res videov1alpha1.BudgetReservation) bool {
	return recordedSince(st, res) && !known(b, st.JobID)
}

// known reports whether b posted jobID already or a reservation holds it.
func known(b *videov1alpha1.VideoBudget, jobID string) bool {
	return charged(b, jobID) ||
		slices.ContainsFunc(b.Status.Reservations, func(r videov1alpha1.BudgetReservation) bool { return r.JobID == jobID })
}

// settleRecorded counts res as used in its job's period and makes the reservation the job's.
func settleRecorded(b *videov1alpha1.VideoBudget, res videov1alpha1.BudgetReservation, obj client.Object, st *videov1alpha1.JobStatus) bool {
	i := slices.IndexFunc(b.Status.Reservations, func(r videov1alpha1.BudgetReservation) bool {
		return r.UID == res.UID && r.AttemptID == res.AttemptID && r.JobID == ""
	})
	if i < 0 {
		return false
	}
	countUsed(b, res, st.SubmittedAt.Time)
	b.Status.Reservations[i].JobID = st.JobID
	fillEstimate(&b.Status.Reservations[i], obj)
	return true
}

// listHolders lists the namespace's objects that may hold a reservation, renders first, and by
// uid (uncopied: only read).
func listHolders(ctx context.Context, r client.Reader, ns string) ([]client.Object, map[string]client.Object, error) {
	var renders videov1alpha1.VideoRenderList
	var previews videov1alpha1.VideoStoryboardList
	for _, list := range []client.ObjectList{&renders, &previews} {
		if err := r.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return nil, nil, fmt.Errorf("listing the objects of namespace %s that may hold a reservation of its budget: %w", ns, err)
		}
	}
	objs := make([]client.Object, 0, len(renders.Items)+len(previews.Items))
	for i := range renders.Items {
		objs = append(objs, &renders.Items[i])
	}
	for i := range previews.Items {
		objs = append(objs, &previews.Items[i])
	}
	byUID := make(map[string]client.Object, len(objs))
	for _, o := range objs {
		byUID[string(o.GetUID())] = o
	}
	return objs, byUID, nil
}

// unfolded reports whether b still holds a reservation for the ended job obj's status records.
func unfolded(b *videov1alpha1.VideoBudget, obj client.Object) bool {
	st := videov1alpha1.JobStatusOf(obj)
	if st == nil || st.JobID == "" || st.CompletedAt == nil {
		return false
	}
	return slices.ContainsFunc(b.Status.Reservations, func(r videov1alpha1.BudgetReservation) bool {
		_, ok := unfoldedFact(b, r, st)
		return r.UID == string(obj.GetUID()) && ok
	})
}

// unfoldedFact is when st recorded the fact b has not folded for res yet: its job, or its end.
func unfoldedFact(b *videov1alpha1.VideoBudget, res videov1alpha1.BudgetReservation, st *videov1alpha1.JobStatus) (time.Time, bool) {
	switch {
	case res.JobID == "" && paidWith(b, st, res):
		return st.SubmittedAt.Time, true
	case res.JobID != "" && st.JobID == res.JobID && st.CompletedAt != nil:
		return st.CompletedAt.Time, true
	}
	return time.Time{}, false
}
