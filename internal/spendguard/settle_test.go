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
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The tests' way to settle a reservation, as the manager does it: the object records the job in
// its own status (status.jobId and submittedAt, no submission in flight), and a budget write
// folds it (fold.go). Nothing tells the budget directly.

// settle records job jobID for the reservation of attempt of the object uid, now (the guard's
// clock), and makes a budget write, which folds it: the reservation becomes usage (a render's
// stays, its running job's). It is a no-op when the budget holds no unfolded reservation of that
// attempt (a fold took it already).
//
//nolint:unparam // the tests' namespace is always the same
func (g *Guard) settle(ctx context.Context, ns string, uid types.UID, attempt, jobID string) error {
	return g.settleAt(ctx, ns, uid, attempt, jobID, time.Time{})
}

// settleAt is settle for a job recorded at recordedAt (zero: now, and never before the
// reservation: a job is recorded after its submission was reserved).
func (g *Guard) settleAt(ctx context.Context, ns string, uid types.UID, attempt, jobID string, recordedAt time.Time) error {
	var b videov1alpha1.VideoBudget
	if err := readBudget(ctx, g.reader, ns, &b); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	var res *videov1alpha1.BudgetReservation
	for i, r := range b.Status.Reservations {
		if r.UID == string(uid) && r.AttemptID == attempt && r.JobID == "" {
			res = &b.Status.Reservations[i]
			break
		}
	}
	if res == nil {
		return nil
	}
	if recordedAt.IsZero() {
		recordedAt = g.clock.Now()
		if recordedAt.Before(res.ReservedAt.Time) {
			recordedAt = res.ReservedAt.Time
		}
	}
	if err := g.recordJob(ctx, ns, *res, jobID, recordedAt); err != nil {
		return err
	}
	return g.foldNow(ctx, ns)
}

// recordJob writes job jobID, recorded at, into the status of the object that holds res, as its
// job-id write does (a job other than the one it shows starts with no end); it creates the
// object when the API server has none (tests reserve for objects they never created).
func (g *Guard) recordJob(ctx context.Context, ns string, res videov1alpha1.BudgetReservation, jobID string, at time.Time) error {
	var obj client.Object = &videov1alpha1.VideoRender{}
	if res.Kind == kindStoryboard {
		obj = &videov1alpha1.VideoStoryboard{}
	}
	err := g.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: res.Name}, obj)
	missing := apierrors.IsNotFound(err)
	switch {
	case missing:
		obj.SetNamespace(ns)
		obj.SetName(res.Name)
		obj.SetUID(types.UID(res.UID))
	case err != nil:
		return err
	case string(obj.GetUID()) != res.UID:
		return fmt.Errorf("%s %s/%s is another object (uid %s) than the reservation's (%s)", res.Kind, ns, res.Name, obj.GetUID(), res.UID)
	}
	st := videov1alpha1.JobStatusOf(obj)
	if st.JobID != jobID {
		st.CompletedAt, st.Failure = nil, nil
		if vr, ok := obj.(*videov1alpha1.VideoRender); ok {
			vr.Status.VideoDuration, vr.Status.AICreditsUsed = nil, ""
		}
	}
	st.JobID, st.SubmittedAt, st.Submission = jobID, &metav1.Time{Time: at}, nil
	if missing {
		return g.client.Create(ctx, obj)
	}
	return writeObjectStatus(ctx, g.client, obj)
}

// writeObjectStatus writes obj's status, through its status subresource when the API server has
// one for its kind, or with the object otherwise (a fake API server built without it).
func writeObjectStatus(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Status().Update(ctx, obj)
	if apierrors.IsNotFound(err) {
		return c.Update(ctx, obj)
	}
	return err
}

// foldNow makes a write of the namespace's budget that changes nothing of its own: what the
// namespace's objects recorded rides with it (writeBatch folds it first), as with any guard
// write. It is a no-op without a budget.
func (g *Guard) foldNow(ctx context.Context, ns string) error {
	err := g.mutateBudget(ctx, ns, ChangeFold, func(*videov1alpha1.VideoBudget) bool { return false })
	if errors.Is(err, errNoBudget) {
		return nil
	}
	return err
}

// grantedAttempt is grantOf's attempt.
func (g *Guard) grantedAttempt(uid types.UID) string {
	attempt, _ := g.grantOf(uid)
	return attempt
}
