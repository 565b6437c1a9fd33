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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// submit sends the current spec to the service, guarded as DESIGN.md "Never pay twice" says:
//  1. the in-flight record (generation, attempt id, time) is written with an optimistic lock
//     before the call, so an object read from a stale cache cannot be submitted again;
//  2. the job id is remembered in memory and written right after the call;
//  3. when the outcome of the call is unknown, the object stalls with SubmissionUnknown instead
//     of guessing.
func (l *lifecycle[T]) submit(ctx context.Context, obj T, w *statusWriter[T], t *target) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	st := l.adapter.jobStatus(obj)
	gen := obj.GetGeneration()

	api, keyID, ok, err := l.serviceClient(ctx, obj)
	if !ok {
		return ctrl.Result{}, err
	}
	if t.render != nil {
		if res, blocked, err := l.checkBrand(ctx, obj, api, keyID, t.render); blocked {
			return res, err
		}
	}

	attempt, err := newAttemptID()
	if err != nil {
		return ctrl.Result{}, err
	}
	st.Submission = &videov1alpha1.Submission{Generation: gen, AttemptID: attempt, StartedAt: metav1.NewTime(l.opts.Clock.Now())}
	l.adapter.setRecordedSource(obj, t.sourceGeneration)
	st.Phase = videov1alpha1.PhaseSubmitting
	setOutcome(st, gen, outcomeReconciling, videov1alpha1.ReasonSubmitting,
		fmt.Sprintf("Submitting generation %d to the service (attempt %s)", gen, attempt))
	if err := w.flush(ctx, obj, true); err != nil {
		if apierrors.IsConflict(err) {
			// The object changed since it was read (or the cache was stale): read it again
			// rather than risk a second submission.
			log.V(1).Info("Object changed before submission; reading it again")
			return ctrl.Result{RequeueAfter: l.backoff.short()}, nil
		}
		return ctrl.Result{}, fmt.Errorf("recording the submission in flight: %w", err)
	}
	l.warnDeprecations(obj, t)

	body, withCallback := l.callbacks.withCallback(t.request(), attempt)
	callCtx, cancel := l.callContext(ctx)
	created, err := l.call(callCtx, api, t, body)
	cancel()
	switch {
	case err == nil:
		l.memo.remember(attempt, created.JobID)
		if withCallback {
			l.memo.expectCallback(created.JobID)
		}
		l.opts.Metrics.submitted(l.adapter.kind(), "accepted")
		log.Info("Submitted job", "jobID", created.JobID, "generation", gen, "attempt", attempt)
		l.opts.Recorder.Eventf(obj, nil, "Normal", "Submitted", "Submit",
			"Submitted job %s for generation %d", created.JobID, gen)
		l.recordSubmitted(obj, created.JobID)
		if err := l.flushJobID(ctx, obj, w); err != nil {
			// The job id is remembered in memory: the next reconcile adopts it.
			return ctrl.Result{}, fmt.Errorf("recording job %s: %w", created.JobID, err)
		}
		return ctrl.Result{RequeueAfter: l.pollDelay(created.JobID)}, nil
	case refused(err):
		st.Submission = nil
		l.opts.Metrics.submitted(l.adapter.kind(), "refused")
		return l.refusal(ctx, obj, err)
	default:
		l.opts.Metrics.submitted(l.adapter.kind(), "unknown")
		log.Error(err, "Submission outcome unknown", "attempt", attempt)
		st.Phase = videov1alpha1.PhaseFailed
		l.stall(obj, videov1alpha1.ReasonSubmissionUnknown, unknownMessage(l.adapter.kind(), obj, st.Submission, err))
		return ctrl.Result{}, nil
	}
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
func (l *lifecycle[T]) pollDelay(jobID string) time.Duration {
	if l.callbacks != nil && l.memo.callbackExpected(jobID) {
		d := l.callbackPoll
		return l.backoff.pollDelay(d-d/10, d+d/10)
	}
	return l.backoff.pollDelay(l.opts.PollMin, l.opts.PollMax)
}

// refused reports a call after which the service certainly created no job: it was never sent,
// the service refused it with a 4xx, or it answered with its own documented 500 body
// ({error: {code: INTERNAL_ERROR}}). A proxy's 502 page, a transport error or an unreadable 2xx
// leaves the outcome unknown.
func refused(err error) bool {
	if apiclient.IsNotSubmitted(err) {
		return true
	}
	var ae *apiclient.APIError
	return errors.As(err, &ae) && ae.StatusCode >= http.StatusInternalServerError && ae.Code == apiclient.CodeInternalError
}

// refusal records why the service refused a submission.
func (l *lifecycle[T]) refusal(ctx context.Context, obj T, err error) (ctrl.Result, error) {
	st := l.adapter.jobStatus(obj)
	gen := obj.GetGeneration()
	var ae *apiclient.APIError
	errors.As(err, &ae)

	switch {
	case apiclient.IsUnauthorized(err):
		l.unauthorized(obj)
		return ctrl.Result{}, nil
	case apiclient.IsConflict(err):
		st.Phase = videov1alpha1.PhasePending
		setOutcome(st, gen, outcomeReconciling, videov1alpha1.ReasonProjectBusy,
			"The project is already being rendered; trying again later")
		return ctrl.Result{RequeueAfter: l.backoff.pollDelay(l.opts.PollMin, l.opts.PollMax)}, nil
	case apiclient.IsRetryable(err), !isAPIError(err):
		// 429, a documented 500, or a request never sent (for example the rate limiter's wait
		// was cut short): nothing was created, so trying again later cannot pay twice.
		st.Phase = videov1alpha1.PhasePending
		return l.transient(ctx, obj, err)
	case apiclient.IsNotFound(err):
		l.recordRefused(obj, string(videov1alpha1.ReasonProjectNotFound), ae.Message)
		l.stall(obj, videov1alpha1.ReasonProjectNotFound, failureMessage(st))
		return ctrl.Result{}, nil
	default:
		code := ae.Code
		if code == "" {
			code = fmt.Sprintf("HTTP_%d", ae.StatusCode)
		}
		l.recordRefused(obj, code, refusalMessage(ae))
		l.stall(obj, videov1alpha1.ReasonInvalidRequest, failureMessage(st))
		return ctrl.Result{}, nil
	}
}

// recordRefused records a refused submission as the attempt of this generation: it stays
// refused until the spec changes or a retry is requested.
func (l *lifecycle[T]) recordRefused(obj T, code, message string) {
	st := l.adapter.jobStatus(obj)
	now := metav1.NewTime(l.opts.Clock.Now())
	st.JobID = ""
	st.JobGeneration = obj.GetGeneration()
	st.SubmittedAt = nil
	st.CompletedAt = &now
	st.Progress = nil
	st.ProgressMessage = ""
	st.RenderState = ""
	st.Failure = &videov1alpha1.JobFailure{Code: truncate(code, 200), Message: truncate(message, 4000)}
	st.Phase = videov1alpha1.PhaseFailed
	l.adapter.resetOutputs(obj)
}

// recordSubmitted makes jobID the object's current job.
func (l *lifecycle[T]) recordSubmitted(obj T, jobID string) {
	st := l.adapter.jobStatus(obj)
	now := metav1.NewTime(l.opts.Clock.Now())
	st.JobGeneration = st.Submission.Generation
	st.JobID = jobID
	st.Submission = nil
	st.SubmittedAt = &now
	st.CompletedAt = nil
	st.Failure = nil
	st.Progress = nil
	st.ProgressMessage = ""
	st.RenderState = ""
	st.Phase = videov1alpha1.PhaseInProgress
	l.adapter.resetOutputs(obj)
	setOutcome(st, obj.GetGeneration(), outcomeReconciling, videov1alpha1.ReasonInProgress,
		fmt.Sprintf("Job %s submitted for generation %d", jobID, st.JobGeneration))
}

// flushJobID writes the job id right after the call, retrying briefly: until it is written the
// job is known only in memory.
func (l *lifecycle[T]) flushJobID(ctx context.Context, obj T, w *statusWriter[T]) error {
	backoff := wait.Backoff{Steps: 4, Duration: 50 * l.backoff.unit(), Factor: 2, Jitter: 0.2}
	var last error
	_ = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		last = w.flush(ctx, obj, false)
		return last == nil, nil
	})
	return last
}

// resolveInFlight handles an in-flight record found at the start of a reconcile: the job id of
// that submission was never written. stop is true when the reconcile must end here.
func (l *lifecycle[T]) resolveInFlight(ctx context.Context, obj T) (stop bool, res ctrl.Result, err error) {
	st := l.adapter.jobStatus(obj)
	sub := st.Submission
	log := logf.FromContext(ctx)

	if jobID, ok := l.memo.lookup(sub.AttemptID); ok {
		// This process made the call; only the write of its job id was lost or is not in the
		// cache yet.
		log.Info("Adopting the job of an interrupted submission", "jobID", jobID, "attempt", sub.AttemptID)
		l.recordSubmitted(obj, jobID)
		return false, ctrl.Result{}, nil
	}
	if confirm := obj.GetAnnotations()[AnnotationConfirmResubmit]; confirm != "" && confirm == sub.AttemptID {
		log.Info("Resubmission confirmed by annotation", "attempt", sub.AttemptID)
		l.opts.Recorder.Eventf(obj, nil, "Normal", "ResubmissionConfirmed", "Submit",
			"Submitting generation %d again as confirmed by annotation %s", sub.Generation, AnnotationConfirmResubmit)
		st.Submission = nil
		return false, ctrl.Result{}, nil
	}
	st.Phase = videov1alpha1.PhaseFailed
	l.stall(obj, videov1alpha1.ReasonSubmissionUnknown, unknownMessage(l.adapter.kind(), obj, sub, nil))
	return true, ctrl.Result{}, nil
}

// unknownMessage tells the user what happened and exactly how to confirm a resubmission.
func unknownMessage(kind string, obj client.Object, sub *videov1alpha1.Submission, cause error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The submission of generation %d (attempt %s, started %s) may or may not have created a job at the service",
		sub.Generation, sub.AttemptID, sub.StartedAt.UTC().Format("2006-01-02T15:04:05Z"))
	if cause != nil {
		fmt.Fprintf(&b, " (%v)", cause)
	}
	fmt.Fprintf(&b, ". To avoid paying twice nothing is sent again automatically. Check the service for a job started at that time; "+
		"to submit again, run: kubectl annotate %s %s -n %s %s=%s",
		strings.ToLower(kind), obj.GetName(), obj.GetNamespace(),
		AnnotationConfirmResubmit, sub.AttemptID)
	return b.String()
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
