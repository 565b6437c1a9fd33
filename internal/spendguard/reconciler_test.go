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
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// runningRender is a render whose job was submitted and has not ended, with the reservation its
// submission recorded.
func runningRender(i int, secs int64) *videov1alpha1.VideoRender {
	vr := batchRender(100 + i)
	vr.Status.JobID = fmt.Sprintf("job-running-%d", i)
	vr.Status.SubmittedAt = &metav1.Time{Time: time.Now().Add(-time.Minute)}
	vr.Status.BudgetEstimate = &videov1alpha1.BudgetEstimate{Seconds: secs}
	return vr
}

func reconcileBudget(t *testing.T, h *batchHarness, times int) {
	t.Helper()
	for range times {
		if err := reconcileOnce(t, h); err != nil {
			t.Fatal(err)
		}
	}
}

// reconcileOnce runs the VideoBudget controller once over the harness's budget.
func reconcileOnce(t *testing.T, h *batchHarness) error {
	return reconcileAt(t, h, time.Now())
}

// reconcileAt runs the VideoBudget controller once over the harness's budget, at now.
func reconcileAt(t *testing.T, h *batchHarness, now time.Time) error {
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clocktesting.NewFakeClock(now),
		Grace: time.Minute, Recheck: time.Hour, Retry: time.Second, Ledgers: h.g.ledgers, Guard: h.g})
	_, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}})
	return err
}

// Issue 37, case 2: "a limit added to a live budget ignores the renders already running".
// Without a length limit a running job keeps no reservation; when maxRenderSeconds is added, the
// jobs running count against it until their ends are charged. Ten 300 s renders running, the
// limit 600 added: no new render is admitted (before: two were, 3,600 s used of 600).
func TestALengthLimitAddedToALiveBudgetCountsTheRendersAlreadyRunning(t *testing.T) {
	var objs []client.Object
	for i := range 10 {
		objs = append(objs, runningRender(i, 300))
	}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1000)}, objs...)
	close(h.hold)
	b := h.budget(t)
	b.Generation, b.Status.ObservedGeneration, b.Status.Used.Renders = 1, 1, 10
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}
	reconcileBudget(t, h, 1)

	b = h.budget(t)
	b.Spec.MaxRenderSeconds = ptr.To[int64](600)
	b.Generation = 2
	if err := h.server.Update(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	reconcileBudget(t, h, 2)
	if got := h.budget(t).Status.Reserved.RenderSeconds; got != 3000 {
		t.Errorf("reserved %d s after the limit was added, want the running jobs' 3,000 s", got)
	}
	for i := range 2 {
		d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", bound.Estimate{Seconds: 30}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Wait || d.Limit != videov1alpha1.BudgetLimitRenderSeconds {
			t.Fatalf("render %d admitted with ten 300 s jobs running under maxRenderSeconds 600: %+v", i, d)
		}
	}
	// Each running job's end, recorded in its render's status and folded by the next write, still
	// replaces its reservation with what it cost.
	endFolded(t, h, runningRender(0, 300), 280)
	if b := h.budget(t); b.Status.Used.RenderSeconds != 280 || b.Status.Reserved.RenderSeconds != 2700 {
		t.Fatalf("after one end: used %d s, reserved %d s", b.Status.Used.RenderSeconds, b.Status.Reserved.RenderSeconds)
	}
}

// payIfRoom asks the guard to pay render i as the render controller does: a reservation of 10 s,
// then, when admitted, its job id recorded in its status, which a guard write folds. It reports
// whether it was paid; a failed reservation is the caller's to judge.
func (h *batchHarness) payIfRoom(t *testing.T, i int) (bool, error) {
	t.Helper()
	d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", bound.Estimate{Seconds: 10}, nil)
	if err != nil || d.Wait {
		return false, err
	}
	recordFolded(t, h, batchRender(i), fmt.Sprintf("job-%d", i))
	return true, nil
}

// unwritableLedgers makes every write of a ConfigMap in the ledgers' namespace fail as the API
// server answers when that namespace does not exist, until the test sets writable.
func unwritableLedgers(t *testing.T, h *batchHarness) *atomic.Bool {
	t.Helper()
	writable := &atomic.Bool{}
	refuse := func(obj client.Object) error {
		if _, ok := obj.(*corev1.ConfigMap); ok && obj.GetNamespace() == "ops" && !writable.Load() {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "ops")
		}
		return nil
	}
	c := interceptor.NewClient(h.server.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := refuse(obj); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := refuse(obj); err != nil {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	h.server = c
	h.g = New(c, c, clocktesting.NewFakeClock(time.Now()), 10*time.Second, NewLedgers("ops"))
	return writable
}

// Issue 37, case 6: "a manager that cannot write its ledger keeps admitting". A record the money
// depends on that cannot be written stops the spending it guards, and says so: nothing is
// admitted in the namespace, and the VideoBudget's Ready condition names the ledger.
func TestAManagerThatCannotWriteItsLedgerAdmitsNothing(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)})
	close(h.hold)
	unwritableLedgers(t, h)
	// The first write's failure may pass: an error, and the render tries again; then it waits,
	// saying why.
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{Seconds: 10}, nil); err == nil || !strings.Contains(err.Error(), "ledger") {
		t.Fatalf("admitted while the ledger cannot be written: %+v, %v", d, err)
	}
	d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{Seconds: 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Wait || !strings.Contains(d.Message, "ledger") {
		t.Fatalf("admitted while the ledger cannot be written: %+v", d)
	}
	if err := reconcileOnce(t, h); err == nil {
		t.Fatal("the controller's look succeeded while the ledger cannot be written: the workqueue would not try again")
	}
	b := h.budget(t)
	ready := meta.FindStatusCondition(b.Status.Conditions, string(videov1alpha1.ConditionReady))
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != string(videov1alpha1.ReasonLedgerUnavailable) ||
		!strings.Contains(ready.Message, "ops/") {
		t.Fatalf("Ready condition %+v: want False, LedgerUnavailable, naming the ledger", ready)
	}
	if b.Status.Used.Renders != 0 || len(b.Status.Reservations) != 0 {
		t.Fatalf("used %+v, reservations %v", b.Status.Used, b.Status.Reservations)
	}
}

// Issue 37, case 6, the sequence that paid twice: under maxRenders 1 with the ledger unwritable,
// one render paid and one waiting; the VideoBudget deleted and created again took over an empty
// ledger and paid the waiting render. Now nothing is paid while the ledger cannot be written (nor
// between the delete and the create), and once it can, a replace takes the first render's count
// over: 1 paid in all.
func TestAReplacedBudgetPaysOnceWhenItsLedgerWasUnwritable(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)})
	close(h.hold)
	writable := unwritableLedgers(t, h)
	paid := 0
	reserve := func(i int) {
		t.Helper()
		ok, err := h.payIfRoom(t, i)
		if err != nil && !strings.Contains(err.Error(), "ledger") {
			t.Fatal(err)
		}
		if ok {
			paid++
		}
	}
	// The budget is replaced (a GitOps sync, kubectl replace --force); renders ask to pay between
	// the delete and the create, and after.
	uid := 1
	replace := func() {
		t.Helper()
		b := h.budget(t)
		if err := h.server.Delete(t.Context(), b); err != nil {
			t.Fatal(err)
		}
		if err := reconcileOnce(t, h); err != nil {
			t.Logf("the controller's reconcile of the deleted budget: %v", err)
		}
		reserve(1)
		uid++
		fresh := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName,
			UID: types.UID(fmt.Sprintf("b%d", uid))}, Spec: videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}}
		if err := h.server.Create(t.Context(), fresh); err != nil {
			t.Fatal(err)
		}
		if err := reconcileOnce(t, h); err != nil {
			t.Logf("the controller's reconcile of the new budget: %v", err)
		}
		reserve(1)
		reserve(2)
	}

	reserve(0)
	reserve(1)
	// The controller says why (a condition), and does not stop at the error.
	t.Logf("the controller's reconcile with the ledger unwritable: %v", reconcileOnce(t, h))
	replace()
	if paid != 0 {
		t.Fatalf("%d renders paid while the ledger could not be written", paid)
	}
	writable.Store(true)
	reconcileBudget(t, h, 1)
	reserve(0)
	reserve(1)
	replace()
	if paid != 1 {
		t.Fatalf("%d renders paid under maxRenders 1 (used %+v)", paid, h.budget(t).Status.Used)
	}
}

// fakeJobs is the service as the VideoBudget controller reads it: each job's end (nil while it
// runs), and the key each read was made with.
type fakeJobs struct {
	mu    sync.Mutex
	ends  map[string]*JobEnd
	err   error
	reads []string
}

func (f *fakeJobs) JobEnd(_ context.Context, ns string, ref *videov1alpha1.SecretKeyRef, jobID string) (JobEnd, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := "default"
	if ref != nil {
		key = ref.Name + "/" + ref.Key
	}
	f.reads = append(f.reads, ns+"/"+jobID+" with "+key)
	if f.err != nil {
		return JobEnd{}, f.err
	}
	if e := f.ends[jobID]; e != nil {
		return *e, nil
	}
	return JobEnd{Running: true}, nil
}

// goneJobsController is the VideoBudget controller over the harness's budget, reading the jobs of
// gone renders from jobs, and its reconcile: each look comes at least one poll after the last, so
// a gone render's job is read at most once per poll.
func goneJobsController(t *testing.T, h *batchHarness, clk *clocktesting.FakeClock, jobs JobEnds, deadline time.Duration) (*Reconciler, func() ctrl.Result) {
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clk, Grace: time.Minute, Recheck: time.Hour,
		Retry: time.Second, Ledgers: h.g.ledgers, Guard: h.g, Jobs: jobs, JobDeadline: deadline})
	return r, func() ctrl.Result {
		t.Helper()
		defer clk.Step(DefaultJobPoll)
		res, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
}

// Issue 37, case 5: "a tenant who deletes a running render and strips its finalizer frees its
// room at once". A reservation is released only by reading the job's end, whoever holds the
// object: the render without an upper bound, deleted with its finalizer stripped while its job
// runs, keeps its reservation (so the next such render waits under maxRenderSeconds) until the
// VideoBudget controller reads the job's end with the key the render named, and is then charged
// what the job was (450 s), not its 30 s guess.
func TestARenderDeletedWithItsFinalizerStrippedHoldsItsRoomUntilItsJobEnds(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](600)})
	close(h.hold)
	blog := bound.Estimate{Seconds: bound.DefaultSceneSeconds, Unbounded: true}
	vr := batchRender(0)
	vr.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "team-key", Key: "k"}
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", blog, nil); err != nil || d.Wait {
		t.Fatalf("the first render: %+v, %v", d, err)
	}
	recordFolded(t, h, vr, "job-0")
	// The render is gone (its finalizer stripped, then deleted): the API server has no object.
	if err := h.server.Delete(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	jobs := &fakeJobs{ends: map[string]*JobEnd{}}
	clk := clocktesting.NewFakeClock(time.Now().Add(2 * time.Minute))
	r, reconcile := goneJobsController(t, h, clk, jobs, 24*time.Hour)
	res := reconcile()
	// A busy budget is looked at on each of its writes: the job is read once per poll (one poll
	// has passed since the first read, then three looks come within the next).
	for range 3 {
		if _, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}); err != nil {
			t.Fatal(err)
		}
	}
	if len(jobs.reads) != 2 {
		t.Errorf("%d reads of the job in two polls, want 2", len(jobs.reads))
	}
	b := h.budget(t)
	if len(b.Status.Reservations) != 1 || b.Status.Used.RenderSeconds != 0 {
		t.Fatalf("the stripped render's job still runs, yet its reservation ended: reservations %+v, used %d s",
			b.Status.Reservations, b.Status.Used.RenderSeconds)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > 5*time.Minute {
		t.Errorf("the budget is looked at again after %s while a gone render's job runs: want a poll", res.RequeueAfter)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", blog, nil); err != nil || !d.Wait {
		t.Fatalf("a second render without upper bound admitted while the first one's job runs at the service: %+v, %v", d, err)
	}

	// The service cannot be read for a while: the room stays held.
	jobs.err = fmt.Errorf("the service answered 500")
	reconcile()
	if n := len(h.budget(t).Status.Reservations); n != 1 {
		t.Fatalf("a failed read of the job ended its reservation (%d left)", n)
	}
	jobs.err = nil

	jobs.ends["job-0"] = &JobEnd{Completed: true, Seconds: 450}
	reconcile()
	b = h.budget(t)
	if len(b.Status.Reservations) != 0 || b.Status.Used.RenderSeconds != 450 {
		t.Fatalf("after the job's end was read: reservations %+v, used %d s, want none and 450 s", b.Status.Reservations, b.Status.Used.RenderSeconds)
	}
	reconcile()
	if got := h.budget(t).Status.Used.RenderSeconds; got != 450 {
		t.Fatalf("charged again: %d s", got)
	}
	if len(jobs.reads) == 0 || !strings.HasSuffix(jobs.reads[0], "team-a/job-0 with team-key/k") {
		t.Errorf("the job was read as %q, want with the key the render named", jobs.reads)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", blog, nil); err != nil || d.Wait {
		t.Fatalf("the next render waits after the job ended at 450 s of 600: %+v, %v", d, err)
	}
}

// A job whose render is gone and whose end cannot be read is held until the job deadline, then
// charged its estimate, as the render controller gives up on a job it cannot read: the key gone,
// and a job the service does not know to the key read now (that key may be another account's,
// and the job still run; issue 37, "a reservation is released only by reading the job's end").
func TestAGoneRendersJobThatCannotBeReadIsHeldUntilTheJobDeadline(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](600)})
	close(h.hold)
	for i := range 2 {
		vr := batchRender(i)
		if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 100}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v, %v", i, d, err)
		}
		recordFolded(t, h, vr, fmt.Sprintf("job-%d", i))
		// The render is gone (its finalizer stripped, then deleted).
		if err := h.server.Delete(t.Context(), vr); err != nil {
			t.Fatal(err)
		}
	}
	jobs := &fakeJobs{ends: map[string]*JobEnd{"job-0": {Unknown: true}}}
	clk := clocktesting.NewFakeClock(time.Now().Add(2 * time.Minute))
	_, reconcile := goneJobsController(t, h, clk, jobs, time.Hour)
	jobs.ends["job-1"] = nil
	jobs.err = nil
	reconcile()
	b := h.budget(t)
	if len(b.Status.Reservations) != 2 || b.Status.Used.RenderSeconds != 0 {
		t.Fatalf("want job-0 (unknown to the key read now) and job-1 (running) held: reservations %+v, used %d s",
			b.Status.Reservations, b.Status.Used.RenderSeconds)
	}
	jobs.err = fmt.Errorf("the API key cannot be read")
	reconcile()
	if n := len(h.budget(t).Status.Reservations); n != 2 {
		t.Fatalf("a job whose end cannot be read was let go before the job deadline (%d reservations)", n)
	}
	clk.Step(time.Hour)
	reconcile()
	if b := h.budget(t); len(b.Status.Reservations) != 0 || b.Status.Used.RenderSeconds != 200 {
		t.Fatalf("past the job deadline: reservations %+v, used %d s, want none and 200 s", b.Status.Reservations, b.Status.Used.RenderSeconds)
	}
}

// Issue 37, case 4: "a charge marked on a budget created again, before it merged its ledger, is
// lost in a crash". Ends are no longer marked: a render's end is recorded in its own status, and
// the reservation of its running job is the proof that it is not folded yet. The budget created
// again has not merged the namespace's ledger, which holds that reservation: the render records
// its end (600 s) and the manager crashes before any budget write. A new manager's VideoBudget
// controller takes the ledger over, reservation included, and folds the end once.
func TestAChargeOnABudgetCreatedAgainBeforeItsTakeoverIsNotLost(t *testing.T) {
	now := time.Now()
	start, end := PeriodBounds(videov1alpha1.BudgetPeriodMonthly, now)
	charged := make([]string, maxChargedJobs)
	for i := range charged {
		charged[i] = fmt.Sprintf("old-%d", 436+i)
	}
	vr := batchRender(7)
	running := videov1alpha1.BudgetReservation{Kind: "VideoRender", Name: vr.Name, UID: string(vr.UID), AttemptID: "a",
		ReservedAt: metav1.NewTime(now.Add(-10 * time.Minute).Truncate(time.Second)), EstimatedSeconds: 100, JobID: "job-600"}
	old := ledger{BudgetUID: "b0", Period: videov1alpha1.BudgetPeriodMonthly, PeriodStart: &metav1.Time{Time: start}, PeriodEnd: &metav1.Time{Time: end},
		Used: videov1alpha1.BudgetUsage{Renders: 500, RenderSeconds: 9000}, ChargedJobs: charged, ChargeCount: 500,
		Reservations: []videov1alpha1.BudgetReservation{running}}
	// The render's job ended: its end is in its status.
	vr.Status.JobID = "job-600"
	vr.Status.SubmittedAt = &metav1.Time{Time: now.Add(-9 * time.Minute)}
	vr.Status.CompletedAt = &metav1.Time{Time: now}
	vr.Status.VideoDuration = &metav1.Duration{Duration: 600 * time.Second}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodMonthly, MaxRenders: ptr.To[int64](1000)},
		vr, ledgerConfigMap(t, "ops", NewLedgers("ops").Name("team-a"), old))
	close(h.hold)
	b := h.budget(t)
	b.Status.LedgerBudgetUID = "" // created again: the ledger is not merged yet
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}

	// The manager crashes; a new one: its controller takes the ledger over and folds the end.
	h.g = New(h.server, h.server, clocktesting.NewFakeClock(now), 10*time.Second, NewLedgers("ops"))
	clk := clocktesting.NewFakeClock(now.Add(time.Minute))
	opsReconcile(t, opsController(h, h.g, clk, nil), clk, 3)
	b = h.budget(t)
	if b.Status.Used.RenderSeconds != 9600 || len(b.Status.Reservations) != 0 {
		t.Fatalf("used %d s after the takeover (reservations %+v), want the ledger's 9,000 s and the job's 600 s, none left",
			b.Status.Used.RenderSeconds, b.Status.Reservations)
	}
}

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	gets atomic.Int64
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets.Add(1)
	return c.Reader.Get(ctx, key, obj, opts...)
}

// A running job's reservation is looked at from the cache: renders run for minutes, every write
// of the budget brings a look, and a namespace with a hundred long renders must not cost a hundred
// API reads per look. Only a render the cache shows gone is read again from the API server
// (the cache may lag), once, before its job's end is read from the service.
func TestLongRunningJobsCostNoAPIReadsAtEachLook(t *testing.T) {
	const n = 20
	var objs []client.Object
	for i := range n {
		objs = append(objs, batchRender(i))
	}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](100)}, objs...)
	close(h.hold)
	for i := range n {
		vr := batchRender(i)
		if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 60}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v, %v", i, d, err)
		}
		if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), vr); err != nil {
			t.Fatal(err)
		}
		vr.Status.JobID, vr.Status.SubmittedAt = fmt.Sprintf("job-%d", i), &metav1.Time{Time: h.g.clock.Now()}
		if err := h.server.Update(t.Context(), vr); err != nil {
			t.Fatal(err)
		}
	}
	// The next reservation's write folded each recorded job but the last: a write folds it too.
	opsFold(t, h.g)
	for _, r := range h.budget(t).Status.Reservations {
		if r.JobID == "" {
			t.Fatalf("control: every render's recorded job should be folded into its running reservation: %+v", r)
		}
	}
	// Render 0 is deleted (its finalizer stripped): the one the API server is asked about.
	if err := h.server.Delete(t.Context(), batchRender(0)); err != nil {
		t.Fatal(err)
	}
	reader := &countingReader{Reader: h.server}
	// Ten minutes on: every reservation is far older than the submission's grace.
	clk := clocktesting.NewFakeClock(time.Now().Add(10 * time.Minute))
	jobs := &fakeJobs{ends: map[string]*JobEnd{}}
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: reader, Clock: clk, Grace: time.Minute, Recheck: time.Hour,
		Retry: time.Second, Ledgers: h.g.ledgers, Guard: h.g, Jobs: jobs})
	for look := range 3 {
		before := reader.gets.Load()
		if _, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}); err != nil {
			t.Fatal(err)
		}
		if got := reader.gets.Load() - before; got > 1 {
			t.Errorf("look %d read %d objects from the API server for %d running jobs; want at most 1, the render the cache shows gone", look, got, n)
		}
		clk.Step(DefaultJobPoll)
	}
	if b := h.budget(t); len(b.Status.Reservations) != n {
		t.Errorf("want every running job's reservation held (render 0's job still runs at the service): %d", len(b.Status.Reservations))
	}
}
