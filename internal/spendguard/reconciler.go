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

// Reconciler is the VideoBudget controller: it rolls the period over, folds the facts no guard
// write carried, settles or releases the reservations whose submission was interrupted (see
// guard.go), and sets the conditions and the budget metrics.
type Reconciler struct {
	ReconcilerOptions
	metrics Observer
	writes  WriteObserver
	// goneReads is when each running job of a gone render was last read, so that a busy budget
	// reads each at most once per JobPoll.
	goneReads sync.Map
	// unsent are the last states of deleted renders (renderGone).
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
	r := &Reconciler{ReconcilerOptions: o, metrics: noObserver{}, writes: noWrites{}, started: o.Clock.Now()}
	if o.Metrics != nil {
		r.metrics = o.Metrics
	}
	if r.Ledgers == nil {
		r.Ledgers = NewLedgers("")
	}
	r.JobPoll = cmp.Or(o.JobPoll, DefaultJobPoll)
	if wo, ok := r.metrics.(WriteObserver); ok {
		// One observer counts every budget write, the guard's too.
		r.writes = wo
		if o.Guard != nil {
			o.Guard.observeWrites(wo)
		}
	}
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
	// The reservations written ahead that are due and no write carried yet.
	if r.Guard != nil {
		r.Guard.flushDue(ctx, req.Namespace)
	}
	b := &videov1alpha1.VideoBudget{}
	if err := r.Client.Get(ctx, req.NamespacedName, b); err == nil {
		expandRunning(b)
	} else {
		if apierrors.IsNotFound(err) {
			r.metrics.ForgetBudget(req.Namespace)
			// A copy held back after a failed write goes to the ledger now.
			r.Ledgers.forgetFree(req.Namespace)
			return ctrl.Result{}, r.Ledgers.keepAhead(ctx, r.Client, r.Reader, req.Namespace)
		}
		return ctrl.Result{}, fmt.Errorf("getting VideoBudget %s: %w", req.NamespacedName, err)
	}
	if req.Name != videov1alpha1.VideoBudgetName {
		// Admission refuses other names; an object created before the rule is ignored.
		return ctrl.Result{}, nil
	}
	base := b.DeepCopy()
	now := r.Clock.Now()
	// Fail closed: a ledger that cannot be written is tried again at each look, once the budget
	// has taken it over (before, the ledger holds what the budget must merge).
	ledgerErr := r.Ledgers.failure(b.Namespace)
	if ledgerErr != nil && b.UID != "" && b.Status.LedgerBudgetUID == string(b.UID) {
		ledgerErr = r.Ledgers.write(ctx, r.Client, base)
	}
	RollPeriod(b, now)
	adopted, err := adoptLedger(ctx, r.Client, r.Reader, r.Ledgers, b, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := countRunning(ctx, r.Client, b, startedUnless(adopted, r.started)); err != nil {
		return ctrl.Result{}, err
	}
	// What the objects recorded and no guard write carried within foldAge (fold.go).
	_, due, err := foldRecorded(ctx, r.Client, b, now, foldAge)
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
		err := patchBudgetStatus(ctx, r.Client, b, base)
		switch {
		case err == nil:
			r.writes.ObserveBudgetWrite(WriterController, cause, WriteWritten)
			r.writes.ObserveBudgetChanges(ChangeController, 1)
			r.Guard.wrote(base.ResourceVersion, b)
		case apierrors.IsConflict(err):
			r.writes.ObserveBudgetWrite(WriterController, cause, WriteConflict)
		}
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// A reconciler reserved or charged meanwhile: decide again on the new status.
			return ctrl.Result{RequeueAfter: r.Retry}, nil
		}
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("writing the status of VideoBudget %s: %w", req.NamespacedName, err)
		}
		if adopted || ledgerChanged(base, b) {
			if err := r.Ledgers.write(ctx, r.Client, b); err != nil {
				// Admissions stop from now on, and the status says so at once.
				ledgerErr = err
				r.sayLedgerFails(ctx, b, err)
			}
		}
	}
	// Observed whatever happens to the ledger below: a failing ledger must not hide the budget
	// from monitoring.
	r.metrics.ObserveBudget(b)
	// The migration: a ledger an older manager kept in the namespace itself is written here.
	if err := r.Ledgers.ensure(ctx, r.Client, r.Reader, b); err != nil {
		ledgerErr = err
	}
	after := r.Recheck
	if ledgerErr != nil {
		logf.FromContext(ctx).Info("The budget's ledger cannot be written: nothing is paid in the namespace until it can",
			"namespace", b.Namespace, "error", ledgerErr.Error())
		after = min(after, ledgerRetry)
	}
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

// settleInterrupted looks at the reservations older than the grace period, and at running jobs'
// of gone renders: one whose object is gone is charged (it may have been submitted), one whose
// object shows no submission of that attempt and no job since is released, one still in flight
// (or SubmissionUnknown) is kept.
func (r *Reconciler) settleInterrupted(ctx context.Context, b *videov1alpha1.VideoBudget, now time.Time) (polling bool, err error) {
	log := logf.FromContext(ctx)
	var kept []videov1alpha1.BudgetReservation
	for _, res := range b.Status.Reservations {
		young := now.Sub(res.ReservedAt.Time) < r.Grace
		var obj client.Object = &videov1alpha1.VideoRender{}
		if res.Kind == kindStoryboard {
			obj = &videov1alpha1.VideoStoryboard{}
		}
		// Young reservations and running jobs' are read from the cache, which may be late but
		// never wrong about them: a busy budget costs no API read per reservation. Only a render
		// the cache shows gone is read again from the API server.
		reader := r.Reader
		if young || res.JobID != "" {
			reader = r.Client
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
			// Gone without its charge finalizer (deleted before its record, or stripped): its
			// job's end is read here, once the API server confirms it is gone.
			fresh := obj.DeepCopyObject().(client.Object)
			err := getHolder(ctx, r.Reader, b.Namespace, res, fresh)
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
			// A running job's: its end charges it; one gone or moved on is read at the service.
			st := videov1alpha1.JobStatusOf(obj)
			if !gone && st.JobID == res.JobID {
				// The key the render uses now: a rotation may delete the submission's Secret.
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
		if gone && r.Guard.forgetUnsent(res.UID, res.AttemptID) {
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
		if gone && (res.Unbounded || res.AICredits) && r.JobDeadline > 0 && now.Sub(res.ReservedAt.Time) < r.JobDeadline {
			// Deleted, its finalizer stripped, while this manager was down, perhaps with a job no
			// write folded: a render that runs alone may still run, so its room is held until
			// the job deadline, then charged below.
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
		case r.Guard.granted(res.UID, res.AttemptID):
			// Written ahead for a render that waits for its key's call budget (grant.go).
			kept = append(kept, res)
		default:
			log.V(1).Info("Releasing the reservation of an attempt that was never sent", "kind", res.Kind, "name", res.Name, "attempt", res.AttemptID)
		}
	}
	b.Status.Reservations = kept
	return polling, nil
}

// fillEstimate gives a reservation made by an older manager (no estimate: every estimate is at
// least one second) its render's estimate, so that its flags hold, and one with an estimate the
// flags its render recorded with its job (an older reservation lacks unreportedCredits).
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

// getHolder reads the object that holds res; an unreadable runningJobs line names none and is
// read as gone.
func getHolder(ctx context.Context, r client.Reader, ns string, res videov1alpha1.BudgetReservation, obj client.Object) error {
	if res.Name == "" || res.Name == videov1alpha1.UnreadableRunningJob {
		return apierrors.NewNotFound(videov1alpha1.GroupVersion.WithResource("videorenders").GroupResource(), "")
	}
	return r.Get(ctx, types.NamespacedName{Namespace: ns, Name: res.Name}, obj)
}

// heldForEnd reads, with the key its reservation recorded, the end of a running job whose render
// will not charge it (gone, or moved on), and charges it. It reports whether the reservation is
// held: the job runs, or its end cannot be read yet. Past the job deadline, or for a job the
// service no longer knows, the estimate is charged, as the render controller does.
func (r *Reconciler) heldForEnd(ctx context.Context, b *videov1alpha1.VideoBudget, res videov1alpha1.BudgetReservation, now time.Time) bool {
	log := logf.FromContext(ctx).WithValues("kind", res.Kind, "name", res.Name, "jobID", res.JobID)
	estimate := func(why string) bool {
		log.Info("Charging the estimate of a job whose end will not be read", "reason", why, "estimatedSeconds", res.EstimatedSeconds)
		r.goneReads.Delete(res.JobID)
		chargeJobAt(b, res.JobID, res.EstimatedSeconds, nil, res.UnreportedCredits, time.Time{})
		return false
	}
	if r.Jobs == nil {
		return estimate("nothing reads the service here")
	}
	pastDeadline := r.JobDeadline > 0 && now.Sub(res.ReservedAt.Time) > r.JobDeadline
	if last, ok := r.goneReads.Load(res.JobID); ok && now.Sub(last.(time.Time)) < r.JobPoll && !pastDeadline {
		return true
	}
	r.goneReads.Store(res.JobID, now)
	end, err := r.Jobs.JobEnd(ctx, b.Namespace, res.APIKeySecretRef, res.JobID)
	switch {
	case err != nil && pastDeadline:
		return estimate("past the job deadline, its end cannot be read: " + err.Error())
	case err != nil:
		log.Info("Holding the reservation of a job whose render is gone: its end cannot be read yet", "error", err.Error())
		return true
	case end.Unknown && (pastDeadline || r.JobDeadline == 0):
		return estimate("the service does not know it")
	case end.Unknown:
		// Not an end: the key may now be another account's (docs/backup-restore.md).
		log.Info("Holding the reservation of a job whose render is gone: the service does not know it to this key", "deadline", r.JobDeadline)
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

// failedJob reports whether st recorded res's job as failed with its end read (not given up).
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
	if perr := patchBudgetStatus(ctx, r.Client, b, base); perr == nil {
		r.writes.ObserveBudgetWrite(WriterController, CauseConditions, WriteWritten)
		r.Guard.wrote(base.ResourceVersion, b)
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

// setUnaccounted says what maxAICredits cannot see: credits the period's renders consumed that
// their job answers do not report.
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
		// The spend guard's wake-ups: a failing ledger, changes due (never written by a timer).
		WatchesRawSource(source.Channel(r.Ledgers.Wake(), &handler.EnqueueRequestForObject{})).
		// The facts objects record, and a render's last state on its delete event.
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
	if readBudget(ctx, r.Client, e.ObjectNew.GetNamespace(), &b) != nil {
		return
	}
	q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: b.Name}}, after)
}

// renderGone keeps a deleted render's last state (not when unknown: an older copy tells nothing
// for certain). A render deleted after it recorded its job but before a fold leaves a
// reservation naming no job: only this state tells the job, whose end settleInterrupted then
// reads; it also tells which reservations were never sent, to release.
func (r *Reconciler) renderGone(obj client.Object, unknown bool) {
	st := videov1alpha1.JobStatusOf(obj)
	if st == nil || unknown || r.Guard == nil || !r.Guard.budgeted(context.Background(), obj.GetNamespace()) {
		return
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
		// The job is named only in memory: look at once, to write it into the reservation.
		r.Ledgers.wakeUp(obj.GetNamespace())
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
