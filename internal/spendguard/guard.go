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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// One submission's writes, in order (docs/architecture.md "Never pay twice"): 1. the reservation
// {uid, attempt} in the ledger; 2. the object's in-flight record; 3. the paid call and the job id;
// 4. a later write folds the job (fold.go). A crash between 1 and 2 leaves a reservation without a
// submission: the VideoBudget controller releases it past its grace when the object shows no such
// attempt, and charges it when the object is gone (it may have been sent).

// +kubebuilder:rbac:groups=video.videoops.io,resources=videobudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=video.videoops.io,resources=videobudgets/status,verbs=get;update;patch

// maxReservations and maxChargedJobs bound the state's lists (charged ids matter only where no
// pending reservation tells); WriteTries bounds the decisions again after lost locks of one write.
const (
	maxReservations = 1000
	maxChargedJobs  = 64
	WriteTries      = 8
)

// Guard decides on and writes the namespaces' spend state for both job kinds' reconcilers.
type Guard struct {
	client client.Client
	// reader reads from the API server after a lost lock: the cache may be behind.
	reader client.Reader
	clock  clock.Clock
	// timers is the process's own time (what is due, a grant's timer): real, except in the simulation.
	timers   clock.WithDelayedExecution
	writers  budgetWriters
	ledgers  *Ledgers
	grants   grants
	observer Metrics
	started  time.Time // this process's start (countRunning)
}

// New returns the spend guard: c writes and reads the cache, reader the API server; ledgers are
// shared with the VideoBudget reconciler. A write without its turn within writeTimeout is ErrBusy.
func New(c client.Client, reader client.Reader, clk clock.Clock, writeTimeout time.Duration, ledgers *Ledgers) *Guard {
	return &Guard{client: c, reader: reader, clock: clk, timers: clock.RealClock{}, writers: budgetWriters{timeout: writeTimeout}, ledgers: cmp.Or(ledgers, NewLedgers("")),
		started: clk.Now(), observer: noMetrics{}, grants: grants{byUID: map[types.UID]*grant{}}}
}

var errNoBudget = errors.New("the namespace has no VideoBudget")

// ignoreNoBudget is nil for errNoBudget: usage in a namespace without a budget is not kept.
func ignoreNoBudget(err error) error {
	if errors.Is(err, errNoBudget) {
		return nil
	}
	return err
}

// ErrBusy is returned when a write kept losing its lock: the caller tries again later.
var ErrBusy = errors.New("the VideoBudget kept changing during the write; trying again")

// maxBudgetSlots bounds the namespaces whose state budgetWriters keeps a copy of.
const maxBudgetSlots = 256

// budgetWriters takes this process's writes of each namespace in turn, each from the latest ledger
// this process wrote or was sent (Ledgers.copyOf): a read per write costs.
type budgetWriters struct {
	timeout time.Duration // bounds the wait for a turn: a status write's time
	mu      sync.Mutex
	slots   map[string]*budgetSlot
}

type budgetSlot struct {
	ns string
	// turn is held by the write in progress; a channel, so a cancelled context stops waiting.
	turn chan struct{}
	// view is the budget as this process's last view write left it (writeView, showView).
	view *videov1alpha1.VideoBudget
	// users hold or wait for the turn: a slot in use, or with changes queued, is never dropped.
	users int
	// queue are the changes for the next write (batch.go), guarded by budgetWriters.mu.
	queue []*op
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
			delete(w.slots, ns)
		}
	}
}

// Decision is the outcome of a reservation: room reserved (or no budget), or the object waits.
type Decision struct {
	Wait     bool // the object must not submit now; Limit and Message say why
	Limit    videov1alpha1.BudgetLimit
	Message  string
	ResetAt  time.Time // the period's end, when the limits reached make room again; zero: unknown
	Budgeted bool
}

// reserve holds room for attempt of obj, paying for preview digest. The object's earlier
// reservation is replaced when its attempt did not reach the service, so a retried attempt never
// takes room twice; one that sent reports is counted as used (a resubmission confirmed after an
// unknown outcome may pay twice, and the budget says so).
func (g *Guard) reserve(ctx context.Context, kind string, obj client.Object, attempt, digest string, est bound.Estimate,
	sent func(videov1alpha1.BudgetReservation) bool) (Decision, error) {
	var d Decision
	failing := g.ledgers.failure(obj.GetNamespace()) != nil
	err := g.mutateBudget(ctx, obj.GetNamespace(), ChangeReserve, func(b *videov1alpha1.VideoBudget) bool {
		var write bool
		d, write = g.reserveChange(b, kind, obj, attempt, digest, est, sent, time.Time{})
		return write
	})
	if errors.Is(err, errNoBudget) {
		return g.withoutBudget(ctx, obj.GetNamespace())
	}
	if lerr := g.ledgers.failure(obj.GetNamespace()); err != nil && lerr != nil && failing {
		// Not a passing error: the object waits and says why (fail closed).
		return Decision{Wait: true, Budgeted: true, Message: ledgerMessage(lerr)}, nil
	}
	return d, err
}

// reserveChange is a reservation's change of the budget and its decision; the reservation is for
// a call at payAt (zero: now).
func (g *Guard) reserveChange(b *videov1alpha1.VideoBudget, kind string, obj client.Object, attempt, digest string, est bound.Estimate,
	sent func(videov1alpha1.BudgetReservation) bool, payAt time.Time) (Decision, bool) {
	d := Decision{Budgeted: true}
	kept, counted := b.Status.Reservations[:0:0], false
	for _, r := range b.Status.Reservations {
		switch {
		case r.UID != string(obj.GetUID()) || r.JobID != "":
			kept = append(kept, r)
		case sent != nil && sent(r):
			// It may have created a job whose end is never read here: its estimate stands for
			// it, written whatever is decided next (the controller would release it as unsent).
			countUsed(b, r, time.Time{})
			addUsageAt(b, estimateUsage(r), time.Time{})
			counted = true
		}
	}
	b.Status.Reservations = kept
	recountReserved(b)
	if limit, msg, reached := exhausted(b, kind, est); reached {
		d = Decision{Wait: true, Limit: limit, Message: msg}
		if b.Status.PeriodEnd != nil {
			d.ResetAt = b.Status.PeriodEnd.Time
		}
		return d, counted
	}
	if len(b.Status.Reservations) >= maxReservations {
		return Decision{Wait: true, Message: fmt.Sprintf(
			"%d submissions or running jobs of this namespace hold a reservation, the most the VideoBudget tracks; waiting for some to end", maxReservations)}, counted
	}

	r := reservationOf(kind, obj, attempt, metav1.NewTime(cmp.Or(payAt, g.clock.Now())), est)
	r.Digest = digest
	b.Status.Reservations = append(b.Status.Reservations, r)
	return d, true
}

// reservationOf is obj's reservation for attempt, made at at, with est.
func reservationOf(kind string, obj client.Object, attempt string, at metav1.Time, est bound.Estimate) videov1alpha1.BudgetReservation {
	return videov1alpha1.BudgetReservation{Kind: kind, Name: obj.GetName(), UID: string(obj.GetUID()), AttemptID: attempt, ReservedAt: at,
		APIKeySecretRef: keyRefOf(obj), EstimatedSeconds: est.Seconds, AICredits: est.Credits, Unbounded: est.Unbounded, UnreportedCredits: est.Unreported}
}

// estimateOf is the kind of obj's reservations and its estimate (bound.Render, bound.Preview).
func estimateOf(obj client.Object) (string, bound.Estimate) {
	if sb, ok := obj.(*videov1alpha1.VideoStoryboard); ok {
		return kindStoryboard, bound.Preview(&sb.Spec.StoryboardRequest)
	}
	vr, _ := obj.(*videov1alpha1.VideoRender)
	return "VideoRender", bound.Render(vr)
}

// keyRefOf is the Secret key the object's calls use, nil for the default one: its running job's
// reservation keeps it, to read the job's end once the object is gone.
func keyRefOf(obj client.Object) *videov1alpha1.SecretKeyRef {
	o, ok := obj.(interface {
		APIKeyRef() *videov1alpha1.SecretKeyRef
	})
	if !ok || o.APIKeyRef() == nil {
		return nil
	}
	ref := *o.APIKeyRef()
	if (ref.Name == "" || ref.Name == videov1alpha1.DefaultAPIKeySecretName) && (ref.Key == "" || ref.Key == videov1alpha1.DefaultAPIKeySecretKey) {
		return nil // the default: the budget stays small
	}
	return &ref
}

// ledgerMessage says why nothing is admitted while the namespace's ledger cannot be written.
func ledgerMessage(err error) string {
	return fmt.Sprintf("the namespace's usage cannot be written to its ledger (%v), so nothing more is paid in this namespace "+
		"until it can: the manager's namespace must exist and the manager's Role there must allow writing ConfigMaps", err)
}

// withoutBudget decides for a namespace without a VideoBudget: not limited, unless its ledger keeps
// the limits of a budget deleted in this period (a replace, delete then create, must release
// nothing in between).
func (g *Guard) withoutBudget(ctx context.Context, ns string) (Decision, error) {
	if err := g.ledgers.failure(ns); err != nil {
		// Fail closed: the ledger not written may have had to keep a deleted budget's limits.
		// One that exists tells (holds); an absent one that could be written keeps none.
		if _, at, rerr := readLedgerAt(ctx, g.reader, g.ledgers.at(ns)); rerr != nil || at.rv == "" && !g.ledgers.writable(ctx, g.client, ns) {
			return Decision{Wait: true, Message: ledgerMessage(err)}, rerr
		}
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
	b := &videov1alpha1.VideoBudget{}
	return b, readBudget(ctx, g.client, ns, b)
}

// Release gives back the reservation of an attempt that certainly created no job.
func (g *Guard) Release(ctx context.Context, ns string, uid types.UID, attempt string) error {
	return ignoreNoBudget(g.mutateBudget(ctx, ns, ChangeRelease, func(b *videov1alpha1.VideoBudget) bool {
		return release(b, string(uid), attempt)
	}))
}

// countUsed counts res's submission as used in the period its job was recorded in (recordedAt;
// zero: now), even when the fold lands after a roll-over.
func countUsed(b *videov1alpha1.VideoBudget, r videov1alpha1.BudgetReservation, recordedAt time.Time) {
	if r.Kind == kindStoryboard {
		addUsageAt(b, videov1alpha1.BudgetUsage{Previews: 1}, recordedAt)
	} else {
		addUsageAt(b, videov1alpha1.BudgetUsage{Renders: 1}, recordedAt)
	}
}

// release removes the reservation of uid and attempt, and reports whether there was one. One that
// holds a recorded job leaves only by its charge: its attempt did create a job.
func release(b *videov1alpha1.VideoBudget, uid, attempt string) bool {
	n := len(b.Status.Reservations)
	b.Status.Reservations = slices.DeleteFunc(b.Status.Reservations, func(r videov1alpha1.BudgetReservation) bool {
		return r.UID == uid && r.AttemptID == attempt && r.JobID == ""
	})
	return len(b.Status.Reservations) < n
}

// JobCharge is the charge of an ended job, the fold's and Charge's alike (change). A job holds a
// pending reservation until its charge posts it; once the reservation is gone the charge was made,
// and is not made again (docs/spend-guard.md, "Durable, and folded from facts").
type JobCharge struct {
	JobID string
	// UID, with Attempt (the job's submission) or Since (when it was recorded), finds the
	// object's reservation before its job's fold.
	UID     types.UID
	Attempt string
	Since   time.Time
	// Unreported: the request consumed AI credits the job answer does not report.
	Seconds    int64
	Credits    *resource.Quantity
	Unreported bool
	Estimate   bool      // charge the reservation's estimate (or Seconds): the end will never be read
	EndedAt    time.Time // when the end was recorded (zero: now): its cost counts in that period
}

// ChargeOf is the charge of obj's current job; the caller adds what it cost.
func ChargeOf(obj client.Object) JobCharge {
	st := videov1alpha1.JobStatusOf(obj)
	c := JobCharge{JobID: st.JobID}
	if st.CompletedAt != nil {
		c.EndedAt = st.CompletedAt.Time
	}
	c.UID = obj.GetUID()
	if st.SubmittedAt != nil {
		c.Since = st.SubmittedAt.Time
	}
	return c
}

// change is the one change every charge path makes.
func (c JobCharge) change(b *videov1alpha1.VideoBudget) bool {
	secs, i := c.Seconds, c.pending(b)
	if i >= 0 {
		r := b.Status.Reservations[i]
		b.Status.Reservations = append(b.Status.Reservations[:i:i], b.Status.Reservations[i+1:]...)
		if r.JobID == "" {
			// Its job's record is not folded yet: counted here.
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
			// A failed job posted for nothing, remembered: no later reservation is taken for it.
			postJob(b, c.JobID)
		}
		return i >= 0
	}
	chargeJobAt(b, c.JobID, secs, c.Credits, c.Unreported, c.EndedAt)
	return true
}

// pending is the index of the reservation c posts: its job's, or before the fold its attempt's
// (one reserved after the job was recorded is the next submission's); -1 when none.
func (c JobCharge) pending(b *videov1alpha1.VideoBudget) int {
	found := -1
	for i, r := range b.Status.Reservations {
		switch {
		case c.JobID != "" && r.JobID == c.JobID:
			return i
		case c.UID != "" && r.UID == string(c.UID) && r.JobID == "" && (r.AttemptID == c.Attempt ||
			c.Attempt == "" && (c.Since.IsZero() || recordedFor(r, c.Since))):
			found = i
		}
	}
	return found
}

// posted reports, for a charge without a pending reservation, whether it was made: once every
// running job holds a reservation (runningReserved); before, only chargedJobs tell.
func (c JobCharge) posted(b *videov1alpha1.VideoBudget) bool {
	return (c.UID != "" && b.Status.RunningReserved) || charged(b, c.JobID)
}

// charged reports whether jobID is among the latest maxChargedJobs charged.
func charged(b *videov1alpha1.VideoBudget, jobID string) bool {
	return slices.Contains(b.Status.ChargedJobs, jobID)
}

// chargeJobAt adds a job's cost to the usage of the period that contains endedAt (zero: now).
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
