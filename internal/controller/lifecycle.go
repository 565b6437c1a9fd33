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
	"github.com/videoops/video-operator/internal/bound"
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
	// estimate is the spec's estimate, charged for a job whose end will never be read; nil for
	// a kind without one. A function: an inline storyboard is estimated scene by scene, and
	// only the spend guard's paths need it, not every read or submission that asks the terms.
	estimate func() bound.Estimate
	// unreviewed: it pays for every new preview without a review (storyboardRef approval
	// Latest, no approvedDigest); the record of each paid call says so.
	unreviewed bool
	// forReview: a completed job waits for a person's review (a preview), which makes its
	// completion worth an event of its own.
	forReview bool
}

// estimateOf is the spec's estimate (terms.estimate), zero for a kind without one.
func (t terms) estimateOf() bound.Estimate {
	if t.estimate == nil {
		return bound.Estimate{}
	}
	return t.estimate()
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
	// (docs/architecture.md "Records that outlive a version").
	digestV1, sourceDigestV1 string
	// approvedAs is the pin that approved the preview when it names it in another version
	// than sourceDigest (a version 1 pin): the job's source is recorded under it.
	approvedAs string
	// approvedBy is the user who wrote the approval, as the admission policy stamped it; empty
	// when not recorded (approval.go approvedBy).
	approvedBy string
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
	// checked are the requests that passed the pre-submit check (presubmit.go).
	checked *boundedset.Set[string]
	// unrecorded are the objects whose record write failed (writeRecordIfDue), or was due but
	// not reached (commit ended before it): the next reconcile writes it. Forgetting one only
	// delays its record to the next job or completion.
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

// Reconcile is the whole reconcile of one object of either kind: its steps, in order, each of
// which may end it (doc.go draws the map). The status decided in memory is written once, at the
// end, and only then what follows from it (events, metrics, the record in the annotations).
func (l *lifecycle[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	began := time.Now()
	obj, err := l.read(ctx, req.NamespacedName)
	if err != nil {
		end := l.gone(req.NamespacedName, err)
		return end.result, end.err
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		// The service has no cancel and nothing to clean up: a deleted object stops here, once
		// its job's end is charged to the namespace's budget (spendguard.go).
		end := l.finishCharge(ctx, obj)
		return end.result, end.err
	}
	s := l.newScope(obj)
	defer l.afterReconcile(s, began, readsRunningJob(obj.Job()))
	end := run(ctx, s,
		l.consumeCallback, // a callback another replica received
		l.resolveInFlight, // an in-flight record without a job id: adopt its job, or refuse to guess (submit.go)
		l.poll,            // a running job, followed to its end (poll.go)
		l.resolve,         // what the current spec asks for; a restored object that waits adopts its job
		l.waitIfAsked,     // a reason not to submit yet
		l.adoptRecorded,   // a job the annotations name, adopted instead of paid for (record.go)
		l.answered,        // a request already sent: its job's outcome, never a second payment
		l.submit,          // submit the request, once (submit.go)
	)
	return l.commit(ctx, s, end)
}

// gone ends the reconcile of an object that could not be read: one deleted is forgotten.
func (l *lifecycle[T]) gone(key types.NamespacedName, err error) *stop {
	if !apierrors.IsNotFound(err) {
		return stopOn(fmt.Errorf("getting %s %s: %w", l.kind, key, err))
	}
	l.stale.Take(key)
	l.opts.Metrics.Forget(l.kind, key)
	l.backoff.Reset(key)
	l.budgets.Done("", l.budgetKey(key))
	return stopHere()
}

// afterReconcile keeps what the next reconcile of the object must know: read it fresh after a
// conflict, and from the API server while the cache shows a version this process replaced. A
// reconcile that read a running job tells the polls' share what the read cost (--poll-share).
func (l *lifecycle[T]) afterReconcile(s *scope[T], began time.Time, readRunning bool) {
	key := objectKey(s.obj)
	if s.tx.Conflicted {
		l.stale.Add(key, l.opts.Clock.Now())
	}
	l.supersede(key, s.tx.Superseded...)
	if readRunning {
		l.polls.Polled(time.Since(began))
	}
}

// readsRunningJob reports whether a reconcile of an object with this status reads a running job.
func readsRunningJob(st *videov1alpha1.JobStatus) bool {
	return st.JobID != "" && st.CompletedAt == nil && st.Submission == nil
}

// commit writes what the steps decided, as the end says: the status (with observedGeneration
// when a decision about the spec was reached), then, once it is written, the record of its job
// in the annotations.
func (l *lifecycle[T]) commit(ctx context.Context, s *scope[T], end *stop) (ctrl.Result, error) {
	if end == nil {
		end = stopHere()
	}
	result, err := end.result, end.err
	tx := s.tx
	// A status that names a job to record may have been written before the end (the job id,
	// writeJobID): its record is due even when the end's own write fails or is not made, and the
	// next reconcile writes it (the unrecorded set), not the job's completion.
	defer func() {
		if s.recordDue {
			l.unrecorded.Add(objectKey(s.obj), l.opts.Clock.Now())
		}
	}()
	if tx.Aborted() {
		// A write failed and the decisions were discarded; the step chose when to look again.
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
	if err != nil {
		// No decision was reached for this generation: observedGeneration stays where it was,
		// so kstatus and Argo CD do not take the old Ready for the new spec.
		l.reconcileError(tx, err)
	} else if !tx.Undecided {
		s.st.ObservedGeneration = s.obj.GetGeneration()
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
	key := objectKey(s.obj)
	written := tx.Base.Job()
	l.opts.Metrics.ObservePhase(l.kind, key, written.Phase)
	l.opts.Metrics.ObserveSubmission(l.kind, key, written.Submission)
	l.opts.Metrics.ObserveConditions(l.kind, key, written.Conditions)
	if rerr := l.writeRecordIfDue(wctx, s); rerr != nil {
		return ctrl.Result{RequeueAfter: l.backoff.Short()}, err
	}
	return result, err
}

// writeRecordIfDue copies the record of the object's job into its annotations, when a status
// naming a job to record was written (recordPending), or when an earlier write of the record
// failed: the job id, the request digest and the key fingerprint travel with the object, so that
// a restore without status adopts its job instead of paying again (record.go writeRecord).
func (l *lifecycle[T]) writeRecordIfDue(ctx context.Context, s *scope[T]) error {
	key := objectKey(s.obj)
	due := s.recordDue
	s.recordDue = false
	if retry := l.unrecorded.Take(key); !due && !retry {
		return nil
	}
	before := s.tx.Base.GetResourceVersion()
	if err := l.writeRecord(ctx, s.tx.Base); err != nil {
		// Written again by the next reconcile; until then a restore would not find it.
		l.unrecorded.Add(key, l.opts.Clock.Now())
		if apierrors.IsConflict(err) {
			l.stale.Add(key, l.opts.Clock.Now())
		}
		logf.FromContext(ctx).V(1).Info("Recording the job in the annotations failed; trying again", "error", err.Error())
		return err
	}
	l.supersede(key, before)
	return nil
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

// consumeCallback is the step for a callback another replica received: the same as if this
// replica had received it (for the attempt in flight, a read of the job with the object's key
// follows). It is consumed here, so that a job the service disowns is not offered again on every
// reconcile.
func (l *lifecycle[T]) consumeCallback(_ context.Context, s *scope[T]) *stop {
	st := s.st
	rc := st.Callback
	if rc == nil {
		return nil
	}
	if st.Submission != nil && rc.AttemptID == st.Submission.AttemptID && rc.JobID != "" {
		// Kept until the adoption is decided (adoptFromCallback clears it).
		l.memo.RememberFromCallback(rc.AttemptID, rc.JobID)
		return nil
	}
	if rc.JobID != "" && rc.JobID == st.JobID && st.CompletedAt == nil {
		l.memo.Wake(rc.JobID)
	}
	st.Callback = nil
	return nil
}

// resolve is the step that says what the current spec asks for (the adapter's resolve), or why
// nothing can be sent yet. A restored object that cannot submit now (its source is not back yet,
// or nothing is approved) adopts the job its record names: the record says what was paid.
func (l *lifecycle[T]) resolve(ctx context.Context, s *scope[T]) *stop {
	t, err := l.adapter.resolve(ctx, s.obj)
	if err != nil {
		return stopOn(err)
	}
	s.target, s.rec = t, recordOf(s.obj)
	if t.wait != nil && s.rec.requestDigest != "" && l.adoptable(s.obj, s.rec, nil) {
		if end := l.adopt(ctx, s, s.rec, nil); end != nil {
			return end
		}
		// The adopted job may be what the spec still asks for (a finished render): decide again.
		if s.target, err = l.adapter.resolve(ctx, s.obj); err != nil {
			return stopOn(err)
		}
	}
	if s.target.wait == nil {
		if err := s.target.setDigests(); err != nil {
			return stopOn(err)
		}
	}
	return nil
}

// waitIfAsked is the step for a spec that cannot be submitted yet: it says why. A finished job
// the adapter vouches for still answers the spec, and stays Ready.
func (l *lifecycle[T]) waitIfAsked(ctx context.Context, s *scope[T]) *stop {
	w := s.target.wait
	if w == nil {
		return nil
	}
	if w.keepCompleted && finishedJob(s.st) {
		s.st.JobGeneration = s.obj.GetGeneration()
		return l.completed(ctx, s)
	}
	if s.st.JobID == "" || s.st.CompletedAt != nil {
		s.st.Phase = videov1alpha1.PhasePending
	}
	if w.stalled {
		l.stall(s.tx, w.reason, w.message)
		return stopHere()
	}
	setOutcome(s.st, s.obj.GetGeneration(), outcomeReconciling, w.reason, w.message)
	// The objects waited for are watched; the requeue only covers an event that was missed.
	return stopAfter(l.opts.PollMax)
}

// adoptRecorded is the step for annotations that name a job status does not know (a restore):
// it is adopted, not paid for.
func (l *lifecycle[T]) adoptRecorded(ctx context.Context, s *scope[T]) *stop {
	if !l.adoptable(s.obj, s.rec, s.target) {
		return nil
	}
	return l.adopt(ctx, s, s.rec, s.target)
}

// answered is the step for a request already sent: a completed job is Ready, a failed one stalls
// until the spec changes or a retry is asked for. A retry value not handled yet is consumed by
// the next submission, whatever causes it, so that a value already set (copied with the object,
// or set with a spec edit) never makes a later failure pay again by itself.
func (l *lifecycle[T]) answered(ctx context.Context, s *scope[T]) *stop {
	st := s.st
	s.attempted = l.alreadySent(s.tx, s.target)
	if s.attempted && s.rec != statusRecord(st) && st.Submission == nil && st.JobID != "" {
		// The record of the current job is missing from the annotations (a write that failed,
		// or status restored without them).
		l.recordPending(s)
	}
	retry, retryPending := l.retryRequested(s.obj)
	s.retry = retry
	if !s.attempted {
		return nil
	}
	if st.Failure == nil {
		return l.completed(ctx, s)
	}
	if retryPending {
		return nil
	}
	st.Phase = videov1alpha1.PhaseFailed
	l.stall(s.tx, failureReason(st.Failure), failureMessage(st))
	return stopHere()
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
func (l *lifecycle[T]) completed(ctx context.Context, s *scope[T]) *stop {
	obj, st, t := s.obj, s.st, s.target
	st.Phase = videov1alpha1.PhaseCompleted
	msg := completedMessage(st)
	if t.wait != nil && t.wait.note != "" {
		msg += "; " + t.wait.note
	}
	setOutcome(st, obj.GetGeneration(), outcomeReady, videov1alpha1.ReasonCompleted, msg)

	at, ok := l.nextClearanceRead(obj, t)
	if !ok {
		return stopHere()
	}
	if wait := at.Sub(l.opts.Clock.Now()); wait > 0 {
		return stopAfter(wait)
	}
	return stopWith(l.refresh(ctx, s.tx, t))
}

// completedMessage is the Ready message of a completed job.
func completedMessage(st *videov1alpha1.JobStatus) string {
	msg := fmt.Sprintf("Job %s completed", st.JobID)
	if len(st.OutputsOmitted) > 0 {
		msg += fmt.Sprintf("; outputs too long to record (never cut): %s", strings.Join(st.OutputsOmitted, ", "))
	}
	return msg
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

// useKey sets the scope's service client for the object's API key: a key that cannot be read or
// used stalls the object. The key is read only when a call is needed, so a finished video does
// not become Stalled because its Secret was removed.
func (l *lifecycle[T]) useKey(ctx context.Context, s *scope[T]) *stop {
	api, keyID, err := l.apiClient(ctx, s.obj)
	var ce *credentials.Error
	if errors.As(err, &ce) {
		l.stall(s.tx, ce.Reason, ce.Message)
		return stopHere()
	}
	if err != nil {
		return stopOn(err)
	}
	s.api, s.keyID = api, keyID
	return nil
}

// callContext bounds one call to the service.
func (l *lifecycle[T]) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.opts.CallTimeout)
}
