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
	"math"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// The spend guard: before a paid submission, the controller reserves room in the namespace's
// VideoBudget (named "default"; without one the namespace is not limited).
//
// Durable state lives only in the VideoBudget's status, written with an optimistic lock
// (a merge patch with the resourceVersion as precondition). A conflict means the budget changed
// since it was read: it is read again from the API server and the decision is taken again, so
// concurrent submissions of one namespace never overrun maxRenders or maxPreviews.
//
// Order of writes for one submission (DESIGN.md "Never pay twice" extended):
//  1. reservation {uid, attempt} in the budget (it counts against the count limits at once);
//  2. the object's in-flight record (submit.go, writeInFlight);
//  3. the paid call and the object's job-id write;
//  4. settle: the reservation becomes usage (used.renders or used.previews).
//
// A crash between 1 and 2 leaves a reservation without a submission: it is held (the safe side)
// and released by the VideoBudget controller once it is older than the submission budget and a
// fresh read of the object shows no submission of that attempt and no job submitted since; a new
// attempt of the same object replaces it. A crash between 3 and 4 leaves a reservation whose
// object has a job: the VideoBudget controller turns it into usage. A reservation whose object
// was deleted is charged: it may have been submitted.
//
// Seconds and credits are known only when a render completes. They are charged into the budget,
// keyed by job id, before the render's own completion is written: a crash between the two makes
// the next reconcile read the job again and charge it again, which status.chargedJobs (the most
// recent job ids of the period) turns into a no-op. Usage is never given back: deleting a
// VideoRender leaves the budget as it is.

// +kubebuilder:rbac:groups=video.videoops.io,resources=videobudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=video.videoops.io,resources=videobudgets/status,verbs=get;update;patch

// maxReservations and maxChargedJobs are the bounds of the budget's status lists.
const (
	maxReservations = 1000
	maxChargedJobs  = 256
	// budgetWriteTries bounds the re-reads after conflicts of one budget write.
	budgetWriteTries = 8
)

// spendGuard reads and writes the namespaces' VideoBudgets for both reconcilers.
type spendGuard struct {
	client client.Client
	// reader reads the budget from the API server after a conflict: the cache may be behind.
	reader client.Reader
	clock  clock.Clock
	// writers takes this process's writes of one budget in turn, each from the budget as the
	// previous one left it.
	writers budgetWriters
}

// errBudgetBusy is returned when a budget write kept conflicting: the caller tries again later.
var errBudgetBusy = errors.New("the VideoBudget kept changing during the write; trying again")

// mutateBudget applies change to the namespace's budget and writes its status with an
// optimistic lock, reading it again and re-deciding after each conflict. change returns false
// when there is nothing to write; it is not called when the namespace has no VideoBudget.
//
// This process's writes of one budget take turns, each starting from the budget as the previous
// one left it: the cache sees a write only later, and a decision taken on it would lose its lock
// (a quarter of the budget writes did, at 10,000 renders). The lock still guards every write
// against changes made elsewhere, and a decision to write nothing is not taken on this
// process's own copy alone: it may be behind a raised limit.
func (g *spendGuard) mutateBudget(ctx context.Context, ns string, change func(b *videov1alpha1.VideoBudget) bool) error {
	slot, err := g.writers.acquire(ctx, ns)
	if err != nil {
		return err
	}
	defer g.writers.release(slot)
	var reader client.Reader = g.client
	for range budgetWriteTries {
		b, own := slot.latest, true
		slot.latest = nil
		if b == nil {
			own = false
			b = &videov1alpha1.VideoBudget{}
			if err := reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: videov1alpha1.VideoBudgetName}, b); err != nil {
				if apierrors.IsNotFound(err) {
					return nil
				}
				return fmt.Errorf("reading VideoBudget %s/%s: %w", ns, videov1alpha1.VideoBudgetName, err)
			}
		}
		base := b.DeepCopy()
		rollPeriod(b, g.clock.Now())
		if !change(b) {
			if own {
				continue // decided again on the cache's copy
			}
			return nil
		}
		recountReserved(b)
		err := g.client.Status().Patch(ctx, b, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		switch {
		case err == nil:
			// b is the API server's answer: the budget as this write left it.
			b.SetManagedFields(nil)
			slot.latest = b
			return nil
		case apierrors.IsConflict(err):
			reader = g.reader
			continue
		case apierrors.IsNotFound(err):
			return nil
		default:
			return fmt.Errorf("writing VideoBudget %s/%s: %w", ns, videov1alpha1.VideoBudgetName, err)
		}
	}
	return errBudgetBusy
}

// maxBudgetSlots bounds how many namespaces' budgets budgetWriters keeps a copy of; a namespace
// whose copy was dropped reads its budget from the cache again.
const maxBudgetSlots = 256

// budgetWriters queues this process's writes of each namespace's budget, and keeps the budget as
// the last of them left it.
type budgetWriters struct {
	mu    sync.Mutex
	slots map[string]*budgetSlot
}

type budgetSlot struct {
	ns string
	// turn is held by the write in progress; a channel, so a cancelled context stops waiting.
	turn chan struct{}
	// latest is the budget as this process's last write left it, or nil (then read it).
	latest *videov1alpha1.VideoBudget
	// users are the writes holding or waiting for the turn: a slot in use is never dropped.
	users int
}

func (w *budgetWriters) acquire(ctx context.Context, ns string) (*budgetSlot, error) {
	w.mu.Lock()
	if w.slots == nil {
		w.slots = map[string]*budgetSlot{}
	}
	s, ok := w.slots[ns]
	if !ok {
		w.dropIdleLocked()
		s = &budgetSlot{ns: ns, turn: make(chan struct{}, 1)}
		w.slots[ns] = s
	}
	s.users++
	w.mu.Unlock()
	// A turn that does not come within a status write's time is a busy budget, as a lock lost
	// budgetWriteTries times is: the caller tries again later instead of holding its worker.
	wait := time.NewTimer(WriteTimeout)
	defer wait.Stop()
	var err error
	select {
	case s.turn <- struct{}{}:
		return s, nil
	case <-wait.C:
		err = errBudgetBusy
	case <-ctx.Done():
		err = fmt.Errorf("waiting to write VideoBudget %s/%s: %w", ns, videov1alpha1.VideoBudgetName, ctx.Err())
	}
	w.mu.Lock()
	s.users--
	w.mu.Unlock()
	return nil, err
}

func (w *budgetWriters) release(s *budgetSlot) {
	<-s.turn
	w.mu.Lock()
	s.users--
	w.mu.Unlock()
}

// dropIdleLocked makes room for one more slot by dropping idle ones.
func (w *budgetWriters) dropIdleLocked() {
	for ns, s := range w.slots {
		if len(w.slots) < maxBudgetSlots {
			return
		}
		if s.users == 0 {
			delete(w.slots, ns)
		}
	}
}

// budgetDecision is the outcome of a reservation: room was reserved (or there is no budget), or
// the object waits.
type budgetDecision struct {
	wait    bool
	limit   videov1alpha1.BudgetLimit
	message string
	resetAt time.Time
}

// reserve holds room for attempt of obj (kind VideoRender or VideoStoryboard). A reservation the
// object already holds is replaced when its attempt did not reach the service (its in-flight
// write failed), so a retried attempt never takes room twice; one that sent reports (an attempt
// the object records as in flight or unknown, or whose job it recorded since) is counted as used:
// a resubmission confirmed after an unknown outcome may pay twice, and the budget says so.
func (g *spendGuard) reserve(ctx context.Context, kind string, obj client.Object, attempt string, sent func(videov1alpha1.BudgetReservation) bool) (budgetDecision, error) {
	var d budgetDecision
	err := g.mutateBudget(ctx, obj.GetNamespace(), func(b *videov1alpha1.VideoBudget) bool {
		d = budgetDecision{}
		kept := b.Status.Reservations[:0:0]
		for _, r := range b.Status.Reservations {
			switch {
			case r.UID != string(obj.GetUID()):
				kept = append(kept, r)
			case sent != nil && sent(r):
				countUsed(b, r)
			}
		}
		b.Status.Reservations = kept
		recountReserved(b)
		if limit, msg, reached := exhausted(b, kind); reached {
			d = budgetDecision{wait: true, limit: limit, message: msg}
			if b.Status.PeriodEnd != nil {
				d.resetAt = b.Status.PeriodEnd.Time
			}
			// Nothing is written: the reservation this object may hold stays until it is
			// released (the budget controller checks it against the object).
			return false
		}
		if len(b.Status.Reservations) >= maxReservations {
			d = budgetDecision{wait: true, message: fmt.Sprintf(
				"%d submissions of this namespace are in flight, the most the VideoBudget tracks; waiting for some to be recorded", maxReservations)}
			return false
		}
		b.Status.Reservations = append(b.Status.Reservations, videov1alpha1.BudgetReservation{
			Kind: kind, Name: obj.GetName(), UID: string(obj.GetUID()), AttemptID: attempt,
			ReservedAt: metav1.NewTime(g.clock.Now()),
		})
		return true
	})
	return d, err
}

// settle turns the reservation of attempt into usage: the attempt's job id is recorded. It is a
// no-op when the reservation is gone (the budget controller settled it already).
func (g *spendGuard) settle(ctx context.Context, ns string, uid types.UID, attempt string) error {
	err := g.mutateBudget(ctx, ns, func(b *videov1alpha1.VideoBudget) bool {
		return takeReservation(b, string(uid), attempt, true)
	})
	return err
}

// release gives back the reservation of an attempt that certainly created no job.
func (g *spendGuard) release(ctx context.Context, ns string, uid types.UID, attempt string) error {
	err := g.mutateBudget(ctx, ns, func(b *videov1alpha1.VideoBudget) bool {
		return takeReservation(b, string(uid), attempt, false)
	})
	return err
}

// countUsed counts the submission a reservation stood for as used: a preview or a render.
func countUsed(b *videov1alpha1.VideoBudget, r videov1alpha1.BudgetReservation) {
	if r.Kind == kindStoryboard {
		b.Status.Used.Previews++
	} else {
		b.Status.Used.Renders++
	}
}

// takeReservation removes the reservation of uid and attempt, counting it as used when charge is
// set. It reports whether there was one.
func takeReservation(b *videov1alpha1.VideoBudget, uid, attempt string, charge bool) bool {
	for i, r := range b.Status.Reservations {
		if r.UID != uid || r.AttemptID != attempt {
			continue
		}
		b.Status.Reservations = append(b.Status.Reservations[:i:i], b.Status.Reservations[i+1:]...)
		if charge {
			countUsed(b, r)
		}
		return true
	}
	return false
}

// charge adds a completed render's seconds and credits to the budget, once per job id.
func (g *spendGuard) charge(ctx context.Context, ns, jobID string, secs int64, credits *resource.Quantity) error {
	if secs <= 0 && (credits == nil || credits.IsZero()) {
		return nil
	}
	err := g.mutateBudget(ctx, ns, func(b *videov1alpha1.VideoBudget) bool {
		for _, id := range b.Status.ChargedJobs {
			if id == jobID {
				return false
			}
		}
		b.Status.Used.RenderSeconds += secs
		if credits != nil && !credits.IsZero() {
			sum := credits.DeepCopy()
			if b.Status.Used.AICredits != nil {
				sum.Add(*b.Status.Used.AICredits)
			}
			b.Status.Used.AICredits = &sum
		}
		b.Status.ChargedJobs = append(b.Status.ChargedJobs, jobID)
		if n := len(b.Status.ChargedJobs); n > maxChargedJobs {
			b.Status.ChargedJobs = append([]string(nil), b.Status.ChargedJobs[n-maxChargedJobs:]...)
		}
		return true
	})
	return err
}

// indexBudgetWaiting indexes the objects that wait for budget, so a change of their namespace's
// VideoBudget wakes exactly them.
const indexBudgetWaiting = ".status.budgetWaiting"

func indexWaitingForBudget(ctx context.Context, mgr ctrl.Manager) error {
	for _, obj := range []client.Object{&videov1alpha1.VideoStoryboard{}, &videov1alpha1.VideoRender{}} {
		if err := mgr.GetFieldIndexer().IndexField(ctx, obj, indexBudgetWaiting, func(o client.Object) []string {
			if st := jobStatusOf(o); st != nil && budgetWaits(st) {
				return []string{"true"}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("indexing objects waiting for budget: %w", err)
		}
	}
	return nil
}

// waitingForBudget maps a VideoBudget event to the objects of its namespace that wait for
// budget: a raised limit or a new period may let them submit.
func (l *lifecycle[T]) waitingForBudget(list client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, b client.Object) []ctrl.Request {
		return listRequests(ctx, l.client, list.DeepCopyObject().(client.ObjectList),
			client.InNamespace(b.GetNamespace()), client.MatchingFields{indexBudgetWaiting: "true"})
	}
}

// budgetRecheck is how often a VideoBudget is looked at besides its changes and its period
// end: it bounds how late interrupted reservations are settled.
func budgetRecheck(pollMax time.Duration) time.Duration { return 10 * pollMax }

// Kinds as reservations name them.
const (
	kindRender     = "VideoRender"
	kindStoryboard = "VideoStoryboard"
)

// periodBounds returns the UTC period of kind p that contains now.
func periodBounds(p videov1alpha1.BudgetPeriod, now time.Time) (start, end time.Time) {
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	switch p {
	case videov1alpha1.BudgetPeriodDaily:
		return day, day.AddDate(0, 0, 1)
	case videov1alpha1.BudgetPeriodWeekly:
		// Weeks start on Monday (ISO 8601).
		start := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
		return start, start.AddDate(0, 0, 7)
	default:
		start := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	}
}

// periodOf is spec.period with its default.
func periodOf(b *videov1alpha1.VideoBudget) videov1alpha1.BudgetPeriod {
	if b.Spec.Period == "" {
		return videov1alpha1.BudgetPeriodMonthly
	}
	return b.Spec.Period
}

// rollPeriod brings the budget's status to the period that contains now: at a boundary, usage
// starts again from zero (reservations stay: their submissions are still in flight, and count in
// the period their job is recorded in). A change of spec.period takes effect at once with the new
// bounds, keeping the usage so far: changing the period is no way to reset it.
func rollPeriod(b *videov1alpha1.VideoBudget, now time.Time) {
	p := periodOf(b)
	st := &b.Status
	if st.PeriodEnd != nil && st.PeriodStart != nil && st.Period == p && now.Before(st.PeriodEnd.Time) {
		return
	}
	start, end := periodBounds(p, now)
	if st.PeriodEnd != nil && !now.Before(st.PeriodEnd.Time) {
		st.Used = videov1alpha1.BudgetUsage{}
		st.ChargedJobs = nil
	}
	st.Period = p
	st.PeriodStart = &metav1.Time{Time: start}
	st.PeriodEnd = &metav1.Time{Time: end}
}

// recountReserved keeps status.reserved equal to the reservations.
func recountReserved(b *videov1alpha1.VideoBudget) {
	var r videov1alpha1.BudgetReserved
	for _, res := range b.Status.Reservations {
		if res.Kind == kindStoryboard {
			r.Previews++
		} else {
			r.Renders++
		}
	}
	b.Status.Reserved = r
}

// exhausted reports the first limit that leaves no room for one more submission of kind, with a
// message naming it and its usage. Count limits include the reservations in flight.
func exhausted(b *videov1alpha1.VideoBudget, kind string) (videov1alpha1.BudgetLimit, string, bool) {
	for _, l := range reachedLimits(b) {
		if (l.limit == videov1alpha1.BudgetLimitPreviews) == (kind == kindStoryboard) {
			return l.limit, l.message, true
		}
	}
	return "", "", false
}

// reachedLimit is one limit with no room left.
type reachedLimit struct {
	limit   videov1alpha1.BudgetLimit
	reason  videov1alpha1.ConditionReason
	message string
}

// reachedLimits lists the limits with no room left, renders first.
func reachedLimits(b *videov1alpha1.VideoBudget) []reachedLimit {
	s, st := &b.Spec, &b.Status
	var out []reachedLimit
	if s.MaxRenders != nil && st.Used.Renders+st.Reserved.Renders >= *s.MaxRenders {
		out = append(out, reachedLimit{videov1alpha1.BudgetLimitRenders, videov1alpha1.ReasonMaxRendersReached,
			fmt.Sprintf("maxRenders reached: %d of %d renders used (%d of them in flight)",
				st.Used.Renders+st.Reserved.Renders, *s.MaxRenders, st.Reserved.Renders)})
	}
	if s.MaxRenderSeconds != nil && st.Used.RenderSeconds >= *s.MaxRenderSeconds {
		out = append(out, reachedLimit{videov1alpha1.BudgetLimitRenderSeconds, videov1alpha1.ReasonMaxRenderSecondsReached,
			fmt.Sprintf("maxRenderSeconds reached: %d of %d seconds of video used", st.Used.RenderSeconds, *s.MaxRenderSeconds)})
	}
	if s.MaxAICredits != nil {
		used := resource.Quantity{}
		if st.Used.AICredits != nil {
			used = *st.Used.AICredits
		}
		if used.Cmp(*s.MaxAICredits) >= 0 {
			out = append(out, reachedLimit{videov1alpha1.BudgetLimitAICredits, videov1alpha1.ReasonMaxAICreditsReached,
				fmt.Sprintf("maxAICredits reached: %s of %s AI credits used", used.String(), s.MaxAICredits.String())})
		}
	}
	if s.MaxPreviews != nil && st.Used.Previews+st.Reserved.Previews >= *s.MaxPreviews {
		out = append(out, reachedLimit{videov1alpha1.BudgetLimitPreviews, videov1alpha1.ReasonMaxPreviewsReached,
			fmt.Sprintf("maxPreviews reached: %d of %d previews used (%d of them in flight)",
				st.Used.Previews+st.Reserved.Previews, *s.MaxPreviews, st.Reserved.Previews)})
	}
	return out
}

// budgetWaits reports whether the object waits for budget: Stalled with reason BudgetExhausted,
// or Reconciling with it as written by managers before Stalled was used (issue 24).
func budgetWaits(st *videov1alpha1.JobStatus) bool {
	for _, t := range []videov1alpha1.ConditionType{videov1alpha1.ConditionStalled, videov1alpha1.ConditionReconciling} {
		if c := condition(st, t); c != nil && c.Status == metav1.ConditionTrue && c.Reason == string(videov1alpha1.ReasonBudgetExhausted) {
			return true
		}
	}
	return false
}

// reserveBudget is the spend guard's step of submit: it reserves room for attempt, or makes the
// object wait (Stalled, BudgetExhausted, with a Warning event once). Stalled, not Reconciling:
// only the next period or a person raising the limit moves it on, which may take a month, and
// GitOps tools must not show it progressing meanwhile; it still submits by itself then. wait is true when the
// caller must return res and err.
func (l *lifecycle[T]) reserveBudget(ctx context.Context, tx *statusTxn[T], attempt string) (res ctrl.Result, wait bool, err error) {
	if l.guard == nil {
		return ctrl.Result{}, false, nil
	}
	obj := tx.obj
	// What the server held when this reconcile began: a confirmed resubmission clears the unknown
	// attempt from obj, not from base.
	sent := func(r videov1alpha1.BudgetReservation) bool {
		for _, st := range []*videov1alpha1.JobStatus{l.adapter.jobStatus(tx.base), l.adapter.jobStatus(obj)} {
			if st.Submission != nil && st.Submission.AttemptID == r.AttemptID {
				return true
			}
			if st.JobID != "" && st.SubmittedAt != nil && !st.SubmittedAt.Before(&r.ReservedAt) {
				return true
			}
		}
		return false
	}
	d, err := l.guard.reserve(ctx, l.adapter.kind(), obj, attempt, sent)
	if errors.Is(err, errBudgetBusy) {
		return ctrl.Result{RequeueAfter: l.backoff.short()}, true, nil
	}
	if err != nil {
		return ctrl.Result{}, true, err
	}
	if !d.wait {
		return ctrl.Result{}, false, nil
	}
	st := l.adapter.jobStatus(obj)
	msg := fmt.Sprintf("Not submitted: VideoBudget %q of namespace %q has no room: %s", videov1alpha1.VideoBudgetName, obj.GetNamespace(), d.message)
	if !d.resetAt.IsZero() {
		msg += fmt.Sprintf(". Submits by itself when the period resets at %s or when the budget is raised",
			d.resetAt.UTC().Format(time.RFC3339))
	}
	if !isStalledWith(st, videov1alpha1.ReasonBudgetExhausted) {
		tx.after(func() {
			l.opts.Recorder.Eventf(obj, nil, "Warning", string(videov1alpha1.ReasonBudgetExhausted), "Submit", "%s", msg)
		})
	}
	if st.JobID == "" || st.CompletedAt != nil {
		st.Phase = videov1alpha1.PhasePending
	}
	setOutcome(st, obj.GetGeneration(), outcomeStalled, videov1alpha1.ReasonBudgetExhausted, msg)
	// The watch on VideoBudgets wakes the object when the budget is raised or its period rolls
	// over. The requeue covers a budget change that raced this object's own wait write (the index
	// of waiting objects did not list it yet): a look from the cache, which writes nothing while
	// the budget is unchanged.
	after := budgetRecheck(l.opts.PollMax)
	if !d.resetAt.IsZero() {
		after = min(after, max(d.resetAt.Sub(l.opts.Clock.Now()), l.backoff.unit()))
	}
	return ctrl.Result{RequeueAfter: l.backoff.pollDelay(after, after+after/4)}, true, nil
}

// settleBudget turns the reservation of an attempt whose job id was written into usage. A
// failure is only logged: the VideoBudget controller settles what is left.
func (l *lifecycle[T]) settleBudget(ctx context.Context, obj T, attempt string) {
	if l.guard == nil {
		return
	}
	if err := l.guard.settle(ctx, obj.GetNamespace(), obj.GetUID(), attempt); err != nil {
		logf.FromContext(ctx).Info("Settling the budget reservation failed; the VideoBudget controller settles it", "attempt", attempt, "error", err.Error())
	}
}

// releaseBudget gives back the reservation of an attempt that certainly created no job.
func (l *lifecycle[T]) releaseBudget(ctx context.Context, obj T, attempt string) {
	if l.guard == nil {
		return
	}
	if err := l.guard.release(ctx, obj.GetNamespace(), obj.GetUID(), attempt); err != nil {
		logf.FromContext(ctx).Info("Releasing the budget reservation failed; the VideoBudget controller releases it", "attempt", attempt, "error", err.Error())
	}
}

// chargeCompletion charges a completed render's seconds and credits into the budget before its
// completion is written. When the charge cannot be written, the reconcile's decisions are
// discarded (the completion is not written either) and the job is read again later.
func (l *lifecycle[T]) chargeCompletion(ctx context.Context, tx *statusTxn[T], job *apiclient.Job) error {
	if l.guard == nil || l.adapter.kind() != kindRender || !job.Status().IsCompleted() {
		return nil
	}
	secs := int64(0)
	if f, ok := job.Data.VideoDuration.Float64(); ok && f > 0 && f < maxSeconds {
		secs = int64(math.Ceil(f))
	}
	var credits *resource.Quantity
	if q, err := resource.ParseQuantity(decimal(job.Data.AICreditsUsed)); err == nil && q.Sign() > 0 {
		credits = &q
	}
	jobID := l.adapter.jobStatus(tx.obj).JobID
	if err := l.guard.charge(ctx, tx.obj.GetNamespace(), jobID, secs, credits); err != nil {
		tx.abort()
		return fmt.Errorf("charging job %s to the namespace's VideoBudget: %w", jobID, err)
	}
	return nil
}
