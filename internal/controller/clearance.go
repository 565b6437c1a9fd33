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
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/credentials"
	"github.com/videoops/video-operator/internal/statustxn"
)

// nextClearanceRead says when a completed job must be read again for its platform clearance
// code ("Job status response"): at the code's expiry, for a fresh one; later, when the expiry
// could not be read (the code is kept meanwhile); and once right after completion when the
// completing read carried no code although the video may use library music, since "any
// completed job with library music returns a code on its next status call". ok is false when
// the job need not be read again.
func (l *lifecycle[T]) nextClearanceRead(obj T, t *target) (at time.Time, ok bool) {
	jobID := obj.Job().JobID
	if jobID == "" || l.memo.RefreshGaveUp(jobID) {
		return time.Time{}, false
	}
	c := obj.CurrentClearance()
	switch {
	case c != nil && c.ExpiresAt != nil:
		return c.ExpiresAt.Time, true
	case c != nil && c.Code != "":
		return l.memo.LastRead(jobID).Add(l.clearanceRetry()), true
	case c == nil && mayUseLibraryMusic(t) && !l.memo.ClearanceRechecked(jobID):
		return l.memo.LastRead(jobID).Add(l.opts.PollMin), true
	}
	return time.Time{}, false
}

// clearanceRetry is the delay before reading a job again whose clearance code has no readable
// expiry: an hour with the default backoff.
func (l *lifecycle[T]) clearanceRetry() time.Duration { return 12 * l.opts.BackoffMax }

// mayUseLibraryMusic reports whether the request may get a clearance code: background music on
// without the caller's own musicUrl, or a project render (its music is not known here).
func mayUseLibraryMusic(t *target) bool {
	if t == nil {
		return false
	}
	if t.projectID != "" {
		return true
	}
	if t.render == nil || t.render.BackgroundMusic == nil {
		return false
	}
	bm := t.render.BackgroundMusic
	return bm.Enabled && bm.MusicURL == nil
}

// refresh reads a completed job again for its clearance code. The video exists whatever the
// service answers, so nothing here takes Ready away: a failure is logged, evented and retried
// with backoff, and terminal data stays in status (the service may have cleaned the job).
func (l *lifecycle[T]) refresh(ctx context.Context, tx *statustxn.Txn[T], t *target) ctrl.Result {
	obj := tx.Obj
	st := obj.Job()
	jobID := st.JobID
	log := logf.FromContext(ctx)

	api, keyID, err := l.apiClient(ctx, obj)
	var job *apiclient.Job
	if err == nil {
		if wait := l.budgets.Routine(keyID); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}
		}
		callCtx, cancel := l.callContext(ctx)
		job, err = api.GetJob(callCtx, jobID)
		cancel()
	}
	switch {
	case apiclient.IsJobNotFound(err):
		log.Info("Job no longer known to the service; keeping its recorded outputs", "jobID", jobID)
		l.memo.GiveUpRefresh(jobID)
		return ctrl.Result{}
	case err != nil && ctx.Err() != nil:
		// Shutting down: not a failure of the service.
		return ctrl.Result{}
	case err != nil:
		delay := l.backoff.Next(objectKey(obj), apiclient.RetryAfter(err))
		log.Info("Reading the completed job again for its clearance code failed; retrying",
			"jobID", jobID, "error", err.Error(), "delay", delay.String())
		msg := describeRefreshFailure(err)
		tx.After(func() {
			l.opts.Recorder.Eventf(obj, nil, "Warning", eventClearanceRefreshFailed, "Refresh",
				"Reading job %s again for its clearance code failed (%s); the video stays ready and the read is retried", jobID, msg)
		})
		return ctrl.Result{RequeueAfter: delay}
	case !job.Status().IsCompleted():
		// Only a completed job carries clearance codes; keep what was recorded.
		l.memo.GiveUpRefresh(jobID)
		return ctrl.Result{}
	}
	l.backoff.Reset(objectKey(obj))
	st.OutputsOmitted = l.adapter.recordJob(obj, job)
	l.memo.JobRead(jobID)
	l.memo.ClearanceChecked(jobID)
	setOutcome(st, obj.GetGeneration(), outcomeReady, videov1alpha1.ReasonCompleted, completedMessage(st))

	next, ok := l.nextClearanceRead(obj, t)
	if !ok {
		return ctrl.Result{}
	}
	if wait := next.Sub(l.opts.Clock.Now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}
	}
	// The service gave no code valid in the future: ask again later, not in a loop.
	return ctrl.Result{RequeueAfter: l.opts.BackoffMax}
}

// describeRefreshFailure names a failed refresh without the API key (never in these errors)
// and without details that change on every try.
func describeRefreshFailure(err error) string {
	var ce *credentials.Error
	if errors.As(err, &ce) {
		return ce.Message
	}
	return "the service answered " + describeAnswer(err)
}
