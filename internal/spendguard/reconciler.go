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
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// Reconciler is the VideoBudget controller: it rolls the period over, folds what objects recorded,
// settles interrupted reservations and jobs of gone objects, and writes the view and conditions.
type Reconciler struct {
	ReconcilerOptions
	// goneReads is when each job of a gone render was last read, by id: at most once per JobPoll.
	goneReads sync.Map
	unsent    unsentAttempts
	started   time.Time // this process's start (countRunning)
}

// ReconcilerOptions configure the VideoBudget reconciler.
type ReconcilerOptions struct {
	Client  client.Client // reads from the cache, writes budgets
	Reader  client.Reader // reads the objects of interrupted reservations, uncached
	Clock   clock.PassiveClock
	Metrics Metrics // the guard's too; may be nil
	// Grace is how old a reservation is before it is checked against its object: longer than a
	// submission's in-flight write, paid call and job-id write together.
	Grace   time.Duration
	Recheck time.Duration // bounds the time between two looks at a budget
	Retry   time.Duration // how soon a look that lost its lock is made again
	// Ledgers are the namespaces' ledgers (shared with the Guard); nil: in DefaultLedgerNamespace.
	Ledgers *Ledgers
	Guard   *Guard // this process's spend guard, whose reservations written ahead are kept; may be nil
	// Jobs reads the end of a running job whose render is gone; nil charges its estimate at once.
	Jobs JobEnds
	// JobDeadline bounds how long the reservation of such a job is held while its end cannot be
	// read (its key gone or refused, the service failing); zero holds it until it can.
	JobDeadline time.Duration
	JobPoll     time.Duration // how often such a job is read; zero is DefaultJobPoll
}

// DefaultJobPoll is how often, by default, the end of a running job whose render is gone is read.
const DefaultJobPoll = 30 * time.Second

// JobEnds reads a job at the service with the API key a reservation recorded (nil: the default).
type JobEnds interface {
	JobEnd(ctx context.Context, namespace string, ref *videov1alpha1.SecretKeyRef, jobID string) (JobEnd, error)
}

// JobEnd is what the service says of a job: running, unknown to it (its end will never be read),
// or ended (Completed, or failed), with what it cost (nothing for a failed job).
type JobEnd struct {
	Running, Completed, Unknown bool
	Seconds                     int64
	Credits                     *resource.Quantity
}

// NewReconciler returns the VideoBudget reconciler.
func NewReconciler(o ReconcilerOptions) *Reconciler {
	if o.Guard != nil {
		o.Guard.observeWrites(o.Metrics) // none: the guard keeps its own
		o.Guard.setGrace(o.Grace)
	}
	if o.Metrics == nil {
		o.Metrics = noMetrics{}
	}
	if o.Ledgers == nil {
		o.Ledgers = NewLedgers("")
	}
	o.JobPoll = cmp.Or(o.JobPoll, DefaultJobPoll)
	r := &Reconciler{ReconcilerOptions: o, started: o.Clock.Now()}
	r.unsent.m = map[types.UID]goneState{}
	return r
}

// The causes of the VideoBudget controller's writes.
const (
	CausePeriod       = "period"
	CauseLedger       = "ledger"
	CauseReservations = "reservations"
	CauseConditions   = "conditions"
	CauseOther        = "other"
)

// controllerCause names what the controller's write of b over base is for, the first that applies.
func controllerCause(base, b *videov1alpha1.VideoBudget, adopted bool) string {
	switch {
	case !base.Status.PeriodEnd.Equal(b.Status.PeriodEnd):
		return CausePeriod
	case adopted:
		return CauseLedger
	case !equality.Semantic.DeepEqual(base.Status.Reservations, b.Status.Reservations) ||
		!equality.Semantic.DeepEqual(base.Status.Used, b.Status.Used):
		return CauseReservations
	case !equality.Semantic.DeepEqual(base.Status.Conditions, b.Status.Conditions):
		return CauseConditions
	default:
		return CauseOther
	}
}

// Reconcile is the whole reconcile of one VideoBudget: the namespace's state from its ledger,
// rolled, folded and settled, written to the ledger under its lock, then the view and conditions.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if r.Guard != nil {
		if err := r.Guard.flushDue(ctx, req.Namespace); err != nil {
			return ctrl.Result{}, err
		}
	}
	live := &videov1alpha1.VideoBudget{}
	if err := readBudget(ctx, r.Client, req.Namespace, live); apierrors.IsNotFound(err) || req.Name != videov1alpha1.VideoBudgetName {
		// Admission refuses other names (an older object is ignored); a deleted budget's state
		// stays in the ledger.
		if err != nil {
			r.Metrics.ForgetBudget(req.Namespace)
		}
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("getting VideoBudget %s: %w", req.NamespacedName, err)
	}
	now := r.Clock.Now()
	known := r.Ledgers.copyOf(req.Namespace)
	b, from, polling, due, ledgerErr, err := r.look(ctx, live, now, known, false)
	if err == nil && from != nil && from == known && !equality.Semantic.DeepEqual(ledgerOf(live), ledgerOf(b)) {
		// Decided on this process's copy without a write, and the view shows another state: another
		// manager may have moved the ledger. The view shows the ledger, not a stale copy.
		err = errMoved
	}
	if errors.Is(err, errMoved) {
		// Decided again on the ledger as it is, this process's copy kept to catch one that went back.
		b, _, polling, due, ledgerErr, err = r.look(ctx, live, now, r.Ledgers.copyOf(req.Namespace), true)
	}
	if errors.Is(err, errMoved) {
		return ctrl.Result{RequeueAfter: r.Retry}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if !viewed(live, b, ledgerErr) {
		cause := controllerCause(live, b, false)
		switch err := patchBudgetStatus(ctx, r.Client, b, live); {
		case err == nil:
			r.Metrics.ObserveBudgetWrite(WriterController, cause, WriteWritten)
			if r.Guard != nil { // the guard's next view write starts from it
				r.Guard.writers.showView(req.Namespace, b)
			}
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			r.Metrics.ObserveBudgetWrite(WriterController, cause, WriteConflict)
			return ctrl.Result{RequeueAfter: r.Retry}, nil
		default:
			return ctrl.Result{}, fmt.Errorf("writing the status of VideoBudget %s: %w", req.NamespacedName, err)
		}
	}
	r.Metrics.ObserveBudget(b)
	if ledgerErr != nil {
		return ctrl.Result{}, fmt.Errorf("nothing is paid in namespace %s until its budget's ledger can be written: %w", b.Namespace, ledgerErr)
	}
	after := r.Recheck
	if end := b.Status.PeriodEnd; end != nil {
		after = min(after, max(end.Sub(now), time.Millisecond))
	}
	if polling {
		after = min(after, r.JobPoll)
	}
	if !due.IsZero() {
		after = min(after, max(due.Sub(now), time.Millisecond))
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// look decides the namespace's state at now (fresh: read from the API server), written to the
// ledger when it changed or the ledger was failing. It returns the view (what the ledger holds),
// whether a job's end is polled, when a fact comes due, the ledger's error, or errMoved.
func (r *Reconciler) look(ctx context.Context, live *videov1alpha1.VideoBudget, now time.Time, known *stored, fresh bool) (
	b *videov1alpha1.VideoBudget, from *stored, polling bool, due time.Time, ledgerErr, err error) {
	ns := live.Namespace
	if b, from, err = r.Ledgers.load(ctx, r.Client, r.Reader, ns, live, known, fresh, now, r.started); err != nil {
		return nil, nil, false, due, nil, err
	}
	RollPeriod(b, now)
	if err := countRunning(ctx, r.Client, b, false, r.started); err != nil {
		return nil, nil, false, due, nil, err
	}
	if _, due, err = foldRecorded(ctx, r.Client, b, now, foldAge); err != nil {
		return nil, nil, false, due, nil, err
	}
	if polling, err = r.settleInterrupted(ctx, b, now); err != nil {
		return nil, nil, false, due, nil, err
	}
	recountReserved(b)
	// A ledger that cannot be written admits nothing (fail closed); it is tried at each look.
	ledgerErr = r.Ledgers.failure(ns)
	if !changed(b, from) && ledgerErr == nil {
		return b, from, polling, due, nil, nil
	}
	cause := controllerCause(live, b, from.rv == "")
	err = r.Ledgers.store(ctx, r.Client, ns, next(b, from), from.rv)
	switch {
	case errors.Is(err, errMoved):
		r.Metrics.ObserveBudgetWrite(WriterController, cause, WriteConflict)
		return nil, from, false, due, nil, err
	case err != nil:
		// The view shows what the ledger holds, and why nothing is admitted.
		b = live.DeepCopy()
		if from.rv != "" {
			b = working(ns, live, &from.l)
		}
		return b, from, polling, due, err, nil
	}
	r.Metrics.ObserveBudgetChanges(ChangeController, 1)
	return b, from, polling, due, nil, nil
}

// viewed sets b's conditions and observed generation and reports whether live's status shows b.
func viewed(live, b *videov1alpha1.VideoBudget, ledgerErr error) bool {
	setConditions(b, ledgerErr)
	b.Status.ObservedGeneration = b.Generation
	return equality.Semantic.DeepEqual(live.Status, b.Status)
}

// settleInterrupted settles b's reservations (settle) and reports whether a job's end is polled.
func (r *Reconciler) settleInterrupted(ctx context.Context, b *videov1alpha1.VideoBudget, now time.Time) (polling bool, err error) {
	var kept []videov1alpha1.BudgetReservation
	for _, res := range b.Status.Reservations {
		keep, poll, err := r.settle(ctx, b, &res, now)
		if err != nil {
			return false, err
		}
		if keep {
			kept = append(kept, res)
			polling = polling || poll
		}
	}
	b.Status.Reservations = kept
	return polling, nil
}

// settle decides one reservation: kept, and its job's end polled? Past the grace, one whose object
// is gone is charged (it may have been sent); one whose object shows no such attempt in flight and
// no job recorded since (then it was used) is released.
func (r *Reconciler) settle(ctx context.Context, b *videov1alpha1.VideoBudget, res *videov1alpha1.BudgetReservation,
	now time.Time) (keep, poll bool, err error) {
	log := logf.FromContext(ctx)
	young := now.Sub(res.ReservedAt.Time) < r.Grace
	obj := newHolder(res.Kind)
	// From the cache, late but never wrong, when young or running: no API read per reservation.
	reader := r.Reader
	if young || res.JobID != "" {
		reader = r.Client
	}
	gone, err := readHolder(ctx, reader, b.Namespace, *res, obj)
	if err != nil {
		return false, false, err
	}
	if res.JobID != "" {
		if gone {
			// Deleted without its charge finalizer, once the API server confirms: its end is read here.
			obj = obj.DeepCopyObject().(client.Object)
			if gone, err = readHolder(ctx, r.Reader, b.Namespace, *res, obj); err != nil {
				return false, false, err
			}
		}
		switch {
		case !gone && videov1alpha1.JobStatusOf(obj).JobID == res.JobID && !abandoned(obj):
			// Running. Its render's key now: a rotation may delete the submission's Secret.
			res.APIKeySecretRef = keyRefOf(obj)
			fillEstimate(res, obj)
			return true, false, nil
		case !gone && young:
			// Ended and moved on: folded once its end is foldAge old (foldRecorded).
			return true, false, nil
		case charged(b, res.JobID):
			log.V(1).Info("Ending the reservation of a job whose end was charged", "kind", res.Kind, "name", res.Name, "jobID", res.JobID)
			return false, false, nil
		}
		held := r.heldForEnd(ctx, b, *res, now)
		return held, held, nil
	}
	which := []any{"kind", res.Kind, "name", res.Name, "attempt", res.AttemptID}
	if !gone {
		st := videov1alpha1.JobStatusOf(obj)
		// Young (written ahead for its call: grant.go), in flight, or recorded a job (folded later).
		if young || (st.Submission != nil && st.Submission.AttemptID == res.AttemptID) || recordedSince(st, *res) {
			return true, false, nil
		}
		log.V(1).Info("Releasing the reservation of an attempt that was never sent", which...)
		return false, false, nil
	}
	last, deleted := r.unsent.get(res.UID)
	switch {
	case recordGone(b, res, last):
		return true, false, nil // its job, named by its last state (objectGone), is read next
	case deleted && last.inFlight != res.AttemptID && (last.recorded.IsZero() || !recordedFor(*res, last.recorded)):
		// However young: an in-flight record written before the deletion is in its last state,
		// and one written after failed, so nothing was sent (a reservation written ahead for a
		// render deleted before it came back to pay).
		log.V(1).Info("Releasing the reservation of a deleted object whose last state shows it never sent", which...)
		return false, false, nil
	case young:
		return true, false, nil
	case (res.Unbounded || res.AICredits) && r.JobDeadline > 0 && now.Sub(res.ReservedAt.Time) < r.JobDeadline:
		// Deleted, its finalizer stripped, while no manager ran, maybe after recording a job: a
		// render that runs alone may still run. Held until the job deadline.
		log.V(1).Info("Holding the room of a deleted object that may have a running job", which...)
		return true, true, nil
	}
	log.Info("Charging the reservation of a deleted object: it may have been submitted", which...)
	chargeReserved(b, *res)
	return false, false, nil
}

// abandoned reports whether obj is being deleted without the charge finalizer (a preview carries
// none; another finalizer may keep it long): its controller reads its job no more.
func abandoned(obj client.Object) bool {
	return obj.GetDeletionTimestamp() != nil && !slices.Contains(obj.GetFinalizers(), videov1alpha1.FinalizerCharge)
}

// chargeReserved counts res as used with its estimate, in the period it was reserved in.
func chargeReserved(b *videov1alpha1.VideoBudget, res videov1alpha1.BudgetReservation) {
	countUsed(b, res, res.ReservedAt.Time)
	addUsageAt(b, estimateUsage(res), res.ReservedAt.Time)
}

// fillEstimate gives a render's reservation made by an older manager (no estimate) its render's
// (bound.Render); one with an estimate takes the flags its render recorded with its job.
func fillEstimate(res *videov1alpha1.BudgetReservation, obj client.Object) {
	vr, ok := obj.(*videov1alpha1.VideoRender)
	if !ok {
		return
	}
	if res.EstimatedSeconds > 0 {
		if r := vr.Status.BudgetEstimate; r != nil && res.JobID != "" && res.JobID == vr.Status.JobID {
			res.AICredits = res.AICredits || r.AICredits
			res.Unbounded = res.Unbounded || r.Unbounded
			res.UnreportedCredits = res.UnreportedCredits || r.UnreportedCredits
		}
		return
	}
	est := bound.Render(vr)
	res.EstimatedSeconds, res.AICredits, res.Unbounded, res.UnreportedCredits = est.Seconds, est.Credits, est.Unbounded, est.Unreported
}

// estimateUsage is what a reservation's estimate charges when the job's end will not be read.
func estimateUsage(res videov1alpha1.BudgetReservation) videov1alpha1.BudgetUsage {
	u := videov1alpha1.BudgetUsage{RenderSeconds: res.EstimatedSeconds}
	if res.UnreportedCredits {
		u.UnreportedCreditRenders = 1
	}
	return u
}

// newHolder is an empty object of a reservation's kind.
func newHolder(kind string) client.Object {
	if kind == kindStoryboard {
		return &videov1alpha1.VideoStoryboard{}
	}
	return &videov1alpha1.VideoRender{}
}

// readHolder reads the object that holds res into obj, and reports whether it is gone (absent,
// another of that name, or an unreadable running job's line: v1alpha1.UnreadableRunningJob).
func readHolder(ctx context.Context, r client.Reader, ns string, res videov1alpha1.BudgetReservation, obj client.Object) (bool, error) {
	if res.Name == "" || res.Name == videov1alpha1.UnreadableRunningJob {
		return true, nil
	}
	err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: res.Name}, obj)
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("reading %s %s/%s of a budget reservation: %w", res.Kind, ns, res.Name, err)
	}
	return err != nil || string(obj.GetUID()) != res.UID, nil
}

// heldForEnd reads the end of a running job whose render will not charge it (gone, moved on) and
// charges it, or reports that it is held (running, or unreadable yet). Past the job deadline, or
// for a job the service forgot, the estimate is charged.
func (r *Reconciler) heldForEnd(ctx context.Context, b *videov1alpha1.VideoBudget, res videov1alpha1.BudgetReservation,
	now time.Time) bool {
	log := logf.FromContext(ctx).WithValues("kind", res.Kind, "name", res.Name, "jobID", res.JobID)
	pastDeadline := r.JobDeadline > 0 && now.Sub(res.ReservedAt.Time) > r.JobDeadline
	why := "nothing reads the service here"
	if r.Jobs != nil {
		if last, ok := r.goneReads.Load(res.JobID); ok && now.Sub(last.(time.Time)) < r.JobPoll && !pastDeadline {
			return true
		}
		r.goneReads.Store(res.JobID, now)
		end, err := r.Jobs.JobEnd(ctx, b.Namespace, res.APIKeySecretRef, res.JobID)
		switch {
		case err != nil && pastDeadline:
			why = "past the job deadline, its end cannot be read: " + err.Error()
		case err != nil:
			log.Info("Holding the reservation of a job whose render is gone: its end cannot be read yet", "error", err.Error())
			return true
		case end.Unknown && (pastDeadline || r.JobDeadline == 0):
			why = "the service does not know it"
		case end.Unknown:
			// Not an end: the key may be another account's now (docs/backup-restore.md).
			log.Info("Holding the reservation of a job whose render is gone: the service does not know it to this key",
				"deadline", r.JobDeadline)
			return true
		case end.Running && pastDeadline:
			why = "past the job deadline"
		case end.Running:
			return true
		default:
			if res.Kind == kindStoryboard {
				end.Seconds = 0 // a preview is counted, not timed
			}
			log.Info("Charging the job of a gone object from its end", "renderSeconds", end.Seconds)
			r.goneReads.Delete(res.JobID)
			// A failed job is charged nothing, unreported credits included, as its render would.
			chargeJobAt(b, res.JobID, end.Seconds, end.Credits, res.UnreportedCredits && end.Completed, time.Time{})
			return false
		}
	}
	log.Info("Charging the estimate of a job whose end will not be read", "reason", why, "estimatedSeconds", res.EstimatedSeconds)
	r.goneReads.Delete(res.JobID)
	chargeJobAt(b, res.JobID, res.EstimatedSeconds, nil, res.UnreportedCredits, time.Time{})
	return false
}

// failedJob reports whether st recorded res's job as failed, its end read (not given up).
func failedJob(st *videov1alpha1.JobStatus, res videov1alpha1.BudgetReservation) bool {
	return st.JobID == res.JobID && st.CompletedAt != nil && st.Failure != nil && !givenUp(st.Failure.Code)
}

// givenUp reports the controller's failure codes of jobs whose end was never read.
func givenUp(code string) bool {
	return code == "JOB_DEADLINE_EXCEEDED" || code == "JOB_NOT_FOUND"
}

// recordedFor reports whether a job recorded at t may have been paid with res (to the second:
// status times have no finer precision).
func recordedFor(res videov1alpha1.BudgetReservation, t time.Time) bool {
	return !t.Before(res.ReservedAt.Truncate(time.Second))
}

// recordedSince reports whether the object recorded a job submitted since res was made, with no
// submission in flight (until the in-flight record shows, a job of the same second passes): used.
func recordedSince(st *videov1alpha1.JobStatus, res videov1alpha1.BudgetReservation) bool {
	return st.Submission == nil && st.JobID != "" && st.SubmittedAt != nil && recordedFor(res, st.SubmittedAt.Time)
}

// setConditions sets Ready (False while the ledger cannot be written), Exhausted (naming the limits
// reached) and CreditsUnaccounted (only while there are some).
func setConditions(b *videov1alpha1.VideoBudget, ledgerErr error) {
	st := &b.Status
	resets := ""
	if st.PeriodEnd != nil {
		resets = st.PeriodEnd.UTC().Format(time.RFC3339)
	}
	ready := metav1.Condition{Type: string(videov1alpha1.ConditionReady), Status: metav1.ConditionTrue,
		Reason: string(videov1alpha1.ReasonBudgetActive), ObservedGeneration: b.Generation,
		Message: fmt.Sprintf("Enforced for the %s period that resets at %s", st.Period, resets)}
	if ledgerErr != nil {
		ready.Status, ready.Reason = metav1.ConditionFalse, string(videov1alpha1.ReasonLedgerUnavailable)
		ready.Message = ledgerMessage(ledgerErr)
	}
	meta.SetStatusCondition(&st.Conditions, ready)
	c := metav1.Condition{Type: string(videov1alpha1.ConditionExhausted), Status: metav1.ConditionFalse,
		Reason: string(videov1alpha1.ReasonWithinBudget), Message: "No limit is reached", ObservedGeneration: b.Generation}
	if reached := reachedLimits(b); len(reached) > 0 {
		msgs := make([]string, 0, len(reached))
		for _, l := range reached {
			msgs = append(msgs, l.conditionMessage(b))
		}
		c.Status, c.Reason = metav1.ConditionTrue, string(reached[0].reason)
		c.Message = fmt.Sprintf("%s; new submissions of the limited kinds wait until the period resets at %s or the budget is raised",
			strings.Join(msgs, "; "), resets)
	}
	meta.SetStatusCondition(&st.Conditions, c)
	n := st.Used.UnreportedCreditRenders
	if n == 0 {
		meta.RemoveStatusCondition(&st.Conditions, string(videov1alpha1.ConditionCreditsUnaccounted))
		return
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: string(videov1alpha1.ConditionCreditsUnaccounted), Status: metav1.ConditionTrue,
		Reason: string(videov1alpha1.ReasonUnreportedCredits), ObservedGeneration: b.Generation,
		Message: fmt.Sprintf("%d render(s) of this period showed an AI avatar or animated slides with a veo model (pptSlideAnimation), which consume AI credits "+
			"that job answers do not report; used.aiCredits and maxAICredits do not include them: see the account's AI-credit ledger", n),
	})
}

// SetupWithManager registers the VideoBudget controller (its own writes end: it writes only changes).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&videov1alpha1.VideoBudget{}).
		// The guard's wake-ups: a failing ledger, and due changes or ledger copies.
		WatchesRawSource(r.Ledgers.Source()).
		Watches(&videov1alpha1.VideoRender{}, handler.Funcs{
			UpdateFunc: r.recorded,
			DeleteFunc: r.deleted,
		}).
		Watches(&videov1alpha1.VideoStoryboard{}, handler.Funcs{UpdateFunc: r.recorded, DeleteFunc: r.deleted}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Named("videobudget").
		Complete(r)
}

// recorded wakes the budget of an object that recorded a fact to fold (a job, its end, its
// deletion) once foldAge old: a budget write that comes sooner carries it.
func (r *Reconciler) recorded(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	was, now := videov1alpha1.JobStatusOf(e.ObjectOld), videov1alpha1.JobStatusOf(e.ObjectNew)
	if was == nil || now == nil {
		return
	}
	after := foldAge
	switch {
	case e.ObjectNew.GetDeletionTimestamp() != nil && e.ObjectOld.GetDeletionTimestamp() == nil:
		// Its finalizer waits for the fold of an end that may be old already.
		after = 0
	case (now.JobID == "" || now.JobID == was.JobID) && (now.CompletedAt == nil || was.CompletedAt != nil):
		return
	}
	var b videov1alpha1.VideoBudget
	if readBudget(ctx, r.Client, e.ObjectNew.GetNamespace(), &b) != nil {
		return
	}
	q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: b.Name}}, after)
}

// deleted hands a deleted render's or preview's last state to objectGone.
func (r *Reconciler) deleted(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	r.objectGone(e.Object, e.DeleteStateUnknown)
}

// objectGone keeps a deleted object's last state (unknown: an older copy, which tells nothing): it
// alone names a job deleted before its fold, and shows which attempts were never sent (the
// in-flight record precedes the paid call).
func (r *Reconciler) objectGone(obj client.Object, unknown bool) {
	st := videov1alpha1.JobStatusOf(obj)
	if st == nil || unknown || r.Guard == nil {
		return
	}
	ns := obj.GetNamespace()
	if !r.Guard.budgeted(context.Background(), ns) {
		// Without a VideoBudget, only while its ledger holds the limits of one deleted this period.
		if held, _, err := r.Ledgers.holds(context.Background(), r.Reader, ns, r.Clock.Now()); err != nil || !held {
			return
		}
	}
	last := goneState{at: r.Clock.Now()}
	if st.Submission != nil {
		last.inFlight = st.Submission.AttemptID
	}
	if st.JobID != "" && st.SubmittedAt != nil {
		last.jobID, last.recorded = st.JobID, st.SubmittedAt.Time
	}
	r.unsent.add(obj.GetUID(), last, max(r.JobDeadline, time.Hour))
	if last.jobID != "" {
		// Named only in this process's memory: written into the reservation at once.
		uid := string(obj.GetUID())
		r.Guard.mutateThen(ns, ChangeFold, func(b *videov1alpha1.VideoBudget) bool {
			i := slices.IndexFunc(b.Status.Reservations, func(res videov1alpha1.BudgetReservation) bool { return res.UID == uid })
			return i >= 0 && recordGone(b, &b.Status.Reservations[i], last)
		}, nil, 0)
	}
}

// recordGone gives res, a reservation of b whose object is gone, the job the object's last state
// names, if res paid for it: it is counted as used, and the job's end is read next.
func recordGone(b *videov1alpha1.VideoBudget, res *videov1alpha1.BudgetReservation, last goneState) bool {
	if last.jobID == "" || last.inFlight != "" || res.JobID != "" || !recordedFor(*res, last.recorded) || known(b, last.jobID) {
		return false
	}
	countUsed(b, *res, last.recorded)
	res.JobID = last.jobID
	return true
}

// goneState is a deleted render's last state: its attempt in flight, its last job and when it
// was recorded, and when the render was deleted.
type goneState struct {
	inFlight, jobID string
	recorded, at    time.Time
}

// unsentAttempts keeps the last states of deleted renders, by uid, for keep.
type unsentAttempts struct {
	mu    sync.Mutex
	m     map[types.UID]goneState
	swept time.Time
}

func (u *unsentAttempts) add(uid types.UID, s goneState, keep time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if s.at.Sub(u.swept) > time.Minute {
		// Swept at most once a minute: a burst of deletions costs one pass.
		u.swept = s.at
		for id, old := range u.m {
			if s.at.Sub(old.at) > keep {
				delete(u.m, id)
			}
		}
	}
	u.m[uid] = s
}

// get is the last state of the deleted render uid, if one was seen.
func (u *unsentAttempts) get(uid string) (goneState, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	s, ok := u.m[types.UID(uid)]
	return s, ok
}
