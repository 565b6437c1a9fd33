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
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/requestdigest"
	"github.com/videoops/video-operator/internal/statustxn"
)

// submit is the last step: it sends the current request to the service, once. Gates first, in
// order, each of which may end the reconcile and none of which pays; then the paid section in a
// straight line (pay).
func (l *lifecycle[T]) submit(ctx context.Context, s *scope[T]) *stop {
	// Ends a trial of the key's circuit whose call is not made; a no-op once its outcome was
	// recorded.
	defer func() {
		if s.admitted {
			l.circuits.Abandon(s.keyID, s.attempt)
		}
	}()
	if end := run(ctx, s,
		l.checkBeforeSubmit, // the rules admission cannot afford, before the Secret is read (presubmit.go)
		l.useKey,            // the object's API key: one missing or refused stalls
		l.checkBrand,        // the brand a render names is one of the account's (brands.go)
		l.notShuttingDown,   // no new paid call once shutdown began
		l.takeAttempt,       // the attempt id: the one reserved ahead, or a new one (spendguard.go)
		l.circuitLets,       // the key's circuit lets a paid call through (callgate.go)
		l.gatherReservation, // a guarded render's reservation shares a budget write with its namespace's others (spendguard.go)
		l.callBudgetSlot,    // the key's call budget has a slot now; the reservation is written meanwhile
		l.admitSubmission,   // a key without a recent answer checks the service first (callgate.go)
		l.reserveBudget,     // the namespace's spend guard, last: a waiting render writes nothing to it (spendguard.go)
	); end != nil {
		return end
	}
	return l.pay(ctx, s)
}

// notShuttingDown is submit's gate that starts no new paid call once shutdown began.
func (l *lifecycle[T]) notShuttingDown(ctx context.Context, _ *scope[T]) *stop {
	if ctx.Err() != nil {
		return stopOn(errShuttingDown)
	}
	return nil
}

// takeAttempt is submit's gate that names the attempt: the one reserved ahead for the object,
// or a new one.
func (l *lifecycle[T]) takeAttempt(_ context.Context, s *scope[T]) *stop {
	attempt, err := l.submissionAttempt(s.obj)
	if err != nil {
		return stopOn(err)
	}
	s.attempt = attempt
	return nil
}

// circuitLets is submit's gate for the key's circuit. A submission the circuit holds back takes
// no slot of the call budget: waiting ones must not crowd out the polls of running jobs.
func (l *lifecycle[T]) circuitLets(_ context.Context, s *scope[T]) *stop {
	hold, outage, until := l.circuits.Holding(s.keyID)
	switch {
	case outage:
		return stopWith(l.paused(s.tx, "the service failed to answer; a check of the service decides when they resume",
			max(until, l.backoff.Short())))
	case hold:
		return stopWith(later(s.tx, l.backoff.Short()))
	}
	return nil
}

// callBudgetSlot is submit's gate for the key's call budget. A submission that must wait for its
// slot has its reservation written meanwhile, with the namespace's other budget changes.
func (l *lifecycle[T]) callBudgetSlot(_ context.Context, s *scope[T]) *stop {
	wait := l.budgets.Urgent(s.keyID, l.budgetKey(objectKey(s.obj)))
	if wait <= 0 {
		return nil
	}
	_ = l.reserveAhead(s.tx, s.attempt, s.target, wait)
	return stopWith(l.budgetWait(s.tx, wait))
}

// pay is the paid section in a straight line (docs/architecture.md "Never pay twice"):
//  1. the in-flight record (generation, attempt id, time, and what the attempt consumes) is
//     written with an optimistic lock before the call, so an object read from a stale cache
//     cannot be submitted again (writeInFlight);
//  2. the paid call (callService);
//  3. the job id is remembered in memory and written right after the call (accepted, writeJobID);
//     a refusal is recorded as the reconcile's decision (refusedCall);
//  4. when the outcome of the call is unknown, the object stalls with SubmissionUnknown instead
//     of guessing (unknownOutcome).
//
// The record in the annotations follows the status that names the job (Reconcile's commit).
// From the in-flight write to the job-id write, the work runs under its own deadline, not the
// reconcile's context: a shutdown must not cut a paid call or the write of its job id.
func (l *lifecycle[T]) pay(ctx context.Context, s *scope[T]) *stop {
	l.markInFlight(s)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.submitBudget())
	defer cancel()
	if end := l.writeInFlight(sctx, s); end != nil {
		return end
	}
	created, withCallback, err := l.callService(sctx, s)
	switch {
	case err == nil:
		return l.accepted(sctx, s, created.JobID, withCallback)
	case l.refused(err):
		return l.refusedCall(ctx, sctx, s, err)
	default:
		return l.unknownOutcome(ctx, s, err)
	}
}

// markInFlight decides, in memory, the in-flight record of the attempt: Submitting is the decision
// about this generation, so the record carries observedGeneration (a write of its own after the
// job id would be a 4th; docs/architecture.md "Load on the cluster").
func (l *lifecycle[T]) markInFlight(s *scope[T]) {
	obj, st, t, attempt := s.obj, s.st, s.target, s.attempt
	gen := obj.GetGeneration()
	started := l.opts.Clock.Now()
	st.Submission = &videov1alpha1.Submission{Generation: gen, AttemptID: attempt, StartedAt: metav1.NewTime(started),
		Deadline: ptr.To(metav1.NewTime(started.Add(l.submitBudget()))), Retry: s.retry, StoryboardGeneration: t.sourceGeneration, StoryboardUID: string(t.sourceUID),
		StoryboardDigest: t.recordedSourceDigest(), NarrationPinned: narrationPinned(t), ApprovedBy: t.approvedBy,
		RequestDigest: t.digest, DigestVersion: requestdigest.Version, KeyFingerprint: s.keyID, ResubmitOf: st.ResubmitOf, BudgetEstimate: l.budgetEstimate(t)}
	st.Phase = videov1alpha1.PhaseSubmitting
	st.ObservedGeneration = gen
	setOutcome(st, gen, outcomeReconciling, videov1alpha1.ReasonSubmitting,
		fmt.Sprintf("Submitting generation %d to the service (attempt %s)", gen, attempt))
	if s.attempted {
		retry := s.retry
		s.tx.After(func() {
			l.opts.Recorder.Eventf(obj, nil, "Normal", eventRetryRequested, "Retry",
				"Submitting a new job for generation %d as requested by annotation %s=%s", gen, videov1alpha1.AnnotationRetry, retry)
		})
	}
}

// callService makes the paid call, with the operator's callback URL when it has one. A job whose
// id status.jobId cannot hold is an error: its outcome is then unknown, not guessed.
func (l *lifecycle[T]) callService(ctx context.Context, s *scope[T]) (created *apiclient.JobCreated, withCallback bool, err error) {
	// The paid call may last --service-timeout: its record is in flight from now on.
	l.opts.Metrics.ObserveSubmission(l.kind, objectKey(s.obj), s.st.Submission)
	l.warnDeprecations(s.obj, s.target)

	body, withCallback := l.callbacks.WithCallback(s.target.request(), s.attempt)
	callCtx, cancel := context.WithTimeout(ctx, l.opts.CallTimeout)
	l.circuits.Calling(s.keyID, s.attempt)
	created, err = l.call(callCtx, s.api, s.target, body)
	cancel()
	l.circuits.Outcome(s.keyID, s.attempt, err == nil || l.refused(err))
	if err == nil && utf8.RuneCountInString(created.JobID) > maxJobID {
		// A job was created, but its id cannot be recorded: say so instead of guessing.
		err = fmt.Errorf("the service created job %q, whose id is longer than the %d characters status.jobId holds",
			truncate(created.JobID, 200), maxJobID)
		created = nil
	}
	return created, withCallback, err
}

// accepted records the job the paid call created and writes its id at once.
func (l *lifecycle[T]) accepted(ctx context.Context, s *scope[T], jobID string, withCallback bool) *stop {
	obj, gen, attempt := s.obj, s.obj.GetGeneration(), s.attempt
	l.memo.Remember(attempt, jobID, withCallback)
	l.opts.Metrics.Submitted(l.kind, "accepted")
	l.auditSubmission(obj, gen, attempt, "accepted", jobID, nil)
	l.recordSubmitted(s, jobID, withCallback)
	// This process follows the job from its start: its first poll is not spread as after a
	// restart.
	l.budgets.PollSpacing(s.keyID, l.budgetKey(objectKey(obj)))
	if err := l.writeJobID(ctx, s, jobID, withCallback); err != nil {
		// The job id is remembered in memory: the next reconcile adopts it.
		logf.FromContext(ctx).Error(err, "Recording the job id failed; it is kept in memory and recorded by the next reconcile",
			"jobID", jobID, "attempt", attempt)
		return stopAfter(l.backoff.Short())
	}
	l.progress.wrote(jobID)
	return stopWith(l.firstRead(l.pollDelay(s.keyID, obj)))
}

// refusedCall records a call after which the service certainly created no job.
func (l *lifecycle[T]) refusedCall(ctx, sctx context.Context, s *scope[T], err error) *stop {
	l.opts.Metrics.Submitted(l.kind, "refused")
	l.auditSubmission(s.obj, s.obj.GetGeneration(), s.attempt, "refused", "", err)
	// Should the write of the refusal fail, the record found later is cleared, not stalled on.
	l.memo.SettleNoJob(s.attempt)
	l.releaseBudget(sctx, s.obj, s.attempt)
	return l.refusal(ctx, s.tx, s.target, err)
}

// unknownOutcome stalls on a call that may or may not have created a job.
func (l *lifecycle[T]) unknownOutcome(ctx context.Context, s *scope[T], err error) *stop {
	obj, st := s.obj, s.st
	l.opts.Metrics.Submitted(l.kind, "unknown")
	l.auditSubmission(obj, obj.GetGeneration(), s.attempt, "unknown", "", err)
	logf.FromContext(ctx).Error(err, "Submission outcome unknown; pausing paid submissions of this API key until the service answers", "attempt", s.attempt)
	st.Phase = videov1alpha1.PhaseFailed
	l.stall(s.tx, videov1alpha1.ReasonSubmissionUnknown, unknownMessage(l.kind, obj, obj.DescribeRequest(), st.Submission, l.submitBudget(), err))
	// The stall lasts until a human confirms, maybe days: a backup may hold it, so the
	// annotations keep it (restoredUnknown).
	l.recordPending(s)
	return stopAfter(l.unknownRecheck())
}

// errShuttingDown ends a reconcile that found the manager shutting down before it decided
// anything: nothing of it is written.
var errShuttingDown = errors.New("shutting down")

// maxJobID is the longest job id status.jobId holds.
const maxJobID = 100

// submitBudget bounds the work from the in-flight write to the job-id write.
func (l *lifecycle[T]) submitBudget() time.Duration { return SubmitBudget(l.opts.CallTimeout) }

// unknownRecheck is how often an object in SubmissionUnknown is looked at again: another
// process may have recorded the job, or its callback may have arrived.
func (l *lifecycle[T]) unknownRecheck() time.Duration { return l.opts.PollMax }

// writeInFlight writes the in-flight record with the optimistic lock. When the write fails the
// call is not made; when its outcome is unknown (a timeout, a 5xx), the memo records that the
// attempt was never sent, so that finding it on the server later is resolved without a human.
func (l *lifecycle[T]) writeInFlight(ctx context.Context, s *scope[T]) *stop {
	obj, attempt := s.obj, s.attempt
	wctx, cancel := context.WithTimeout(ctx, WriteTimeout)
	defer cancel()
	err := s.tx.Commit(wctx)
	switch {
	case err == nil:
		return nil
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		// The object changed or went: nothing of the write landed; it is read again.
		logf.FromContext(ctx).V(1).Info("Object changed before submission; reading it again", "attempt", attempt)
		return stopAfter(l.backoff.Short())
	}
	// Refused for another reason, or its outcome is unknown: the call is not made, and a
	// record of this attempt found on the server later is cleared.
	l.memo.SettleNoJob(attempt)
	logf.FromContext(ctx).Error(err, "Recording the submission in flight failed; it was not sent", "attempt", attempt)
	// The status cannot say it (its write is what failed), so an event does: for example an
	// object so large that the API server's validation outlasts WriteTimeout.
	l.opts.Recorder.Eventf(obj, nil, "Warning", eventStatusWriteFailed, "Submit",
		"Recording the submission in flight failed, so nothing was sent; it is tried again: %v", err)
	l.auditSubmission(obj, obj.GetGeneration(), attempt, "not-sent", "", err)
	return stopOn(fmt.Errorf("recording the submission in flight: %w", err))
}

// writeJobID writes the job id of a call that was made. It retries a few times within
// milliseconds, re-reading the object after a conflict, and then relies on the memo: a worker is
// not held for longer.
func (l *lifecycle[T]) writeJobID(ctx context.Context, s *scope[T], jobID string, callsBack bool) error {
	tx, attempt := s.tx, s.attempt
	var err error
	for i, pause := range []time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond} {
		if i > 0 {
			select {
			case <-ctx.Done():
				return errors.Join(err, ctx.Err())
			case <-time.After(pause):
			}
			rctx, cancel := context.WithTimeout(ctx, WriteTimeout)
			fresh, gerr := l.readFresh(rctx, objectKey(tx.Obj))
			cancel()
			if gerr != nil {
				err = errors.Join(err, gerr)
				continue
			}
			sub := fresh.Job().Submission
			if sub == nil || sub.AttemptID != attempt {
				// Someone else settled the attempt (a callback adoption, another replica).
				if fresh.Job().JobID == jobID {
					return nil
				}
				return fmt.Errorf("attempt %s is no longer in flight on the server: %w", attempt, err)
			}
			tx.Rebase(fresh)
			l.recordSubmitted(s, jobID, callsBack)
		}
		wctx, cancel := context.WithTimeout(ctx, WriteTimeout)
		err = tx.Commit(wctx)
		cancel()
		if err == nil {
			return nil
		}
	}
	return err
}

// call sends the request that t describes, with body as the storyboard request.
func (l *lifecycle[T]) call(ctx context.Context, api apiclient.Interface, t *target, body *videov1alpha1.StoryboardRequest) (*apiclient.JobCreated, error) {
	switch {
	case t.preview != nil:
		return api.CreateStoryboardPreview(ctx, body)
	case t.render != nil:
		return api.RenderStoryboard(ctx, body)
	default:
		return api.RenderProject(ctx, t.projectID)
	}
}

// pollDelay is the delay before the next read of a running job: 10-30 s (jittered), or the
// long fallback interval when the job will call back.
func (l *lifecycle[T]) pollDelay(keyID string, obj T) time.Duration {
	d := l.backoff.PollDelay(l.opts.PollMin, l.opts.PollMax)
	if l.callbacks.Recognises(obj.Job().CallbackKeyID) {
		d = l.backoff.PollDelay(l.callbackPoll-l.callbackPoll/10, l.callbackPoll+l.callbackPoll/10)
	}
	// The key's running jobs together stay within its budget.
	spacing := l.budgets.PollSpacing(keyID, l.budgetKey(objectKey(obj)))
	return max(d, l.backoff.PollDelay(spacing, spacing+spacing/4))
}

// refused reports a call after which the service certainly created no job: it was never sent,
// or the service refused it with a 4xx. The interface document does not promise that a 500
// created nothing, so a 500 is unknown unless Options.InternalErrorIsRefusal opts in to taking
// the service's own 500 body ({error: {code: INTERNAL_ERROR}}) as a refusal. A proxy's 502 page, a
// transport error or an unreadable 2xx always leaves the outcome unknown.
func (l *lifecycle[T]) refused(err error) bool {
	if apiclient.IsNotSubmitted(err) {
		return true
	}
	return l.opts.InternalErrorIsRefusal && isDocumentedInternalError(err)
}

func isDocumentedInternalError(err error) bool {
	var ae *apiclient.APIError
	return errors.As(err, &ae) && ae.StatusCode >= http.StatusInternalServerError && ae.Code == apiclient.CodeInternalError
}

// refusal records why the service refused a submission. A refusal that waiting or a fixed
// Secret can overcome gives back what the attempt consumed (the retry value, the upstream
// generation); only a final refusal consumes it.
func (l *lifecycle[T]) refusal(ctx context.Context, tx *statustxn.Txn[T], t *target, err error) *stop {
	obj := tx.Obj
	st := obj.Job()
	gen := obj.GetGeneration()
	var ae *apiclient.APIError
	errors.As(err, &ae)

	switch {
	case apiclient.IsUnauthorized(err):
		st.Submission = nil
		st.Phase = videov1alpha1.PhasePending
		l.unauthorized(tx)
		return stopHere()
	case apiclient.IsConflict(err) && t.projectID != "" && ae.SuccessFalse && st.Submission.ResubmitOf != "":
		// Right after a confirmed resubmission, "already being rendered" is the render the
		// earlier attempt of unknown outcome created: rendering the project again would pay
		// twice. The interface names no way to learn that job's id.
		l.recordRefused(tx, codeEarlierSubmissionRendering, fmt.Sprintf(
			"the service answered 409 (project already being rendered) to the resubmission confirmed for attempt %s, so that attempt did create a render job of project %q; "+
				"nothing more is sent. To follow that job, write its id into annotation %s",
			st.Submission.ResubmitOf, t.projectID, videov1alpha1.AnnotationJobID))
		l.stall(tx, videov1alpha1.ReasonEarlierSubmissionRendering, failureMessage(st))
		return stopHere()
	case apiclient.IsConflict(err) && t.projectID != "" && ae.SuccessFalse:
		st.Submission = nil
		st.Phase = videov1alpha1.PhasePending
		setOutcome(st, gen, outcomeReconciling, videov1alpha1.ReasonProjectBusy,
			"The project is already being rendered; trying again later")
		return stopAfter(l.backoff.PollDelay(l.opts.PollMin, l.opts.PollMax))
	case apiclient.IsNotFound(err) && t.projectID != "" && ae.SuccessFalse:
		l.recordRefused(tx, string(videov1alpha1.ReasonProjectNotFound), ae.Message)
		l.stall(tx, videov1alpha1.ReasonProjectNotFound, failureMessage(st))
		return stopHere()
	case apiclient.IsRetryable(err), !isAPIError(err),
		apiclient.IsNotFound(err), apiclient.IsConflict(err):
		// 429, a 500 taken as refused, a request never sent (for example the rate limiter's wait
		// was cut short), or a 404 or 409 the document does not give for this endpoint (a wrong
		// base URL, a proxy): nothing was created, so trying again later cannot pay twice.
		st.Submission = nil
		st.Phase = videov1alpha1.PhasePending
		return l.transient(ctx, tx, err)
	default:
		code := ae.Code
		if code == "" {
			code = fmt.Sprintf("HTTP_%d", ae.StatusCode)
		}
		l.recordRefused(tx, code, refusalMessage(ae))
		l.stall(tx, videov1alpha1.ReasonInvalidRequest, failureMessage(st))
		return stopHere()
	}
}

// consumeSubmission moves what the in-flight attempt consumed to its final fields and clears
// the record: the attempt has a job, or was refused for good.
func (l *lifecycle[T]) consumeSubmission(obj T) *videov1alpha1.Submission {
	st := obj.Job()
	sub := st.Submission
	st.Submission = nil
	if sub == nil {
		return nil
	}
	if sub.Retry != "" {
		st.LastHandledRetry = sub.Retry
	}
	st.RequestDigest, st.DigestVersion, st.KeyFingerprint = sub.RequestDigest, sub.DigestVersion, sub.KeyFingerprint
	st.BudgetEstimate = sub.BudgetEstimate
	st.ResubmitOf = ""
	obj.SetJobSource(sub)
	return sub
}

// recordRefused records a refused submission as the attempt of this generation: it stays
// refused until the spec changes or a retry is requested.
func (l *lifecycle[T]) recordRefused(tx *statustxn.Txn[T], code, message string) {
	obj := tx.Obj
	st := obj.Job()
	now := metav1.NewTime(l.opts.Clock.Now())
	l.consumeSubmission(obj)
	l.replaceJob(tx)
	st.JobID = ""
	st.JobGeneration = obj.GetGeneration()
	st.CompletedAt = &now
	st.Failure = &videov1alpha1.JobFailure{Code: truncate(code, maxFailureCode), Message: truncate(message, maxFailureMessage)}
	st.Phase = videov1alpha1.PhaseFailed
}

// recordSubmitted makes jobID the object's current job.
func (l *lifecycle[T]) recordSubmitted(s *scope[T], jobID string, callsBack bool) {
	tx := s.tx
	obj := tx.Obj
	st := obj.Job()
	now := metav1.NewTime(l.opts.Clock.Now())
	gen := st.Submission.Generation
	source := approvedNote(st.Submission, l.adapter.termsOf(obj).unreviewed)
	l.consumeSubmission(obj)
	previous := l.replaceJob(tx)
	st.JobGeneration = gen
	st.JobID = jobID
	// Known when this process made the call, or the callback came; an adopted job is polled at
	// the normal pace, the safe side.
	st.CallbackKeyID = ""
	if callsBack {
		st.CallbackKeyID = l.callbacks.KeyID()
	}
	st.SubmittedAt = &now
	st.Phase = videov1alpha1.PhaseInProgress
	setOutcome(st, obj.GetGeneration(), outcomeReconciling, videov1alpha1.ReasonInProgress,
		fmt.Sprintf("Job %s submitted for generation %d", jobID, gen))
	l.recordPending(s)
	tx.After(func() {
		note := ""
		if previous != "" {
			note = "; " + previous
		}
		l.opts.Recorder.Eventf(obj, nil, "Normal", eventSubmitted, "Submit", "Submitted job %s for generation %d%s%s", jobID, gen, source, note)
	})
}

// narrationPinned is the submission's record of t.narrationPinned: nil when t renders no
// approved preview.
func narrationPinned(t *target) *bool {
	if t.sourceDigest == "" {
		return nil
	}
	return ptr.To(t.narrationPinned)
}

// approvedNote names, for an event, the approved preview a submission renders and whether it
// narrates the approved narration. A preview rendered under approval Latest without a pin was
// reviewed by nobody, and the record of the paid call says so.
func approvedNote(sub *videov1alpha1.Submission, unreviewed bool) string {
	if sub.StoryboardDigest == "" {
		if sub.ApprovedBy != "" {
			// An inline storyboard or a project: its writer approved it (docs/approval.md).
			return " (approved by " + sub.ApprovedBy + ")"
		}
		return ""
	}
	preview, narration := "approved preview", "narration not pinned"
	if unreviewed {
		preview = "preview"
	}
	if ptr.Deref(sub.NarrationPinned, false) {
		narration = "narration pinned to the " + preview
	}
	if unreviewed {
		narration += "; approval Latest: not reviewed"
	}
	return fmt.Sprintf(" (%s %s, %s; approved by %s)", preview, sub.StoryboardDigest, narration, approverOrUnrecorded(sub.ApprovedBy))
}

// replaceJob clears the current job's fields for a new one, keeping the outputs of a completed
// one (they were paid for). It returns a note naming the kept outputs, or "".
func (l *lifecycle[T]) replaceJob(tx *statustxn.Txn[T]) string {
	obj := tx.Obj
	st := obj.Job()
	note := ""
	keep := st.JobID != "" && st.CompletedAt != nil && st.Failure == nil
	l.adapter.replaceOutputs(obj, keep)
	if keep {
		note = fmt.Sprintf("the outputs of job %s of generation %d are kept in status.previous", st.JobID, st.JobGeneration)
	}
	st.JobID = ""
	st.RequestUnverified = nil
	st.SubmittedAt = nil
	st.CompletedAt = nil
	st.ChargeMark = nil
	st.Failure = nil
	st.Progress = nil
	st.ProgressMessage = ""
	st.RenderState = ""
	st.OutputsOmitted = nil
	return note
}

// resolveInFlight is the step for an in-flight record found at the start of a reconcile: the job
// id of that submission was never written. It adopts the job the memo or a callback names, clears
// an attempt known to have created nothing, or refuses to guess (SubmissionUnknown). A restore
// without status brings the record of an attempt whose outcome was unknown back from the
// annotations: it may have created a job, so it is not paid for again on its own.
func (l *lifecycle[T]) resolveInFlight(ctx context.Context, s *scope[T]) *stop {
	obj, st, tx := s.obj, s.st, s.tx
	if sub := restoredUnknown(obj, st); sub != nil {
		st.Submission = sub
	}
	sub := st.Submission
	if sub == nil {
		return nil
	}
	log := logf.FromContext(ctx)

	if jobID, ok := l.memo.Lookup(sub.AttemptID); ok {
		if l.memo.FromCallback(sub.AttemptID) {
			// Only a callback named the job: adopt it once the service confirms, to the
			// object's own key, that the job exists.
			if end := l.adoptFromCallback(ctx, s, jobID); end != nil || st.Submission == nil {
				// Adopted (the submission is consumed), or the reconcile ends here.
				return end
			}
			// The service disowned the job: the attempt's outcome is unknown, as before.
		} else {
			// This process made the call; only the write of its job id was lost or is not in
			// the cache yet.
			log.Info("Adopting the job of an interrupted submission", "jobID", jobID, "attempt", sub.AttemptID)
			l.recordSubmitted(s, jobID, l.memo.CallsBack(sub.AttemptID))
			return nil
		}
	}
	if l.memo.CreatedNoJob(sub.AttemptID) {
		// This process knows the attempt created nothing: it was never sent (the write of its
		// record failed), or the service refused it and the write saying so failed.
		log.Info("Clearing an attempt that created no job", "attempt", sub.AttemptID)
		st.Submission = nil
		return nil
	}
	if confirm := obj.GetAnnotations()[videov1alpha1.AnnotationConfirmResubmit]; confirm != "" && confirm == sub.AttemptID {
		log.Info("Resubmission confirmed by annotation", "attempt", sub.AttemptID)
		tx.After(func() {
			l.opts.Recorder.Eventf(obj, nil, "Normal", eventResubmissionConfirmed, "Submit",
				"Submitting generation %d again as confirmed by annotation %s", sub.Generation, videov1alpha1.AnnotationConfirmResubmit)
		})
		// What the unknown attempt consumed is given back: the new attempt consumes it again.
		// That a resubmission was confirmed is kept until it has a job: a 409 to it is evidence.
		st.ResubmitOf = sub.AttemptID
		st.Submission = nil
		return nil
	}

	// Refuse to guess, but only from a fresh read: the cache may not have the job-id write of
	// another process (an old leader finishing its reconcile) yet.
	fresh, err := l.readFresh(ctx, objectKey(obj))
	if err != nil {
		if apierrors.IsNotFound(err) {
			return stopHere()
		}
		return stopOn(fmt.Errorf("reading %s %s before declaring its submission unknown: %w",
			l.kind, objectKey(obj), err))
	}
	if fresh.GetResourceVersion() != obj.GetResourceVersion() {
		log.V(1).Info("The cache is behind the API server; reconciling again from a fresh read", "attempt", sub.AttemptID)
		l.stale.Add(objectKey(obj), l.opts.Clock.Now())
		return stopAfter(l.backoff.Short())
	}
	st.Phase = videov1alpha1.PhaseFailed
	if c := condition(st, videov1alpha1.ConditionStalled); !isStalledWith(st, videov1alpha1.ReasonSubmissionUnknown) ||
		c.ObservedGeneration != obj.GetGeneration() {
		// Once said, the message stays: the first one names the call's error, which a recheck
		// does not know, and rewriting it would only change the object under a user's feet
		// (kubectl video confirm-resubmit writes with an optimistic lock).
		if !isStalledWith(st, videov1alpha1.ReasonSubmissionUnknown) {
			// A call whose process died before its outcome was written was never counted: count
			// it once, when it is found, so that the SubmissionUnknown alert sees it too.
			kind := l.kind
			tx.After(func() { l.opts.Metrics.Submitted(kind, "unknown") })
		}
		l.stall(tx, videov1alpha1.ReasonSubmissionUnknown, unknownMessage(l.kind, obj, obj.DescribeRequest(), sub, l.submitBudget(), nil))
		l.recordPending(s)
	}
	return stopAfter(l.unknownRecheck())
}

// adoptFromCallback adopts the job a callback named for the attempt in flight, after reading it
// with the object's own key: the submission is then consumed. A job the service does not know for
// that key is not adopted: it returns nil with the submission still in flight, and the caller
// goes on as if no callback had come. A recorded receipt (status.callback) is cleared only with
// that definite answer or with the adoption, never on a passing failure.
func (l *lifecycle[T]) adoptFromCallback(ctx context.Context, s *scope[T], jobID string) *stop {
	obj, st, tx := s.obj, s.st, s.tx
	sub := st.Submission
	log := logf.FromContext(ctx)
	if end := l.useKey(ctx, s); end != nil {
		return end
	}
	keyID := s.keyID
	if wait := l.budgets.Urgent(keyID, l.budgetKey(objectKey(obj))); wait > 0 {
		return stopWith(later(tx, wait))
	}
	callCtx, cancel := l.callContext(ctx)
	job, err := s.api.GetJob(callCtx, jobID)
	cancel()
	switch {
	case apiclient.IsJobNotFound(err):
		log.Info("A callback named a job the service does not know for this key; not adopting it", "jobID", jobID, "attempt", sub.AttemptID)
		l.memo.Forget(sub.AttemptID)
		st.Callback = nil
		return nil
	case err != nil:
		return l.callFailed(ctx, tx, err)
	}
	log.Info("Adopting the job a callback named for an interrupted submission", "jobID", jobID, "attempt", sub.AttemptID)
	l.auditSubmission(obj, sub.Generation, sub.AttemptID, "adopted", jobID, nil)
	// Its request carried the operator's callback URL: the callback came.
	l.recordSubmitted(s, jobID, true)
	st.Callback = nil
	if ended := l.recordJob(ctx, tx, job); ended {
		return nil
	}
	return stopAfter(l.pollDelay(keyID, obj))
}

// unknownMessage tells the user what happened and exactly how to confirm a resubmission. The
// command comes before the cause, which may be long: an event keeps only its first kilobyte.
func unknownMessage(kind string, obj client.Object, request string, sub *videov1alpha1.Submission, budget time.Duration, cause error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The submission of generation %d (%s; attempt %s, sent from %s) may or may not have created a job at the service. "+
		"To avoid paying twice nothing is sent again automatically. Check the service for a job created in that window; "+
		"to submit again, run: kubectl annotate %s %s -n %s %s=%s",
		sub.Generation, truncate(request, 200), sub.AttemptID, attemptWindow(sub, budget),
		strings.ToLower(kind), obj.GetName(), obj.GetNamespace(), videov1alpha1.AnnotationConfirmResubmit, sub.AttemptID)
	if cause != nil {
		fmt.Fprintf(&b, " (the call ended with: %s)", truncate(cause.Error(), 500))
	}
	return b.String()
}

// attemptWindow is when the attempt's call may have reached the service: from its start to the
// end of its budget, as recorded with the attempt (or, for a record without it, this manager's).
func attemptWindow(sub *videov1alpha1.Submission, budget time.Duration) string {
	const layout = "2006-01-02T15:04:05Z"
	start := sub.StartedAt.UTC()
	end := start.Add(budget)
	if sub.Deadline != nil {
		end = sub.Deadline.UTC()
	}
	return fmt.Sprintf("%s to %s", start.Format(layout), end.Format(layout))
}

func refusalMessage(ae *apiclient.APIError) string {
	if ae == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(ae.Message)
	for _, f := range ae.Fields {
		fmt.Fprintf(&b, "; %s: %s", f.Name, f.Errors)
	}
	return b.String()
}

func isAPIError(err error) bool {
	var ae *apiclient.APIError
	return errors.As(err, &ae)
}

// newAttemptID returns a random id for one submit call.
func newAttemptID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating an attempt id: %w", err)
	}
	return hex.EncodeToString(b), nil
}
