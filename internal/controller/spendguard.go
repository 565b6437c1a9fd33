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

package controller

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/videoops/video-operator/internal/statustxn"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/spendguard"
)

// Kinds as reservations name them.
const (
	kindRender     = "VideoRender"
	kindStoryboard = "VideoStoryboard"
)

// indexBudgetWaiting indexes the objects that wait for budget, so a change of their namespace's
// VideoBudget wakes exactly them.
const indexBudgetWaiting = ".status.budgetWaiting"

func indexWaitingForBudget(ctx context.Context, mgr ctrl.Manager) error {
	for _, obj := range []client.Object{&videov1alpha1.VideoStoryboard{}, &videov1alpha1.VideoRender{}} {
		if err := mgr.GetFieldIndexer().IndexField(ctx, obj, indexBudgetWaiting, func(o client.Object) []string {
			if st := videov1alpha1.JobStatusOf(o); st != nil && budgetWaits(st) {
				return []string{"true"}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("indexing objects waiting for budget: %w", err)
		}
	}
	return nil
}

// waitingForBudget maps a VideoBudget event to the objects of its namespace that wait for
// budget: a raised limit or a new period may let them submit.
func (l *lifecycle[T]) waitingForBudget(list client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, b client.Object) []ctrl.Request {
		return listRequests(ctx, l.client, list.DeepCopyObject().(client.ObjectList),
			client.InNamespace(b.GetNamespace()), client.MatchingFields{indexBudgetWaiting: "true"})
	}
}

// budgetRecheck is how often a VideoBudget is looked at besides its changes and its period
// end: it bounds how late interrupted reservations are settled.
func budgetRecheck(pollMax time.Duration) time.Duration { return 10 * pollMax }

// budgetWaits reports whether the object waits for budget: Stalled with reason BudgetExhausted,
// or Reconciling with it as written by managers before Stalled was used (issue 24).
func budgetWaits(st *videov1alpha1.JobStatus) bool {
	for _, t := range []videov1alpha1.ConditionType{videov1alpha1.ConditionStalled, videov1alpha1.ConditionReconciling} {
		if c := condition(st, t); c != nil && c.Status == metav1.ConditionTrue && c.Reason == string(videov1alpha1.ReasonBudgetExhausted) {
			return true
		}
	}
	return false
}

// reserveBudget is the spend guard's step of submit: it reserves room for attempt, or makes the
// object wait (Stalled, BudgetExhausted, with a Warning event once). Stalled, not Reconciling:
// only the next period or a person raising the limit moves it on, which may take a month, and
// GitOps tools must not show it progressing meanwhile; it still submits by itself then. wait is true when the
// caller must return res and err.
func (l *lifecycle[T]) reserveBudget(ctx context.Context, tx *statustxn.Txn[T], attempt, digest string) (res ctrl.Result, wait bool, err error) {
	if l.guard == nil {
		return ctrl.Result{}, false, nil
	}
	obj := tx.Obj
	// What the server held when this reconcile began: a confirmed resubmission clears the unknown
	// attempt from obj, not from base.
	sent := func(r videov1alpha1.BudgetReservation) bool {
		for _, st := range []*videov1alpha1.JobStatus{l.adapter.jobStatus(tx.Base), l.adapter.jobStatus(obj)} {
			if st.Submission != nil && st.Submission.AttemptID == r.AttemptID {
				return true
			}
			if st.JobID != "" && st.SubmittedAt != nil && !st.SubmittedAt.Before(&r.ReservedAt) {
				return true
			}
		}
		return false
	}
	d, err := l.guard.Reserve(ctx, l.adapter.kind(), obj, attempt, digest, sent)
	if errors.Is(err, spendguard.ErrBusy) {
		return ctrl.Result{RequeueAfter: l.backoff.Short()}, true, nil
	}
	if err != nil {
		return ctrl.Result{}, true, err
	}
	if !d.Wait {
		return ctrl.Result{}, false, nil
	}
	st := l.adapter.jobStatus(obj)
	msg := fmt.Sprintf("Not submitted: VideoBudget %q of namespace %q has no room: %s", videov1alpha1.VideoBudgetName, obj.GetNamespace(), d.Message)
	if !d.ResetAt.IsZero() {
		msg += fmt.Sprintf(". Submits by itself when the period resets at %s or when the budget is raised",
			d.ResetAt.UTC().Format(time.RFC3339))
	}
	if c := condition(st, videov1alpha1.ConditionReconciling); c == nil || c.Reason != string(videov1alpha1.ReasonBudgetExhausted) {
		tx.After(func() {
			l.opts.Recorder.Eventf(obj, nil, "Warning", string(videov1alpha1.ReasonBudgetExhausted), "Submit", "%s", msg)
		})
	}
	if st.JobID == "" || st.CompletedAt != nil {
		st.Phase = videov1alpha1.PhasePending
	}
	setOutcome(st, obj.GetGeneration(), outcomeStalled, videov1alpha1.ReasonBudgetExhausted, msg)
	// The watch on VideoBudgets wakes the object when the budget is raised or its period rolls
	// over. The requeue covers a budget change that raced this object's own wait write (the index
	// of waiting objects did not list it yet): a look from the cache, which writes nothing while
	// the budget is unchanged.
	after := budgetRecheck(l.opts.PollMax)
	if !d.ResetAt.IsZero() {
		after = min(after, max(d.ResetAt.Sub(l.opts.Clock.Now()), l.backoff.Unit()))
	}
	return ctrl.Result{RequeueAfter: l.backoff.PollDelay(after, after+after/4)}, true, nil
}

// settleBudget turns the reservation of an attempt whose job id was written into usage. A
// failure is only logged: the VideoBudget controller settles what is left.
func (l *lifecycle[T]) settleBudget(ctx context.Context, obj T, attempt string) {
	if l.guard == nil {
		return
	}
	if err := l.guard.Settle(ctx, obj.GetNamespace(), obj.GetUID(), attempt); err != nil {
		logf.FromContext(ctx).Info("Settling the budget reservation failed; the VideoBudget controller settles it", "attempt", attempt, "error", err.Error())
	}
}

// releaseBudget gives back the reservation of an attempt that certainly created no job.
func (l *lifecycle[T]) releaseBudget(ctx context.Context, obj T, attempt string) {
	if l.guard == nil {
		return
	}
	if err := l.guard.Release(ctx, obj.GetNamespace(), obj.GetUID(), attempt); err != nil {
		logf.FromContext(ctx).Info("Releasing the budget reservation failed; the VideoBudget controller releases it", "attempt", attempt, "error", err.Error())
	}
}

// chargeCompletion charges a completed render's seconds and credits into the budget before its
// completion is written. When the charge cannot be written, the reconcile's decisions are
// discarded (the completion is not written either) and the job is read again later.
func (l *lifecycle[T]) chargeCompletion(ctx context.Context, tx *statustxn.Txn[T], job *apiclient.Job) error {
	if l.guard == nil || l.adapter.kind() != kindRender || !job.Status().IsCompleted() {
		return nil
	}
	secs := int64(0)
	if f, ok := job.Data.VideoDuration.Float64(); ok && f > 0 && f < maxSeconds {
		secs = int64(math.Ceil(f))
	}
	var credits *resource.Quantity
	if q, err := resource.ParseQuantity(decimal(job.Data.AICreditsUsed)); err == nil && q.Sign() > 0 {
		credits = &q
	}
	jobID := l.adapter.jobStatus(tx.Obj).JobID
	if err := l.guard.Charge(ctx, tx.Obj.GetNamespace(), jobID, secs, credits); err != nil {
		tx.Abort()
		return fmt.Errorf("charging job %s to the namespace's VideoBudget: %w", jobID, err)
	}
	return nil
}

// budgetObserver is m as the VideoBudget reconciler's observer, nil without metrics.
func budgetObserver(m *Metrics) spendguard.Observer {
	if m == nil {
		return nil
	}
	return m
}
