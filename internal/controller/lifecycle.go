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

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// kindAdapter is everything that differs between VideoStoryboard and VideoRender: where their
// fields are, what their spec asks the service for, and how a job maps into their status.
type kindAdapter[T client.Object] interface {
	// kind is the Kind, for events, metrics and logs.
	kind() string
	newObject() T
	jobStatus(obj T) *videov1alpha1.JobStatus
	// status returns the whole status, to tell whether a reconcile changed anything.
	status(obj T) any
	secretRef(obj T) videov1alpha1.SecretKeyRef
	// resolve says what the current spec asks the service for, or why nothing can be sent yet.
	resolve(ctx context.Context, obj T) (*target, error)
	// recordedSource and setRecordedSource keep the generation of an upstream object (the
	// previewed VideoStoryboard of a storyboardRef render) the current job belongs to.
	recordedSource(obj T) int64
	setRecordedSource(obj T, generation int64)
	// recordJob maps a job read from the service into the kind's own status fields; it is
	// called on every read and must be idempotent.
	recordJob(obj T, job *apiclient.Job)
	// resetOutputs clears the kind's own status fields when a new job replaces the old one.
	resetOutputs(obj T)
	// refreshAt is when a completed job must be read again (a clearance code's expiry), or zero.
	refreshAt(obj T) time.Time
}

// target is what the current spec asks the service for: exactly one of preview, render or
// projectID, or wait when nothing can be submitted yet.
type target struct {
	preview   *videov1alpha1.StoryboardRequest
	render    *videov1alpha1.StoryboardRequest
	projectID string
	// sourceGeneration is the upstream generation the job will belong to (storyboardRef only).
	sourceGeneration int64
	wait             *waiting
}

// request is the storyboard request to send, nil for a project render.
func (t *target) request() *videov1alpha1.StoryboardRequest {
	if t.preview != nil {
		return t.preview
	}
	return t.render
}

// waiting is a reason not to submit now. stalled means only a human can change it.
type waiting struct {
	stalled bool
	reason  videov1alpha1.ConditionReason
	message string
}

// lifecycle is the job lifecycle both reconcilers share: read the object, follow an in-flight
// submission or a running job, submit once per spec generation, and write one status patch.
type lifecycle[T client.Object] struct {
	client  client.Client
	adapter kindAdapter[T]
	opts    Options
	keys    *keyStore
	brands  *brandCache
	memo    *attemptMemo
	backoff *backoffTracker

	// callbacks is nil unless the manager has a public callback URL; wake then receives the
	// objects callbacks are about.
	callbacks    *callbacks
	callbackPoll time.Duration
	wake         chan event.GenericEvent
}

func newLifecycle[T client.Object](c client.Client, adapter kindAdapter[T], opts Options, shared *sharedState) *lifecycle[T] {
	return &lifecycle[T]{
		client:  c,
		adapter: adapter,
		opts:    opts,
		keys:    shared.keys,
		brands:  shared.brands,
		memo:    shared.memo,
		backoff: newBackoffTracker(opts.BackoffBase, opts.BackoffMax),

		callbacks:    shared.callbacks,
		callbackPoll: shared.callbackPoll,
	}
}

// Reconcile is the whole reconcile of one object of either kind.
func (l *lifecycle[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := l.adapter.newObject()
	if err := l.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			l.opts.Metrics.forget(l.adapter.kind(), req.NamespacedName)
			l.backoff.reset(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting %s %s: %w", l.adapter.kind(), req.NamespacedName, err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		// The service has no cancel and nothing to clean up: a deleted object just stops here.
		return ctrl.Result{}, nil
	}

	w := &statusWriter[T]{client: l.client, adapter: l.adapter, base: obj.DeepCopyObject().(T)}
	result, err := l.advance(ctx, obj, w)
	if perr := w.flush(ctx, obj, false); perr != nil {
		err = errors.Join(err, fmt.Errorf("writing status: %w", perr))
	}
	l.opts.Metrics.observePhase(l.adapter.kind(), req.NamespacedName, l.adapter.jobStatus(obj).Phase)
	return result, err
}

// advance moves the object one step along its lifecycle and sets its status in memory.
func (l *lifecycle[T]) advance(ctx context.Context, obj T, w *statusWriter[T]) (ctrl.Result, error) {
	st := l.adapter.jobStatus(obj)
	gen := obj.GetGeneration()
	st.ObservedGeneration = gen

	// 1. A submission whose job id was never recorded: adopt the job or refuse to guess.
	if st.Submission != nil {
		if stop, res, err := l.resolveInFlight(ctx, obj); stop {
			return res, err
		}
	}

	// 2. A job that has not ended is followed to its end, whatever generation it belongs to:
	// the service has no cancel, so a newer spec waits for it.
	if st.JobID != "" && st.CompletedAt == nil {
		if stop, res, err := l.poll(ctx, obj); stop {
			return res, err
		}
	}

	// 3. What does the current spec ask for, and has it been asked already?
	t, err := l.adapter.resolve(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if t.wait != nil {
		if st.JobID == "" || st.CompletedAt != nil {
			st.Phase = videov1alpha1.PhasePending
		}
		return l.wait(obj, t.wait)
	}
	attempted := st.JobGeneration == gen && l.adapter.recordedSource(obj) == t.sourceGeneration &&
		(st.JobID != "" || st.CompletedAt != nil)
	if attempted {
		if st.Failure == nil {
			return l.completed(ctx, obj)
		}
		if !l.retryRequested(ctx, obj) {
			reason := failureReason(st.Failure)
			st.Phase = videov1alpha1.PhaseFailed
			l.stall(obj, reason, failureMessage(st))
			return ctrl.Result{}, nil
		}
	}

	// 4. Nothing was asked for this spec yet: submit it, once.
	return l.submit(ctx, obj, w, t)
}

// completed reports a completed job of the current spec, and reads it again when a clearance
// code expires so that status always holds a usable one.
func (l *lifecycle[T]) completed(ctx context.Context, obj T) (ctrl.Result, error) {
	st := l.adapter.jobStatus(obj)
	st.Phase = videov1alpha1.PhaseCompleted
	setOutcome(st, obj.GetGeneration(), outcomeReady, videov1alpha1.ReasonCompleted,
		fmt.Sprintf("Job %s completed", st.JobID))

	at := l.adapter.refreshAt(obj)
	if at.IsZero() || l.memo.refreshGaveUp(st.JobID) {
		return ctrl.Result{}, nil
	}
	if wait := at.Sub(l.opts.Clock.Now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	return l.refresh(ctx, obj)
}

// wait records a reason not to submit yet.
func (l *lifecycle[T]) wait(obj T, w *waiting) (ctrl.Result, error) {
	if w.stalled {
		l.stall(obj, w.reason, w.message)
		return ctrl.Result{}, nil
	}
	setOutcome(l.adapter.jobStatus(obj), obj.GetGeneration(), outcomeReconciling, w.reason, w.message)
	// The objects waited for are watched; the requeue only covers an event that was missed.
	return ctrl.Result{RequeueAfter: l.opts.PollMax}, nil
}

// stall sets Stalled, with a Warning event when the reason is new.
func (l *lifecycle[T]) stall(obj T, reason videov1alpha1.ConditionReason, message string) {
	st := l.adapter.jobStatus(obj)
	if !isStalledWith(st, reason) {
		l.opts.Recorder.Eventf(obj, nil, "Warning", string(reason), "Stall", "%s", message)
	}
	setOutcome(st, obj.GetGeneration(), outcomeStalled, reason, message)
}

// retryRequested consumes a new value of the retry annotation.
func (l *lifecycle[T]) retryRequested(ctx context.Context, obj T) bool {
	v, ok := obj.GetAnnotations()[AnnotationRetry]
	st := l.adapter.jobStatus(obj)
	if !ok || v == "" || v == st.LastHandledRetry {
		return false
	}
	st.LastHandledRetry = v
	logf.FromContext(ctx).Info("Retry requested by annotation", "annotation", AnnotationRetry, "value", v)
	l.opts.Recorder.Eventf(obj, nil, "Normal", "RetryRequested", "Retry",
		"Submitting a new job for generation %d as requested by annotation %s", obj.GetGeneration(), AnnotationRetry)
	return true
}

// serviceClient returns a client for the object's API key and the key's fingerprint (to key
// per-account caches), or stalls the object when the key cannot be read. The key is read only
// when a call is needed, so a finished video does not become Stalled because its Secret was
// removed.
func (l *lifecycle[T]) serviceClient(ctx context.Context, obj T) (api apiclient.Interface, keyID string, ok bool, err error) {
	key, err := l.keys.apiKey(ctx, obj.GetNamespace(), l.adapter.secretRef(obj))
	if err != nil {
		var ce *credentialError
		if errors.As(err, &ce) {
			l.stall(obj, ce.reason, ce.message)
			return nil, "", false, nil
		}
		return nil, "", false, err
	}
	api, err = l.opts.ClientFactory.ForKey(key)
	if err != nil {
		// The client refuses keys that cannot be sent in a header; the error never holds the key.
		ref := l.adapter.secretRef(obj)
		l.stall(obj, videov1alpha1.ReasonUnauthorized,
			fmt.Sprintf("The API key in key %q of Secret %q is not usable: %v", ref.Key, ref.Name, err))
		return nil, "", false, nil
	}
	return api, fingerprint(key), true, nil
}

// callContext bounds one call to the service.
func (l *lifecycle[T]) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.opts.CallTimeout)
}

// statusWriter patches the status subresource only when it changed since the last write.
type statusWriter[T client.Object] struct {
	client  client.Client
	adapter kindAdapter[T]
	base    T
}

// flush writes the status. optimisticLock makes the write fail with a conflict when the object
// changed since it was read: the guard that keeps a stale cache from ever submitting twice.
func (w *statusWriter[T]) flush(ctx context.Context, obj T, optimisticLock bool) error {
	if equality.Semantic.DeepEqual(w.adapter.status(w.base), w.adapter.status(obj)) && !optimisticLock {
		return nil
	}
	patch := client.MergeFrom(w.base)
	if optimisticLock {
		patch = client.MergeFromWithOptions(w.base, client.MergeFromWithOptimisticLock{})
	}
	if err := w.client.Status().Patch(ctx, obj, patch); err != nil {
		return err
	}
	w.base = obj.DeepCopyObject().(T)
	return nil
}
