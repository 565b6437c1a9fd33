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

// Folding the facts that objects record. A render records its submission's job (status.jobId,
// submittedAt) and its job's end (completedAt, videoDuration, aiCreditsUsed, failure) in status
// writes it makes anyway; nothing else tells the budget. A fold reads them and applies them: the
// reservation of the submission becomes usage (a render's stays, its running job's), and the
// running job's reservation is posted for what the job cost (JobCharge.change, the one charge).
// The reservation is the proof that a fact is not folded yet: the write that folds it removes the
// reservation, or gives it its job id, with the usage it adds, under the budget's optimistic
// lock, so a fact is folded once, whoever folds it and however often it is read, and a crash
// loses nothing (the fact stays in the object, the reservation in the budget and its ledger).
//
// Every budget write folds what the cache shows (foldRecorded in writeBatch: a guard write
// carries the namespace's facts at no cost); the VideoBudget controller folds what no write
// carried within foldAge, all at once, so that in a burst the facts ride with the reservations' writes rather
// than costing writes of their own. A render moves on to a new job only after a write that folds
// its ended one (takeGrant refuses to pay without one), and a deleted render keeps its charge
// finalizer until its end is folded (Standing.Unfolded).

// foldAge is how old a fact must be before the VideoBudget controller folds it, with every other
// fact of the namespace, in a write of its own: long enough that in a burst a guard write carries
// it first, and that a stream of ends costs at most one such write per foldAge.
const foldAge = 5 * time.Second

// EndOf is the charge of the ended job obj's status records (a VideoRender's): what it cost, as
// the status records it; nothing for a failed job; its reservation's estimate for a job whose end
// was never read (given up at the job deadline, or forgotten by the service).
func EndOf(obj client.Object) (JobCharge, bool) {
	vr, ok := obj.(*videov1alpha1.VideoRender)
	if !ok || vr.Status.JobID == "" || vr.Status.CompletedAt == nil {
		return JobCharge{}, false
	}
	st := &vr.Status
	c := ChargeOf(vr)
	unreported := st.BudgetEstimate != nil && st.BudgetEstimate.UnreportedCredits
	switch {
	case st.Failure != nil && givenUp(st.Failure.Code):
		c.Estimate, c.Unreported = true, unreported
		if st.BudgetEstimate != nil {
			c.Seconds = st.BudgetEstimate.Seconds
		}
	case st.Failure != nil:
		// A failed job is charged nothing: the charge only posts its reservation.
	default:
		var secs float64
		if st.VideoDuration != nil {
			secs = st.VideoDuration.Seconds()
		}
		c.Seconds, c.Credits = Cost(secs, st.AICreditsUsed)
		c.Unreported = unreported
	}
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

// foldRecorded folds into b the facts the namespace's objects recorded, as r shows them: all of
// them, once the oldest is at least minAge old at now, so that the VideoBudget controller's own
// writes carry at most one minAge of facts each. It reports how many it folded, and, when it
// folded none for their age, when the oldest becomes due (zero otherwise).
func foldRecorded(ctx context.Context, r client.Reader, b *videov1alpha1.VideoBudget, now time.Time, minAge time.Duration) (int, time.Time, error) {
	if len(b.Status.Reservations) == 0 {
		return 0, time.Time{}, nil
	}
	holders, err := listHolders(ctx, r, b.Namespace)
	if err != nil {
		return 0, time.Time{}, err
	}
	if oldest := oldestFact(b, holders); oldest.IsZero() || now.Before(oldest.Add(minAge)) {
		if oldest.IsZero() {
			return 0, time.Time{}, nil
		}
		return 0, oldest.Add(minAge), nil
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
			if res.Kind == kindStoryboard {
				continue
			}
			res.JobID = st.JobID
		}
		if st.JobID != res.JobID || st.CompletedAt == nil {
			continue
		}
		c, ok := EndOf(obj)
		if !ok {
			continue
		}
		if c.Estimate || st.Failure == nil {
			// A render submitted by an older manager recorded no estimate: its reservation's
			// flags were filled from its spec (fillEstimate).
			c.Unreported = c.Unreported || res.UnreportedCredits
		}
		if c.change(b) {
			n++
		}
	}
	return n, time.Time{}, nil
}

// paidWith reports whether the job st records was paid with res: recorded since res was reserved,
// with no submission in flight, and neither posted nor held by another reservation already.
// Status times are kept to the second, so a render's previous job, recorded in the second its next
// reservation was made in, would pass for the next one's until its in-flight record shows.
func paidWith(b *videov1alpha1.VideoBudget, st *videov1alpha1.JobStatus, res videov1alpha1.BudgetReservation) bool {
	if res.Kind == kindStoryboard {
		return recordedSince(st, res) && !charged(b, previewCounted(st.JobID))
	}
	return recordedSince(st, res) && !known(b, st.JobID)
}

// previewCounted is the chargedJobs entry of a preview's job whose submission was counted. Its job
// id itself is posted by the charge of its credits (Charge, before its end is written): one entry
// for both made the credits reported after the count's fold pass for charged, and never reach the
// budget (TestAPreviewsCreditsReportedAfterItsJobWasFoldedAreCharged).
func previewCounted(jobID string) string { return "counted:" + jobID }

// known reports whether b posted jobID already or a reservation holds it.
func known(b *videov1alpha1.VideoBudget, jobID string) bool {
	return charged(b, jobID) || slices.ContainsFunc(b.Status.Reservations, func(r videov1alpha1.BudgetReservation) bool { return r.JobID == jobID })
}

// oldestFact is when the oldest fact not folded into b was recorded (a job, an end); zero when
// there is none.
func oldestFact(b *videov1alpha1.VideoBudget, holders map[string]client.Object) time.Time {
	var oldest time.Time
	for _, res := range b.Status.Reservations {
		obj := holders[res.UID]
		if obj == nil {
			continue
		}
		at, ok := unfoldedFact(b, res, videov1alpha1.JobStatusOf(obj))
		if ok && (oldest.IsZero() || at.Before(oldest)) {
			oldest = at
		}
	}
	return oldest
}

// settleRecorded counts res as used, in the period its job was recorded in: a preview's
// reservation ends there, a render's becomes its running job's.
func settleRecorded(b *videov1alpha1.VideoBudget, res videov1alpha1.BudgetReservation, obj client.Object, st *videov1alpha1.JobStatus) bool {
	i := slices.IndexFunc(b.Status.Reservations, func(r videov1alpha1.BudgetReservation) bool {
		return r.UID == res.UID && r.AttemptID == res.AttemptID && r.JobID == ""
	})
	if i < 0 {
		return false
	}
	countUsed(b, res, st.SubmittedAt.Time)
	if res.Kind == kindStoryboard {
		b.Status.Reservations = slices.Delete(slices.Clone(b.Status.Reservations), i, i+1)
		postJob(b, previewCounted(st.JobID))
		return true
	}
	b.Status.Reservations[i].JobID = st.JobID
	fillEstimate(&b.Status.Reservations[i], obj)
	return true
}

// listHolders lists the namespace's objects that may hold a reservation, by uid, as r shows them:
// from the cache, uncopied (they are only read).
func listHolders(ctx context.Context, r client.Reader, ns string) (map[string]client.Object, error) {
	var renders videov1alpha1.VideoRenderList
	var previews videov1alpha1.VideoStoryboardList
	out := map[string]client.Object{}
	for _, list := range []client.ObjectList{&renders, &previews} {
		if err := r.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing the objects of namespace %s to fold what they recorded into its budget: %w", ns, err)
		}
	}
	for i := range renders.Items {
		out[string(renders.Items[i].UID)] = &renders.Items[i]
	}
	for i := range previews.Items {
		out[string(previews.Items[i].UID)] = &previews.Items[i]
	}
	return out, nil
}

// unfolded reports whether b still holds the reservation of the ended job obj's status records:
// its running job's, or the submission's that created it when its record is not folded either.
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

// unfoldedFact is when st, the status of res's holder, recorded the fact b has not folded for res
// yet: the job res paid for, or the end of res's job.
func unfoldedFact(b *videov1alpha1.VideoBudget, res videov1alpha1.BudgetReservation, st *videov1alpha1.JobStatus) (time.Time, bool) {
	switch {
	case res.JobID == "" && paidWith(b, st, res):
		return st.SubmittedAt.Time, true
	case res.JobID != "" && st.JobID == res.JobID && st.CompletedAt != nil:
		return st.CompletedAt.Time, true
	}
	return time.Time{}, false
}
