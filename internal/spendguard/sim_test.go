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
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// The simulation searches for lost money (docs/spend-guard.md "The simulation"): each seed is a
// random sequence of operations on one namespace, run against the real Guard and the real
// VideoBudget Reconciler over a fake API server (with injected write failures and conflicts), a
// fake clock and a model of the service's jobs. The sequence is generated from the seed first, so
// a failing seed replays exactly and shrinks to a shorter sequence that still fails.
//
// What it checks, after each step and at each admission, against the service's truth:
//   - a period's usage never decreases (whatever is done to the period, the limits or the budget);
//   - a render is admitted under maxRenders only while fewer jobs were submitted in the period;
//   - a render is admitted under maxRenderSeconds only while the seconds the period's jobs really
//     cost (ended, and running: a bounded job's real length, an unbounded one's reservation) are
//     below the limit;
//   - under maxRenderSeconds, no render without an upper bound is admitted while another such job
//     still runs at the service (whoever holds its object);
//   - at the end, every job that ended is charged at least what it cost (never less), and, over
//     all months, no job is counted or charged twice (never more).
//
// The renders are modelled as the render reconciler drives the guard: Reserve, then the job id in
// the render's status, and at the job's end its end in the render's status, with its real length;
// budget writes fold those facts (fold.go). A render's deletion delivers its last state to the
// VideoBudget controller, as the informer's delete event does. A crash drops every in-memory
// state of the guard and the controller.
//
// The manager runs with a job deadline (simJobDeadline), its documented give-up point: a job still
// running past it is charged its reservation's estimate, folded from its render's end written as
// given up or, for a render that is gone, by the VideoBudget controller, and the job may run on at
// the service. For
// such a late job the checks ask only what the operator promises: it is charged once, at most
// what it cost or its estimate; a render given up is charged its estimate in the period it gave
// up in; and a late job no longer counts as running beside the renders admitted after it.

var (
	simSeeds    = flag.Int("sim.seeds", 300, "number of seeds the simulation runs, from -sim.from")
	simFrom     = flag.Uint64("sim.from", 1, "the first seed of the simulation")
	simSeed     = flag.Uint64("sim.seed", 0, "run only this seed (a replay), printing each step")
	simSteps    = flag.Int("sim.steps", 80, "operations per seed")
	simWorkers  = flag.Int("sim.workers", runtime.GOMAXPROCS(0), "seeds run at once")
	simManagers = flag.Int("sim.managers", 1, "2: a second manager by mistake, its clock skewed, takes some of the steps")
	simLog      = flag.Bool("sim.log", false, "log what the guard and the VideoBudget controller do (with -sim.seed or a case)")
	simAll      = flag.Bool("sim.all", false, "go on after a failing seed and report one shrunk sequence per invariant broken")
)

// simOpKind is what one step of the simulation does.
type simOpKind int

const (
	opCreate simOpKind = iota
	opAdmit
	opEnd
	opOrphanEnd
	opDeleteStripped
	opSetSeconds
	opSetRenders
	opSetPeriod
	opClock
	opReconcile
	opCrash
	opReplace
	opFailWrites
	opCrashAfterEnd
	opGather
	opPreview
	opPreviewEnd
	opSetCredits
	opDeleteCharged
	opDeleteBudget
	opFailLedger
	opSwitch
	opCount
)

// simOp is one step, with its parameters drawn from the seed.
type simOp struct {
	kind simOpKind
	// a and b are the step's parameters (which render, a limit, a duration...).
	a, b int64
}

func (o simOp) String() string {
	switch o.kind {
	case opCreate:
		credits := ""
		if c := simCredits(o.b); c > 0 {
			credits = fmt.Sprintf(", with an aiVisual of %d AI credits", c)
		}
		if o.a == 0 {
			return fmt.Sprintf("create a render without upper bound (guess 30 s, really %d s%s)", o.b, credits)
		}
		return fmt.Sprintf("create a render bounded at %d s (really %d s%s)", o.a, o.b, credits)
	case opAdmit:
		return fmt.Sprintf("render #%d asks to pay", o.a)
	case opGather:
		return fmt.Sprintf("render #%d queues its reservation ahead (the gather window) and comes back later", o.a)
	case opEnd:
		return fmt.Sprintf("running job #%d ends and its render is charged", o.a)
	case opOrphanEnd:
		return "the jobs of deleted renders and previews end at the service"
	case opDeleteStripped:
		return fmt.Sprintf("running render #%d is deleted, its finalizer stripped", o.a)
	case opDeleteCharged:
		return fmt.Sprintf("running render #%d is deleted: its finalizer charges its job's end (its estimate past the job deadline), then lets it go", o.a)
	case opDeleteBudget:
		return "the VideoBudget is deleted (created again by a later replace step)"
	case opFailLedger:
		return fmt.Sprintf("the next %d ledger ConfigMap writes fail", o.a)
	case opSwitch:
		return fmt.Sprintf("the other manager (a second one by mistake, its clock %s off, started if none runs) takes the next steps", time.Duration(o.a))
	case opSetSeconds:
		if o.a < 0 {
			return "maxRenderSeconds removed"
		}
		return fmt.Sprintf("maxRenderSeconds set to %d", o.a)
	case opSetRenders:
		if o.a < 0 {
			return "maxRenders removed"
		}
		return fmt.Sprintf("maxRenders set to %d", o.a)
	case opSetCredits:
		if o.a < 0 {
			return "maxAICredits removed"
		}
		return fmt.Sprintf("maxAICredits set to %d", o.a)
	case opSetPeriod:
		return "period set to " + string(simPeriods[o.a])
	case opClock:
		return fmt.Sprintf("the clock moves %s", time.Duration(o.a))
	case opReconcile:
		return "the VideoBudget controller reconciles"
	case opCrash:
		return "the manager crashes and starts again"
	case opReplace:
		if o.a == 1 {
			return "the VideoBudget is deleted (unless it is gone) and restored with its status"
		}
		return "the VideoBudget is deleted (unless it is gone) and created again"
	case opFailWrites:
		return fmt.Sprintf("the next %d VideoBudget status writes fail", o.a)
	case opCrashAfterEnd:
		return fmt.Sprintf("running job #%d ends, its render writes its end and the manager crashes before a budget write folds it", o.a)
	case opPreview:
		return fmt.Sprintf("a preview whose answer will report %d AI credits asks to pay", o.a)
	case opPreviewEnd:
		if o.b == 2 {
			return fmt.Sprintf("preview #%d is deleted while its job runs (previews carry no charge finalizer)", o.a)
		}
		if o.b == 1 {
			return fmt.Sprintf("preview job #%d ends, and the write of its end fails", o.a)
		}
		return fmt.Sprintf("preview job #%d ends: its end is written with its credits", o.a)
	}
	return "?"
}

// simCredits is what the job of a render created really b seconds long reports in AI credits: one
// render in three has an aiVisual (drawn from its length, so that the seeds' sequences stay).
func simCredits(b int64) int64 {
	if b%3 != 0 {
		return 0
	}
	return 1 + b%11
}

var simPeriods = []videov1alpha1.BudgetPeriod{videov1alpha1.BudgetPeriodDaily, videov1alpha1.BudgetPeriodWeekly, videov1alpha1.BudgetPeriodMonthly}

// simGenerate draws a sequence of steps from seed.
func simGenerate(seed uint64, steps int) []simOp {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	// The second manager's steps are drawn from a stream of their own, so that the other steps of
	// a seed stay what they were before it existed.
	second := rand.New(rand.NewPCG(seed^0x5bd1e995, seed))
	ops := make([]simOp, 0, steps)
	for range steps {
		var o simOp
		switch p := rng.IntN(100); {
		case p < 16:
			o.kind = opCreate
			if rng.IntN(4) == 0 {
				o.b = 1 + rng.Int64N(900) // a blog: anything, whatever the guess
			} else {
				o.a = 10 + rng.Int64N(600)
				o.b = 1 + rng.Int64N(o.a)
			}
		case p < 40:
			o.kind, o.a = opAdmit, rng.Int64N(64)
			if rng.IntN(3) == 0 {
				o.kind = opGather
			}
		case p < 56:
			o.kind, o.a = opEnd, rng.Int64N(64)
		case p < 59:
			o.kind = opOrphanEnd
		case p < 63:
			o.kind, o.a = opDeleteStripped, rng.Int64N(64)
			if rng.IntN(2) == 0 {
				o.kind = opDeleteCharged
			}
		case p < 69:
			o.kind, o.a = opSetSeconds, []int64{-1, 300, 600, 1200, 3000}[rng.IntN(5)]
			if rng.IntN(3) == 0 {
				o.kind, o.a = opSetCredits, []int64{-1, 10, 30, 100}[rng.IntN(4)]
			}
		case p < 72:
			o.kind, o.a = opSetRenders, []int64{-1, 1, 3, 10}[rng.IntN(4)]
		case p < 76:
			o.kind, o.a = opSetPeriod, rng.Int64N(int64(len(simPeriods)))
		case p < 84:
			o.kind = opClock
			o.a = int64([]time.Duration{time.Minute, time.Hour, 7 * time.Hour, 26 * time.Hour, 5 * 24 * time.Hour}[rng.IntN(5)])
		case p < 92:
			o.kind = opReconcile
		case p < 94:
			o.kind = opCrash
		case p < 95:
			o.kind, o.a = opCrashAfterEnd, rng.Int64N(64)
		case p < 97:
			o.kind, o.a = opReplace, rng.Int64N(2)
		case p < 98:
			o.kind = opDeleteBudget
		default:
			o.kind, o.a = opFailWrites, 1+rng.Int64N(3)
			if rng.IntN(2) == 0 {
				o.kind = opFailLedger
			}
		}
		if rng.IntN(8) == 0 {
			// One step in eight is a preview's: one whose answer will report AI credits asks to
			// pay, or a preview job ends (its end written with its credits), or a preview is
			// deleted while its job runs.
			o = simOp{kind: opPreview, a: rng.Int64N(4) * 5}
			if rng.IntN(2) == 0 {
				o = simOp{kind: opPreviewEnd, a: rng.Int64N(64), b: rng.Int64N(3)}
			}
		}
		if *simManagers > 1 && second.IntN(32) == 0 {
			// Two managers over the namespace by mistake (two releases, or a hand-over whose old
			// leader still runs): the steps from here are the other's, whose clock is skewed.
			o = simOp{kind: opSwitch, a: int64([]time.Duration{-5 * time.Minute, -30 * time.Second, 30 * time.Second, 5 * time.Minute}[second.IntN(4)])}
		}
		ops = append(ops, o)
	}
	return ops
}

// simJob is a job at the service.
type simJob struct {
	id        string
	actual    int64
	credits   int64
	reserved  int64 // what its render reserved
	unbounded bool
	submitted time.Time
	ended     *time.Time
	// live is false once its render was deleted: nobody reads its end through the render.
	live bool
	// endWritten is set once its render's end is written in its status, for budget writes to fold.
	endWritten bool
	// givenUpAt is when its render gave it up at the job deadline and charged its estimate.
	givenUpAt *time.Time
	// unguarded: paid while the namespace had no VideoBudget and its ledger held no limits; no
	// budget charges it (one created while it runs reserves it).
	unguarded bool
}

// simRender is a render object of the model.
type simRender struct {
	name     string
	uid      types.UID
	est      bound.Estimate
	actual   int64
	job      *simJob
	attempts int
	deleted  bool
	// gathered is the attempt whose reservation it queued ahead (opGather), which it pays with
	// when it asks again; empty otherwise.
	gathered string
	// backFrom is the gathered attempt it last came back to pay (admit).
	backFrom string
	// ahead is what the service knew when the reservation of gathered was first written in the
	// ledger: the moment the guard decided it, whenever the render comes back to pay on it.
	ahead *simAhead
	// finalizer: its record write added the charge finalizer (its namespace had a VideoBudget).
	finalizer bool
}

// simAhead is the truth of the period a reservation written ahead was decided in, and how many
// jobs had been created then.
type simAhead struct {
	start              time.Time
	submitted, seconds int64
	unboundedRunning   bool
	jobs               int
}

// simGrants is a manager's metrics: the outcome of the last grant its guard looked at (takeGrant).
type simGrants struct {
	noMetrics
	last string
}

func (m *simGrants) ObserveGrant(result string) {
	m.last = result
	if result == GrantUsed {
		simGrantsUsed.Add(1)
	}
	simGrantsTaken.Add(1)
}

// simGrantsUsed and simGrantsTaken count, over a run's seeds, the renders that paid on their
// reservation written ahead and those that came to pay with one: the report says the grants ran.
var simGrantsUsed, simGrantsTaken atomic.Int64

// simPreview is a preview object of the model, and its job once it paid.
type simPreview struct {
	name    string
	uid     types.UID
	credits int64
	jobID   string
	// submitted is when its job was created; endWritten is set once its end is in its status
	// (with its credits). A deleted preview's job ends at the service (ended), and
	// only the VideoBudget controller reads that end.
	submitted  time.Time
	endWritten bool
	deleted    bool
	unguarded  bool // paid with no budget and no limits held (simJob.unguarded)
	ended      *time.Time
	// charged is set once its end is written with its credits (at endAt): the next budget write
	// folds it before it decides, so it no longer holds room.
	charged bool
	endAt   time.Time
}

// simWorld is one run of the simulation.
type simWorld struct {
	t        testing.TB
	ctx      context.Context
	server   client.WithWatch
	c        client.Client
	clk      *clocktesting.FakeClock
	g        *Guard
	r        *Reconciler
	renders  []*simRender
	jobs     []*simJob
	previews []*simPreview
	// failWrites is how many budget status writes fail next; failLedger, ledger ConfigMap writes.
	failWrites, failLedger int
	budgetUID              int
	// gone is the budget deleted by opDeleteBudget, until a replace step creates it again.
	gone *videov1alpha1.VideoBudget
	// og and or are the other manager (opSwitch), nil until one starts; skew and oskew are how far
	// the active one's clock and the other's are off.
	og          *Guard
	or          *Reconciler
	skew, oskew time.Duration
	// finalizing are the renders deleted with their charge finalizer, until their charge is written.
	finalizing []*simRender
	// seen is the highest usage seen for each period window (start/end).
	seen map[string]videov1alpha1.BudgetUsage
	// months is the highest usage seen in each calendar month's window: every charge is added
	// to the window of the month it is made in, whatever spec.period says, so their sum is what
	// the budget charged in all.
	months map[time.Time]videov1alpha1.BudgetUsage
}

const simNS = "team-a"

func newSimWorld(t testing.TB) *simWorld {
	s := k8sruntime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	log := logr.Discard()
	if *simLog {
		log = testr.NewWithInterface(t, testr.Options{Verbosity: 1})
	}
	w := &simWorld{t: t, ctx: logf.IntoContext(context.Background(), log), clk: clocktesting.NewFakeClock(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)),
		seen: map[string]videov1alpha1.BudgetUsage{}, months: map[time.Time]videov1alpha1.BudgetUsage{}, budgetUID: 1}
	budget := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: simNS, Name: videov1alpha1.VideoBudgetName, UID: "budget-1", Generation: 1},
		Spec: videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodMonthly, MaxRenders: ptr.To[int64](10), MaxRenderSeconds: ptr.To[int64](1200)}}
	w.server = withUIDs(fake.NewClientBuilder().WithScheme(s).WithObjects(budget).
		WithStatusSubresource(budget, &videov1alpha1.VideoRender{}, &videov1alpha1.VideoStoryboard{}).Build())
	failLedger := func(obj client.Object) error {
		if _, ok := obj.(*corev1.ConfigMap); ok && w.failLedger > 0 {
			w.failLedger--
			return apierrors.NewServiceUnavailable("injected")
		}
		return nil
	}
	w.c = interceptor.NewClient(w.server, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := failLedger(obj); err != nil {
				return err
			}
			if err := c.Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			w.sendLedger(obj)
			w.noteAhead(obj)
			return nil
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := failLedger(obj); err != nil {
				return err
			}
			if err := c.Create(ctx, obj, opts...); err != nil {
				return err
			}
			w.sendLedger(obj)
			w.noteAhead(obj)
			return nil
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*videov1alpha1.VideoBudget); ok && w.failWrites > 0 {
				w.failWrites--
				return apierrors.NewInternalError(errors.New("injected"))
			}
			// The fake API server numbers each object's versions from its creation, where a real one
			// numbers them from one counter: a copy of a deleted budget must not pass the optimistic
			// lock of the one created in its place.
			var cur videov1alpha1.VideoBudget
			if _, ok := obj.(*videov1alpha1.VideoBudget); ok && obj.GetUID() != "" &&
				c.Get(ctx, client.ObjectKeyFromObject(obj), &cur) == nil && cur.UID != obj.GetUID() {
				return apierrors.NewConflict(videov1alpha1.GroupVersion.WithResource("videobudgets").GroupResource(), obj.GetName(),
					errors.New("the object was deleted and created again"))
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	w.start()
	return w
}

// start makes this process's guard and controller, with nothing in memory.
func (w *simWorld) start() {
	// The grants lived in the process (a crash): the renders come back with a new attempt.
	for _, r := range w.renders {
		r.gathered, r.ahead = "", nil
	}
	w.g, w.r = w.process(w.skew)
}

// process makes a manager's guard and controller whose clock is skew off, with nothing in memory.
func (w *simWorld) process(skew time.Duration) (*Guard, *Reconciler) {
	clk := skewedClock{w.clk, skew}
	ledgers := NewLedgers("ops")
	g := New(w.c, w.c, clk, 10*time.Second, ledgers)
	// The process's own time is the world's too: what is due follows the steps, never how fast
	// the machine runs them, so a seed replays.
	g.timers = clk
	r := NewReconciler(ReconcilerOptions{Client: w.c, Reader: w.c, Clock: clk, Grace: time.Minute, Recheck: time.Hour,
		Retry: time.Second, Ledgers: ledgers, Guard: g, Jobs: simService{w}, JobDeadline: simJobDeadline})
	g.observer = &simGrants{}
	return g, r
}

// switchTo makes the other manager the active one, started with its clock skew off if none runs.
func (w *simWorld) switchTo(skew time.Duration) {
	if w.og == nil {
		w.oskew = skew
		w.og, w.or = w.process(skew)
	}
	w.g, w.r, w.og, w.or = w.og, w.or, w.g, w.r
	w.skew, w.oskew = w.oskew, w.skew
}

// managers are the controllers of the managers that run: each watches the namespace.
func (w *simWorld) managers() []*Reconciler {
	if w.or == nil {
		return []*Reconciler{w.r}
	}
	return []*Reconciler{w.r, w.or}
}

// now is the time as the active manager reads it: the times it writes in statuses are its.
func (w *simWorld) now() time.Time { return w.clk.Now().Add(w.skew) }

// skewedClock is the world's clock as a manager whose clock is off by skew reads it.
type skewedClock struct {
	*clocktesting.FakeClock
	skew time.Duration
}

func (c skewedClock) Now() time.Time                  { return c.FakeClock.Now().Add(c.skew) }
func (c skewedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// simJobDeadline is the manager's --job-deadline in the simulation: the clock's steps (up to five
// days) outlive it.
const simJobDeadline = 6 * time.Hour

// simGivenUp and simLateGone count, over a run's seeds, the jobs given up by their render and the
// late jobs of gone renders at the end of a seed: the report says how often the deadline's paths ran.
var simGivenUp, simLateGone atomic.Int64

// late reports whether j was given up at the job deadline: by its render, or, for a render that
// is gone, by the VideoBudget controller, which does at its next look once the job ran past it.
func (w *simWorld) late(j *simJob) bool {
	end := w.now()
	if j.ended != nil {
		end = *j.ended
	}
	return j.givenUpAt != nil || (!j.live && end.Sub(j.submitted) > simJobDeadline)
}

// giveUpLate gives up the jobs of live renders still running past the job deadline, as the
// render controller does at its next look: the end is written as failed (JOB_DEADLINE_EXCEEDED),
// and a budget write folds it, charging the reservation's estimate; the job may still run at the
// service. A job that ended is not given up: the render reads its end first.
func (w *simWorld) giveUpLate() {
	now := w.now()
	for _, r := range w.renders {
		j := r.job
		if j == nil || !j.live || j.ended != nil || j.endWritten || now.Sub(j.submitted) <= simJobDeadline {
			continue
		}
		var vr videov1alpha1.VideoRender
		if err := w.server.Get(w.ctx, client.ObjectKey{Namespace: simNS, Name: r.name}, &vr); err != nil {
			w.t.Fatal(err)
		}
		vr.Status.CompletedAt = &metav1.Time{Time: now}
		vr.Status.Failure = &videov1alpha1.JobFailure{Code: "JOB_DEADLINE_EXCEEDED", Message: "past the job deadline"}
		if err := w.server.Status().Update(w.ctx, &vr); err != nil {
			w.t.Fatal(err)
		}
		j.endWritten, j.givenUpAt = true, &now
		simGivenUp.Add(1)
	}
}

// simService is the service as the VideoBudget controller reads it: the jobs of the model.
type simService struct{ w *simWorld }

func (s simService) JobEnd(_ context.Context, _ string, _ *videov1alpha1.SecretKeyRef, jobID string) (JobEnd, error) {
	for _, p := range s.w.previews {
		if p.jobID != jobID {
			continue
		}
		if p.ended == nil {
			return JobEnd{Running: true}, nil
		}
		// A preview's answer may tell a length too: a preview is counted, never timed.
		end := JobEnd{Completed: true, Seconds: 30}
		if p.credits > 0 {
			end.Credits = resource.NewQuantity(p.credits, resource.DecimalSI)
		}
		return end, nil
	}
	for _, j := range s.w.jobs {
		if j.id != jobID {
			continue
		}
		if j.ended == nil {
			return JobEnd{Running: true}, nil
		}
		end := JobEnd{Completed: true, Seconds: j.actual}
		if j.credits > 0 {
			end.Credits = resource.NewQuantity(j.credits, resource.DecimalSI)
		}
		return end, nil
	}
	return JobEnd{Unknown: true}, nil
}

func (w *simWorld) budget() (*videov1alpha1.VideoBudget, bool) {
	var b videov1alpha1.VideoBudget
	if err := w.server.Get(w.ctx, client.ObjectKey{Namespace: simNS, Name: videov1alpha1.VideoBudgetName}, &b); err != nil {
		return nil, false
	}
	b.Status.ExpandRunningJobs()
	// The state is the ledger's; the status is its view, which a failed write leaves behind.
	if l, _, err := readLedgerAt(w.ctx, w.server, types.NamespacedName{Namespace: "ops", Name: videov1alpha1.LedgerConfigMapPrefix + simNS}); err == nil &&
		l != nil && l.Version >= ledgerVersion {
		conditions := b.Status.Conditions
		b = *working(simNS, &b, l)
		b.Status.Conditions = conditions
	}
	return &b, true
}

func (w *simWorld) editSpec(edit func(*videov1alpha1.VideoBudgetSpec)) {
	b, ok := w.budget()
	if !ok {
		return
	}
	edit(&b.Spec)
	b.Generation++
	if err := w.server.Update(w.ctx, b); err != nil {
		w.t.Fatal(err)
	}
}

func (w *simWorld) reconcile() {
	res, err := w.r.Reconcile(w.ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: simNS, Name: videov1alpha1.VideoBudgetName}})
	if *simLog {
		w.t.Logf("the VideoBudget controller reconciled: %+v, %v", res, err)
	}
}

// pick is the i-th render that passes keep, counting round.
func (w *simWorld) pick(i int64, keep func(*simRender) bool) *simRender {
	var c []*simRender
	for _, r := range w.renders {
		if keep(r) {
			c = append(c, r)
		}
	}
	if len(c) == 0 {
		return nil
	}
	return c[int(i)%len(c)]
}

// truth is what the service knows of the period [start, now): jobs submitted, and seconds of jobs
// that ended in it plus what the running ones hold (a bounded job its real length, an unbounded
// one its reservation, until its end is charged); and whether an unbounded job runs.
func (w *simWorld) truth(start time.Time) (submitted, seconds int64, unboundedRunning bool) {
	var charged []string
	if b, ok := w.budget(); ok {
		charged = b.Status.ChargedJobs
	}
	return w.truthOf(start, charged)
}

// truthOf is truth with the jobs the budget charged (its list holds far more than one run's jobs).
func (w *simWorld) truthOf(start time.Time, chargedJobs []string) (submitted, seconds int64, unboundedRunning bool) {
	charged := map[string]bool{}
	for _, id := range chargedJobs {
		charged[id] = true
	}
	for _, j := range w.jobs {
		if j.unguarded {
			continue
		}
		if !j.submitted.Before(start) {
			submitted++
		}
		switch {
		case w.late(j):
			// Given up at the deadline (or about to be): the budget knows its estimate, charged
			// in the period it gave up in, and it no longer runs beside the renders admitted
			// after it as far as the operator can know.
			if j.givenUpAt != nil && !j.givenUpAt.Before(start) {
				seconds += min(j.actual, j.reserved)
			}
		case j.ended == nil && j.unbounded:
			seconds += min(j.actual, j.reserved)
			unboundedRunning = true
		case j.ended == nil:
			seconds += j.actual
		case j.ended.Before(start):
		case j.unbounded && !charged[j.id]:
			// Its end is not folded yet (not read, or not written, or no write since): the budget
			// knows only its reservation until then, the one render a limit may be passed by.
			seconds += min(j.actual, j.reserved)
		default:
			seconds += j.actual
		}
	}
	return submitted, seconds, unboundedRunning
}

var errSimViolation = errors.New("invariant broken")

// simViolation is a broken invariant; kind names which.
type simViolation struct {
	kind, msg string
}

func (v *simViolation) Error() string { return fmt.Sprintf("%s: %s", v.kind, v.msg) }
func (v *simViolation) Unwrap() error { return errSimViolation }

// The invariants, as kinds of violation.
const (
	violRenders    = "admitted beyond maxRenders"
	violSeconds    = "admitted beyond maxRenderSeconds"
	violUnbounded  = "two renders without upper bound at once"
	violDecrease   = "a period's usage went down"
	violLost       = "a job's cost not charged"
	violTwice      = "a job charged twice"
	violCredits    = "AI credits not charged exactly once"
	violCreditJobs = "two jobs that may consume AI credits at once"
)

func (w *simWorld) violation(kind, format string, args ...any) error {
	return &simViolation{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// violationKind is the kind of err, or "".
func violationKind(err error) string {
	var v *simViolation
	if errors.As(err, &v) {
		return v.kind
	}
	return ""
}

// gatheredPaid reports whether attempt is the gathered one r came back to pay.
func (r *simRender) gatheredPaid(attempt string) bool { return attempt != "" && r.backFrom == attempt }

func (w *simWorld) admit(r *simRender) error {
	obj := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: simNS, Name: r.name, UID: r.uid}}
	var d Decision
	var err error
	var ahead *simAhead
	onGrant := false
	attempt := r.gathered
	if attempt != "" {
		// Back from the gather window: it pays on the reservation written ahead, or reserves the
		// ordinary way (Reserve decides which), as the render reconciler does. It comes back when
		// its call slot comes, after the budget write that carried its reservation was due (that
		// write may fail, or another change of the budget may come first).
		r.gathered, r.backFrom, ahead = "", attempt, r.ahead
		r.ahead = nil
		w.clk.Step(time.Second) // its CallIn (opGather): the time its reservation was written for
		w.queuedDue()
		_ = w.g.flushDue(w.ctx, simNS)
		grants := w.g.observer.(*simGrants)
		grants.last = ""
		d, err = w.g.Reserve(w.ctx, Submission{Kind: "VideoRender", Obj: obj, Attempt: attempt, Est: r.est})
		onGrant = grants.last == GrantUsed
	} else {
		r.attempts++
		attempt = fmt.Sprintf("a%d", r.attempts)
		d, err = w.g.reserve(w.ctx, "VideoRender", obj, attempt, "", r.est, nil)
	}
	if err != nil || d.Wait {
		return nil
	}
	if b, ok := w.budget(); ok && b.Status.PeriodStart != nil {
		// The period the decision was taken in (the reservation rolled it over if it ended), and
		// the limits (a reservation does not change them).
		start := b.Status.PeriodStart.Time
		if p := periodOf(b); b.Status.Period != p {
			// spec.period changed since the last write rolled it: a grant pays in the period as set.
			start, _ = PeriodBounds(p, w.now())
		}
		submitted, seconds, unboundedRunning := w.truth(start)
		jobs := len(w.jobs)
		if onGrant && ahead != nil && ahead.start.Equal(start) {
			// It pays on room decided when its reservation was written ahead: what the service
			// knew then is what that decision is checked against (the renders admitted since
			// counted that reservation).
			submitted, seconds, unboundedRunning, jobs = ahead.submitted, ahead.seconds, ahead.unboundedRunning, ahead.jobs
		}
		if m := b.Spec.MaxRenders; m != nil && submitted >= *m {
			return w.violation(violRenders, "admitted under maxRenders %d while %d jobs were submitted in the period from %s", *m, submitted, start.Format(time.RFC3339))
		}
		if m := b.Spec.MaxRenderSeconds; m != nil {
			if seconds >= *m {
				return w.violation(violSeconds, "admitted under maxRenderSeconds %d while the period's jobs cost %d s (budget used %d, reserved %d)",
					*m, seconds, b.Status.Used.RenderSeconds, b.Status.Reserved.RenderSeconds)
			}
			if r.est.Unbounded && unboundedRunning {
				return w.violation(violUnbounded, "a render without upper bound admitted under maxRenderSeconds %d while another such job runs at the service", *m)
			}
		}
		if err := w.checkCreditJobs(r.est.Credits, jobs); err != nil {
			return err
		}
	}
	if r.gatheredPaid(attempt) {
		// The VideoBudget controller looks while the render writes its in-flight record, a status
		// write's time after the decision: a reservation written ahead it paid on is still held.
		w.clk.Step(10 * time.Second)
		w.reconcile()
	}
	r.finalizer = d.Budgeted
	job := &simJob{id: fmt.Sprintf("job-%s-%s", r.name, attempt), actual: r.actual, credits: simCredits(r.actual), reserved: r.est.Seconds, unbounded: r.est.Unbounded,
		submitted: w.now(), live: true, unguarded: !d.Budgeted}
	w.jobs = append(w.jobs, job)
	r.job = job
	var vr videov1alpha1.VideoRender
	if err := w.server.Get(w.ctx, client.ObjectKey{Namespace: simNS, Name: r.name}, &vr); err != nil {
		w.t.Fatal(err)
	}
	vr.Status.JobID, vr.Status.SubmittedAt = job.id, &metav1.Time{Time: w.now()}
	vr.Status.CompletedAt = nil
	vr.Status.BudgetEstimate = r.est.Record()
	if err := w.server.Status().Update(w.ctx, &vr); err != nil {
		w.t.Fatal(err)
	}
	// Nothing tells the budget: its next write folds the record (fold.go).
	return nil
}

// noteAhead notes, for each render waiting to pay on a reservation written ahead, the truth when
// a ledger write first holds that reservation (simAhead).
// sendLedger is the managers' ledger watches (Ledgers.Watch): a write through the API server
// reaches every manager that runs at once.
func (w *simWorld) sendLedger(obj client.Object) {
	if cm, ok := obj.(*corev1.ConfigMap); ok {
		for _, g := range []*Guard{w.g, w.og} {
			if g != nil {
				g.ledgers.watcher().OnUpdate(nil, cm.DeepCopy())
			}
		}
	}
}

// syncLedgers sends, before each step, the ledger as the API server holds it (a watch's relist):
// a write or delete made around the managers (a restore, a platform's delete) reaches them too.
// A manager's watch has synced from its first step on.
func (w *simWorld) syncLedgers() {
	var cm corev1.ConfigMap
	err := w.server.Get(w.ctx, w.g.ledgers.at(simNS), &cm)
	for _, g := range []*Guard{w.g, w.og} {
		switch {
		case g == nil:
		case apierrors.IsNotFound(err):
			if cur := g.ledgers.copyOf(simNS); cur != nil {
				cm.Namespace, cm.Name, cm.UID = g.ledgers.Namespace, g.ledgers.Name(simNS), cur.uid
				cm.Labels = map[string]string{videov1alpha1.LabelLedgerNamespace: simNS} // deleted, not unlabelled
				g.ledgers.watcher().OnDelete(&cm)
			}
		case err == nil:
			g.ledgers.watcher().OnUpdate(nil, cm.DeepCopy())
		}
		if g != nil {
			g.ledgers.synced = func() bool { return true }
		}
	}
}

func (w *simWorld) noteAhead(obj client.Object) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return
	}
	var l *ledger
	for _, r := range w.renders {
		if r.gathered == "" || r.ahead != nil {
			continue
		}
		if l == nil {
			l = &ledger{}
			if json.Unmarshal([]byte(cm.Data[ledgerKey]), l) != nil || l.PeriodStart == nil {
				return
			}
		}
		if slices.ContainsFunc(l.Reservations, func(res videov1alpha1.BudgetReservation) bool {
			return res.UID == string(r.uid) && res.AttemptID == r.gathered && res.JobID == ""
		}) {
			submitted, seconds, unboundedRunning := w.truthOf(l.PeriodStart.Time, l.ChargedJobs)
			r.ahead = &simAhead{start: l.PeriodStart.Time, submitted: submitted, seconds: seconds, unboundedRunning: unboundedRunning, jobs: len(w.jobs)}
		}
	}
}

// writeEnds writes the ends of the ended jobs of live renders into their status, as the render
// controller does when it reads them; the budget's writes fold them.
func (w *simWorld) writeEnds() {
	for _, r := range w.renders {
		if j := r.job; j != nil && j.ended != nil && !j.endWritten && j.live {
			w.writeEnd(r)
		}
	}
}

func (w *simWorld) writeEnd(r *simRender) {
	j := r.job
	var vr videov1alpha1.VideoRender
	if err := w.server.Get(w.ctx, client.ObjectKey{Namespace: simNS, Name: r.name}, &vr); err != nil {
		w.t.Fatal(err)
	}
	vr.Status.CompletedAt = &metav1.Time{Time: *j.ended}
	vr.Status.VideoDuration = &metav1.Duration{Duration: time.Duration(j.actual) * time.Second}
	if j.credits > 0 {
		vr.Status.AICreditsUsed = strconv.FormatInt(j.credits, 10)
	}
	if err := w.server.Status().Update(w.ctx, &vr); err != nil {
		w.t.Fatal(err)
	}
	j.endWritten = true
}

// preview creates a preview whose job's answer will report credits, and lets it ask to pay once:
// admitted, its job is created and recorded in its status, for a budget write to fold.
func (w *simWorld) preview(credits int64) error {
	i := len(w.previews)
	p := &simPreview{name: fmt.Sprintf("p%d", i), uid: types.UID(fmt.Sprintf("uid-p%d", i)), credits: credits}
	w.previews = append(w.previews, p)
	sb := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: simNS, Name: p.name, UID: p.uid}}
	if credits > 0 {
		// Its request holds an aiVisual: a budget that rebuilds its reservation knows it may consume credits.
		sb.Spec.Scenes = []videov1alpha1.Scene{{Story: ptr.To("word"),
			Background: &videov1alpha1.Background{AIVisual: &videov1alpha1.AIVisual{Model: "flux-schnell"}}}}
	}
	if err := w.server.Create(w.ctx, sb); err != nil {
		w.t.Fatal(err)
	}
	d, err := w.g.reserve(w.ctx, kindStoryboard, sb, "a1", "", bound.Estimate{Credits: credits > 0}, nil)
	if err != nil || d.Wait {
		return nil
	}
	p.unguarded = !d.Budgeted
	if err := w.checkCreditJobs(credits > 0, len(w.jobs)); err != nil {
		return err
	}
	p.jobID, p.submitted = "pjob-"+p.name, w.now()
	sb.Status.JobID, sb.Status.SubmittedAt = p.jobID, &metav1.Time{Time: p.submitted}
	if err := w.server.Status().Update(w.ctx, sb); err != nil {
		w.t.Fatal(err)
	}
	return nil
}

// checkCreditJobs: under maxAICredits, a job that may consume AI credits (a render's or a
// preview's) is admitted only while no other such job runs at the service, as far as the
// operator can know (a job given up at the deadline no longer counts; a preview's, once its
// credits are charged; one paid with no budget and no limits held, never).
func (w *simWorld) checkCreditJobs(credits bool, jobs int) error {
	b, ok := w.budget()
	if !credits || !ok || b.Spec.MaxAICredits == nil {
		return nil
	}
	now := w.now()
	for _, j := range w.jobs[:jobs] {
		if j.credits > 0 && j.ended == nil && !w.late(j) && !j.unguarded {
			return w.violation(violCreditJobs, "admitted under maxAICredits %s while job %s, which may consume credits, runs", b.Spec.MaxAICredits, j.id)
		}
	}
	for _, p := range w.previews {
		over := p.deleted && (p.ended != nil || now.Sub(p.submitted) > simJobDeadline) // as far as the operator can know
		if p.credits > 0 && p.jobID != "" && !p.charged && !over && !p.unguarded {
			return w.violation(violCreditJobs, "admitted under maxAICredits %s while preview job %s, which may consume credits, runs", b.Spec.MaxAICredits, p.jobID)
		}
	}
	return nil
}

// previewEnd is what the preview controller does once p's job ended: its end is written with the
// credits its answer reports, for budget writes to fold, unless writeFails (nothing then: the job
// is read again at the next look).
func (w *simWorld) previewEnd(p *simPreview, writeFails bool) {
	if writeFails {
		return
	}
	var sb videov1alpha1.VideoStoryboard
	if err := w.server.Get(w.ctx, client.ObjectKey{Namespace: simNS, Name: p.name}, &sb); err != nil {
		w.t.Fatal(err)
	}
	sb.Status.CompletedAt = &metav1.Time{Time: w.now()}
	if p.credits > 0 {
		sb.Status.AICreditsUsed = strconv.FormatInt(p.credits, 10)
	}
	if err := w.server.Status().Update(w.ctx, &sb); err != nil {
		w.t.Fatal(err)
	}
	p.endWritten, p.charged, p.endAt = true, true, w.now()
}

// objectGone is what follows a render's or a preview's deletion: the manager's informer delivers the
// delete event with its last state, and the VideoBudget controller, woken, looks at once, and
// again after a failed write (the workqueue's backoff starts at 5 ms). A crash between the event
// and the write that records the job is not searched: the simulation crashes between steps.
func (w *simWorld) objectGone(last client.Object) {
	for _, r := range w.managers() {
		r.objectGone(last, false)
		for range 4 {
			if _, err := r.Reconcile(w.ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: simNS, Name: videov1alpha1.VideoBudgetName}}); err == nil {
				break
			}
		}
	}
}

// finalize is the render controller's reconcile of each render deleted with its charge finalizer
// (finishCharge): once its job ended at the service, its end is charged (its estimate once past
// the job deadline), and the object goes when the charge is written; a failed charge is tried
// again at the next step.
func (w *simWorld) finalize() {
	kept := w.finalizing[:0]
	for _, r := range w.finalizing {
		if !w.chargeDeleted(r) {
			kept = append(kept, r)
		}
	}
	w.finalizing = kept
}

func (w *simWorld) chargeDeleted(r *simRender) bool {
	j, now := r.job, w.now()
	last := &videov1alpha1.VideoRender{}
	if err := w.server.Get(w.ctx, client.ObjectKey{Namespace: simNS, Name: r.name}, last); err != nil {
		w.t.Fatal(err)
	}
	c := ChargeOf(last)
	switch {
	case j.ended == nil && now.Sub(j.submitted) <= simJobDeadline:
		return false // polled until it ends
	case j.ended == nil || j.ended.Sub(j.submitted) > simJobDeadline:
		c.Estimate, c.Seconds, c.Unreported = true, r.est.Seconds, r.est.Unreported
	default:
		c.Seconds = j.actual
		if j.credits > 0 {
			c.Credits = resource.NewQuantity(j.credits, resource.DecimalSI)
		}
	}
	j.unguarded = j.unguarded || w.unlimited()
	if err := w.g.Charge(w.ctx, simNS, c); err != nil {
		return false
	}
	if c.Estimate {
		j.givenUpAt = &now
		simGivenUp.Add(1)
	}
	if err := w.server.Delete(w.ctx, last); err != nil {
		w.t.Fatal(err)
	}
	w.objectGone(last)
	return true
}

// deleteBudget deletes b; the manager's informer delivers the delete event with its last state.
func (w *simWorld) deleteBudget(b *videov1alpha1.VideoBudget) {
	if err := w.server.Delete(w.ctx, b); err != nil {
		w.t.Fatal(err)
	}
	w.gone = b
}

// unlimited reports whether the namespace has no budget and the period of the one deleted is
// over: it is no longer limited, and what a gone object's job cost counts in that period, from its
// reservation, or nowhere (docs/spend-guard.md "While no budget exists").
func (w *simWorld) unlimited() bool {
	_, ok := w.budget()
	return !ok && (w.gone == nil || w.gone.Status.PeriodEnd == nil || !w.now().Before(w.gone.Status.PeriodEnd.Time))
}

// createAgain creates the VideoBudget deleted by opDeleteBudget again (with its status: a restore).
func (w *simWorld) createAgain(withStatus bool) {
	b := w.gone
	w.gone = nil
	w.budgetUID++
	fresh := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: simNS, Name: videov1alpha1.VideoBudgetName,
		UID: types.UID(fmt.Sprintf("budget-%d", w.budgetUID)), Generation: 1}, Spec: b.Spec}
	if err := w.server.Create(w.ctx, fresh); err != nil {
		w.t.Fatal(err)
	}
	if withStatus {
		fresh.Status = b.Status
		if err := w.server.Status().Update(w.ctx, fresh); err != nil {
			w.t.Fatal(err)
		}
	}
}

func (w *simWorld) step(o simOp) error {
	w.finalize()
	w.syncLedgers()
	switch o.kind {
	case opPreview:
		if err := w.preview(o.a); err != nil {
			return err
		}
	case opPreviewEnd:
		var open []*simPreview
		for _, p := range w.previews {
			if p.jobID != "" && !p.endWritten && !p.deleted {
				open = append(open, p)
			}
		}
		switch {
		case len(open) == 0:
		case o.b == 2:
			p := open[int(o.a)%len(open)]
			p.deleted = true
			p.unguarded = p.unguarded || w.unlimited()
			last := &videov1alpha1.VideoStoryboard{}
			if err := w.server.Get(w.ctx, client.ObjectKey{Namespace: simNS, Name: p.name}, last); err != nil {
				w.t.Fatal(err)
			}
			if err := w.server.Delete(w.ctx, last); err != nil {
				w.t.Fatal(err)
			}
			w.objectGone(last)
		default:
			w.previewEnd(open[int(o.a)%len(open)], o.b == 1)
		}
	case opCreate:
		i := len(w.renders)
		r := &simRender{name: fmt.Sprintf("r%d", i), uid: types.UID(fmt.Sprintf("uid-r%d", i)), actual: o.b}
		if o.a == 0 {
			r.est = bound.Estimate{Seconds: bound.DefaultSceneSeconds, Unbounded: true}
		} else {
			r.est = bound.Estimate{Seconds: o.a}
		}
		r.est.Credits = simCredits(o.b) > 0
		w.renders = append(w.renders, r)
		if err := w.server.Create(w.ctx, &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: simNS, Name: r.name, UID: r.uid}}); err != nil {
			w.t.Fatal(err)
		}
	case opAdmit:
		if r := w.pick(o.a, func(r *simRender) bool { return !r.deleted && (r.job == nil) }); r != nil {
			if err := w.admit(r); err != nil {
				return err
			}
		}
	case opGather:
		if r := w.pick(o.a, func(r *simRender) bool { return !r.deleted && r.job == nil && r.gathered == "" }); r != nil {
			r.attempts++
			attempt := fmt.Sprintf("a%d", r.attempts)
			obj := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: simNS, Name: r.name, UID: r.uid}}
			if d, _ := w.g.Reserve(w.ctx, Submission{Kind: "VideoRender", Obj: obj, Attempt: attempt, Est: r.est, CallIn: time.Second}); d.Budgeted {
				r.gathered, r.ahead = attempt, nil
			}
		}
	case opEnd:
		if r := w.pick(o.a, func(r *simRender) bool { return !r.deleted && r.job != nil && r.job.ended == nil }); r != nil {
			now := w.now()
			r.job.ended = &now
		}
		w.writeEnds()
	case opOrphanEnd:
		now := w.now()
		for _, j := range w.jobs {
			if !j.live && j.ended == nil {
				j.ended = &now
			}
		}
		for _, p := range w.previews {
			if p.deleted && p.ended == nil {
				p.ended = &now
			}
		}
	case opDeleteCharged:
		// Its end not written yet: finishCharge reads it from the service.
		if r := w.pick(o.a, func(r *simRender) bool { return !r.deleted && r.job != nil && !r.job.endWritten && r.finalizer }); r != nil {
			r.deleted, r.job.live = true, false
			w.finalizing = append(w.finalizing, r)
		}
	case opDeleteBudget:
		if b, ok := w.budget(); ok {
			w.deleteBudget(b)
			w.reconcile() // the controller's look at the deleted budget
		}
	case opFailLedger:
		w.failLedger = int(o.a)
	case opSwitch:
		w.switchTo(time.Duration(o.a))
	case opDeleteStripped:
		if r := w.pick(o.a, func(r *simRender) bool { return !r.deleted && r.job != nil && r.job.ended == nil }); r != nil {
			r.deleted, r.job.live = true, false
			r.job.unguarded = r.job.unguarded || w.unlimited()
			last := &videov1alpha1.VideoRender{}
			if err := w.server.Get(w.ctx, client.ObjectKey{Namespace: simNS, Name: r.name}, last); err != nil {
				w.t.Fatal(err)
			}
			if err := w.server.Delete(w.ctx, last); err != nil {
				w.t.Fatal(err)
			}
			w.objectGone(last)
		}
	case opSetSeconds:
		w.editSpec(func(s *videov1alpha1.VideoBudgetSpec) {
			s.MaxRenderSeconds = nil
			if o.a >= 0 {
				s.MaxRenderSeconds = ptr.To(o.a)
			}
		})
	case opSetRenders:
		w.editSpec(func(s *videov1alpha1.VideoBudgetSpec) {
			s.MaxRenders = nil
			if o.a >= 0 {
				s.MaxRenders = ptr.To(o.a)
			}
		})
	case opSetCredits:
		w.editSpec(func(s *videov1alpha1.VideoBudgetSpec) {
			s.MaxAICredits = nil
			if o.a >= 0 {
				s.MaxAICredits = resource.NewQuantity(o.a, resource.DecimalSI)
			}
		})
	case opSetPeriod:
		w.editSpec(func(s *videov1alpha1.VideoBudgetSpec) { s.Period = simPeriods[o.a] })
	case opClock:
		w.clk.Step(time.Duration(o.a))
		w.queuedDue()
		w.giveUpLate()
	case opReconcile:
		w.reconcile()
	case opCrash:
		w.start()
	case opReplace:
		if b, ok := w.budget(); ok {
			w.deleteBudget(b)
		}
		if w.gone != nil {
			w.createAgain(o.a == 1)
		}
	case opFailWrites:
		w.failWrites = int(o.a)
	case opCrashAfterEnd:
		// The end is in the render's status, no budget write has folded it: the next manager's
		// writes fold it, once.
		if r := w.pick(o.a, func(r *simRender) bool { return !r.deleted && r.job != nil && r.job.ended == nil }); r != nil {
			now := w.now()
			r.job.ended = &now
			w.writeEnd(r)
		}
		w.start()
	}
	return w.checkUsage()
}

// checkUsage: a period's usage never decreases.
func (w *simWorld) checkUsage() error {
	b, ok := w.budget()
	if !ok || b.Status.PeriodStart == nil || b.Status.PeriodEnd == nil || b.Status.LedgerBudgetUID != string(b.UID) {
		return nil
	}
	for _, win := range b.Status.Windows {
		if win.Period == videov1alpha1.BudgetPeriodMonthly {
			m := w.months[win.Start.UTC()]
			maxInto(&m, win.Used)
			w.months[win.Start.UTC()] = m
		}
	}
	key := b.Status.PeriodStart.UTC().Format(time.RFC3339) + "/" + b.Status.PeriodEnd.UTC().Format(time.RFC3339)
	was, u := w.seen[key], b.Status.Used
	if u.Renders < was.Renders || u.RenderSeconds < was.RenderSeconds {
		return w.violation(violDecrease, "the usage of the period %s went down: %d renders, %d s, after %d renders, %d s",
			key, u.Renders, u.RenderSeconds, was.Renders, was.RenderSeconds)
	}
	w.seen[key] = videov1alpha1.BudgetUsage{Renders: max(u.Renders, was.Renders), RenderSeconds: max(u.RenderSeconds, was.RenderSeconds)}
	return nil
}

// drain ends every job, charges what live renders can, and lets the controller settle: at the
// end every job that ended in the current period is charged at least what it cost.
func (w *simWorld) drain() error {
	w.failWrites, w.failLedger = 0, 0
	now := w.now()
	for _, j := range w.jobs {
		if j.ended == nil {
			j.ended = &now
		}
	}
	w.writeEnds()
	w.finalize()
	if len(w.finalizing) > 0 {
		return w.violation(violLost, "%d renders deleted with their charge finalizer could not charge their job's end", len(w.finalizing))
	}
	if w.gone != nil {
		w.createAgain(false) // the account is the budget's: one is created again
	}
	for _, p := range w.previews {
		switch {
		case p.deleted && p.ended == nil:
			p.ended = &now
		case p.jobID != "" && !p.endWritten && !p.deleted:
			w.previewEnd(p, false)
		}
	}
	w.queuedDue()
	// Each manager that runs looks, and again once the grace is past.
	// Each look is checked: a manager whose clock is ahead may roll a month another charged into.
	managers, active := w.managers(), w.r
	for i := range 3 {
		if i == 1 {
			w.clk.Step(2 * time.Minute)
		}
		for _, r := range managers {
			w.r = r
			w.reconcile()
			if err := w.checkUsage(); err != nil {
				return err
			}
		}
	}
	w.r = active
	if err := w.checkUsage(); err != nil {
		return err
	}
	b, ok := w.budget()
	if !ok || b.Status.PeriodStart == nil {
		return nil
	}
	var owed int64
	for _, j := range w.jobs {
		switch {
		case j.unguarded:
		case j.givenUpAt != nil:
			if !j.givenUpAt.Before(b.Status.PeriodStart.Time) {
				owed += min(j.actual, j.reserved)
			}
		case w.late(j):
			simLateGone.Add(1)
			// A gone render's late job: the controller charged its end or its estimate when it
			// looked past the deadline, in a period the model does not follow.
		case !j.ended.Before(b.Status.PeriodStart.Time):
			owed += j.actual
		}
	}
	if b.Status.Used.RenderSeconds < owed {
		return w.violation(violLost, "the period's jobs cost %d s and the budget charged %d s: %d s lost", owed, b.Status.Used.RenderSeconds, owed-b.Status.Used.RenderSeconds)
	}
	var previews int64
	for _, p := range w.previews {
		if p.jobID != "" && !p.unguarded && !p.submitted.Before(b.Status.PeriodStart.Time) {
			previews++
		}
	}
	if b.Status.Used.Previews < previews {
		return w.violation(violLost, "%d previews paid in the period, the budget counted %d", previews, b.Status.Used.Previews)
	}
	// The month as the budget counts it: that of the manager whose clock is furthest ahead (its
	// windows never roll back).
	month, _ := PeriodBounds(videov1alpha1.BudgetPeriodMonthly, w.now())
	for _, win := range b.Status.Windows {
		if win.Period == videov1alpha1.BudgetPeriodMonthly && win.Start.After(month) {
			month = win.Start.Time
		}
	}
	if err := w.checkCredits(month); err != nil {
		return err
	}
	return w.checkOnce()
}

// checkOnce: no job is counted or charged twice. Summed over the months, the budget counted at
// most the jobs the service created and charged at most what each cost, or its reservation's
// estimate where its end is never read (a gone render's unsettled submission is charged that).
func (w *simWorld) checkOnce() error {
	var counted, charged, most int64
	for _, m := range w.months {
		counted += m.Renders
		charged += m.RenderSeconds
	}
	for _, j := range w.jobs {
		most += max(j.actual, j.reserved)
	}
	if counted > int64(len(w.jobs)) {
		return w.violation(violTwice, "the budget counted %d renders in all, the service created %d jobs", counted, len(w.jobs))
	}
	if charged > most {
		return w.violation(violTwice, "the budget charged %d s in all, the jobs cost at most %d s", charged, most)
	}
	return nil
}

// checkCredits: summed over the months, the budget charged the AI credits of the previews deleted
// while their job ran (charged when the controller reads the end: in a month the model sees) and
// those of the preview and render jobs that ended in the current month, and at most the credits of every job, once; it counted no
// preview twice. A job given up at the deadline is charged its estimate, no credits.
func (w *simWorld) checkCredits(monthStart time.Time) error {
	var least, most, got, counted, paid int64
	for _, p := range w.previews {
		if p.jobID == "" {
			continue
		}
		most += p.credits
		paid++
		// A deleted preview's job read past the job deadline is given up: charged no credits. An
		// end written is charged in the period it ended, as a render's: the current month's, for
		// certain (a fold after a roll-over adds to a window that is gone).
		now := w.now()
		switch {
		case p.unguarded:
		case p.endWritten:
			if !p.endAt.Before(monthStart) {
				least += p.credits
			}
		case !p.deleted || (p.ended != nil && p.ended.Sub(p.submitted) <= simJobDeadline) ||
			(p.ended == nil && now.Sub(p.submitted) <= simJobDeadline):
			least += p.credits
		}
	}
	for _, j := range w.jobs {
		most += j.credits
		if !j.unguarded && !w.late(j) && j.ended != nil && !j.ended.Before(monthStart) {
			least += j.credits
		}
	}
	for _, m := range w.months {
		if m.AICredits != nil {
			got += m.AICredits.Value()
		}
		counted += m.Previews
	}
	if got < least || got > most {
		return w.violation(violCredits, "the budget charged %d AI credits in all; the previews and this month's render jobs reported %d, all jobs %d", got, least, most)
	}
	if counted > paid {
		return w.violation(violTwice, "the budget counted %d previews in all, %d were paid", counted, paid)
	}
	return nil
}

// simRun runs ops on a new world; it returns the first broken invariant and the step it broke at.
func simRun(t testing.TB, ops []simOp, verbose bool) (int, error) {
	w := newSimWorld(t)
	for i, o := range ops {
		if verbose {
			b, _ := w.budget()
			used := ""
			if b != nil {
				used = fmt.Sprintf(" [budget used %d renders %d s %d previews %s credits, reserved %d s, %d reservations]", b.Status.Used.Renders, b.Status.Used.RenderSeconds,
					b.Status.Used.Previews, b.Status.Used.AICredits, b.Status.Reserved.RenderSeconds, len(b.Status.Reservations))
				for _, win := range b.Status.Windows {
					used += fmt.Sprintf(" %s@%s:%s", win.Period, win.Start.Format("01-02"), win.Used.AICredits)
				}
				used += " ledgerUID=" + b.Status.LedgerBudgetUID
			}
			t.Logf("step %d: %s%s", i, o, used)
		}
		if err := w.step(o); err != nil {
			return i, err
		}
	}
	return len(ops), w.drain()
}

// simShrink removes steps from a failing sequence while it still fails.
func simShrink(t testing.TB, ops []simOp, kind string) []simOp {
	for chunk := len(ops) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(ops); {
			try := append(append([]simOp(nil), ops[:i]...), ops[i+chunk:]...)
			if _, err := simRun(t, try, false); violationKind(err) == kind {
				ops = try
				continue
			}
			i += chunk
		}
	}
	return ops
}

// TestSimulation runs the seeds (-sim.seeds from -sim.from, or the one -sim.seed). make test runs a
// short fixed set; make test-sim a long search (SEEDS=...). With -sim.all it goes on after a
// failing seed and reports one shrunk sequence for each invariant broken.
func TestSimulation(t *testing.T) {
	if *simSeed != 0 {
		ops := simGenerate(*simSeed, *simSteps)
		if at, err := simRun(t, ops, true); err != nil {
			t.Fatalf("seed %d, step %d: %v", *simSeed, at, err)
		}
		return
	}
	start := time.Now()
	// The seeds run on -sim.workers goroutines (each world is its own); the first failing seed of
	// each invariant (the lowest) is shrunk and reported.
	type failure struct {
		seed uint64
		at   int
		err  error
	}
	var (
		mu      sync.Mutex
		first   = map[string]failure{}
		failing int
		done    int
		next    = *simFrom
		wg      sync.WaitGroup
	)
	// A long search says how far it got (with -v, as it goes): a run stopped early still tells how
	// many seeds ran clean, and a seed that runs long is named.
	every := max(1000, *simSeeds/100)
	for range max(1, *simWorkers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				seed := next
				stop := seed >= *simFrom+uint64(*simSeeds) || (!*simAll && len(first) > 0)
				next++
				mu.Unlock()
				if stop {
					return
				}
				began := time.Now()
				at, err := simRun(t, simGenerate(seed, *simSteps), false)
				mu.Lock()
				if took := time.Since(began); took > 10*time.Second {
					t.Logf("seed %d took %s", seed, took.Round(time.Millisecond))
				}
				if done++; done%every == 0 {
					t.Logf("%d of %d seeds in %s, %d failing", done, *simSeeds, time.Since(start).Round(time.Second), failing+btoi(err != nil))
				}
				if err == nil {
					mu.Unlock()
					continue
				}
				t.Logf("seed %d failed at step %d (replay: -sim.seed=%d): %v", seed, at, seed, err)
				failing++
				kind := violationKind(err)
				if f, ok := first[kind]; !ok || seed < f.seed {
					first[kind] = failure{seed, at, err}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	givenUp, lateGone := simGivenUp.Load(), simLateGone.Load()
	found := map[string]string{}
	for kind, f := range first {
		if kind == "" {
			t.Fatalf("seed %d, step %d: %v", f.seed, f.at, f.err)
		}
		short := simShrink(t, simGenerate(f.seed, *simSteps)[:min(f.at+1, *simSteps)], kind)
		steps := make([]string, len(short))
		for i, o := range short {
			steps[i] = fmt.Sprintf("  %d. %s", i+1, o)
		}
		t.Logf("seed %d, shrunk, step by step:", f.seed)
		_, shortErr := simRun(t, short, true)
		found[kind] = fmt.Sprintf("seed %d broke an invariant at step %d: %v\nreplay: go test ./internal/spendguard/ -run TestSimulation -count=1 -args -sim.seed=%d -sim.steps=%d\n"+
			"shrunk to %d steps (%v):\n%s\nas a case: %#v", f.seed, f.at, f.err, f.seed, *simSteps, len(short), shortErr, strings.Join(steps, "\n"), short)
	}
	for _, report := range found {
		t.Error(report)
	}
	t.Logf("%d seeds of %d steps in %s: %d failing, %d invariants broken; %d jobs given up at the deadline by their render, %d late jobs of gone renders; "+
		"%d of %d renders that came to pay paid on their reservation written ahead", *simSeeds, *simSteps, time.Since(start).Round(time.Millisecond), failing, len(found),
		givenUp, lateGone, simGrantsUsed.Load(), simGrantsTaken.Load())
}

// queuedDue makes the changes queued for a later budget write (batch.go) due now: they wait on
// the process's clock too, and once time passed the VideoBudget controller's next reconcile
// writes them, with the reservations written ahead for gathered renders.
func (w *simWorld) queuedDue() {
	for _, r := range w.managers() {
		ws := &r.Guard.writers
		ws.mu.Lock()
		now := r.Guard.timers.Now()
		for _, s := range ws.slots {
			for _, o := range s.queue {
				if o.due.After(now) {
					o.due = now
				}
			}
		}
		ws.mu.Unlock()
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
