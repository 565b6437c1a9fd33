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
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/bound"
	"github.com/videoops/video-operator/internal/metrics"
	"github.com/videoops/video-operator/internal/spendguard"
	"github.com/videoops/video-operator/internal/statustxn"
)

// The charge finalizer is added to and removed from renders (holdForCharge, releaseCharge).
// +kubebuilder:rbac:groups=video.videoops.io,resources=videorenders,verbs=patch
// +kubebuilder:rbac:groups=video.videoops.io,resources=videorenders/finalizers,verbs=update

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

// reserveBudget is submit's last gate, the spend guard's: it reserves room for the attempt, or
// makes the object wait (Stalled, BudgetExhausted, with a Warning event once). Stalled, not
// Reconciling: only the next period or a person raising the limit moves it on, which may take a
// month, and GitOps tools must not show it progressing meanwhile; it still submits by itself then.
func (l *lifecycle[T]) reserveBudget(ctx context.Context, s *scope[T]) *stop {
	if l.guard == nil {
		return nil
	}
	obj, tx, attempt, t := s.obj, s.tx, s.attempt, s.target
	sent := l.sentBy(tx)
	est := bound.Preview(t.preview)
	if r := l.budgetEstimate(t); r != nil {
		est = bound.Of(r)
	}
	// The guard charges first the end of the previous job whose charge the budget may lack (its
	// status marked it), before the render moves on to a job whose status would no longer say
	// what to charge; a reservation made ahead while the render waited for its key's call budget
	// (reserveAhead) is taken without a write.
	d, err := l.guard.Reserve(ctx, spendguard.Submission{Kind: l.kind, Obj: obj, Attempt: attempt, Digest: t.sourceDigest, Est: est, Sent: sent})
	if errors.Is(err, spendguard.ErrBusy) {
		// Nothing was decided about this generation: observedGeneration must not move, or a
		// Ready of the old one would read as the new spec's (kstatus Current) while nothing was
		// sent.
		return stopWith(later(tx, l.backoff.Short()))
	}
	if err != nil {
		return stopOn(err)
	}
	if !d.Wait {
		// The charge finalizer is not written here: it travels with the job's record
		// (holdForCharge, in the one metadata write of the render's life); until then the
		// reservation, and after the job id the reservation of its running job, stand for it.
		return nil
	}
	st := obj.Job()
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
	return stopAfter(l.backoff.PollDelay(after, after+after/4))
}

// sentBy reports whether a reservation of the object stands for an attempt that may have reached
// the service. What the server held when this reconcile began counts: a confirmed resubmission
// clears the unknown attempt from obj, not from base.
func (l *lifecycle[T]) sentBy(tx *statustxn.Txn[T]) func(videov1alpha1.BudgetReservation) bool {
	base, obj := tx.Base.Job().DeepCopy(), tx.Obj.Job().DeepCopy()
	return func(r videov1alpha1.BudgetReservation) bool {
		for _, st := range []*videov1alpha1.JobStatus{base, obj} {
			if st.Submission != nil && st.Submission.AttemptID == r.AttemptID {
				return true
			}
			if st.JobID != "" && st.SubmittedAt != nil && !st.SubmittedAt.Before(&r.ReservedAt) {
				return true
			}
		}
		return false
	}
}

// reserveAhead queues the reservation of attempt with the namespace's next budget write, for a
// render of a namespace with a VideoBudget that waits for its key's call budget: when it comes
// back to pay, reserveBudget finds it written (spendguard grant.go) and writes nothing.
func (l *lifecycle[T]) reserveAhead(tx *statustxn.Txn[T], attempt string, t *target, wait time.Duration) bool {
	if l.guard == nil || !l.adapter.termsOf(tx.Obj).perJob || wait <= 0 {
		return false
	}
	var est bound.Estimate
	if r := l.budgetEstimate(t); r != nil {
		est = bound.Of(r)
	}
	d, _ := l.guard.Reserve(context.Background(), spendguard.Submission{Kind: l.kind, Obj: tx.Obj, Attempt: attempt, Digest: t.sourceDigest,
		Est: est, Sent: l.sentBy(tx), CallIn: wait})
	return d.Budgeted
}

// gatherReservation holds back, for Options.BudgetGather, a render of a guarded namespace that
// would write its reservation alone: it books its key's call slot at the end of the window (or
// later, behind the key's queue: callgate UrgentAfter), its reservation is queued ahead for that
// call (as for one waiting for its call budget: written with the namespace's next budget write,
// or shortly before a call far off) and shares one budget write with those of the namespace's
// other renders ready within the window; the render comes back to pay on it when its slot comes.
// A render never waits twice for one attempt: the second time it finds its reservation (or
// reserves the ordinary way). Without it every render of a steady stream made a budget write of
// its own (docs/architecture.md "Load on the cluster").
func (l *lifecycle[T]) gatherReservation(_ context.Context, s *scope[T]) *stop {
	gather := l.opts.BudgetGather
	if l.guard == nil || gather <= 0 || !l.adapter.termsOf(s.obj).perJob {
		return nil
	}
	st := l.guard.Standing(context.Background(), s.obj)
	if st.Attempt == s.attempt {
		// Queued ahead: back early (a watch event), it waits out its window, for the renders
		// that join the write.
		if wait := time.Until(st.AttemptAt); wait > 0 {
			return stopWith(later(s.tx, wait))
		}
		return nil
	}
	key := l.budgetKey(objectKey(s.obj))
	if !st.Budgeted || l.budgets.Holds(s.keyID, key) {
		// A slot it holds already (it waited for its call budget) is callBudgetSlot's.
		return nil
	}
	wait := l.budgets.UrgentAfter(s.keyID, key, gather)
	if !l.reserveAhead(s.tx, s.attempt, s.target, wait) {
		// Too many grants: it waits for the slot it holds now, and reserves the ordinary way.
		return nil
	}
	if wait > gather {
		return stopWith(l.budgetWait(s.tx, wait))
	}
	return stopWith(later(s.tx, wait))
}

// submissionAttempt is the attempt id of the next submission: the one reserved ahead for the
// object, or a new one.
func (l *lifecycle[T]) submissionAttempt(obj T) (string, error) {
	if l.guard != nil {
		if a := l.guard.Standing(context.Background(), obj).Attempt; a != "" {
			return a, nil
		}
	}
	return newAttemptID()
}

// budgetEstimate is what a render's submission reserves and records (its status keeps it with
// the submission and the job): the estimate of the request it sends, and its flags. A budget
// that rebuilds the reservation later (a replace) takes it from there, not from a guess: a
// storyboardRef render's request lives in another object. nil for a preview.
func (l *lifecycle[T]) budgetEstimate(t *target) *videov1alpha1.BudgetEstimate {
	if t.preview != nil {
		return nil
	}
	return bound.For(t.request()).Record()
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

// jobCost is what a job answer reports: the video's seconds (rounded up) and the AI credits.
func jobCost(job *apiclient.Job) (secs int64, credits *resource.Quantity) {
	if !job.Status().IsCompleted() {
		return 0, nil
	}
	f, ok := job.Data.VideoDuration.Float64()
	if !ok {
		f = 0
	}
	return spendguard.Cost(f, decimal(job.Data.AICreditsUsed))
}

// givenUp is c for a job whose end will never be read: its reservation's estimate, or est when
// the budget kept none.
func givenUp(c spendguard.JobCharge, est bound.Estimate) spendguard.JobCharge {
	c.Estimate, c.Seconds, c.Unreported = true, est.Seconds, est.Unreported
	return c
}

// holdForCharge adds the charge finalizer to patched, the render's record write, when the
// render's namespace has a VideoBudget and the record names a job: deleting the render mid-job
// then waits until its job's end is charged (finishCharge). It is the one metadata write of a
// render's life (docs/architecture.md "Load on the cluster"): the finalizer travels with the record
// rather than costing a write of its own before the submission. The money does not depend on it:
// the reservation of the render's running job stays until the job's end is charged, and a render
// gone without its finalizer (deleted before the record, or stripped) has its job's end read by the
// VideoBudget controller.
func (l *lifecycle[T]) holdForCharge(ctx context.Context, patched T, jobID string) {
	if l.guard == nil || !l.adapter.termsOf(patched).perJob || jobID == "" ||
		controllerutil.ContainsFinalizer(patched, videov1alpha1.FinalizerCharge) || !l.guard.Standing(ctx, patched).Budgeted {
		return
	}
	controllerutil.AddFinalizer(patched, videov1alpha1.FinalizerCharge)
}

// finishCharge is the reconcile of a deleted render that holds the charge finalizer: it reads
// its job's end and charges it (its estimate when the end will never be read: past the job
// deadline, unknown to the service, or its key gone), then lets the object go. A submission
// whose outcome is unknown is let go at once: the VideoBudget controller charges its reservation
// (count and estimate) once the object is gone.
func (l *lifecycle[T]) finishCharge(ctx context.Context, obj T) *stop {
	if !controllerutil.ContainsFinalizer(obj, videov1alpha1.FinalizerCharge) {
		return stopHere()
	}
	log := logf.FromContext(ctx)
	st := obj.Job()
	// The charge finds the reservation of the render's job whether its settlement landed or not:
	// by the attempt that created a job known only to the memo.
	charge := spendguard.ChargeOf(obj)
	jobID, running := st.JobID, st.JobID != "" && st.CompletedAt == nil
	if sub := st.Submission; sub != nil {
		if id, ok := l.memo.Lookup(sub.AttemptID); ok && !l.memo.FromCallback(sub.AttemptID) {
			jobID, running = id, true
			charge.JobID, charge.Attempt = id, sub.AttemptID
		}
	}
	if !running && l.guard.Standing(ctx, obj).Unfolded {
		// Its end is in its status and not folded into the budget yet: it is read from there
		// (its update wakes the VideoBudget controller), so the object waits.
		return stopAfter(l.backoff.Short())
	}
	if running && l.guard != nil {
		est := l.adapter.termsOf(obj).estimateOf()
		giveUp := func(why string) *stop {
			log.Info("Charging the estimate of a deleted render's job whose end will not be read", "jobID", jobID, "reason", why)
			if err := l.guard.Charge(ctx, obj.GetNamespace(), givenUp(charge, est)); err != nil {
				return stopAfter(l.backoff.Short())
			}
			return l.releaseCharge(ctx, obj)
		}
		if l.pastDeadline(st) {
			return giveUp("past the job deadline")
		}
		api, keyID, err := l.apiClient(ctx, obj)
		if err != nil {
			return giveUp("its API key cannot be read")
		}
		callCtx, cancel := l.callContext(ctx)
		job, err := api.GetJob(callCtx, jobID)
		cancel()
		switch {
		case apiclient.IsJobNotFound(err):
			return giveUp("the service no longer knows it")
		case apiclient.IsUnauthorized(err):
			return giveUp("the service rejects its API key")
		case err != nil:
			log.V(1).Info("Reading a deleted render's job failed; trying again", "jobID", jobID, "error", err.Error())
			return stopAfter(l.backoff.Next(objectKey(obj), apiclient.RetryAfter(err)))
		case !job.Status().IsCompleted() && !job.Status().IsFailed():
			return stopAfter(l.pollDelay(keyID, obj))
		}
		charge.Seconds, charge.Credits = jobCost(job)
		charge.Unreported = job.Status().IsCompleted() && est.Unreported
		if err := l.guard.Charge(ctx, obj.GetNamespace(), charge); err != nil {
			return stopAfter(l.backoff.Short())
		}
		log.Info("Charged the job of a deleted render", "jobID", jobID, "renderSeconds", charge.Seconds)
	}
	return l.releaseCharge(ctx, obj)
}

// releaseCharge removes the charge finalizer.
func (l *lifecycle[T]) releaseCharge(ctx context.Context, obj T) *stop {
	base := obj.DeepCopyObject().(T)
	controllerutil.RemoveFinalizer(obj, videov1alpha1.FinalizerCharge)
	if err := l.client.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return stopHere()
		}
		if apierrors.IsConflict(err) {
			return stopAfter(l.backoff.Short())
		}
		return stopOn(fmt.Errorf("removing finalizer %s: %w", videov1alpha1.FinalizerCharge, err))
	}
	return stopHere()
}

// budgetObserver is m as the VideoBudget reconciler's observer, nil without metrics.
func budgetObserver(m *metrics.Metrics) spendguard.Metrics {
	if m == nil {
		return nil
	}
	return m
}
