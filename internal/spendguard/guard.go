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
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The spend guard: before a paid submission, the controller reserves room in the namespace's
// VideoBudget (named "default"; without one the namespace is not limited).
//
// Durable state lives only in the VideoBudget's status, written with an optimistic lock
// (a merge patch with the resourceVersion as precondition). A conflict means the budget changed
// since it was read: it is read again from the API server and the decision is taken again, so
// concurrent submissions of one namespace never overrun maxRenders or maxPreviews.
//
// Order of writes for one submission (docs/architecture.md "Never pay twice", with the budget):
//  1. reservation {uid, attempt} in the budget (it counts against the count limits at once);
//  2. the object's in-flight record (submit.go, writeInFlight);
//  3. the paid call and the object's job-id write;
//  4. the next budget write folds the recorded job: the reservation becomes usage
//     (used.renders or used.previews; a render's stays, its running job's, fold.go).
//
// A crash between 1 and 2 leaves a reservation without a submission: it is held (the safe side)
// and released by the VideoBudget controller once it is older than the submission budget and a
// fresh read of the object shows no submission of that attempt and no job submitted since; a new
// attempt of the same object replaces it. A reservation whose object was deleted is charged: it
// may have been submitted.
//
// Seconds and credits are known only when a render completes. The render writes its end in its
// own status, and the next budget write folds it: the running job's reservation is posted for
// what the job cost (fold.go). Usage is never given back: deleting a VideoRender leaves the
// budget as it is.

// +kubebuilder:rbac:groups=video.videoops.io,resources=videobudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=video.videoops.io,resources=videobudgets/status,verbs=get;update;patch

// maxReservations and maxChargedJobs are the bounds of the budget's status lists. The charged
// job ids say whether a charge was made only where no pending reservation can (a preview's
// credits, a budget of an older manager): 64 keeps the budget,
// which every write of it sends whole to the API server and to every watcher, small (the API
// allows 256, as older managers kept).
const (
	maxReservations = 1000
	maxChargedJobs  = 64
	// WriteTries bounds the re-reads after conflicts of one budget write.
	WriteTries = 8
)

// Guard reads and writes the namespaces' VideoBudgets for both reconcilers.
type Guard struct {
	client client.Client
	// reader reads the budget from the API server after a conflict: the cache may be behind.
	reader client.Reader
	clock  clock.Clock
	// writers takes this process's writes of one budget in turn, each from the budget as the
	// previous one left it.
	writers budgetWriters
	// ledgers keep each namespace's usage, and a deleted budget's limits, in the manager's
	// namespace.
	ledgers *Ledgers
	// grants are the reservations written ahead for renders waiting for their key's call
	// budget (grant.go).
	grants grants
	// observer counts the budget writes; nil counts nothing.
	observer WriteObserver
	// started is when this process started (countRunning).
	started time.Time
}

// New returns the spend guard. c writes the budgets and reads them from its cache; reader reads
// them from the API server after a conflict; ledgers (shared with the VideoBudget reconciler)
// keep each namespace's ledger in the manager's namespace. writeTimeout is one status write's time: a write
// that does not get its turn at a budget within it returns ErrBusy instead of holding a worker.
func New(c client.Client, reader client.Reader, clk clock.Clock, writeTimeout time.Duration, ledgers *Ledgers) *Guard {
	if ledgers == nil {
		ledgers = NewLedgers("")
	}
	return &Guard{client: c, reader: reader, clock: clk, writers: budgetWriters{timeout: writeTimeout}, ledgers: ledgers, started: clk.Now()}
}

// startedUnless is started, or zero for a budget that took the namespace's ledger over just now
// (created again or restored: the ends since were folded into the budget it replaced).
func startedUnless(adopted bool, started time.Time) time.Time {
	if adopted {
		return time.Time{}
	}
	return started
}

// errNoBudget is mutateBudget's answer for a namespace without a VideoBudget.
var errNoBudget = errors.New("the namespace has no VideoBudget")

// ignoreNoBudget is nil for errNoBudget: writes of usage in a namespace without a budget are
// no-ops.
func ignoreNoBudget(err error) error {
	if errors.Is(err, errNoBudget) {
		return nil
	}
	return err
}

// ErrBusy is returned when a budget write kept conflicting: the caller tries again later.
var ErrBusy = errors.New("the VideoBudget kept changing during the write; trying again")

// maxBudgetSlots bounds how many namespaces' budgets budgetWriters keeps a copy of; a namespace
// whose copy was dropped reads its budget from the cache again.
const maxBudgetSlots = 256

// budgetWriters queues this process's writes of each namespace's budget, and keeps the budget as
// the last of them left it.
type budgetWriters struct {
	// timeout bounds the wait for a turn: a status write's time.
	timeout time.Duration
	mu      sync.Mutex
	slots   map[string]*budgetSlot
}

type budgetSlot struct {
	ns string
	// turn is held by the write in progress; a channel, so a cancelled context stops waiting.
	turn chan struct{}
	// latest is the budget as this process's last write left it, or nil (then read it).
	latest *videov1alpha1.VideoBudget
	// users are the writes holding or waiting for the turn: a slot in use, or with changes
	// queued, is never dropped.
	users int
	// queue are the changes waiting for the next write of the budget (guarded by
	// budgetWriters.mu): the group commit (batch.go).
	queue []*op
	// flushing is set while the queued changes that nobody waits for are due at flushAt (the
	// VideoBudget controller writes them then, flushDue).
	flushing bool
	flushAt  time.Time
}

func (w *budgetWriters) acquire(ctx context.Context, ns string) (*budgetSlot, error) {
	w.mu.Lock()
	s := w.slotLocked(ns)
	s.users++
	w.mu.Unlock()
	// A turn that does not come within a status write's time is a busy budget, as a lock lost
	// WriteTries times is: the caller tries again later instead of holding its worker.
	wait := time.NewTimer(w.timeout)
	defer wait.Stop()
	var err error
	select {
	case s.turn <- struct{}{}:
		return s, nil
	case <-wait.C:
		err = ErrBusy
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

// slotLocked is ns's slot, made when there is none.
func (w *budgetWriters) slotLocked(ns string) *budgetSlot {
	if w.slots == nil {
		w.slots = map[string]*budgetSlot{}
	}
	s, ok := w.slots[ns]
	if !ok {
		w.dropIdleLocked()
		s = &budgetSlot{ns: ns, turn: make(chan struct{}, 1)}
		w.slots[ns] = s
	}
	return s
}

// dropIdleLocked makes room for one more slot by dropping idle ones.
func (w *budgetWriters) dropIdleLocked() {
	for ns, s := range w.slots {
		if len(w.slots) < maxBudgetSlots {
			return
		}
		if s.users == 0 && len(s.queue) == 0 {
			// A slot with changes queued waits for the controller's write (flushDue).
			delete(w.slots, ns)
		}
	}
}

// Decision is the outcome of a reservation: room was reserved (or there is no budget), or
// the object waits.
type Decision struct {
	// Wait is set when the object must not submit now; Limit and Message say why.
	Wait    bool
	Limit   videov1alpha1.BudgetLimit
	Message string
	// ResetAt is the end of the period, when the limits reached make room again; zero when unknown.
	ResetAt time.Time
	// Budgeted is set when the namespace has a VideoBudget.
	Budgeted bool
}

// reserve holds room for attempt of obj (kind VideoRender or VideoStoryboard); digest is the
// approved preview it pays for (storyboardRef renders), recorded on the reservation. A reservation the
// object already holds is replaced when its attempt did not reach the service (its in-flight
// write failed), so a retried attempt never takes room twice; one that sent reports (an attempt
// the object records as in flight or unknown, or whose job it recorded since) is counted as used:
// a resubmission confirmed after an unknown outcome may pay twice, and the budget says so.
//
// est is the render's estimate (zero for a preview): its seconds count against maxRenderSeconds
// and, when it may consume AI credits, no other such render runs beside it while maxAICredits is
// set, so a burst goes at most one render beyond either limit.
func (g *Guard) reserve(ctx context.Context, kind string, obj client.Object, attempt, digest string, est Estimate,
	sent func(videov1alpha1.BudgetReservation) bool) (Decision, error) {
	var d Decision
	err := g.mutateBudget(ctx, obj.GetNamespace(), ChangeReserve, func(b *videov1alpha1.VideoBudget) bool {
		var write bool
		d, write = g.reserveChange(b, kind, obj, attempt, digest, est, sent)
		return write
	})
	if errors.Is(err, errNoBudget) {
		return g.withoutBudget(ctx, obj.GetNamespace())
	}
	return d, err
}

// reserveChange is a reservation's change of the budget and its decision.
func (g *Guard) reserveChange(b *videov1alpha1.VideoBudget, kind string, obj client.Object, attempt, digest string, est Estimate,
	sent func(videov1alpha1.BudgetReservation) bool) (Decision, bool) {
	d := Decision{Budgeted: true}
	kept := b.Status.Reservations[:0:0]
	for _, r := range b.Status.Reservations {
		switch {
		case r.UID != string(obj.GetUID()) || r.JobID != "":
			// Another object's, or a running job of this one, charged when it ends.
			kept = append(kept, r)
		case sent != nil && sent(r):
			countUsed(b, r, time.Time{})
			// An attempt that may have created a job whose end will never be read here:
			// its estimate stands for it.
			addUsage(b, estimateUsage(r))
		}
	}
	b.Status.Reservations = kept
	recountReserved(b)
	if err := g.ledgers.failure(b.Namespace); err != nil {
		return Decision{Wait: true, Budgeted: true, Message: ledgerMessage(err)}, false
	}
	if limit, msg, reached := exhausted(b, kind, est); reached {
		d = Decision{Wait: true, Limit: limit, Message: msg}
		if b.Status.PeriodEnd != nil {
			d.ResetAt = b.Status.PeriodEnd.Time
		}
		// Nothing is written: the reservation this object may hold stays until it is
		// released (the budget controller checks it against the object).
		return d, false
	}
	if len(b.Status.Reservations) >= maxReservations {
		return Decision{Wait: true, Message: fmt.Sprintf(
			"%d submissions or running jobs of this namespace hold a reservation, the most the VideoBudget tracks; waiting for some to end", maxReservations)}, false
	}
	r := videov1alpha1.BudgetReservation{
		Kind: kind, Name: obj.GetName(), UID: string(obj.GetUID()), AttemptID: attempt,
		ReservedAt: metav1.NewTime(g.clock.Now()), Digest: digest,
	}
	if kind != kindStoryboard {
		r.EstimatedSeconds, r.AICredits, r.Unbounded, r.UnreportedCredits = est.Seconds, est.Credits, est.Unbounded, est.Unreported
		r.APIKeySecretRef = keyRefOf(obj)
	}
	b.Status.Reservations = append(b.Status.Reservations, r)
	return d, true
}

// keyRefOf is the Secret key the object's calls use, nil for the default one: the reservation of
// its running job keeps it, so that the job's end can be read once the object is gone.
func keyRefOf(obj client.Object) *videov1alpha1.SecretKeyRef {
	o, ok := obj.(interface {
		APIKeyRef() *videov1alpha1.SecretKeyRef
	})
	if !ok || o.APIKeyRef() == nil {
		return nil
	}
	ref := *o.APIKeyRef()
	if (ref.Name == "" || ref.Name == videov1alpha1.DefaultAPIKeySecretName) && (ref.Key == "" || ref.Key == videov1alpha1.DefaultAPIKeySecretKey) {
		// The default (as the CRD fills it in): nothing to record, the budget stays small.
		return nil
	}
	return &ref
}

// ledgerMessage says why nothing is admitted while the namespace's ledger cannot be written.
func ledgerMessage(err error) string {
	return fmt.Sprintf("the namespace's usage cannot be written to its ledger (%v), so nothing more is paid in this namespace "+
		"until it can: the manager's namespace must exist and the manager's Role there must allow writing ConfigMaps", err)
}

// withoutBudget decides for a namespace without a VideoBudget: not limited, unless its ledger
// keeps the limits of a budget deleted in the current period. A replace (delete, then create)
// must release nothing in between, so those limits hold until a VideoBudget takes over or the
// platform removes them on purpose by deleting the ledger. The ledger is read from the API
// server: one read per paid submission in a namespace without a budget.
func (g *Guard) withoutBudget(ctx context.Context, ns string) (Decision, error) {
	if err := g.ledgers.failure(ns); err != nil {
		// Fail closed: a budget this process could not record in the ledger may have just been
		// deleted (a replace), and the ledger is what would have kept its limits meanwhile.
		return Decision{Wait: true, Message: ledgerMessage(err)}, nil
	}
	held, end, err := g.ledgers.holds(ctx, g.reader, ns, g.clock.Now())
	if err != nil || !held {
		return Decision{}, err
	}
	return Decision{Wait: true, ResetAt: end, Message: fmt.Sprintf(
		"the namespace's VideoBudget was deleted in this period and its limits hold until a VideoBudget named %q is created again; "+
			"to remove the limits on purpose, the platform deletes the ledger ConfigMap %s/%s",
		videov1alpha1.VideoBudgetName, g.ledgers.Namespace, g.ledgers.Name(ns))}, nil
}

// budgeted reports whether the namespace has a VideoBudget, from the cache.
func (g *Guard) budgeted(ctx context.Context, ns string) bool {
	_, err := g.cachedBudget(ctx, ns)
	return err == nil
}

// cachedBudget is the namespace's VideoBudget as the cache shows it.
func (g *Guard) cachedBudget(ctx context.Context, ns string) (*videov1alpha1.VideoBudget, error) {
	var b videov1alpha1.VideoBudget
	if err := readBudget(ctx, g.client, ns, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// Release gives back the reservation of an attempt that certainly created no job.
func (g *Guard) Release(ctx context.Context, ns string, uid types.UID, attempt string) error {
	err := g.mutateBudget(ctx, ns, ChangeRelease, func(b *videov1alpha1.VideoBudget) bool {
		return takeReservation(b, string(uid), attempt, false)
	})
	return ignoreNoBudget(err)
}

// countUsed counts the submission a reservation stood for as used, a preview or a render, in the
// period its job was recorded in (recordedAt; zero when unknown: now). A fold that lands
// after a roll-over (it rides with a later write, or the VideoBudget controller makes it) counts
// in the period that ended, not in the new one.
func countUsed(b *videov1alpha1.VideoBudget, r videov1alpha1.BudgetReservation, recordedAt time.Time) {
	if r.Kind == kindStoryboard {
		addUsageAt(b, videov1alpha1.BudgetUsage{Previews: 1}, recordedAt)
	} else {
		addUsageAt(b, videov1alpha1.BudgetUsage{Renders: 1}, recordedAt)
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
			countUsed(b, r, time.Time{})
		}
		return true
	}
	return false
}

// JobCharge is the charge of an ended job, the one change of every charge, the fold's
// (fold.go) and Charge's. A render's job holds a pending reservation from its submission until
// its charge, which posts it, settling it first when its job's record is not folded yet; once it
// is gone, the charge was made and is not made again, however many others came since
// (docs/spend-guard.md, "Durable, and folded from facts").
type JobCharge struct {
	JobID string
	// UID is the render's (empty for a preview's credits: no reservation outlives the fold of a
	// preview's job). With Attempt, the submission that created the job when known, or else Since,
	// when the render recorded the job, it finds the render's reservation before its job's fold.
	UID     types.UID
	Attempt string
	Since   time.Time
	// Unreported: the request consumed AI credits the job answer does not report.
	Seconds    int64
	Credits    *resource.Quantity
	Unreported bool
	// Estimate charges the reservation's estimate, or Seconds when there is none: the job's end
	// will never be read (the job deadline, unknown to the service, its object let go).
	Estimate bool
	// EndedAt is when the job's end was recorded (zero when unknown: now): its cost counts in the
	// period that contains it, whenever the charge's write lands.
	EndedAt time.Time
}

// ChargeOf is the charge of obj's current job, keyed by its render (a VideoRender) as well as
// its job id; the caller adds what it cost.
func ChargeOf(obj client.Object) JobCharge {
	st := videov1alpha1.JobStatusOf(obj)
	c := JobCharge{JobID: st.JobID}
	if st.CompletedAt != nil {
		c.EndedAt = st.CompletedAt.Time
	}
	if _, ok := obj.(*videov1alpha1.VideoRender); ok {
		c.UID = obj.GetUID()
		if st.SubmittedAt != nil {
			c.Since = st.SubmittedAt.Time
		}
	}
	return c
}

// chargeNow writes c into the namespace's budget and waits for the write (a job that ended with
// nothing to charge, a failure, only ends its reservation).
func (g *Guard) chargeNow(ctx context.Context, ns string, c JobCharge) error {
	kind := ChangeCharge
	if c.Estimate {
		kind = ChangeGiveUp
	}
	return ignoreNoBudget(g.mutateBudget(ctx, ns, kind, c.change))
}

// change is the one change every charge path makes.
func (c JobCharge) change(b *videov1alpha1.VideoBudget) bool {
	secs, i := c.Seconds, c.pending(b)
	if i >= 0 {
		r := b.Status.Reservations[i]
		b.Status.Reservations = append(b.Status.Reservations[:i:i], b.Status.Reservations[i+1:]...)
		if r.JobID == "" {
			// Its settlement has not landed: it is made here, and finds nothing when it comes.
			countUsed(b, r, c.Since)
		}
		if c.Estimate {
			secs = r.EstimatedSeconds
		}
	} else if c.posted(b) {
		return false
	}
	if charged(b, c.JobID) {
		return i >= 0
	}
	if secs <= 0 && (c.Credits == nil || c.Credits.IsZero()) && !c.Unreported {
		if i >= 0 {
			// Posted for nothing (a failed job): remembered all the same, so that no later
			// reservation of its render is taken for it (paidWith).
			postJob(b, c.JobID)
		}
		return i >= 0
	}
	chargeJobAt(b, c.JobID, secs, c.Credits, c.Unreported, c.EndedAt)
	return true
}

// pending is the index of the reservation c posts: its job's, or, before the settlement has
// written the job id into it, its render's attempt's (a render has one unsettled at a time; one
// reserved after the job was recorded is the render's next submission); -1 when there is none.
func (c JobCharge) pending(b *videov1alpha1.VideoBudget) int {
	found := -1
	for i, r := range b.Status.Reservations {
		switch {
		case c.JobID != "" && r.JobID == c.JobID:
			return i
		case c.UID != "" && r.UID == string(c.UID) && r.JobID == "" && r.Kind != kindStoryboard && (r.AttemptID == c.Attempt ||
			c.Attempt == "" && (c.Since.IsZero() || recordedFor(r, c.Since))):
			found = i
		}
	}
	return found
}

// posted reports, for a charge without a pending reservation, whether the budget holds it. A
// render's was made once every running job holds a reservation (runningReserved): the
// reservation is posted with it. Elsewhere (a preview's credits, an older manager's budget
// before its rebuild) only chargedJobs, the latest 64, can tell.
func (c JobCharge) posted(b *videov1alpha1.VideoBudget) bool {
	return (c.UID != "" && b.Status.RunningReserved) || charged(b, c.JobID)
}

// charged reports whether jobID was charged (among the latest maxChargedJobs, whatever their
// period).
func charged(b *videov1alpha1.VideoBudget, jobID string) bool {
	for _, id := range b.Status.ChargedJobs {
		if id == jobID {
			return true
		}
	}
	return false
}

// chargeJobAt adds the seconds and credits of a job that ended at endedAt (zero: now) to the
// usage of the period that contains it (addUsageAt), and remembers its id.
func chargeJobAt(b *videov1alpha1.VideoBudget, jobID string, secs int64, credits *resource.Quantity, unreported bool, endedAt time.Time) {
	d := videov1alpha1.BudgetUsage{RenderSeconds: max(secs, 0)}
	if credits != nil && !credits.IsZero() {
		d.AICredits = ptr.To(credits.DeepCopy())
	}
	if unreported {
		d.UnreportedCreditRenders = 1
	}
	addUsageAt(b, d, endedAt)
	postJob(b, jobID)
}

// postJob remembers jobID among the latest maxChargedJobs jobs posted.
func postJob(b *videov1alpha1.VideoBudget, jobID string) {
	b.Status.ChargedJobs = append(b.Status.ChargedJobs, jobID)
	b.Status.ChargeCount++
	if n := len(b.Status.ChargedJobs); n > maxChargedJobs {
		b.Status.ChargedJobs = append([]string(nil), b.Status.ChargedJobs[n-maxChargedJobs:]...)
	}
}
