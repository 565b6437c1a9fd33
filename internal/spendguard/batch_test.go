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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// batchHarness is a guard over a fake API server whose budget status writes pass through
// onWrite (nil lets them through): the first write of the guard is held until release is
// closed, so that the renders arriving meanwhile queue behind it and are written together.
type batchHarness struct {
	g       *Guard
	server  client.Client
	writes  atomic.Int32
	hold    chan struct{} // closed by the test to let the held write go
	held    chan struct{} // closed when the first write is being held
	onWrite func(n int32) error
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
	server := fake.NewClientBuilder().WithScheme(s).WithObjects(append(objs, budget)...).WithStatusSubresource(budget).
		WithIndex(&videov1alpha1.VideoRender{}, ChargeMarkIndex, IndexChargeMark).Build()
	h := &batchHarness{server: server, hold: make(chan struct{}), held: make(chan struct{})}
	var once sync.Once
	c := interceptor.NewClient(server, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*videov1alpha1.VideoBudget); ok {
				n := h.writes.Add(1)
				once.Do(func() {
					close(h.held)
					<-h.hold
				})
				if h.onWrite != nil {
					if err := h.onWrite(n); err != nil {
						return err
					}
				}
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	h.g = New(c, c, clocktesting.NewFakeClock(time.Now()), 10*time.Second, NewLedgers("ops"))
	return h
}

// pump does what the VideoBudget controller does when the guard wakes it (Reconcile's first
// step): it writes the changes and the ledger copy that are due. It follows the harness's guard
// of the moment, until the test ends.
func (h *batchHarness) pump(t *testing.T) {
	t.Helper()
	wake := h.g.ledgers.Wake()
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
			case ev := <-wake:
				g.flushDue(ctx, ev.Object.GetNamespace())
			}
		}
	}()
}

func (h *batchHarness) budget(t *testing.T) *videov1alpha1.VideoBudget {
	t.Helper()
	var b videov1alpha1.VideoBudget
	if err := h.server.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}, &b); err != nil {
		t.Fatal(err)
	}
	expandRunning(&b)
	return &b
}

func batchRender(i int) *videov1alpha1.VideoRender {
	return &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: fmt.Sprintf("r%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))}}
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
		decisions[0], errs[0] = h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", Estimate{Seconds: 10}, nil)
	}()
	<-h.held
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			decisions[i], errs[i] = h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", Estimate{Seconds: 10}, nil)
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
	unbounded := Estimate{Seconds: 30, Unbounded: true}
	var wg sync.WaitGroup
	var admittedUnbounded atomic.Int32
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = h.g.reserve(t.Context(), "VideoRender", batchRender(100), "a", "", Estimate{Seconds: 5}, nil)
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
// reservation's decision is taken again and nothing is counted twice, settlements and charges
// included.
func TestABatchThatLosesItsLockIsRetriedWithoutCountingTwice(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(6))})
	// The second write (the batch) loses its lock twice: meanwhile another manager's write
	// reserved one more render (a change made elsewhere).
	var lost atomic.Int32
	h.onWrite = func(n int32) error {
		if n >= 2 && lost.Add(1) <= 2 {
			if lost.Load() == 1 {
				b := h.budget(t)
				b.Status.Reservations = append(b.Status.Reservations, videov1alpha1.BudgetReservation{
					Kind: "VideoRender", Name: "elsewhere", UID: "uid-elsewhere", AttemptID: "x", ReservedAt: metav1.Now()})
				recountReserved(b)
				if err := h.server.Status().Update(t.Context(), b); err != nil {
					t.Error(err)
				}
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
	// Settlements and charges of the admitted renders, all in one batch that loses its lock once.
	lost.Store(1)
	var wg sync.WaitGroup
	for i, d := range decisions {
		if d.Wait {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			uid := batchRender(i).UID
			if err := h.g.settle(t.Context(), "team-a", uid, "a", fmt.Sprintf("job-%d", i)); err != nil {
				t.Error(err)
			}
			if err := h.g.chargeNow(t.Context(), "team-a", JobCharge{JobID: fmt.Sprintf("job-%d", i), Seconds: 10}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b = h.budget(t)
	if b.Status.Used.Renders != 5 || b.Status.Used.RenderSeconds != 50 || len(b.Status.ChargedJobs) != 5 || len(b.Status.Reservations) != 1 {
		t.Errorf("used %d renders and %d s, %d charged jobs, %d reservations; want 5, 50 s, 5 and the one made elsewhere",
			b.Status.Used.Renders, b.Status.Used.RenderSeconds, len(b.Status.ChargedJobs), len(b.Status.Reservations))
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

// Settlements nobody waits for ride with the next write of the budget: a reservation and the
// settlements queued before it cost one write.
func TestSettlementsRideWithTheNextBudgetWrite(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))})
	close(h.hold)
	h.pump(t)
	for i := range 3 {
		if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", Estimate{}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v %v", i, d, err)
		}
	}
	before := h.writes.Load()
	for i := range 3 {
		h.g.Settle("team-a", batchRender(i).UID, "a", fmt.Sprintf("job-%d", i), time.Time{})
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(3), "a", "", Estimate{}, nil); err != nil || d.Wait {
		t.Fatalf("render 3: %+v %v", d, err)
	}
	if w := h.writes.Load() - before; w != 1 {
		t.Errorf("%d writes for a reservation and three queued settlements, want 1", w)
	}
	if b := h.budget(t); b.Status.Used.Renders != 3 || len(b.Status.Reservations) != 4 || b.Status.Reserved.Renders != 1 {
		t.Errorf("used %d, %d reservations (%d in flight); want 3, the three running jobs' and render 3's in flight",
			b.Status.Used.Renders, len(b.Status.Reservations), b.Status.Reserved.Renders)
	}
	// Alone, a settlement is written within rideDelay.
	h.g.Settle("team-a", batchRender(3).UID, "a", "job-3", time.Time{})
	deadline := time.Now().Add(2 * rideDelay)
	for h.budget(t).Status.Used.Renders != 4 {
		if time.Now().After(deadline) {
			t.Fatal("a queued settlement was never written")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// "Every paid job is charged, whatever happens to its object" (docs/spend-guard.md): the
// reservation of a running job stands until its end is charged, whether its render holds the
// charge finalizer or is gone without it.
func TestTheRunningJobsReservationStandsUntilItsEndIsCharged(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))}, batchRender(0))
	close(h.hold)
	h.pump(t)
	for i := range 2 {
		if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", Estimate{Seconds: 42}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v %v", i, d, err)
		}
		h.g.Settle("team-a", batchRender(i).UID, "a", fmt.Sprintf("job-%d", i), time.Time{})
	}
	waitFor := func(what string, ok func(b *videov1alpha1.VideoBudget) bool) {
		t.Helper()
		deadline := time.Now().Add(2 * rideDelay)
		for {
			b := h.budget(t)
			if ok(b) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %+v", what, b.Status)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("both counted, their reservations kept for their running jobs", func(b *videov1alpha1.VideoBudget) bool {
		return b.Status.Used.Renders == 2 && len(b.Status.Reservations) == 2 && b.Status.Reservations[0].JobID == "job-0" && b.Status.Reservations[1].JobID == "job-1"
	})
	// Render 0's job ends and is charged: its reservation ends with the charge. Render 1 is gone
	// without its finalizer: with nothing to read its job's end, the controller charges its
	// estimate (with a reader, it reads the end: reconciler_test.go).
	if err := h.g.chargeNow(t.Context(), "team-a", JobCharge{JobID: "job-0", Seconds: 40}); err != nil {
		t.Fatal(err)
	}
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clocktesting.NewFakeClock(time.Now()),
		Grace: time.Hour, Recheck: time.Hour, Retry: time.Second, Ledgers: NewLedgers("ops")})
	if _, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}); err != nil {
		t.Fatal(err)
	}
	b := h.budget(t)
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
		h.g.reserveAhead("VideoRender", batchRender(i), fmt.Sprintf("a%d", i), "", Estimate{Seconds: 3}, nil, 0)
	}
	// Written: the write counted (the interceptor counts it as it starts) and ended (each grant
	// learns its outcome once its write returned).
	written := func() bool {
		h.g.grants.mu.Lock()
		defer h.g.grants.mu.Unlock()
		for i := range 6 {
			if gr := h.g.grants.byUID[batchRender(i).UID]; gr == nil || !gr.done {
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
		if got := h.g.grantedAttempt(vr.UID); got != fmt.Sprintf("a%d", i) {
			t.Errorf("render %d submits with attempt %q, want the one reserved ahead", i, got)
		}
		if _, ok := h.g.takeGrant(t.Context(), "VideoRender", vr, fmt.Sprintf("a%d", i), "", Estimate{Seconds: 3}); ok {
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
	if _, ok := h.g.takeGrant(t.Context(), "VideoRender", batchRender(0), "a0", "", Estimate{Seconds: 30}); ok {
		t.Error("a grant was taken twice, or for another estimate")
	}
	// Past the submission's time, this process's VideoBudget controller keeps what it granted:
	// a render may wait for its call budget longer than that.
	clk := clocktesting.NewFakeClock(time.Now().Add(5 * time.Minute))
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clk, Grace: time.Minute, Recheck: time.Hour,
		Retry: time.Second, Ledgers: NewLedgers("ops"), Guard: h.g})
	if _, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}); err != nil {
		t.Fatal(err)
	}
	if b := h.budget(t); len(b.Status.Reservations) != 4 {
		t.Errorf("%d reservations kept, want the 4 granted", len(b.Status.Reservations))
	}
	// Another process (after a crash) knows nothing of them: released as never sent.
	r = NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clk, Grace: time.Minute, Recheck: time.Hour,
		Retry: time.Second, Ledgers: NewLedgers("ops")})
	if _, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}); err != nil {
		t.Fatal(err)
	}
	if b := h.budget(t); len(b.Status.Reservations) != 0 || b.Status.Used.Renders != 0 {
		t.Errorf("after a crash: %d reservations, %d used; want all released", len(b.Status.Reservations), b.Status.Used.Renders)
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
	for i := range 20 {
		if d, err := g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", Estimate{}, nil); err != nil || d.Wait || d.Budgeted {
			t.Fatalf("render %d in a namespace without a budget: %+v %v", i, d, err)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("%d ledger reads for 20 submissions, want 1", n)
	}
	// A budget of this period wrote the ledger, then was deleted: its limits hold at once.
	now := time.Now()
	start, end := PeriodBounds(videov1alpha1.BudgetPeriodMonthly, now)
	b := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName, UID: "b1"},
		Status: videov1alpha1.VideoBudgetStatus{PeriodStart: &metav1.Time{Time: start}, PeriodEnd: &metav1.Time{Time: end}}}
	if err := g.ledgers.write(t.Context(), c, b); err != nil {
		t.Fatal(err)
	}
	if d, err := g.reserve(t.Context(), "VideoRender", batchRender(99), "a", "", Estimate{}, nil); err != nil || !d.Wait {
		t.Errorf("after the ledger was written by a budget now deleted: %+v %v; want a wait", d, err)
	}
}

// Charges of renders that end close together share one budget write: each is queued after its
// render's end (ChargeLater) and rides with the namespace's next write, due within
// chargeLaterDelay.
func TestChargesOfRendersEndingTogetherShareAWrite(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))})
	close(h.hold)
	h.pump(t)
	for i := range 5 {
		if err := h.g.Charge(t.Context(), "team-a", JobCharge{JobID: fmt.Sprintf("job-%d", i), Seconds: 10}, ChargeLater); err != nil {
			t.Fatalf("charge %d: %v", i, err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for b := h.budget(t); len(b.Status.ChargedJobs) < 5; b = h.budget(t) {
		if time.Now().After(deadline) {
			t.Fatalf("the queued charges were not written: %d charged", len(b.Status.ChargedJobs))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if w := h.writes.Load(); w != 1 {
		t.Errorf("%d budget writes for 5 charges, want 1", w)
	}
	if b := h.budget(t); b.Status.Used.RenderSeconds != 50 || len(b.Status.ChargedJobs) != 5 {
		t.Errorf("used %d s, %d charged jobs; want 50 s and 5", b.Status.Used.RenderSeconds, len(b.Status.ChargedJobs))
	}
}
