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
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// batchHarness is a guard over a fake API server whose ledger writes (the state's) pass through
// onWrite (nil lets them through): the first write of the guard is held until release is
// closed, so that the renders arriving meanwhile queue behind it and are written together.
type batchHarness struct {
	g       *Guard
	server  client.Client
	writes  atomic.Int32
	hold    chan struct{} // closed by the test to let the held write go
	held    chan struct{} // closed when the first write is being held
	onWrite func(n int32) error
	// watchLags stops the ledger watch's events: it has not delivered the writes since.
	watchLags atomic.Bool
}

func newBatchHarness(t *testing.T, spec videov1alpha1.VideoBudgetSpec, objs ...client.Object) *batchHarness {
	t.Helper()
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	budget := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName, UID: "b1"},
		Spec: spec, Status: videov1alpha1.VideoBudgetStatus{LedgerBudgetUID: "b1"}}
	server := withUIDs(fake.NewClientBuilder().WithScheme(s).WithObjects(append(objs, budget)...).WithStatusSubresource(budget).Build())
	h := &batchHarness{server: server, hold: make(chan struct{}), held: make(chan struct{})}
	var once sync.Once
	// The ledger's writes are the state's (ledger.go); the budget's status is their view.
	write := func(obj client.Object) error {
		if _, ok := obj.(*corev1.ConfigMap); !ok {
			return nil
		}
		n := h.writes.Add(1)
		once.Do(func() {
			close(h.held)
			<-h.hold
		})
		if h.onWrite != nil {
			return h.onWrite(n)
		}
		return nil
	}
	// The first guard's ledger watch (Ledgers.Watch) sees each write through c at once, until
	// watchLags is set.
	ledgers := NewLedgers("ops")
	sent := func(obj client.Object, err error) error {
		if cm, ok := obj.(*corev1.ConfigMap); ok && err == nil && !h.watchLags.Load() {
			ledgers.watcher().OnUpdate(nil, cm.DeepCopy())
		}
		return err
	}
	c := interceptor.NewClient(server, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := write(obj); err != nil {
				return err
			}
			return sent(obj, c.Patch(ctx, obj, patch, opts...))
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := write(obj); err != nil {
				return err
			}
			return sent(obj, c.Create(ctx, obj, opts...))
		},
	})
	h.g = New(c, c, clocktesting.NewFakeClock(time.Now()), 10*time.Second, ledgers)
	return h
}

// editLedger changes the namespace's ledger as another manager would.
func (h *batchHarness) editLedger(t *testing.T, edit func(*ledger)) {
	t.Helper()
	l, rv, err := h.g.ledgers.read(t.Context(), h.server, "team-a")
	if err != nil || l == nil {
		t.Fatalf("reading the ledger: %v, %v", l, err)
	}
	edit(l)
	if err := h.g.ledgers.store(t.Context(), h.server, "team-a", *l, rv); err != nil {
		t.Fatal(err)
	}
}

// pump does what the VideoBudget controller does when the guard wakes it (Reconcile's first
// step): it writes the changes and the ledger copy that are due. It follows the harness's guard
// of the moment, until the test ends.
func (h *batchHarness) pump(t *testing.T) {
	t.Helper()
	wake := wakes(t, h.g.ledgers)
	g := h.g
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
	})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case ns := <-wake:
				_ = g.flushDue(ctx, ns)
			}
		}
	}()
}

// wakes listens to l's wake-ups as the VideoBudget controller does (Ledgers.Source), and returns
// the namespaces woken, each once its delay passed.
func wakes(t *testing.T, l *Ledgers) <-chan string {
	t.Helper()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	if err := l.Source().Start(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 1024)
	go func() {
		for {
			req, shutdown := q.Get()
			if shutdown {
				return
			}
			q.Done(req)
			select {
			case ch <- req.Namespace:
			default: // nobody reads: the namespace was woken before
			}
		}
	}()
	t.Cleanup(q.ShutDown)
	return ch
}

func (h *batchHarness) budget(t *testing.T) *videov1alpha1.VideoBudget {
	t.Helper()
	var b videov1alpha1.VideoBudget
	if err := h.server.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}, &b); err != nil {
		t.Fatal(err)
	}
	b.Status.ExpandRunningJobs()
	return &b
}

func batchRender(i int) *videov1alpha1.VideoRender {
	return &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: fmt.Sprintf("r%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))}}
}

// recordInStatus writes into vr's status, through c, what its render controller writes there
// once the paid call answered: job jobID, submitted at at, no submission in flight (vr is
// created when c has none). Nothing tells the budget: its next write folds it (fold.go).
func recordInStatus(t *testing.T, c client.Client, vr *videov1alpha1.VideoRender, jobID string, at time.Time) {
	t.Helper()
	writeRenderStatus(t, c, vr, func(st *videov1alpha1.VideoRenderStatus) {
		st.Submission = nil
		st.JobID, st.SubmittedAt = jobID, &metav1.Time{Time: at}
		st.CompletedAt, st.VideoDuration, st.Failure = nil, nil, nil
	})
}

// endInStatus writes into vr's status, through c, the end of its job at at: a video secs long.
// Nothing tells the budget: its next write folds it (fold.go).
func endInStatus(t *testing.T, c client.Client, vr *videov1alpha1.VideoRender, secs int64, at time.Time) {
	t.Helper()
	writeRenderStatus(t, c, vr, func(st *videov1alpha1.VideoRenderStatus) {
		st.CompletedAt = &metav1.Time{Time: at}
		st.VideoDuration = &metav1.Duration{Duration: time.Duration(secs) * time.Second}
	})
}

// writeRenderStatus edits vr's status as c has it (vr's own when c has none, then created) and
// writes it; vr is left as written.
func writeRenderStatus(t *testing.T, c client.Client, vr *videov1alpha1.VideoRender, edit func(*videov1alpha1.VideoRenderStatus)) {
	t.Helper()
	cur := &videov1alpha1.VideoRender{}
	err := c.Get(t.Context(), client.ObjectKeyFromObject(vr), cur)
	switch {
	case apierrors.IsNotFound(err):
		cur = vr.DeepCopy()
		edit(&cur.Status)
		err = c.Create(t.Context(), cur)
	case err == nil:
		edit(&cur.Status)
		err = c.Update(t.Context(), cur)
	}
	if err != nil {
		t.Fatal(err)
	}
	cur.DeepCopyInto(vr)
}

// foldByGuardWrite makes a write of the guard that carries only what the namespace's objects
// recorded (fold.go): it stands for the namespace's next guard write, whatever it is for.
func foldByGuardWrite(t *testing.T, g *Guard) {
	t.Helper()
	if err := g.mutateBudget(t.Context(), "team-a", ChangeFold, func(*videov1alpha1.VideoBudget) bool { return false }); err != nil {
		t.Fatal(err)
	}
}

// reserveBehind reserves for render 0, holds its write, and reserves for renders 1..n while it
// is held: they queue, and are written together once it goes. It returns each render's decision.
func (h *batchHarness) reserveBehind(t *testing.T, n int) []Decision {
	t.Helper()
	decisions := make([]Decision, n+1)
	errs := make([]error, n+1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		decisions[0], errs[0] = h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{Seconds: 10}, nil)
	}()
	<-h.held
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			decisions[i], errs[i] = h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", bound.Estimate{Seconds: 10}, nil)
		}()
	}
	// Every reservation is queued behind the held write before it goes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.g.writers.mu.Lock()
		queued := len(h.g.writers.slots["team-a"].queue)
		h.g.writers.mu.Unlock()
		if queued == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d reservations queued", queued, n)
		}
		time.Sleep(time.Millisecond)
	}
	close(h.hold)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("render %d: %v", i, err)
		}
	}
	return decisions
}

// docs/architecture.md "Load on the cluster": reservations of renders waiting in the same namespace
// are written together, each still reserved before its caller goes on.
func TestReservationsWaitingTogetherAreWrittenInOneBudgetWrite(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(100))})
	const n = 12
	for i, d := range h.reserveBehind(t, n) {
		if d.Wait || !d.Budgeted {
			t.Errorf("render %d: %+v, want room", i, d)
		}
	}
	if w := h.writes.Load(); w != 2 {
		t.Errorf("%d budget writes for %d reservations, want 2 (the held one, then one for all that queued behind it)", w, n+1)
	}
	if b := h.budget(t); len(b.Status.Reservations) != n+1 || b.Status.Reserved.Renders != n+1 {
		t.Errorf("%d reservations (reserved.renders %d), want %d", len(b.Status.Reservations), b.Status.Reserved.Renders, n+1)
	}
}

// "At most one render beyond a limit" (docs/spend-guard.md): a limit reached inside a batch
// admits only the renders that fit; the others wait, and nothing is written for them.
func TestALimitReachedInsideABatchAdmitsOnlyTheRendersThatFit(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(5))})
	const n = 9
	admitted, waiting := 0, 0
	for _, d := range h.reserveBehind(t, n) {
		if d.Wait {
			waiting++
			if d.Limit != videov1alpha1.BudgetLimitRenders {
				t.Errorf("waits on %q, want maxRenders", d.Limit)
			}
		} else {
			admitted++
		}
	}
	if admitted != 5 || waiting != n+1-5 {
		t.Errorf("%d admitted and %d waiting, want 5 and %d", admitted, waiting, n+1-5)
	}
	if b := h.budget(t); len(b.Status.Reservations) != 5 || b.Status.Reserved.Renders != 5 {
		t.Errorf("%d reservations written, want the 5 that fit", len(b.Status.Reservations))
	}
	// Unbounded renders under maxRenderSeconds: one at a time, inside a batch as well.
	h = newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To(int64(10_000))})
	unbounded := bound.Estimate{Seconds: 30, Unbounded: true}
	var wg sync.WaitGroup
	var admittedUnbounded atomic.Int32
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = h.g.reserve(t.Context(), "VideoRender", batchRender(100), "a", "", bound.Estimate{Seconds: 5}, nil)
	}()
	<-h.held
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", unbounded, nil)
			if err == nil && !d.Wait {
				admittedUnbounded.Add(1)
			}
		}()
	}
	for {
		h.g.writers.mu.Lock()
		queued := len(h.g.writers.slots["team-a"].queue)
		h.g.writers.mu.Unlock()
		if queued == 4 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(h.hold)
	wg.Wait()
	if a := admittedUnbounded.Load(); a != 1 {
		t.Errorf("%d unbounded renders admitted in one batch, want 1", a)
	}
}

// A batch that loses its lock is applied again to the budget as the API server has it: each
// reservation's decision is taken again and nothing is counted twice, folds and charges
// included.
func TestABatchThatLosesItsLockIsRetriedWithoutCountingTwice(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(6))})
	// The second write (the batch) loses its lock twice: meanwhile another manager's write
	// reserved one more render (a change made elsewhere).
	var lost, conflicts atomic.Int32
	h.onWrite = func(n int32) error {
		if n >= 2 && lost.Add(1) <= 2 {
			conflicts.Add(1)
			if lost.Load() == 1 {
				h.editLedger(t, func(l *ledger) {
					l.Reservations = append(l.Reservations, videov1alpha1.BudgetReservation{
						Kind: "VideoRender", Name: "elsewhere", UID: "uid-elsewhere", AttemptID: "x", ReservedAt: metav1.Now()})
				})
			}
			return apierrors.NewConflict(schema.GroupResource{Group: videov1alpha1.GroupVersion.Group, Resource: "videobudgets"}, videov1alpha1.VideoBudgetName, fmt.Errorf("the object has been modified"))
		}
		return nil
	}
	decisions := h.reserveBehind(t, 7)
	admitted := 0
	for _, d := range decisions {
		if !d.Wait {
			admitted++
		}
	}
	// 6 renders fit: render 0 and the one reserved elsewhere took two, so 4 of the batch of 7.
	if admitted != 5 {
		t.Errorf("%d admitted, want 5 (render 0 and 4 of the batch)", admitted)
	}
	b := h.budget(t)
	if b.Status.Reserved.Renders != 6 || len(b.Status.Reservations) != 6 {
		t.Fatalf("reserved %d (%d reservations), want 6: none counted twice after the conflicts", b.Status.Reserved.Renders, len(b.Status.Reservations))
	}
	// The admitted renders record their jobs and their ends (10 s each) in their own status; the
	// guard writes that come next (previews' credits, charged by job id) fold them, the first of
	// these writes losing its lock once.
	now := h.g.clock.Now()
	for i, d := range decisions {
		if d.Wait {
			continue
		}
		vr := batchRender(i)
		recordInStatus(t, h.server, vr, fmt.Sprintf("job-%d", i), now)
		endInStatus(t, h.server, vr, 10, now)
	}
	lost.Store(1)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := JobCharge{JobID: fmt.Sprintf("preview-%d", i), Credits: ptr.To(resource.MustParse("2"))}
			if err := h.g.Charge(t.Context(), "team-a", c); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if c := conflicts.Load(); c != 3 {
		t.Fatalf("the writes carrying the folds lost their lock %d times, want once", c-2)
	}
	b = h.budget(t)
	credits := b.Status.Used.AICredits
	if b.Status.Used.Renders != 5 || b.Status.Used.RenderSeconds != 50 || len(b.Status.ChargedJobs) != 8 || len(b.Status.Reservations) != 1 ||
		credits == nil || credits.Cmp(resource.MustParse("6")) != 0 {
		t.Errorf("used %d renders, %d s and %v credits, %d charged jobs, %d reservations; want 5, 50 s and 6 credits, 8 (5 ends, 3 previews) and the one made elsewhere",
			b.Status.Used.Renders, b.Status.Used.RenderSeconds, credits, len(b.Status.ChargedJobs), len(b.Status.Reservations))
	}
}

// A crash between a batch's write and the paid calls: the reservations are in the budget, no
// object recorded a submission of them. They are never settled by their reconciles (the
// process is gone); the VideoBudget controller releases them once they are older than the
// submission's time, as after any crash, and charges the one whose object is gone.
func TestReservationsOfABatchWhosePaidCallsNeverCameAreReleasedByTheBudgetController(t *testing.T) {
	objs := []client.Object{}
	for i := range 4 {
		objs = append(objs, batchRender(i))
	}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))}, objs...)
	h.reserveBehind(t, 4) // render 4 has no object: deleted since, it may have been sent
	if b := h.budget(t); len(b.Status.Reservations) != 5 {
		t.Fatalf("%d reservations written, want 5", len(b.Status.Reservations))
	}
	// The process is gone: a new one's VideoBudget controller, past the submission's time.
	clk := clocktesting.NewFakeClock(time.Now().Add(time.Hour))
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clk, Grace: time.Minute, Recheck: time.Hour,
		Retry: time.Second, Ledgers: NewLedgers("ops")})
	if _, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}); err != nil {
		t.Fatal(err)
	}
	b := h.budget(t)
	if len(b.Status.Reservations) != 0 || b.Status.Reserved.Renders != 0 || b.Status.Used.Renders != 1 {
		t.Errorf("after the crash: %d reservations, reserved %d, used %d; want none left, and only the deleted object's counted",
			len(b.Status.Reservations), b.Status.Reserved.Renders, b.Status.Used.Renders)
	}
}

// writeTally counts the budget writes by writer and outcome, and the changes they carried by kind.
type writeTally struct {
	noMetrics
	mu      sync.Mutex
	writes  map[string]int
	changes map[string]int
}

func (w *writeTally) ObserveBudgetWrite(writer, _, result string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.writes == nil {
		w.writes = map[string]int{}
	}
	w.writes[writer+"/"+result]++
}

func (w *writeTally) ObserveBudgetChanges(change string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changes == nil {
		w.changes = map[string]int{}
	}
	w.changes[change] += n
}

// changed is how many changes of kind the written writes carried.
func (w *writeTally) changed(kind string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changes[kind]
}

// The jobs renders record in their own status cost no write of their own: they ride with the
// next write of the budget, here a reservation, which carries the three jobs recorded before it.
// Alone, a recorded job is folded by the VideoBudget controller once it is foldAge old: until
// then a guard write may still carry it.
func TestRecordedJobsRideWithTheNextBudgetWrite(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))}, batchRender(0), batchRender(1), batchRender(2), batchRender(3))
	close(h.hold)
	tally := &writeTally{}
	h.g.observeWrites(tally)
	for i := range 3 {
		if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", bound.Estimate{}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v %v", i, d, err)
		}
	}
	before := h.writes.Load()
	now := h.g.clock.Now()
	for i := range 3 {
		recordInStatus(t, h.server, batchRender(i), fmt.Sprintf("job-%d", i), now)
	}
	if w := h.writes.Load() - before; w != 0 {
		t.Fatalf("%d budget writes for three recorded jobs alone, want none", w)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(3), "a", "", bound.Estimate{}, nil); err != nil || d.Wait {
		t.Fatalf("render 3: %+v %v", d, err)
	}
	if w := h.writes.Load() - before; w != 1 {
		t.Errorf("%d writes for a reservation and three recorded jobs, want 1", w)
	}
	if f, r := tally.changed(ChangeFold), tally.changed(ChangeReserve); f != 3 || r != 4 {
		t.Errorf("the writes carried %d folds and %d reservations, want 3 and 4", f, r)
	}
	b := h.budget(t)
	if b.Status.Used.Renders != 3 || len(b.Status.Reservations) != 4 || b.Status.Reserved.Renders != 1 {
		t.Fatalf("used %d, %d reservations (%d in flight); want 3, the three running jobs' and render 3's in flight",
			b.Status.Used.Renders, len(b.Status.Reservations), b.Status.Reserved.Renders)
	}
	for i := range 3 {
		if (JobCharge{JobID: fmt.Sprintf("job-%d", i)}).pending(b) < 0 {
			t.Errorf("no reservation holds job-%d, render %d's running job: %+v", i, i, b.Status.Reservations)
		}
	}
	// Alone: render 3 records its job, and no guard write comes.
	recordInStatus(t, h.server, batchRender(3), "job-3", now)
	clk := clocktesting.NewFakeClock(now.Add(foldAge - time.Second))
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clk, Grace: time.Hour, Recheck: time.Hour,
		Retry: time.Second, Ledgers: h.g.ledgers, Guard: h.g})
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}
	res, err := r.Reconcile(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if b := h.budget(t); b.Status.Used.Renders != 3 || b.Status.Reserved.Renders != 1 {
		t.Errorf("a job recorded %s ago was folded by the controller (used %d, %d in flight); want it left for a guard write until foldAge",
			foldAge-time.Second, b.Status.Used.Renders, b.Status.Reserved.Renders)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > time.Second {
		t.Errorf("the controller looks again in %s, want when the recorded job is foldAge old (within a second)", res.RequeueAfter)
	}
	clk.Step(time.Second)
	if _, err := r.Reconcile(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if b := h.budget(t); b.Status.Used.Renders != 4 || b.Status.Reserved.Renders != 0 || (JobCharge{JobID: "job-3"}).pending(b) < 0 {
		t.Errorf("a job recorded foldAge ago, no guard write since: used %d, %d in flight, reservations %+v; want it folded",
			b.Status.Used.Renders, b.Status.Reserved.Renders, b.Status.Reservations)
	}
}

// "Every paid job is charged, whatever happens to its object" (docs/spend-guard.md): the
// reservation of a running job stands until its end is charged, whether its render records its
// end or is gone without its finalizer.
func TestTheRunningJobsReservationStandsUntilItsEndIsCharged(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))}, batchRender(0), batchRender(1))
	close(h.hold)
	now := h.g.clock.Now()
	for i := range 2 {
		if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", bound.Estimate{Seconds: 42}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v %v", i, d, err)
		}
		recordInStatus(t, h.server, batchRender(i), fmt.Sprintf("job-%d", i), now)
	}
	foldByGuardWrite(t, h.g)
	b := h.budget(t)
	if b.Status.Used.Renders != 2 || len(b.Status.Reservations) != 2 || b.Status.Reservations[0].JobID != "job-0" || b.Status.Reservations[1].JobID != "job-1" {
		t.Fatalf("both counted, their reservations kept for their running jobs: %+v", b.Status)
	}
	// Render 1 is deleted without its finalizer while its job runs; render 0's job ends, and the
	// render writes its end (40 s) in its own status.
	if err := h.server.Delete(t.Context(), batchRender(1)); err != nil {
		t.Fatal(err)
	}
	endInStatus(t, h.server, batchRender(0), 40, now)
	// The VideoBudget controller: with nothing to read render 1's job's end, it charges its
	// estimate (with a reader, it reads the end: reconciler_test.go). Render 0's end is young: a
	// guard write may carry it, and the controller keeps its reservation until foldAge.
	clk := clocktesting.NewFakeClock(now.Add(time.Second))
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clk,
		Grace: time.Hour, Recheck: time.Hour, Retry: time.Second, Ledgers: NewLedgers("ops")})
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}
	if _, err := r.Reconcile(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	b = h.budget(t)
	if len(b.Status.Reservations) != 1 || b.Status.Reservations[0].JobID != "job-0" || b.Status.Used.RenderSeconds != 42 || !charged(b, "job-1") {
		t.Fatalf("render 1 gone, render 0's end a second old: %+v; want render 0's reservation kept and render 1's 42 s charged", b.Status)
	}
	clk.SetTime(now.Add(foldAge))
	if _, err := r.Reconcile(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	b = h.budget(t)
	if len(b.Status.Reservations) != 0 || b.Status.Used.Renders != 2 || b.Status.Used.RenderSeconds != 82 || len(b.Status.ChargedJobs) != 2 {
		t.Errorf("after render 0's end and render 1 gone without its finalizer: %+v; want no reservation, 2 renders, 40 + 42 seconds", b.Status)
	}
}

// Reservations written ahead for renders that wait for their key's call budget ride with one
// budget write; each render then goes on to pay without a write of its own, and only the
// renders that fit are granted.
func TestReservationsWrittenAheadAreSharedAndStillBoundTheLimit(t *testing.T) {
	objs := []client.Object{}
	for i := range 6 {
		objs = append(objs, batchRender(i))
	}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(4))}, objs...)
	close(h.hold)
	h.pump(t)
	for i := range 6 {
		h.g.reserveAhead("VideoRender", batchRender(i), fmt.Sprintf("a%d", i), "", bound.Estimate{Seconds: 3}, nil, 0)
	}
	// Written: the write counted (the interceptor counts it as it starts) and ended (each grant
	// learns its outcome once its write returned).
	written := func() bool {
		h.g.grants.mu.Lock()
		defer h.g.grants.mu.Unlock()
		for i := range 6 {
			if gr := h.g.grants.byUID[batchRender(i).UID]; gr == nil || !gr.ended {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(2*aheadWindow + settleDelay)
	for !written() {
		if time.Now().After(deadline) {
			t.Fatal("the reservations written ahead were never written")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if w := h.writes.Load(); w != 1 {
		t.Errorf("%d budget writes for 6 reservations written ahead, want 1", w)
	}
	taken := 0
	for i := range 6 {
		vr := batchRender(i)
		if got, _ := h.g.grantOf(vr.UID); got != fmt.Sprintf("a%d", i) {
			t.Errorf("render %d submits with attempt %q, want the one reserved ahead", i, got)
		}
		if _, ok := h.g.takeGrant(t.Context(), "VideoRender", vr, fmt.Sprintf("a%d", i), "", bound.Estimate{Seconds: 3}); ok {
			taken++
		}
	}
	if taken != 4 {
		t.Errorf("%d renders went on with a reservation written ahead, want the 4 that fit", taken)
	}
	if w := h.writes.Load(); w != 1 {
		t.Errorf("%d budget writes after the renders took their reservations, want still 1", w)
	}
	// A request changed meanwhile is not paid on the reservation made for the old one.
	if _, ok := h.g.takeGrant(t.Context(), "VideoRender", batchRender(0), "a0", "", bound.Estimate{Seconds: 30}); ok {
		t.Error("a grant was taken twice, or for another estimate")
	}
	// The reservations protect themselves, whatever process looks: within the controller's grace
	// after their time they are kept (a render pays on one only within takeWithin, and its
	// in-flight record lands before the grace ends); past it, one whose render shows no such
	// attempt is released as never sent.
	reconcileAt := func(at time.Time) {
		t.Helper()
		r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clocktesting.NewFakeClock(at), Grace: time.Minute,
			Recheck: time.Hour, Retry: time.Second, Ledgers: NewLedgers("ops")})
		if _, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}); err != nil {
			t.Fatal(err)
		}
	}
	reconcileAt(h.g.clock.Now().Add(time.Minute - 2*time.Second))
	if b := h.budget(t); len(b.Status.Reservations) != 4 {
		t.Errorf("%d reservations kept within the grace, want the 4 granted", len(b.Status.Reservations))
	}
	reconcileAt(h.g.clock.Now().Add(2 * time.Minute))
	if b := h.budget(t); len(b.Status.Reservations) != 0 || b.Status.Used.Renders != 0 {
		t.Errorf("past the grace, no render in flight: %d reservations, %d used; want all released", len(b.Status.Reservations), b.Status.Used.Renders)
	}
}

// A paid submission in a namespace without a budget asks the ledger whether a deleted budget's
// limits hold: a ledger that holds none is not read from the API server again for each one,
// and a budget's write of the ledger is seen at once.
func TestALedgerThatHoldsNoLimitsIsNotReadForEverySubmission(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{videov1alpha1.AddToScheme, corev1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	server := fake.NewClientBuilder().WithScheme(s).Build()
	var reads atomic.Int32
	c := interceptor.NewClient(server, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				reads.Add(1)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	g := New(c, c, clocktesting.NewFakeClock(time.Now()), 10*time.Second, NewLedgers("ops"))
	submit := func(from int) {
		for i := from; i < from+10; i++ {
			if d, err := g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", bound.Estimate{}, nil); err != nil || d.Wait || d.Budgeted {
				t.Fatalf("render %d in a namespace without a budget: %+v %v", i, d, err)
			}
		}
	}
	submit(0)
	if n := reads.Load(); n != 10 {
		t.Errorf("%d ledger reads for 10 submissions before the ledgers' watch synced, want 10", n)
	}
	inf := &fakeInformer{}
	if err := g.ledgers.Watch(inf); err != nil {
		t.Fatal(err)
	}
	submit(10)
	if n := reads.Load(); n != 20 {
		t.Errorf("%d ledger reads for 10 more submissions while the watch has not synced, want 10 more", n)
	}
	inf.synced.Store(true)
	submit(20)
	if n := reads.Load(); n != 20 {
		t.Errorf("%d ledger reads for 10 more submissions once the watch synced, want none more", n-20)
	}
	// A budget of this period wrote the ledger, then was deleted: its limits hold at once.
	now := time.Now()
	start, end := PeriodBounds(videov1alpha1.BudgetPeriodMonthly, now)
	b := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName, UID: "b1"},
		Status: videov1alpha1.VideoBudgetStatus{PeriodStart: &metav1.Time{Time: start}, PeriodEnd: &metav1.Time{Time: end}}}
	if err := g.ledgers.write(t.Context(), c, b); err != nil {
		t.Fatal(err)
	}
	if d, err := g.reserve(t.Context(), "VideoRender", batchRender(99), "a", "", bound.Estimate{}, nil); err != nil || !d.Wait {
		t.Errorf("after the ledger was written by a budget now deleted: %+v %v; want a wait", d, err)
	}
}

// fakeInformer is an informer whose initial list is done once synced is set; it sends nothing.
type fakeInformer struct {
	cache.Informer // not called
	synced         atomic.Bool
}

func (f *fakeInformer) AddEventHandler(toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return fakeRegistration{f: f}, nil
}

// fakeRegistration tells HasSynced only (the rest of the interface is not called).
type fakeRegistration struct {
	toolscache.ResourceEventHandlerRegistration
	f *fakeInformer
}

func (r fakeRegistration) HasSynced() bool { return r.f.synced.Load() }

// Renders that end close together write their ends in their own status, and nothing else: the
// namespace's next budget write, here a reservation, carries them all, before its decision (the
// ends make the room it takes under maxRenderSeconds).
func TestEndsOfRendersEndingTogetherRideWithOneWrite(t *testing.T) {
	var objs []client.Object
	for i := range 6 {
		objs = append(objs, batchRender(i))
	}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10)), MaxRenderSeconds: ptr.To(int64(150))}, objs...)
	close(h.hold)
	tally := &writeTally{}
	h.g.observeWrites(tally)
	now := h.g.clock.Now()
	for i := range 5 {
		if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", bound.Estimate{Seconds: 30}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v %v", i, d, err)
		}
		recordInStatus(t, h.server, batchRender(i), fmt.Sprintf("job-%d", i), now)
	}
	foldByGuardWrite(t, h.g)
	if b := h.budget(t); b.Status.Used.Renders != 5 || b.Status.Reserved.RenderSeconds != 150 {
		t.Fatalf("five running jobs: used %d renders, reserved %d s; want 5 and 150 s", b.Status.Used.Renders, b.Status.Reserved.RenderSeconds)
	}
	before, folds := h.writes.Load(), tally.changed(ChangeFold)
	for i := range 5 {
		endInStatus(t, h.server, batchRender(i), 10, now)
	}
	if w := h.writes.Load() - before; w != 0 {
		t.Fatalf("%d budget writes for five ends alone, want none", w)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(5), "a", "", bound.Estimate{Seconds: 30}, nil); err != nil || d.Wait {
		t.Fatalf("render 5, the five ends written before it: %+v %v", d, err)
	}
	if w := h.writes.Load() - before; w != 1 {
		t.Errorf("%d budget writes for 5 ends and a reservation, want 1", w)
	}
	if f := tally.changed(ChangeFold) - folds; f != 5 {
		t.Errorf("the write carried %d folded ends, want 5", f)
	}
	if b := h.budget(t); b.Status.Used.RenderSeconds != 50 || len(b.Status.ChargedJobs) != 5 || len(b.Status.Reservations) != 1 {
		t.Errorf("used %d s, %d charged jobs, %d reservations; want 50 s, 5 and render 5's", b.Status.Used.RenderSeconds, len(b.Status.ChargedJobs), len(b.Status.Reservations))
	}
}
