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
	"fmt"
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
	"sigs.k8s.io/controller-runtime/pkg/source"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Reconciler keeps a VideoBudget's status current: it rolls the period over at its UTC
// boundary, settles or releases the reservations whose submission was interrupted (see
// guard.go), sets the Ready and Exhausted conditions and the budget metrics. The reserving
// and charging themselves happen in the VideoRender and VideoStoryboard reconcilers, under the
// same optimistic lock.
type Reconciler struct {
	client client.Client
	// reader reads the objects of interrupted reservations from the API server, uncached.
	reader  client.Reader
	clock   clock.PassiveClock
	metrics Observer
	// retry is how soon a budget whose write conflicted is looked at again.
	retry time.Duration
	// grace is how old a reservation must be before it is checked against its object: by then
	// its in-flight write and paid call have certainly ended (the submission budget).
	grace time.Duration
	// recheck bounds the time between two looks at a budget, so a period boundary is seen even
	// when the clock is moved (tests inject one).
	recheck time.Duration
	// ledgers are the namespaces' ledgers in the manager's namespace.
	ledgers *Ledgers
	// guard is this process's spend guard: the reservations it wrote ahead for renders still
	// waiting for their call budget are not released (nil: none).
	guard *Guard
	// writes counts the budget writes, the guard's and this reconciler's.
	writes WriteObserver
	// jobs reads the ends of running jobs whose render is gone; jobDeadline bounds how long one
	// whose end cannot be read is held.
	jobs        JobEnds
	jobDeadline time.Duration
	// goneReads is when each such job (by id) was last read, so that a busy budget, looked at on
	// each of its writes, reads each at most once per jobPoll.
	goneReads sync.Map
	jobPoll   time.Duration
	// unsent are the attempts of deleted renders whose last state (their delete event) shows
	// them never sent (renderGone).
	unsent unsentAttempts
	// started is when this process started (countRunning).
	started time.Time
}

// Observer receives each budget's state after a reconcile (the budget metrics), and the
// namespaces whose budget is gone.
type Observer interface {
	ObserveBudget(b *videov1alpha1.VideoBudget)
	ForgetBudget(namespace string)
}

// ReconcilerOptions configure the VideoBudget reconciler.
type ReconcilerOptions struct {
	// Client reads budgets and objects from the cache and writes budgets.
	Client client.Client
	// Reader reads the objects of interrupted reservations from the API server, uncached.
	Reader client.Reader
	Clock  clock.PassiveClock
	// Metrics may be nil.
	Metrics Observer
	// Grace is how old a reservation must be before it is checked against its object: longer
	// than a submission's in-flight write, paid call and job-id write together.
	Grace time.Duration
	// Recheck bounds the time between two looks at a budget.
	Recheck time.Duration
	// Retry is how soon a budget whose status write conflicted is looked at again.
	Retry time.Duration
	// Ledgers are the namespaces' ledgers (shared with the Guard); nil keeps them in
	// DefaultLedgerNamespace.
	Ledgers *Ledgers
	// Guard is this process's spend guard, whose reservations written ahead are kept (may be nil).
	Guard *Guard
	// Jobs reads the end of a running job whose render is gone; nil charges such a job its
	// reservation's estimate at once.
	Jobs JobEnds
	// JobDeadline bounds how long the reservation of such a job is held while its end cannot be
	// read (its key gone or refused, the service failing); zero holds it until it can.
	JobDeadline time.Duration
	// JobPoll is how often such a job is read; zero is DefaultJobPoll.
	JobPoll time.Duration
}

// DefaultJobPoll is how often, by default, the end of a running job whose render is gone is read.
const DefaultJobPoll = 30 * time.Second

// JobEnds reads a job at the service for the VideoBudget controller, with the API key a
// reservation recorded (ref nil: the default Secret).
type JobEnds interface {
	JobEnd(ctx context.Context, namespace string, ref *videov1alpha1.SecretKeyRef, jobID string) (JobEnd, error)
}

// JobEnd is what the service says of a job: running, unknown to it, or ended (Completed, or
// failed), with what it cost (nothing for a failed job).
type JobEnd struct {
	Running   bool
	Completed bool
	// Unknown is set when the service no longer knows the job: its end will never be read.
	Unknown bool
	Seconds int64
	Credits *resource.Quantity
}

// NewReconciler returns the VideoBudget reconciler.
func NewReconciler(o ReconcilerOptions) *Reconciler {
	var m Observer = noObserver{}
	if o.Metrics != nil {
		m = o.Metrics
	}
	ledgers := o.Ledgers
	if ledgers == nil {
		ledgers = NewLedgers("")
	}
	var w WriteObserver = noWrites{}
	if wo, ok := m.(WriteObserver); ok {
		// One observer counts every budget write, the guard's too, so that the writes of a
		// render are seen side by side.
		w = wo
		if o.Guard != nil {
			o.Guard.observeWrites(wo)
		}
	}
	return &Reconciler{client: o.Client, reader: o.Reader, clock: o.Clock, metrics: m,
		grace: o.Grace, recheck: o.Recheck, retry: o.Retry, ledgers: ledgers, guard: o.Guard, writes: w,
		jobs: o.Jobs, jobDeadline: o.JobDeadline, jobPoll: cmp.Or(o.JobPoll, DefaultJobPoll), started: o.Clock.Now()}
}

// The causes of the VideoBudget controller's writes.
const (
	CausePeriod       = "period"
	CauseLedger       = "ledger"
	CauseReservations = "reservations"
	CauseConditions   = "conditions"
	CauseOther        = "other"
)

// controllerCause names what the controller's write of b (read as base) is for, the first that
// applies: a new period, the ledger's takeover, settled reservations, conditions.
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

type noObserver struct{}

func (noObserver) ObserveBudget(*videov1alpha1.VideoBudget) {}
func (noObserver) ForgetBudget(string)                      {}

// Reconcile is the whole reconcile of one VideoBudget.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// What the spend guard queued for this budget and is due now: the reservations written
	// ahead that no write carried yet.
	if r.guard != nil {
		r.guard.flushDue(ctx, req.Namespace)
	}
	b := &videov1alpha1.VideoBudget{}
	if err := r.client.Get(ctx, req.NamespacedName, b); err == nil {
		expandRunning(b)
	} else {
		if apierrors.IsNotFound(err) {
			r.metrics.ForgetBudget(req.Namespace)
			// A deleted budget's last usage held back after a failed write goes to the ledger now,
			// and the namespace's ledger is read again before its next paid submission.
			r.ledgers.forgetFree(req.Namespace)
			return ctrl.Result{}, r.ledgers.keepAhead(ctx, r.client, r.reader, req.Namespace)
		}
		return ctrl.Result{}, fmt.Errorf("getting VideoBudget %s: %w", req.NamespacedName, err)
	}
	if req.Name != videov1alpha1.VideoBudgetName {
		// Admission refuses other names; an object created before the rule is ignored.
		return ctrl.Result{}, nil
	}
	base := b.DeepCopy()
	now := r.clock.Now()
	// A namespace whose ledger cannot be written admits nothing (fail closed): the ledger is
	// tried again at each look, the budget as read, once the budget has taken it over (before
	// that, the ledger holds what the budget must merge).
	ledgerErr := r.ledgers.failure(b.Namespace)
	if ledgerErr != nil && b.UID != "" && b.Status.LedgerBudgetUID == string(b.UID) {
		ledgerErr = r.ledgers.write(ctx, r.client, base)
	}
	RollPeriod(b, now)
	adopted, err := adoptLedger(ctx, r.client, r.reader, r.ledgers, b, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := countRunning(ctx, r.client, b, startedUnless(adopted, r.started)); err != nil {
		return ctrl.Result{}, err
	}
	// What the objects recorded and no guard write carried within foldAge (fold.go).
	_, due, err := foldRecorded(ctx, r.client, b, now, foldAge)
	if err != nil {
		return ctrl.Result{}, err
	}
	polling, err := r.settleInterrupted(ctx, b, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	recountReserved(b)
	r.setConditions(b, ledgerErr)
	b.Status.ObservedGeneration = b.Generation

	if !equality.Semantic.DeepEqual(base.Status, b.Status) {
		cause := controllerCause(base, b, adopted)
		err := patchBudgetStatus(ctx, r.client, b, base)
		switch {
		case err == nil:
			r.writes.ObserveBudgetWrite(WriterController, cause, WriteWritten)
			r.writes.ObserveBudgetChanges(ChangeController, 1)
			r.guard.wrote(base.ResourceVersion, b)
		case apierrors.IsConflict(err):
			r.writes.ObserveBudgetWrite(WriterController, cause, WriteConflict)
		}
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// A reconciler reserved or charged meanwhile: decide again on the new status.
			return ctrl.Result{RequeueAfter: r.retry}, nil
		}
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("writing the status of VideoBudget %s: %w", req.NamespacedName, err)
		}
		if adopted || ledgerChanged(base, b) {
			if err := r.ledgers.write(ctx, r.client, b); err != nil {
				// Recorded by the ledgers: admissions stop from now on, and the status says so at
				// once (a second write), not at the next look.
				ledgerErr = err
				r.sayLedgerFails(ctx, b, err)
			}
		}
	}
	// The metrics follow the written status, whatever happens to the ledger below: a ledger that
	// cannot be written (the manager's namespace missing) is retried, and must not hide the
	// budget from monitoring meanwhile.
	r.metrics.ObserveBudget(b)
	// A budget that took over under an older manager has its ledger in the namespace itself:
	// written in the manager's namespace at this first look (the migration).
	if err := r.ledgers.ensure(ctx, r.client, r.reader, b); err != nil {
		ledgerErr = err
	}
	after := r.recheck
	if ledgerErr != nil {
		logf.FromContext(ctx).Info("The budget's ledger cannot be written: nothing is paid in the namespace until it can",
			"namespace", b.Namespace, "error", ledgerErr.Error())
		after = min(after, ledgerRetry)
	}
	if end := b.Status.PeriodEnd; end != nil {
		after = min(after, max(end.Sub(now), time.Millisecond))
	}
	if polling {
		after = min(after, r.jobPoll)
	}
	if !due.IsZero() {
		after = min(after, max(due.Sub(now), time.Millisecond))
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// settleInterrupted looks at the reservations: one whose object recorded a job since it was
// reserved becomes usage at once (the object's own settle may have lost to a busy budget); of
// the others, only those older than the grace period are looked at further: one whose object is gone is charged (it
// may have been submitted: the safe side); one whose object shows no submission of that attempt
// and no job since is released. A reservation whose attempt is still in flight (or stalled as
// SubmissionUnknown) is kept.
func (r *Reconciler) settleInterrupted(ctx context.Context, b *videov1alpha1.VideoBudget, now time.Time) (polling bool, err error) {
	log := logf.FromContext(ctx)
	var kept []videov1alpha1.BudgetReservation
	for _, res := range b.Status.Reservations {
		young := now.Sub(res.ReservedAt.Time) < r.grace
		var obj client.Object = &videov1alpha1.VideoRender{}
		if res.Kind == kindStoryboard {
			obj = &videov1alpha1.VideoStoryboard{}
		}
		// A young reservation is only settled early on a job the object recorded, which the cache
		// may show late but never wrongly: it is read from the cache, so that a busy budget, whose
		// every write brings a reconcile, costs no API read per reservation in flight. So is a
		// running job's, whatever its age: a render runs for minutes, and what the cache shows of
		// it (still running, ended, moved on to another job) is true, if late; only a render the
		// cache shows gone is read again from the API server below.
		reader := r.reader
		if young || res.JobID != "" {
			reader = r.client
		}
		err := getHolder(ctx, reader, b.Namespace, res, obj)
		if err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("reading %s %s/%s of a budget reservation: %w", res.Kind, b.Namespace, res.Name, err)
		}
		// A submission that may have been sent counts in the period it was reserved in, however
		// long its room was held.
		charge := func() {
			countUsed(b, res, res.ReservedAt.Time)
			addUsageAt(b, estimateUsage(res), res.ReservedAt.Time)
		}
		gone := apierrors.IsNotFound(err) || string(obj.GetUID()) != res.UID
		if res.JobID != "" && gone {
			// A render deleted before its charge finalizer was written with its record, or with the
			// finalizer stripped (the reservation stands for it): its job's end is read here, once
			// the API server confirms that the object is gone (the cache may lag).
			fresh := obj.DeepCopyObject().(client.Object)
			err := getHolder(ctx, r.reader, b.Namespace, res, fresh)
			if err != nil && !apierrors.IsNotFound(err) {
				return false, fmt.Errorf("reading %s %s/%s of a budget reservation: %w", res.Kind, b.Namespace, res.Name, err)
			}
			if apierrors.IsNotFound(err) || string(fresh.GetUID()) != res.UID {
				young = false
			} else {
				obj, gone = fresh, false
			}
		}
		if res.JobID != "" {
			// A running job's reservation: its end charges it. One whose end will never be read
			// here (the object is gone without its finalizer, or moved on without charging it)
			// is charged its estimate.
			st := videov1alpha1.JobStatusOf(obj)
			if !gone && st.JobID == res.JobID {
				// The key its render reads the job with now: a rotation may delete the Secret the
				// submission used, and the job's end is read with this one once the render is gone.
				res.APIKeySecretRef = keyRefOf(obj)
				fillEstimate(&res, obj)
			}
			switch {
			case !gone && st.JobID == res.JobID, young:
				// Running, or ended and folded once its end is foldAge old (foldRecorded).
				kept = append(kept, res)
			case charged(b, res.JobID):
				log.V(1).Info("Ending the reservation of a job whose end was charged", "kind", res.Kind, "name", res.Name, "jobID", res.JobID)
			case r.heldForEnd(ctx, b, res, now):
				kept = append(kept, res)
				polling = true
			}
			continue
		}
		if gone && r.guard.forgetUnsent(res.UID, res.AttemptID) {
			// Written ahead for a render deleted before it came back to pay (grant.go).
			log.V(1).Info("Releasing the reservation written ahead for a deleted object that never paid", "kind", res.Kind, "name", res.Name, "attempt", res.AttemptID)
			continue
		}
		if gone {
			if jobID, at := r.unsent.recordedJob(res); jobID != "" && !known(b, jobID) {
				// Deleted after it recorded the job this reservation paid for, before a write
				// folded it: only its last state names the job, whose end is read next.
				countUsed(b, res, at)
				res.JobID = jobID
				kept = append(kept, res)
				continue
			}
		}
		if young {
			// Still within its submission's time: a recorded job is folded (foldRecorded).
			kept = append(kept, res)
			continue
		}
		if gone && r.unsent.neverSent(res) {
			log.V(1).Info("Releasing the reservation of a deleted object whose last state shows it never sent", "kind", res.Kind, "name", res.Name, "attempt", res.AttemptID)
			continue
		}
		if gone && (res.Unbounded || res.AICredits) && r.jobDeadline > 0 && now.Sub(res.ReservedAt.Time) < r.jobDeadline {
			// Deleted, its finalizer stripped, while this manager was down, perhaps after it recorded
			// a job no write folded: no job id tells whose end to read, and a render that
			// runs alone may still run. Its room is held until the job deadline, as a running
			// job's whose end cannot be read, then charged below.
			log.V(1).Info("Holding the room of a deleted object that may have a running job", "kind", res.Kind, "name", res.Name, "attempt", res.AttemptID)
			kept = append(kept, res)
			polling = true
			continue
		}
		if gone {
			log.Info("Charging the reservation of a deleted object: it may have been submitted", "kind", res.Kind, "name", res.Name, "attempt", res.AttemptID)
			charge()
			continue
		}
		st := videov1alpha1.JobStatusOf(obj)
		switch {
		case st.Submission != nil && st.Submission.AttemptID == res.AttemptID:
			kept = append(kept, res)
		case recordedSince(st, res):
			// Folded once its record is foldAge old (foldRecorded).
			kept = append(kept, res)
		case r.guard.granted(res.UID, res.AttemptID):
			// Written ahead for a render that waits for its key's call budget (grant.go).
			kept = append(kept, res)
		default:
			log.V(1).Info("Releasing the reservation of an attempt that was never sent", "kind", res.Kind, "name", res.Name, "attempt", res.AttemptID)
		}
	}
	b.Status.Reservations = kept
	return polling, nil
}

// fillEstimate gives a render's reservation made by an older manager (no estimate: every
// estimate is at least one second) the estimate its render recorded, or one from its spec
// (EstimateRender), so that its flags hold: an unbounded or credit-consuming render runs alone.
//
// A reservation with an estimate takes the flags its render recorded with its job too: one
// written before the reservation kept a flag (unreportedCredits) lacks it.
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
	est := EstimateRender(vr)
	res.EstimatedSeconds, res.AICredits, res.Unbounded, res.UnreportedCredits = est.Seconds, est.Credits, est.Unbounded, est.Unreported
}

// estimateUsage is what a reservation's estimate charges when the job's end will not be read:
// its seconds, and the render itself among those whose credits no answer reports.
func estimateUsage(res videov1alpha1.BudgetReservation) videov1alpha1.BudgetUsage {
	u := videov1alpha1.BudgetUsage{RenderSeconds: res.EstimatedSeconds}
	if res.UnreportedCredits {
		u.UnreportedCreditRenders = 1
	}
	return u
}

// getHolder reads the object that holds res. A line of status.runningJobs that could not be read
// names none (v1alpha1.UnreadableRunningJob): it is read as gone, and its job's end is read from
// the service.
func getHolder(ctx context.Context, r client.Reader, ns string, res videov1alpha1.BudgetReservation, obj client.Object) error {
	if res.Name == "" || res.Name == videov1alpha1.UnreadableRunningJob {
		return apierrors.NewNotFound(videov1alpha1.GroupVersion.WithResource("videorenders").GroupResource(), "")
	}
	return r.Get(ctx, types.NamespacedName{Namespace: ns, Name: res.Name}, obj)
}

// heldForEnd reads the end of a running job whose render will not charge it (the render is gone,
// even with its finalizer stripped, or moved on to another job) with the key its reservation
// recorded, and charges what the job cost. It reports whether the reservation must be held: the
// job still runs, or its end cannot be read yet. Past the job deadline, or for a job the service
// no longer knows, the end will never be read and the estimate is charged, as the render
// controller does for a job it gives up on.
func (r *Reconciler) heldForEnd(ctx context.Context, b *videov1alpha1.VideoBudget, res videov1alpha1.BudgetReservation, now time.Time) bool {
	log := logf.FromContext(ctx).WithValues("kind", res.Kind, "name", res.Name, "jobID", res.JobID)
	estimate := func(why string) bool {
		log.Info("Charging the estimate of a job whose end will not be read", "reason", why, "estimatedSeconds", res.EstimatedSeconds)
		r.goneReads.Delete(res.JobID)
		chargeJobAt(b, res.JobID, res.EstimatedSeconds, nil, res.UnreportedCredits, time.Time{})
		return false
	}
	if r.jobs == nil {
		return estimate("nothing reads the service here")
	}
	pastDeadline := r.jobDeadline > 0 && now.Sub(res.ReservedAt.Time) > r.jobDeadline
	if last, ok := r.goneReads.Load(res.JobID); ok && now.Sub(last.(time.Time)) < r.jobPoll && !pastDeadline {
		return true
	}
	r.goneReads.Store(res.JobID, now)
	end, err := r.jobs.JobEnd(ctx, b.Namespace, res.APIKeySecretRef, res.JobID)
	switch {
	case err != nil && pastDeadline:
		return estimate("past the job deadline, its end cannot be read: " + err.Error())
	case err != nil:
		log.Info("Holding the reservation of a job whose render is gone: its end cannot be read yet", "error", err.Error())
		return true
	case end.Unknown && (pastDeadline || r.jobDeadline == 0):
		return estimate("the service does not know it")
	case end.Unknown:
		// Not an end: the key read now may be another account's (the namespace's Secret
		// changed since the submission, docs/backup-restore.md), whose answer for a job that
		// still runs is the same. Held until the job deadline, then charged its estimate.
		log.Info("Holding the reservation of a job whose render is gone: the service does not know it to this key", "deadline", r.jobDeadline)
		return true
	case end.Running && pastDeadline:
		return estimate("past the job deadline")
	case end.Running:
		return true
	}
	log.Info("Charging the job of a gone render from its end", "renderSeconds", end.Seconds)
	r.goneReads.Delete(res.JobID)
	// A failed job is charged nothing, unreported credits included, as its render would.
	chargeJobAt(b, res.JobID, end.Seconds, end.Credits, res.UnreportedCredits && end.Completed, time.Time{})
	return false
}

// failedJob reports whether st recorded res's job as failed, its end read: a failed job is
// charged nothing (a job given up is not failed so: its end was never read, and its estimate is
// charged).
func failedJob(st *videov1alpha1.JobStatus, res videov1alpha1.BudgetReservation) bool {
	return st.JobID == res.JobID && st.CompletedAt != nil && st.Failure != nil && !givenUp(st.Failure.Code)
}

// givenUp reports the failure codes of jobs whose end was never read: the job deadline, or a job
// the service no longer knows (the controller's codes).
func givenUp(code string) bool {
	return code == "JOB_DEADLINE_EXCEEDED" || code == "JOB_NOT_FOUND"
}

// recordedFor reports whether a job recorded at t may have been paid with res: it was recorded
// no earlier than res was reserved (to the second: a status time has no finer precision).
func recordedFor(res videov1alpha1.BudgetReservation, t time.Time) bool {
	return !t.Before(res.ReservedAt.Truncate(time.Second))
}

// recordedSince reports whether the object recorded a job submitted since the reservation was
// made, and has no submission in flight: the reservation was used.
func recordedSince(st *videov1alpha1.JobStatus, res videov1alpha1.BudgetReservation) bool {
	return st.Submission == nil && st.JobID != "" && st.SubmittedAt != nil && recordedFor(res, st.SubmittedAt.Time)
}

// sayLedgerFails writes Ready False (LedgerUnavailable) over a status just written as Ready: the
// ledger write that follows a status write failed. A conflict leaves it to the next look.
func (r *Reconciler) sayLedgerFails(ctx context.Context, b *videov1alpha1.VideoBudget, err error) {
	base := b.DeepCopy()
	r.setConditions(b, err)
	if equality.Semantic.DeepEqual(base.Status, b.Status) {
		return
	}
	if perr := patchBudgetStatus(ctx, r.client, b, base); perr == nil {
		r.writes.ObserveBudgetWrite(WriterController, CauseConditions, WriteWritten)
		r.guard.wrote(base.ResourceVersion, b)
	}
}

// ledgerRetry is how soon a budget whose ledger could not be written is looked at again.
const ledgerRetry = 10 * time.Second

// setConditions sets Ready (the budget is enforced; False while its ledger cannot be written, and
// then nothing is paid) and Exhausted (naming the limits reached).
func (r *Reconciler) setConditions(b *videov1alpha1.VideoBudget, ledgerErr error) {
	st := &b.Status
	resets := ""
	if st.PeriodEnd != nil {
		resets = st.PeriodEnd.UTC().Format(time.RFC3339)
	}
	ready := metav1.Condition{
		Type: string(videov1alpha1.ConditionReady), Status: metav1.ConditionTrue, Reason: string(videov1alpha1.ReasonBudgetActive),
		Message:            fmt.Sprintf("Enforced for the %s period that resets at %s", st.Period, resets),
		ObservedGeneration: b.Generation,
	}
	if ledgerErr != nil {
		ready.Status, ready.Reason = metav1.ConditionFalse, string(videov1alpha1.ReasonLedgerUnavailable)
		ready.Message = ledgerMessage(ledgerErr)
	}
	meta.SetStatusCondition(&st.Conditions, ready)
	reached := reachedLimits(b)
	c := metav1.Condition{Type: string(videov1alpha1.ConditionExhausted), Status: metav1.ConditionFalse,
		Reason: string(videov1alpha1.ReasonWithinBudget), Message: "No limit is reached", ObservedGeneration: b.Generation}
	if len(reached) > 0 {
		msgs := make([]string, 0, len(reached))
		for _, l := range reached {
			msgs = append(msgs, l.conditionMessage(b))
		}
		c.Status, c.Reason = metav1.ConditionTrue, string(reached[0].reason)
		// At most four short sentences: far within a condition message's bound.
		c.Message = fmt.Sprintf("%s; new submissions of the limited kinds wait until the period resets at %s or the budget is raised",
			strings.Join(msgs, "; "), resets)
	}
	meta.SetStatusCondition(&st.Conditions, c)
	setUnaccounted(b)
}

// setUnaccounted says what maxAICredits cannot see: credits that renders of the period consumed
// but whose job answers do not report them. The condition is present only when there are some.
func setUnaccounted(b *videov1alpha1.VideoBudget) {
	n := b.Status.Used.UnreportedCreditRenders
	if n == 0 {
		meta.RemoveStatusCondition(&b.Status.Conditions, string(videov1alpha1.ConditionCreditsUnaccounted))
		return
	}
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{
		Type: string(videov1alpha1.ConditionCreditsUnaccounted), Status: metav1.ConditionTrue,
		Reason: string(videov1alpha1.ReasonUnreportedCredits), ObservedGeneration: b.Generation,
		Message: fmt.Sprintf("%d render(s) of this period showed an AI avatar or animated slides with a veo model (pptSlideAnimation), which consume AI credits "+
			"that job answers do not report; used.aiCredits and maxAICredits do not include them: see the account's AI-credit ledger", n),
	})
}

// SetupWithManager registers the VideoBudget controller. Every change of a budget is looked at:
// the reconcile writes only what changed, so its own writes end there.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&videov1alpha1.VideoBudget{}).
		// The spend guard's wake-ups: a ledger write that starts failing anywhere, and changes or
		// ledger copies that are due (written by this reconcile, never by a timer).
		WatchesRawSource(source.Channel(r.ledgers.Wake(), &handler.EnqueueRequestForObject{})).
		// A render's last state, on its delete event: the job a fold that did not come would have
		// named. A fact an object records (its job, its end) is folded by the namespace's next
		// budget write, or by this controller once it is foldAge old.
		Watches(&videov1alpha1.VideoRender{}, handler.Funcs{
			UpdateFunc: r.recorded,
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.renderGone(e.Object, e.DeleteStateUnknown)
			},
		}).
		Watches(&videov1alpha1.VideoStoryboard{}, handler.Funcs{UpdateFunc: r.recorded}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Named("videobudget").
		Complete(r)
}

// recorded wakes the budget of an object that recorded a fact to fold (a job, its end, or its
// deletion, which waits for its end's fold), once the fact is foldAge old: a budget write that
// comes sooner carries it. Namespaces without a budget are not woken.
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
	if readBudget(ctx, r.client, e.ObjectNew.GetNamespace(), &b) != nil {
		return
	}
	q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: b.Name}}, after)
}

// renderGone looks at a render's delete event, whose object is the render's last state (unknown:
// the informer missed the event and holds an older copy, which tells nothing for certain). A
// render deleted after it recorded its job but before a budget write folded it leaves a
// reservation that names no job, and only this last state tells which job it paid for:
// settleInterrupted settles the reservation to that job, whose end is then read and charged
// (heldForEnd). The last state also tells which of its reservations were never sent (the
// in-flight record precedes the paid call): settleInterrupted releases those. A render deleted
// while this manager was down is not seen here: settleInterrupted holds the room of one that runs
// alone instead.
func (r *Reconciler) renderGone(obj client.Object, unknown bool) {
	st := videov1alpha1.JobStatusOf(obj)
	if st == nil || unknown || r.guard == nil || !r.guard.budgeted(context.Background(), obj.GetNamespace()) {
		return
	}
	last := goneState{at: r.clock.Now()}
	if st.Submission != nil {
		last.inFlight = st.Submission.AttemptID
	}
	if st.JobID != "" && st.SubmittedAt != nil {
		last.jobID, last.recorded = st.JobID, st.SubmittedAt.Time
	}
	r.unsent.add(obj.GetUID(), last, max(r.jobDeadline, time.Hour))
	if last.jobID != "" {
		// The job is named only in this process's memory now: the budget's controller looks at
		// once, and writes it into the reservation.
		r.ledgers.wakeUp(obj.GetNamespace())
	}
}

// goneState is what a deleted render's last state showed of its submissions.
type goneState struct {
	// inFlight is the attempt its in-flight record held; jobID its last job, recorded at recorded.
	inFlight, jobID string
	recorded        time.Time
	at              time.Time
}

// neverSent reports whether the render's last state shows res's attempt never sent: not in
// flight, and no job recorded since res was reserved.
func (s goneState) neverSent(res videov1alpha1.BudgetReservation) bool {
	return s.inFlight != res.AttemptID && (s.recorded.IsZero() || !recordedFor(res, s.recorded))
}

// unsentAttempts keeps the last states of deleted renders for keep, until their reservations are
// looked at past the grace.
type unsentAttempts struct {
	mu    sync.Mutex
	m     map[types.UID]goneState
	swept time.Time
}

func (u *unsentAttempts) add(uid types.UID, s goneState, keep time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[types.UID]goneState{}
	}
	if s.at.Sub(u.swept) > time.Minute {
		// Swept at most once a minute: a burst of deletions costs one pass, not one per deletion.
		u.swept = s.at
		for id, old := range u.m {
			if s.at.Sub(old.at) > keep {
				delete(u.m, id)
			}
		}
	}
	u.m[uid] = s
}

// neverSent reports whether a deleted render's last state showed res never sent.
func (u *unsentAttempts) neverSent(res videov1alpha1.BudgetReservation) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	s, ok := u.m[types.UID(res.UID)]
	return ok && s.neverSent(res)
}

// recordedJob is the job a deleted render's last state recorded since res was reserved, with
// no submission in flight after it, and when it was recorded; empty when there is none.
func (u *unsentAttempts) recordedJob(res videov1alpha1.BudgetReservation) (string, time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	s, ok := u.m[types.UID(res.UID)]
	if !ok || s.jobID == "" || s.inFlight != "" || !recordedFor(res, s.recorded) {
		return "", time.Time{}
	}
	return s.jobID, s.recorded
}
