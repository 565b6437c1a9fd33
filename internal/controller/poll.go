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
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/callgate"
	"github.com/videoops/video-operator/internal/failurecause"
	"github.com/videoops/video-operator/internal/statustxn"
)

// poll is the step for a running job: it reads the job and records what the service says. A job
// that has not ended is followed to its end, whatever generation it belongs to (the service has no
// cancel, so a newer spec waits for it). It stops the reconcile while the job runs or when the
// read failed, and lets it go on to decide about the current spec once the job has ended.
func (l *lifecycle[T]) poll(ctx context.Context, s *scope[T]) *stop {
	obj, st, tx := s.obj, s.st, s.tx
	if st.JobID == "" || st.CompletedAt != nil {
		return nil
	}
	if end := l.useKey(ctx, s); end != nil {
		return end
	}
	keyID := s.keyID
	if wait, urgent := l.pollSlot(keyID, obj, st.JobID); wait > 0 {
		tx.Undecided = true
		return stopWith(l.turnedAway(wait, urgent))
	}
	callCtx, cancel := l.callContext(ctx)
	job, err := s.api.GetJob(callCtx, st.JobID)
	cancel()
	if err == nil || apiclient.IsJobNotFound(err) {
		// The job is no longer polled once the status that records its end is written; if that
		// write fails, the next reconcile reads it again at once, not as one seen for the first
		// time.
		defer func() {
			if st.CompletedAt != nil {
				key, jobID := l.budgetKey(objectKey(obj)), st.JobID
				tx.After(func() { l.budgets.Done(keyID, key) })
				tx.OnFail(func() { l.memo.Wake(jobID) })
			}
		}()
	}
	if err != nil {
		if l.keyChanged(ctx, tx, st.KeyFingerprint, keyID, st.JobID, err) {
			// The Secret's watch wakes the object when the key changes again.
			return stopHere()
		}
		if apiclient.IsJobNotFound(err) {
			// A job the service forgot before it ended: nothing more will come of it.
			now := metav1.NewTime(l.opts.Clock.Now())
			st.CompletedAt = &now
			st.Failure = &videov1alpha1.JobFailure{Code: apiclient.CodeJobNotFound,
				Message: fmt.Sprintf("The service no longer knows job %s, which had not ended", st.JobID)}
			st.Phase = videov1alpha1.PhaseFailed
			// Its reservation's estimate is charged when the budget folds this end.
			return nil
		}
		return l.callFailed(ctx, tx, err)
	}
	l.backoff.Reset(objectKey(obj))
	before := progressOf(st)
	if ended := l.recordJob(ctx, tx, job); ended {
		l.progress.ended(st.JobID)
		return nil
	}
	if l.pastDeadline(st) {
		// The service cannot cancel it; the object stops waiting so that a new spec or a retry
		// can be submitted.
		now := metav1.NewTime(l.opts.Clock.Now())
		st.CompletedAt = &now
		st.Failure = &videov1alpha1.JobFailure{Code: codeJobDeadlineExceeded, Message: fmt.Sprintf(
			"Job %s had not ended %s after its submission (the manager's --job-deadline); the controller stopped waiting for it",
			st.JobID, l.opts.JobDeadline)}
		st.Phase = videov1alpha1.PhaseFailed
		// Its reservation's estimate is charged when the budget folds this end.
		return nil
	}

	gen := obj.GetGeneration()
	delay := l.pollDelay(keyID, obj)
	note := l.budgetNote(keyID)
	reason, msg := videov1alpha1.ReasonInProgress, progressMessage(st)+note
	if st.JobGeneration != gen {
		reason = videov1alpha1.ReasonWaitingForJob
		msg = fmt.Sprintf("Generation %d waits for job %s of generation %d to end (the service cannot cancel a job); %s",
			gen, st.JobID, st.JobGeneration, msg)
	}
	if reason == videov1alpha1.ReasonInProgress && !l.progress.due(st.JobID) && inProgressFor(st, gen, note) {
		// Only the progress moved, and it was written less than --progress-interval ago: the
		// status keeps what it says (no write), the job is read again as usual.
		before.restore(st)
		return stopWith(l.pollResult(delay, false))
	}
	setOutcome(st, gen, outcomeReconciling, reason, msg)
	jobID := st.JobID
	tx.After(func() { l.progress.wrote(jobID) })
	return stopWith(l.pollResult(delay, false))
}

// inProgressFor reports whether the status already says that the job of generation gen is in
// progress, with the key's budget note (budgetNote) it would say now: a change of the spacing
// is news, not progress.
func inProgressFor(st *videov1alpha1.JobStatus, gen int64, note string) bool {
	c := condition(st, videov1alpha1.ConditionReconciling)
	if c == nil || c.Reason != string(videov1alpha1.ReasonInProgress) || c.ObservedGeneration != gen {
		return false
	}
	if note == "" {
		return !strings.Contains(c.Message, budgetNoteMarker)
	}
	return strings.HasSuffix(c.Message, note)
}

// budgetNoteMarker begins every budgetNote.
const budgetNoteMarker = "; the running jobs share this API key's budget"

// pollResult requeues a running job's next read. Routine ones take a slot of the polls' share
// of the workers (--poll-share): they go before the submissions queued meanwhile, so that a
// burst of them cannot hide a job's end, spaced so that together they take at most the share.
// With the share off, a routine read waits behind other work.
func (l *lifecycle[T]) pollResult(after time.Duration, urgent bool) ctrl.Result {
	if urgent {
		return ctrl.Result{RequeueAfter: after}
	}
	if l.polls.Enabled() {
		return ctrl.Result{RequeueAfter: l.polls.Slot(after), Priority: ptrTo(priorityPollShare)}
	}
	return ctrl.Result{RequeueAfter: after, Priority: ptrTo(priorityRoutine)}
}

// turnedAway requeues a read the key's budget turned away, for when the budget has room. It
// takes no slot of the polls' share of the workers (it made no call, and comes back when the
// budget says): turned-away reads must not crowd out the reads of other keys' jobs.
func (l *lifecycle[T]) turnedAway(after time.Duration, urgent bool) ctrl.Result {
	if urgent || !l.polls.Enabled() {
		return l.pollResult(after, urgent)
	}
	return ctrl.Result{RequeueAfter: after, Priority: ptrTo(priorityPollShare)}
}

// firstRead requeues the first read of a job just submitted, in the polls' share: otherwise,
// during a burst, it would wait behind every creation queued before it is due. With the share
// off it keeps the priority of the submission's reconcile, as before.
func (l *lifecycle[T]) firstRead(after time.Duration) ctrl.Result {
	if l.polls.Enabled() {
		return ctrl.Result{RequeueAfter: l.polls.Slot(after), Priority: ptrTo(priorityPollShare)}
	}
	return ctrl.Result{RequeueAfter: after}
}

// pollSlot asks the key's budget for the read of a running job: 0 to read now, or when to come
// back. A read a callback asked for goes before routine polls. The first read of a job this
// process did not submit (after a restart or a hand-over) is spread over the poll window, so that
// thousands of running jobs are not all read at once.
func (l *lifecycle[T]) pollSlot(keyID string, obj T, jobID string) (wait time.Duration, urgent bool) {
	key := l.budgetKey(objectKey(obj))
	if l.memo.TakeWake(jobID) || l.budgets.Holds(keyID, key) {
		return l.budgets.Urgent(keyID, key), true
	}
	if !l.budgets.Tracks(keyID, key) {
		spacing := l.budgets.PollSpacing(keyID, key)
		return l.backoff.PollDelay(0, max(l.opts.PollMin, spacing)), false
	}
	return l.budgets.Routine(keyID), false
}

// budgetNote says, in the InProgress message, that the key's budget spaces the reads of its jobs
// out beyond the poll interval. The interval is rounded so that the message, and so the status,
// changes only when the spacing really does.
func (l *lifecycle[T]) budgetNote(keyID string) string {
	spacing := l.budgets.Spacing(l.budgets.ActiveJobs(keyID))
	if spacing <= l.opts.PollMax {
		return ""
	}
	return fmt.Sprintf(budgetNoteMarker+" of %g calls/s, so each is read about every %s",
		l.opts.ServiceRate, callgate.RoundDuration(spacing))
}

// recordJob maps a job read from the service into status; ended is true when it completed or
// failed. The metrics and the event of the ending follow the write of the status that records it.
func (l *lifecycle[T]) recordJob(ctx context.Context, tx *statustxn.Txn[T], job *apiclient.Job) (ended bool) {
	obj := tx.Obj
	st := obj.Job()
	d := job.Data
	if p, ok := d.RenderProgress.Int64(); ok {
		st.Progress = ptrTo(clampPercent(p))
	} else if p, ok := d.Progress.Int64(); ok {
		st.Progress = ptrTo(clampPercent(p))
	}
	st.ProgressMessage = truncate(d.RenderProgressMessage, maxProgressMessage)
	st.RenderState = truncate(d.RenderState, maxRenderState)
	st.OutputsOmitted = l.adapter.recordJob(obj, job)
	l.memo.JobRead(st.JobID)

	now := metav1.NewTime(l.opts.Clock.Now())
	kind, jobID, gen := l.kind, st.JobID, st.JobGeneration
	forReview := l.adapter.termsOf(obj).forReview
	if job.Status().IsCompleted() || job.Status().IsFailed() {
		tx.Answered = time.Now()
	}
	switch {
	case job.Status().IsCompleted():
		st.CompletedAt = &now
		st.Progress = ptrTo(int32(100))
		st.Phase = videov1alpha1.PhaseCompleted
		credits, hasCredits := d.AICreditsUsed.Float64()
		tx.After(func() {
			if hasCredits {
				l.opts.Metrics.CreditsUsed(kind, credits)
			}
			l.opts.Metrics.Ended(kind, "completed")
			// A completed preview waits for a person's review: worth an event. A completed
			// render is in its Ready condition and the endings metric; its one event is
			// Submitted, the paid call (docs/architecture.md "Load on the cluster": one event a render).
			// Unless the status written does not say Ready: the render went on to wait for the
			// approval of a newer preview, or to submit an edited spec, and the event is then the
			// one place that tells that the video paid for is done.
			if forReview || !readyForGeneration(obj.Job(), obj.GetGeneration()) {
				l.opts.Recorder.Eventf(obj, nil, "Normal", string(videov1alpha1.ReasonCompleted), "Complete",
					"Job %s of generation %d completed", jobID, gen)
			}
		})
		return true
	case job.Status().IsFailed():
		st.CompletedAt = &now
		f := job.Failure()
		st.Failure = &videov1alpha1.JobFailure{Code: truncate(f.Code, maxFailureCode), Message: truncate(f.Message, maxFailureMessage)}
		st.Phase = videov1alpha1.PhaseFailed
		tx.After(func() { l.opts.Metrics.Ended(kind, "failed") })
		// The stall gives the one Warning event of the failure (reason from the code, message
		// with what to do); the reconcile that goes on to stall it again, or to submit a newer
		// spec, adds none.
		l.stall(tx, failureReason(st.Failure), failureMessage(st))
		return true
	default:
		// in-progress, and statuses the document does not list (the live service also answers
		// pending): keep following the job, never take it for completed.
		st.Phase = videov1alpha1.PhaseInProgress
		if !job.Status().IsKnown() {
			logf.FromContext(ctx).V(1).Info("Service reports a job status the interface document does not list",
				"jobID", st.JobID, "status", string(job.Status()))
		}
		return false
	}
}

// callFailed handles an error of a read or of the brand list: a rejected key stalls, a passing
// failure backs off, anything else is returned.
func (l *lifecycle[T]) callFailed(ctx context.Context, tx *statustxn.Txn[T], err error) *stop {
	switch {
	case apiclient.IsUnauthorized(err):
		l.unauthorized(tx)
		return stopHere()
	case apiclient.IsRetryable(err):
		return l.transient(ctx, tx, err)
	default:
		return stopOn(fmt.Errorf("calling the video service: %w", err))
	}
}

// transient backs off exponentially after a 429, a 5xx or a network error, honouring
// Retry-After, and says so in the Reconciling condition. The message names what the service
// answered but not the delay or other details that change on every try: an unchanged message
// means an unchanged status and no write.
func (l *lifecycle[T]) transient(ctx context.Context, tx *statustxn.Txn[T], err error) *stop {
	obj := tx.Obj
	st := obj.Job()
	delay := l.backoff.Next(objectKey(obj), apiclient.RetryAfter(err))
	reason := videov1alpha1.ReasonServiceUnavailable
	switch {
	case apiclient.IsRateLimited(err):
		reason = videov1alpha1.ReasonRateLimited
	case apiclient.IsNotFound(err), apiclient.IsConflict(err):
		reason = videov1alpha1.ReasonUnexpectedResponse
	}
	logf.FromContext(ctx).V(1).Info("Service call failed; backing off", "error", err.Error(), "delay", delay.String())
	setOutcome(st, obj.GetGeneration(), outcomeReconciling, reason,
		fmt.Sprintf("The service answered %s; retrying with backoff", describeAnswer(err)))
	return stopAfter(delay)
}

// describeAnswer says what the service answered in words that do not change from one try to
// the next.
func describeAnswer(err error) string {
	var ae *apiclient.APIError
	var te *apiclient.TransportError
	var de *apiclient.DecodeError
	switch {
	case errors.As(err, &ae):
		s := fmt.Sprintf("HTTP %d", ae.StatusCode)
		if ae.Code != "" {
			s += " " + ae.Code
		}
		if ae.StatusCode != http.StatusTooManyRequests && ae.Message != "" {
			s += ": " + truncate(ae.Message, 200)
		}
		return s
	case errors.As(err, &te):
		if te.Timeout() {
			return "nothing before the timeout"
		}
		return "nothing: the connection failed"
	case errors.As(err, &de):
		return fmt.Sprintf("HTTP %d with a body that could not be read", de.StatusCode)
	case apiclient.IsNotSubmitted(err):
		return "nothing: the request was not sent"
	default:
		return "with an error"
	}
}

// unauthorized stalls the object until its Secret changes: the watch on Secrets wakes it.
func (l *lifecycle[T]) unauthorized(tx *statustxn.Txn[T]) {
	ref := secretRef(tx.Obj)
	l.stall(tx, videov1alpha1.ReasonUnauthorized, fmt.Sprintf(
		"The service rejected the API key in key %q of Secret %q (401 Unauthorized); update the Secret to resume", ref.Key, ref.Name))
}

// codeJobDeadlineExceeded is the failure code of a job given up after the job deadline.
const codeJobDeadlineExceeded = "JOB_DEADLINE_EXCEEDED"

// pastDeadline reports a running job older than the job deadline.
func (l *lifecycle[T]) pastDeadline(st *videov1alpha1.JobStatus) bool {
	return l.opts.JobDeadline > 0 && st.SubmittedAt != nil && l.opts.Clock.Since(st.SubmittedAt.Time) > l.opts.JobDeadline
}

// failureReason maps a recorded failure to the reason of the Stalled condition.
func failureReason(f *videov1alpha1.JobFailure) videov1alpha1.ConditionReason {
	switch f.Code {
	case codeJobDeadlineExceeded:
		return videov1alpha1.ReasonJobDeadlineExceeded
	case apiclient.CodeJobNotFound:
		return videov1alpha1.ReasonJobNotFound
	case apiclient.CodeInvalidRequestBody, string(videov1alpha1.ReasonInvalidRequest):
		return videov1alpha1.ReasonInvalidRequest
	case string(videov1alpha1.ReasonProjectNotFound):
		return videov1alpha1.ReasonProjectNotFound
	case codeEarlierSubmissionRendering:
		return videov1alpha1.ReasonEarlierSubmissionRendering
	}
	if strings.HasPrefix(f.Code, "HTTP_") {
		return videov1alpha1.ReasonInvalidRequest
	}
	return videov1alpha1.ReasonJobFailed
}

// failureMessage describes the recorded failure and what a person can do. A failure the same
// spec causes again never suggests the retry alone: it says to change the spec, and what a retry
// would cost (internal/failurecause, which kubectl video retry shares).
func failureMessage(st *videov1alpha1.JobStatus) string {
	what := "The submission was refused"
	if st.JobID != "" {
		what = fmt.Sprintf("Job %s failed", st.JobID)
	}
	switch failurecause.Of(st, failureReason(st.Failure)) {
	case failurecause.RefusedSpec:
		return fmt.Sprintf("%s because of its spec: %s: %s. To go on, change the spec: the same request is refused again, so a retry (annotation %s) changes nothing",
			what, st.Failure.Code, st.Failure.Message, videov1alpha1.AnnotationRetry)
	case failurecause.FailedSpec:
		return fmt.Sprintf("%s because of its spec: %s: %s. To go on, change the spec (the new generation is submitted once); a retry (annotation %s) sends the same request, is paid for as a new job and fails the same way",
			what, st.Failure.Code, st.Failure.Message, videov1alpha1.AnnotationRetry)
	}
	return fmt.Sprintf("%s: %s: %s. Change the spec, or set annotation %s to a new value to submit it again as a new job, paid for like the first",
		what, st.Failure.Code, st.Failure.Message, videov1alpha1.AnnotationRetry)
}

func progressMessage(st *videov1alpha1.JobStatus) string {
	msg := fmt.Sprintf("Job %s is in progress", st.JobID)
	if st.Progress != nil {
		msg += fmt.Sprintf(" (%d%%)", *st.Progress)
	}
	if st.ProgressMessage != "" {
		msg += ": " + st.ProgressMessage
	}
	return msg
}

func clampPercent(p int64) int32 { return int32(min(max(p, 0), 100)) }

func ptrTo[V any](v V) *V { return &v }
