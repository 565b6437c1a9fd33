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
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/boundedset"
	"github.com/videoops/video-operator/internal/callback"
	"github.com/videoops/video-operator/internal/callgate"
	"github.com/videoops/video-operator/internal/credentials"
	"github.com/videoops/video-operator/internal/jobmemo"
	"github.com/videoops/video-operator/internal/spendguard"
	"github.com/videoops/video-operator/internal/statustxn"
)

// jobObject is either kind as the lifecycle reads it: where each keeps its job's fields
// (api/v1alpha1 JobObject).
type jobObject interface {
	client.Object
	videov1alpha1.JobObject
}

// kindAdapter is what differs in behaviour between VideoStoryboard and VideoRender: what their
// spec asks the service for, how a job maps into their status, and how it is charged. Where
// their fields are is jobObject's.
type kindAdapter[T jobObject] interface {
	newObject() T
	// resolve says what the current spec asks the service for, or why nothing can be sent yet.
	resolve(ctx context.Context, obj T) (*target, error)
	// recordJob maps a job read from the service into the kind's own status fields; it is
	// called on every read and must be idempotent. It returns the outputs it left out because
	// they do not fit the status schema (see fitWhole).
	recordJob(obj T, job *apiclient.Job) (omitted []string)
	// replaceOutputs clears the kind's own status fields when a new job replaces the current
	// one; keep first keeps the outputs of the current one, which completed (they were paid for).
	replaceOutputs(obj T, keep bool)
	// carryOutputs says that the outputs of generation from answer generation to: its spec
	// changed, not its request.
	carryOutputs(obj T, from, to int64)
	// termsOf is what the object's spec says about its jobs: how they are paid for and reviewed.
	termsOf(obj T) terms
}

// terms is what one object's spec says about its jobs: how they count against its namespace's
// VideoBudget (spendguard.go), and who reviews what.
type terms struct {
	// perJob: each job is reserved before its paid call, charged its seconds and credits when it
	// ends, and held by the charge finalizer until then (a render). Otherwise the submission is
	// counted and the end charges only the credits it reports (a preview).
	perJob bool
	// estimate is the spec's estimate: charged for a job whose end will never be read.
	estimate spendguard.Estimate
	// unreviewed: it pays for every new preview without a review (storyboardRef approval
	// Latest, no approvedDigest); the record of each paid call says so.
	unreviewed bool
	// forReview: a completed job waits for a person's review (a preview), which makes its
	// completion worth an event of its own.
	forReview bool
}

// statusValue is the object's whole status, to tell whether a reconcile changed anything.
func statusValue[T jobObject](o T) any { return o.StatusValue() }

// secretRef is the object's API key reference, the default Secret when the spec names none.
func secretRef(o jobObject) videov1alpha1.SecretKeyRef {
	return credentials.RefOrDefault(o.APIKeyRef())
}

// target is what the current spec asks the service for: exactly one of preview, render or
// projectID, or wait when nothing can be submitted yet.
type target struct {
	preview   *videov1alpha1.StoryboardRequest
	render    *videov1alpha1.StoryboardRequest
	projectID string
	// sourceGeneration and sourceUID name the upstream object the job will belong to
	// (storyboardRef only): a storyboard deleted and created again starts at generation 1.
	sourceGeneration int64
	sourceUID        types.UID
	sourceCreated    time.Time
	// sourceDigest is the digest of the approved preview rendered, and narrationPinned whether
	// the request narrates its narration word for word (approval.go).
	sourceDigest    string
	narrationPinned bool
	wait            *waiting
	// digest is the request's digest (record.go), set once the target does not wait.
	digest string

	// digestV1 is the same in digest version 1, and sourceDigestV1 the approved preview's
	// version 1 digest: records written before digests carried a version hold them
	// (DESIGN.md "Records that outlive a version").
	digestV1, sourceDigestV1 string
	// approvedAs is the pin that approved the preview when it names it in another version
	// than sourceDigest (a version 1 pin): the job's source is recorded under it.
	approvedAs string
}

// recordedSourceDigest is the approved preview's digest as the job's source records it: the
// name the approval used.
func (t *target) recordedSourceDigest() string {
	if t.approvedAs != "" {
		return t.approvedAs
	}
	return t.sourceDigest
}

// request is the storyboard request to send, nil for a project render.
func (t *target) request() *videov1alpha1.StoryboardRequest {
	if t.preview != nil {
		return t.preview
	}
	return t.render
}

// waiting is a reason not to submit now. stalled means only a human can change it.
// keepCompleted means the adapter vouches that the object's completed job still answers the
// current spec: it stays Ready meanwhile, the video exists whatever happens to its source, and
// note (if any) is added to its Ready message.
type waiting struct {
	stalled       bool
	keepCompleted bool
	note          string
	reason        videov1alpha1.ConditionReason
	message       string
}

// lifecycle is the job lifecycle both reconcilers share: read the object, follow an in-flight
// submission or a running job, submit once per spec generation, and write the status.
type lifecycle[T jobObject] struct {
	client  client.Client
	adapter kindAdapter[T]
	// kind is T's Kind, for events, metrics, reservations and logs.
	kind     string
	opts     Options
	keys     *credentials.Store
	brands   *brandCache
	memo     *jobmemo.Memo
	circuits *callgate.Circuits
	budgets  *callgate.Budgets
	backoff  *callgate.Backoff
	// stale are the objects whose last write was refused as a conflict: read from the API server
	// next time, not the cache.
	stale *boundedset.Set[types.NamespacedName]
	// superseded are object versions this process's own writes replaced. The cache may still
	// show one for a moment after the write; a reconcile woken meanwhile (by a VideoStoryboard or
	// a budget) would decide on it, find nothing to write where the server holds something else,
	// and wait for a watch event that status-only writes never bring: such a read is made fresh.
	superseded       *boundedset.Set[objectVersion]
	supersededExpiry atomic.Int64 // unix nanoseconds of the last Expire of superseded
	// guard reserves room in the namespace's VideoBudget before a paid submission.
	guard *spendguard.Guard
	// ended keeps the answers of ended jobs whose charge waits for its budget write
	// (spendguard.go chargeSoon), so that the job is not read again.
	ended endedJobs
	// checked are the requests that passed the pre-submit check (presubmit.go).
	checked *boundedset.Set[string]
	// unrecorded are the objects whose job record is to be copied into their annotations
	// (record.go). Forgetting one only delays its record to the next job or completion.
	unrecorded *boundedset.Set[types.NamespacedName]

	// callbacks is nil unless the manager has a public callback URL; wake then receives the
	// objects callbacks are about.
	callbacks    *callback.Signer
	callbackPoll time.Duration
	wake         chan event.GenericEvent

	// polls keeps this controller's share of the workers for the reads of running jobs;
	// progress holds back progress-only status writes (progress.go).
	polls    *callgate.WorkShare
	progress *progressWrites
}

func newLifecycle[T jobObject](c client.Client, adapter kindAdapter[T], opts Options, shared *sharedState) *lifecycle[T] {
	return &lifecycle[T]{
		client:   c,
		adapter:  adapter,
		kind:     adapter.newObject().JobKind(),
		opts:     opts,
		keys:     shared.keys,
		brands:   shared.brands,
		memo:     shared.memo,
		circuits: shared.circuits,
		budgets:  shared.budgets,
		backoff:  callgate.NewBackoff(opts.BackoffBase, opts.BackoffMax),
		guard:    shared.guard,
		// Forgetting an entry costs at most one write refused as a conflict, which marks it again.
		stale:      boundedset.New[types.NamespacedName](100_000),
		superseded: boundedset.New[objectVersion](20_000),
		checked:    boundedset.New[string](maxChecked),
		unrecorded: boundedset.New[types.NamespacedName](100_000),

		callbacks:    shared.callbacks,
		callbackPoll: shared.callbackPoll,

		polls:    callgate.NewWorkShare(opts.Clock, opts.PollShare, 1),
		progress: newProgressWrites(opts.Clock, opts.ProgressInterval),
	}
}

// read reads the object for a reconcile: from the cache, or from the API server when the
// object is marked stale. The stale set is the one way to ask for a fresh read at the next
// reconcile (after a write refused as a conflict, or a cache seen behind the server); readFresh
// is the one way to read fresh now. Deciding again from a cache that is behind would only be
// refused again, each refusal one more write for a busy API server.
func (l *lifecycle[T]) read(ctx context.Context, key types.NamespacedName) (T, error) {
	if l.stale.Take(key) {
		return l.readFresh(ctx, key)
	}
	obj := l.adapter.newObject()
	if err := l.client.Get(ctx, key, obj); err != nil {
		return obj, err
	}
	if l.superseded.Has(objectVersion{key, obj.GetResourceVersion()}) {
		// The cache is behind a write of this process.
		return l.readFresh(ctx, key)
	}
	return obj, nil
}

// objectVersion is one version of one object.
type objectVersion struct {
	key             types.NamespacedName
	resourceVersion string
}

// supersededFor is how long a replaced version is remembered: a cache behind its own process's
// writes catches up within milliseconds; entries older than this are dropped once per period.
const supersededFor = time.Minute

// supersede remembers that this process replaced the given versions of the object at key.
func (l *lifecycle[T]) supersede(key types.NamespacedName, versions ...string) {
	now := l.opts.Clock.Now()
	if last := l.supersededExpiry.Load(); now.UnixNano()-last > int64(supersededFor) &&
		l.supersededExpiry.CompareAndSwap(last, now.UnixNano()) {
		l.superseded.Expire(now.Add(-supersededFor))
	}
	for _, rv := range versions {
		if rv != "" {
			l.superseded.Add(objectVersion{key, rv}, now)
		}
	}
}

// readFresh reads the object from the API server, uncached: for decisions that must not be taken
// on what the cache shows (an unknown outcome, a job id to write again).
func (l *lifecycle[T]) readFresh(ctx context.Context, key types.NamespacedName) (T, error) {
	obj := l.adapter.newObject()
	return obj, l.opts.APIReader.Get(ctx, key, obj)
}

// Reconcile is the whole reconcile of one object of either kind.
func (l *lifecycle[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	began := time.Now()
	obj, err := l.read(ctx, req.NamespacedName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			l.stale.Take(req.NamespacedName)
			l.opts.Metrics.Forget(l.kind, req.NamespacedName)
			l.backoff.Reset(req.NamespacedName)
			l.budgets.Done("", l.budgetKey(req.NamespacedName))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting %s %s: %w", l.kind, req.NamespacedName, err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		// The service has no cancel and nothing to clean up: a deleted object stops here, once
		// its job's end is charged to the namespace's budget (spendguard.go).
		return l.finishCharge(ctx, obj)
	}

	if st := obj.Job(); st.JobID != "" && st.CompletedAt == nil && st.Submission == nil {
		// A read of a running job: what it costs a worker sizes the polls' share (--poll-share).
		defer func() { l.polls.Polled(time.Since(began)) }()
	}
	tx := statustxn.New(l.client, l.opts.APIReader, obj, l.adapter.newObject, statusValue[T])
	tx.Written = l.opts.Metrics.StatusWritten
	defer func() {
		if tx.Conflicted {
			l.stale.Add(req.NamespacedName, l.opts.Clock.Now())
		}
		l.supersede(req.NamespacedName, tx.Superseded...)
	}()
	result, err := l.advance(ctx, tx)
	if tx.Aborted() {
		// A write failed and the decisions were discarded; advance chose when to look again.
		return result, err
	}
	if errors.Is(err, errShuttingDown) || (err != nil && ctx.Err() != nil) {
		// Shutting down before a decision about the spec: what was settled so far (a cleared
		// record, a job read) is written, but not observedGeneration; the next process
		// reconciles this object again.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), WriteTimeout)
		defer cancel()
		_ = tx.Commit(wctx)
		return ctrl.Result{}, nil
	}
	st := obj.Job()
	if err != nil {
		// No decision was reached for this generation: observedGeneration stays where it was,
		// so kstatus and Argo CD do not take the old Ready for the new spec.
		l.reconcileError(tx, err)
	} else if !tx.Undecided {
		st.ObservedGeneration = obj.GetGeneration()
	}
	// A decision taken is written even when shutdown began meanwhile (the manager waits for
	// running reconciles): it may follow a paid call.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), WriteTimeout)
	defer cancel()
	if cerr := tx.Commit(wctx); cerr != nil {
		if apierrors.IsConflict(cerr) {
			// Decided on a stale read (or someone else wrote meanwhile): read it again.
			logf.FromContext(ctx).V(1).Info("Status changed since it was read; reconciling again")
			return ctrl.Result{RequeueAfter: l.backoff.Short()}, err
		}
		return result, errors.Join(err, fmt.Errorf("writing status: %w", cerr))
	}
	written := tx.Base.Job()
	l.opts.Metrics.ObservePhase(l.kind, req.NamespacedName, written.Phase)
	l.opts.Metrics.ObserveSubmission(l.kind, req.NamespacedName, written.Submission)
	l.opts.Metrics.ObserveConditions(l.kind, req.NamespacedName, written.Conditions)
	if l.unrecorded.Take(req.NamespacedName) {
		before := tx.Base.GetResourceVersion()
		if rerr := l.writeRecord(wctx, tx.Base); rerr != nil {
			// Written again by the next reconcile; until then a restore would not find it.
			l.unrecorded.Add(req.NamespacedName, l.opts.Clock.Now())
			if apierrors.IsConflict(rerr) {
				l.stale.Add(req.NamespacedName, l.opts.Clock.Now())
			}
			logf.FromContext(ctx).V(1).Info("Recording the job in the annotations failed; trying again", "error", rerr.Error())
			return ctrl.Result{RequeueAfter: l.backoff.Short()}, err
		}
		l.supersede(req.NamespacedName, before)
	}
	return result, err
}

// later ends a reconcile that decided nothing: it comes back after d.
func later[T jobObject](tx *statustxn.Txn[T], d time.Duration) ctrl.Result {
	tx.Undecided = true
	return ctrl.Result{RequeueAfter: d}
}

// reconcileError says in Reconciling that the reconcile failed and is retried. A completed job
// of the current generation keeps its Ready condition: its video exists.
func (l *lifecycle[T]) reconcileError(tx *statustxn.Txn[T], err error) {
	st := tx.Obj.Job()
	if readyForGeneration(st, tx.Obj.GetGeneration()) {
		return
	}
	setOutcome(st, tx.Obj.GetGeneration(), outcomeReconciling, videov1alpha1.ReasonReconcileError,
		fmt.Sprintf("Reconcile failed and is retried: %s", boundedError(err)))
}

// advance moves the object one step along its lifecycle and sets its status in memory.
func (l *lifecycle[T]) advance(ctx context.Context, tx *statustxn.Txn[T]) (ctrl.Result, error) {
	obj := tx.Obj
	st := obj.Job()
	gen := obj.GetGeneration()

	// A callback another replica received: the same as if this replica had received it (for the
	// attempt in flight, a read of the job with the object's key follows). It is consumed here,
	// so that a job the service disowns is not offered again on every reconcile.
	if rc := st.Callback; rc != nil {
		if st.Submission != nil && rc.AttemptID == st.Submission.AttemptID && rc.JobID != "" {
			// Kept until the adoption is decided (adoptFromCallback clears it).
			l.memo.RememberFromCallback(rc.AttemptID, rc.JobID)
		} else {
			if rc.JobID != "" && rc.JobID == st.JobID && st.CompletedAt == nil {
				l.memo.Wake(rc.JobID)
			}
			st.Callback = nil
		}
	}

	// 1. A submission whose job id was never recorded: adopt the job or refuse to guess. A restore
	// without status brings the record of an attempt whose outcome was unknown back from the
	// annotations: it may have created a job, so it is not paid for again on its own.
	if sub := restoredUnknown(obj, st); sub != nil {
		st.Submission = sub
	}
	if st.Submission != nil {
		if stop, res, err := l.resolveInFlight(ctx, tx); stop {
			return res, err
		}
	}

	// 2. A job that has not ended is followed to its end, whatever generation it belongs to:
	// the service has no cancel, so a newer spec waits for it.
	if st.JobID != "" && st.CompletedAt == nil {
		if stop, res, err := l.poll(ctx, tx); stop {
			return res, err
		}
	}

	// 3. What does the current spec ask for, and has it been asked already?
	t, err := l.adapter.resolve(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	rec := recordOf(obj)
	if t.wait != nil && rec.requestDigest != "" && l.adoptable(obj, rec, nil) {
		// A restored object that cannot submit now (its source is not back yet, or nothing is
		// approved): its record says what was paid, and the job it names is adopted.
		if stop, res, err := l.adopt(ctx, tx, rec, nil); stop {
			return res, err
		}
		// The adopted job may be what the spec still asks for (a finished render): decide again.
		if t, err = l.adapter.resolve(ctx, obj); err != nil {
			return ctrl.Result{}, err
		}
	}
	if t.wait != nil {
		if t.wait.keepCompleted && finishedJob(st) {
			// The adapter vouches that the completed job answers the current spec.
			st.JobGeneration = gen
			return l.completed(ctx, tx, t)
		}
		if st.JobID == "" || st.CompletedAt != nil {
			st.Phase = videov1alpha1.PhasePending
		}
		return l.wait(tx, t.wait)
	}
	if err = t.setDigests(); err != nil {
		return ctrl.Result{}, err
	}
	// 3a. The annotations name a job status does not know (a restore): it is adopted, not paid.
	if l.adoptable(obj, rec, t) {
		if stop, res, err := l.adopt(ctx, tx, rec, t); stop {
			return res, err
		}
	}
	attempted := l.alreadySent(tx, t)
	if attempted && rec != statusRecord(st) && st.Submission == nil && st.JobID != "" {
		// The record of the current job is missing from the annotations (a write that failed,
		// or status restored without them).
		l.recordPending(tx)
	}
	// A retry value not handled yet is consumed by the next submission, whatever causes it, so
	// that a value already set (copied with the object, or set with a spec edit) never makes a
	// later failure pay again by itself.
	retry, retryPending := l.retryRequested(obj)
	if attempted {
		if st.Failure == nil {
			return l.completed(ctx, tx, t)
		}
		if !retryPending {
			reason := failureReason(st.Failure)
			st.Phase = videov1alpha1.PhaseFailed
			l.stall(tx, reason, failureMessage(st))
			return ctrl.Result{}, nil
		}
	}

	// 4. Nothing was asked for this spec yet (or a retry was): submit it, once.
	return l.submit(ctx, tx, t, retry, attempted)
}

// sameSource reports whether the current job renders the upstream object t names: the same
// VideoStoryboard (by uid) at the same generation. A job recorded before the uid was (by an older
// version of the operator) belongs to another storyboard only if that one was created after the
// job was recorded.
func (l *lifecycle[T]) sameSource(obj T, t *target) bool {
	src := obj.JobSource()
	gen, uid, digest := src.StoryboardGeneration, types.UID(src.StoryboardUID), src.StoryboardDigest
	if digest != "" && t.sourceDigest != "" {
		// What was paid for is the approved preview, whatever generation or uid it came with.
		return digest == t.sourceDigest || (t.sourceDigestV1 != "" && digest == t.sourceDigestV1)
	}
	if gen != t.sourceGeneration {
		return false
	}
	if uid != "" || t.sourceUID == "" {
		return uid == t.sourceUID
	}
	st := obj.Job()
	recorded := st.SubmittedAt
	if recorded == nil {
		recorded = st.CompletedAt
	}
	return recorded == nil || !t.sourceCreated.After(recorded.Time)
}

// completedFor reports whether the job of generation gen completed (not failed).
func completedFor(st *videov1alpha1.JobStatus, gen int64) bool {
	return st.JobGeneration == gen && finishedJob(st)
}

// finishedJob reports whether the current job completed (not failed), whatever its generation.
func finishedJob(st *videov1alpha1.JobStatus) bool {
	return st.JobID != "" && st.CompletedAt != nil && st.Failure == nil && st.Submission == nil
}

// readyForGeneration reports whether Ready is True for generation gen.
func readyForGeneration(st *videov1alpha1.JobStatus, gen int64) bool {
	c := condition(st, videov1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == gen
}

// completed reports a completed job of the current spec. It reads the job again when the
// clearance code must be refreshed (see clearance.go); trouble doing so never takes Ready away.
func (l *lifecycle[T]) completed(ctx context.Context, tx *statustxn.Txn[T], t *target) (ctrl.Result, error) {
	obj := tx.Obj
	st := obj.Job()
	st.Phase = videov1alpha1.PhaseCompleted
	msg := completedMessage(st)
	if t.wait != nil && t.wait.note != "" {
		msg += "; " + t.wait.note
	}
	setOutcome(st, obj.GetGeneration(), outcomeReady, videov1alpha1.ReasonCompleted, msg)

	at, ok := l.nextClearanceRead(obj, t)
	if !ok {
		return ctrl.Result{}, nil
	}
	if wait := at.Sub(l.opts.Clock.Now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	return l.refresh(ctx, tx, t), nil
}

// completedMessage is the Ready message of a completed job.
func completedMessage(st *videov1alpha1.JobStatus) string {
	msg := fmt.Sprintf("Job %s completed", st.JobID)
	if len(st.OutputsOmitted) > 0 {
		msg += fmt.Sprintf("; outputs too long to record (never cut): %s", strings.Join(st.OutputsOmitted, ", "))
	}
	return msg
}

// wait records a reason not to submit yet.
func (l *lifecycle[T]) wait(tx *statustxn.Txn[T], w *waiting) (ctrl.Result, error) {
	if w.stalled {
		l.stall(tx, w.reason, w.message)
		return ctrl.Result{}, nil
	}
	setOutcome(tx.Obj.Job(), tx.Obj.GetGeneration(), outcomeReconciling, w.reason, w.message)
	// The objects waited for are watched; the requeue only covers an event that was missed.
	return ctrl.Result{RequeueAfter: l.opts.PollMax}, nil
}

// stall sets Stalled, with a Warning event, once the status is written, when the reason is new.
func (l *lifecycle[T]) stall(tx *statustxn.Txn[T], reason videov1alpha1.ConditionReason, message string) {
	obj := tx.Obj
	st := obj.Job()
	if !isStalledWith(st, reason) {
		tx.After(func() { l.opts.Recorder.Eventf(obj, nil, "Warning", string(reason), "Stall", "%s", message) })
	}
	setOutcome(st, obj.GetGeneration(), outcomeStalled, reason, message)
}

// retryRequested returns a value of the retry annotation not handled yet. It is consumed (moved
// to status.lastHandledRetry) only with the job it leads to, or a final refusal.
func (l *lifecycle[T]) retryRequested(obj T) (string, bool) {
	v, ok := obj.GetAnnotations()[videov1alpha1.AnnotationRetry]
	st := obj.Job()
	if !ok || v == "" || v == st.LastHandledRetry || len(v) > maxAnnotationValue {
		return "", false
	}
	return v, true
}

// maxAnnotationValue is the longest retry value that status.lastHandledRetry can hold.
const maxAnnotationValue = 253

// apiClient returns a client for the object's API key and the key's fingerprint (to key
// per-account caches). A key that cannot be read or used is a *credentials.Error.
func (l *lifecycle[T]) apiClient(ctx context.Context, obj T) (apiclient.Interface, string, error) {
	key, err := l.keys.APIKey(ctx, obj.GetNamespace(), secretRef(obj))
	if err != nil {
		return nil, "", err
	}
	api, err := l.opts.ClientFactory.ForKey(key)
	if err != nil {
		// The client refuses keys that cannot be sent in a header; the error never holds the key.
		ref := secretRef(obj)
		return nil, "", &credentials.Error{Reason: videov1alpha1.ReasonUnauthorized,
			Message: fmt.Sprintf("The API key in key %q of Secret %q is not usable: %v", ref.Key, ref.Name, err)}
	}
	id := l.fingerprints().Of(key)
	return callgate.NewKeyedClient(api, id, l.budgets, l.circuits, l.backoff.Unit()*2),
		id, nil
}

// budgetKey names an object in the call budgets, which both kinds share.
func (l *lifecycle[T]) budgetKey(key types.NamespacedName) string {
	return l.kind + "/" + key.String()
}

// serviceClient is apiClient for work that needs the key: a key that cannot be read or used
// stalls the object (ok false, nil error). The key is read only when a call is needed, so a
// finished video does not become Stalled because its Secret was removed.
func (l *lifecycle[T]) serviceClient(ctx context.Context, tx *statustxn.Txn[T]) (api apiclient.Interface, keyID string, ok bool, err error) {
	api, keyID, err = l.apiClient(ctx, tx.Obj)
	var ce *credentials.Error
	if errors.As(err, &ce) {
		l.stall(tx, ce.Reason, ce.Message)
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	return api, keyID, true, nil
}

// callContext bounds one call to the service.
func (l *lifecycle[T]) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.opts.CallTimeout)
}
