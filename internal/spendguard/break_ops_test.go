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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// break-ops: the ordinary operations of a platform team (key rotation, restores, GitOps
// replaces, upgrades, uninstalls) against the spend guard.

// opsRequest is the reconcile request of the harness's budget.
var opsRequest = ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}

// opsController is a VideoBudget controller of a manager (its own ledgers and guard, or the
// harness's), reading gone renders' jobs from jobs, on clock clk.
func opsController(h *batchHarness, g *Guard, clk *clocktesting.FakeClock, jobs JobEnds) *Reconciler {
	return NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clk, Grace: time.Minute, Recheck: time.Hour,
		Retry: time.Second, Ledgers: g.ledgers, Guard: g, Jobs: jobs, JobDeadline: 6 * time.Hour})
}

func opsReconcile(t *testing.T, r *Reconciler, clk *clocktesting.FakeClock, times int) {
	t.Helper()
	for range times {
		if _, err := r.Reconcile(t.Context(), opsRequest); err != nil {
			t.Fatal(err)
		}
		clk.Step(DefaultJobPoll + time.Second)
	}
}

// deleteBudget deletes the harness's budget as a GitOps prune or kubectl replace --force does.
func deleteBudget(t *testing.T, h *batchHarness) {
	t.Helper()
	if err := h.server.Delete(t.Context(), h.budget(t)); err != nil {
		t.Fatal(err)
	}
}

// createBudget creates the namespace's budget again (uid b2), and, when status is set, writes
// it as a restore with its status does (Velero: create, then the status).
func createBudget(t *testing.T, h *batchHarness, spec videov1alpha1.VideoBudgetSpec, status *videov1alpha1.VideoBudgetStatus) {
	t.Helper()
	b := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName, UID: "b2"}, Spec: spec}
	if err := h.server.Create(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	if status == nil {
		return
	}
	b.Status = *status.DeepCopy() // a restore with its status: what the backup holds, not the ledger
	if err := h.server.Status().Update(t.Context(), b); err != nil {
		t.Fatal(err)
	}
}

// storedLedger reads the namespace's ledger ConfigMap in the manager's namespace ("ops").
func storedLedger(t *testing.T, h *batchHarness) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := h.server.Get(t.Context(), client.ObjectKey{Namespace: "ops", Name: NewLedgers("ops").Name("team-a")}, cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

// recordJob writes vr to the API server as a render that recorded job jobID at at, running.
func recordJob(t *testing.T, h *batchHarness, vr *videov1alpha1.VideoRender, jobID string, at time.Time) {
	t.Helper()
	vr.Status.JobID = jobID
	vr.Status.SubmittedAt = &metav1.Time{Time: at}
	vr.Status.BudgetEstimate = &videov1alpha1.BudgetEstimate{Seconds: 100}
	cur := &videov1alpha1.VideoRender{}
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), cur); err == nil {
		vr.ResourceVersion = cur.ResourceVersion
		if err := h.server.Update(t.Context(), vr); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := h.server.Create(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
}

// recordEnd writes into vr's status, on the API server, the end of the job it recorded: ended
// at at, a video secs long. Nothing tells the budget: its next write folds it (fold.go).
func recordEnd(t *testing.T, h *batchHarness, vr *videov1alpha1.VideoRender, secs int64, at time.Time) {
	t.Helper()
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), vr); err != nil {
		t.Fatal(err)
	}
	vr.Status.CompletedAt = &metav1.Time{Time: at}
	vr.Status.VideoDuration = &metav1.Duration{Duration: time.Duration(secs) * time.Second}
	if err := h.server.Update(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
}

// opsFold makes a write of the namespace's budget by g that brings no change of its own: it
// folds what the namespace's objects recorded (fold.go), as the write of the next reservation,
// release or charge does. A namespace without a budget has nothing to fold into.
func opsFold(t *testing.T, g *Guard) {
	t.Helper()
	if err := ignoreNoBudget(g.mutateBudget(t.Context(), "team-a", ChangeFold, func(*videov1alpha1.VideoBudget) bool { return false })); err != nil {
		t.Fatal(err)
	}
}

// recordFolded writes vr to the API server as a render that recorded job jobID at the guard's
// now (no submission in flight), and folds it with a guard write: vr's reservation becomes usage
// and its running job's reservation.
func recordFolded(t *testing.T, h *batchHarness, vr *videov1alpha1.VideoRender, jobID string) {
	t.Helper()
	recordJob(t, h, vr, jobID, h.g.clock.Now())
	opsFold(t, h.g)
}

// endFolded writes into vr's status the end of its job at the guard's now (a video secs long),
// and folds it with a guard write: the job's reservation is posted for what it cost.
func endFolded(t *testing.T, h *batchHarness, vr *videov1alpha1.VideoRender, secs int64) {
	t.Helper()
	recordEnd(t, h, vr, secs, h.g.clock.Now())
	opsFold(t, h.g)
}

// docs/spend-guard.md "A budget survives its replacement": "a restore with or without its status
// neither forgets the period's usage nor lets anything be paid in between", and "a status restored
// from an older backup does not lower it". The converse must hold too: a status restored from an
// older backup must not count again what the namespace already counted.
//
// A Velero backup is taken while a render's submission is in flight: the budget's status holds
// its reservation. The render records its job, which a budget write folds (1 render used), and
// its end, folded too (its 300 s charged). Later the budget is deleted and restored WITH its
// status (Velero's restoreStatus): the new budget merges the ledger (1 render, 300 s) and keeps
// the backup's reservation, into which the VideoBudget controller would fold the render's
// recorded job as if it had never been folded: 2 renders used for 1 job paid, and a render that
// waits under maxRenders 2 is refused.
func TestOpsBudgetRestoredWithAnOlderStatusCountsARenderOnce(t *testing.T) {
	spec := videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](2), MaxRenderSeconds: ptr.To[int64](100000)}
	h := newBatchHarness(t, spec)
	close(h.hold)
	now := time.Now()
	vr := batchRender(1)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a1", "", bound.Estimate{Seconds: 100}, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v %v", d, err)
	}
	backup := h.budget(t).Status.DeepCopy() // the submission is in flight

	recordFolded(t, h, vr, "job-1")
	endFolded(t, h, vr, 300)
	if u := h.budget(t).Status.Used; u.Renders != 1 || u.RenderSeconds != 300 || len(h.budget(t).Status.Reservations) != 0 {
		t.Fatalf("control: used %+v before the restore, want 1 render and 300 s", u)
	}

	// An hour later the budget is deleted (a disaster, a prune) and restored from the backup.
	clk := clocktesting.NewFakeClock(now.Add(time.Hour))
	r := opsController(h, h.g, clk, &fakeJobs{ends: map[string]*JobEnd{"job-1": {Seconds: 300}}})
	deleteBudget(t, h)
	opsReconcile(t, r, clk, 1)
	createBudget(t, h, spec, backup)
	opsReconcile(t, r, clk, 3)

	b := h.budget(t)
	if b.Status.LedgerBudgetUID != "b2" {
		t.Fatalf("control: the restored budget did not take the ledger over: %+v", b.Status)
	}
	if b.Status.Used.Renders != 1 || b.Status.Used.RenderSeconds != 300 {
		t.Errorf("one render paid (1 job, 300 s), yet the budget restored with an older status says %d renders and %d s "+
			"(reservations %+v): the backup's reservation, folded long ago, was folded again",
			b.Status.Used.Renders, b.Status.Used.RenderSeconds, b.Status.Reservations)
	}
	other := batchRender(2)
	if d, err := h.g.reserve(t.Context(), "VideoRender", other, "b1", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
		t.Errorf("maxRenders 2 with one render paid: the next render waits (%+v, %v)", d, err)
	}
}

// The same restore, for the seconds: the backup is taken while the render's job runs (its
// reservation holds the job id). The job ends, and its recorded end is folded (300 s); the
// namespace goes on and charges 64 more jobs (deleted renders' jobs, read by their finalizers;
// chargedJobs keeps the latest 64). The budget restored with that status keeps the running job's
// reservation; the VideoBudget controller would fold the render's recorded end into it again
// (the reservation is the proof that it was not folded), or read the job's end from the
// service: 300 s charged a second time.
func TestOpsBudgetRestoredWithAnOlderStatusChargesAJobOnce(t *testing.T) {
	spec := videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)}
	h := newBatchHarness(t, spec)
	close(h.hold)
	now := time.Now()
	vr := batchRender(1)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a1", "", bound.Estimate{Seconds: 100}, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v %v", d, err)
	}
	recordFolded(t, h, vr, "job-1")
	backup := h.budget(t).Status.DeepCopy() // the job runs
	if len(backup.Reservations) != 1 || backup.Reservations[0].JobID != "job-1" {
		t.Fatalf("control: the backup should hold job-1's running reservation: %+v", backup.Reservations)
	}

	endFolded(t, h, vr, 300)
	for i := range maxChargedJobs {
		if err := h.g.Charge(t.Context(), "team-a", JobCharge{JobID: fmt.Sprintf("later-%d", i), Seconds: 1}); err != nil {
			t.Fatal(err)
		}
	}
	want := int64(300 + maxChargedJobs)
	if u := h.budget(t).Status.Used; u.RenderSeconds != want {
		t.Fatalf("control: used %d s before the restore, want %d", u.RenderSeconds, want)
	}

	clk := clocktesting.NewFakeClock(now.Add(time.Hour))
	jobs := &fakeJobs{ends: map[string]*JobEnd{"job-1": {Seconds: 300}}}
	r := opsController(h, h.g, clk, jobs)
	deleteBudget(t, h)
	opsReconcile(t, r, clk, 1)
	createBudget(t, h, spec, backup)
	opsReconcile(t, r, clk, 3)

	b := h.budget(t)
	if b.Status.LedgerBudgetUID != "b2" {
		t.Fatalf("control: the restored budget did not take the ledger over: %+v", b.Status)
	}
	if b.Status.Used.RenderSeconds != want || len(b.Status.Reservations) != 0 {
		t.Errorf("used %d s after the restore, want %d: job-1 (300 s, charged before) was charged again from the backup's "+
			"reservation (service reads %v, reservations %+v)", b.Status.Used.RenderSeconds, want, jobs.reads, b.Status.Reservations)
	}
}

// docs/spend-guard.md "The ledger": it is what a budget created again takes over, "never less
// than" what was decided. The manager's namespace (and its ConfigMaps) is restored from a backup
// taken earlier in the month (a disaster recovery of the operator's namespace, Velero's default
// includes ConfigMaps): the ledger goes back to 1 render while the live budget holds 3. Nothing in
// the running manager notices. A GitOps replace of the budget afterwards (prune and create, or
// kubectl replace --force) takes the old ledger over: the month's usage goes down from 3 renders
// to 1, and under maxRenders 3 two more renders are paid.
func TestOpsLedgerRestoredFromAnOlderBackupDoesNotLowerUsageAcrossAReplace(t *testing.T) {
	spec := videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](3)}
	h := ledgerRestoredToTheFirstOfThree(t, spec)
	clk := clocktesting.NewFakeClock(time.Now().Add(time.Minute))
	r := opsController(h, h.g, clk, nil)
	opsReconcile(t, r, clk, 1)
	replaceKeepsThreeRenders(t, h, r, clk, spec, "from an older backup")
}

// ledgerRestoredToTheFirstOfThree pays three renders under spec, then restores the namespace's
// ledger to its copy after the first (the manager's namespace restored from an older backup).
func ledgerRestoredToTheFirstOfThree(t *testing.T, spec videov1alpha1.VideoBudgetSpec) *batchHarness {
	t.Helper()
	h := newBatchHarness(t, spec)
	close(h.hold)
	pay := func(i int) {
		vr := batchRender(i)
		if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v %v", i, d, err)
		}
		recordFolded(t, h, vr, fmt.Sprintf("job-%d", i))
		endFolded(t, h, vr, 10)
	}
	pay(0)
	backup := storedLedger(t, h).DeepCopy()
	pay(1)
	pay(2)
	if u := h.budget(t).Status.Used.Renders; u != 3 {
		t.Fatalf("control: %d renders used, want 3", u)
	}
	cm := storedLedger(t, h)
	cm.Data = backup.Data
	if err := h.server.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	return h
}

// replaceKeepsThreeRenders replaces the budget (a GitOps prune and create, or kubectl replace
// --force) under r and checks that the budget created again keeps the period's 3 renders and
// refuses a fourth under spec's maxRenders 3; restored says how the ledger went back.
func replaceKeepsThreeRenders(t *testing.T, h *batchHarness, r *Reconciler, clk *clocktesting.FakeClock,
	spec videov1alpha1.VideoBudgetSpec, restored string) {
	t.Helper()
	deleteBudget(t, h)
	opsReconcile(t, r, clk, 1)
	createBudget(t, h, spec, nil)
	opsReconcile(t, r, clk, 1)
	if u := h.budget(t).Status.Used.Renders; u < 3 {
		t.Errorf("the period's usage went down from 3 renders to %d across a replace: the budget took over a ledger restored %s", u, restored)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(9), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || !d.Wait {
		t.Errorf("maxRenders 3 with 3 renders paid this month: a fourth render is admitted (%+v, %v)", d, err)
	}
}

// keyedJobs is the service as the VideoBudget controller reads it through Secrets: a read with a
// Secret that no longer exists fails (the API key cannot be read), a read with an existing one
// answers the job's end.
type keyedJobs struct {
	mu      sync.Mutex
	secrets map[string]bool // "name/key", "" for the default Secret
	ends    map[string]*JobEnd
	reads   []string
}

func (k *keyedJobs) JobEnd(_ context.Context, _ string, ref *videov1alpha1.SecretKeyRef, jobID string) (JobEnd, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	name := ""
	if ref != nil {
		name = ref.Name + "/" + ref.Key
	}
	k.reads = append(k.reads, jobID+" with "+name)
	if !k.secrets[name] {
		return JobEnd{}, fmt.Errorf("reading the API key of job %s: Secret %q with the API key was not found", jobID, name)
	}
	if e := k.ends[jobID]; e != nil {
		return *e, nil
	}
	return JobEnd{Running: true}, nil
}

// docs/spend-guard.md: a render gone without its finalizer "changes nothing to the money": the
// VideoBudget controller "reads the job's end with the key the render named", and charges what
// the job was. docs/backup-restore.md: rotating a key is "pointing apiKeySecretRef at the new
// Secret", which pays nothing and changes nothing.
//
// A key rotation while a render without upper bound runs under maxRenderSeconds: the platform
// creates Secret key-v2, points the render at it, and deletes key-v1. The render is then deleted
// with its finalizer stripped. The reservation still names key-v1 (recorded at the submission,
// never refreshed although the controller looked at the render after the rotation), so the job's
// end cannot be read: the room is held for the whole job deadline (6 h: every other render
// without upper bound waits), and then only the 30 s guess is charged for a 450 s job.
func TestOpsAKeyRotatedWhileARenderRunsStillReadsItsEndOnceTheRenderIsGone(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](600)})
	close(h.hold)
	now := time.Now()
	blog := bound.Estimate{Seconds: bound.DefaultSceneSeconds, Unbounded: true}
	vr := batchRender(1)
	vr.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "key-v1", Key: "api-key"}
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a1", "", blog, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v %v", d, err)
	}
	recordFolded(t, h, vr, "job-1")

	// The rotation: key-v2 created, the render pointed at it, key-v1 deleted.
	jobs := &keyedJobs{secrets: map[string]bool{"key-v1/api-key": true, "key-v2/api-key": true}, ends: map[string]*JobEnd{}}
	cur := &videov1alpha1.VideoRender{}
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), cur); err != nil {
		t.Fatal(err)
	}
	cur.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "key-v2", Key: "api-key"}
	if err := h.server.Update(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	jobs.mu.Lock()
	delete(jobs.secrets, "key-v1/api-key")
	jobs.mu.Unlock()
	clk := clocktesting.NewFakeClock(now.Add(2 * time.Minute))
	r := opsController(h, h.g, clk, jobs)
	opsReconcile(t, r, clk, 2) // the controller looks at the budget while the render exists

	// The render is deleted with its finalizer stripped; its job ends at 450 s.
	if err := h.server.Delete(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	jobs.mu.Lock()
	jobs.ends["job-1"] = &JobEnd{Seconds: 450}
	jobs.mu.Unlock()
	opsReconcile(t, r, clk, 3) // three polls

	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 450 || len(b.Status.Reservations) != 0 {
		t.Errorf("the job ended at 450 s and its render named key-v2 when it was deleted: used %d s, reservations %+v; "+
			"the job was read as %v (the Secret the submission used, deleted by the rotation)",
			b.Status.Used.RenderSeconds, b.Status.Reservations, jobs.reads)
	}
}

// docs/uninstall.md: the uninstall charges each running job its estimate and settles every
// reservation; "It runs again without harm (charges are kept per job id, so nothing is charged
// twice)"; "Each namespace with a budget keeps its ledger ... delete it when you no longer want
// that period's spend remembered". docs/spend-guard.md: the ledger is what a budget created
// again takes over.
//
// The uninstall mode is a process of its own with a Guard and no VideoBudget controller
// (controller.ReleaseFinalizers). Were its budget writes after the first held back for a
// controller to copy to the ledger when due, there being no controller, they would never be
// written: with two running renders, the ledger would keep the first one's charge and the second
// one's reservation, not its charge. When the operator is installed again and the budget replaced
// (GitOps sync) in the same month, the new budget would take the stale ledger over: the second
// job, already charged its estimate by the uninstall, would hold a reservation again and be
// charged again when its end is read.
func TestOpsUninstallLeavesALedgerThatABudgetCreatedAgainCanTakeOver(t *testing.T) {
	spec := videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)}
	h := newBatchHarness(t, spec)
	close(h.hold)
	now := time.Now()
	var renders []*videov1alpha1.VideoRender
	for i := range 2 {
		vr := batchRender(i)
		if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 100}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v %v", i, d, err)
		}
		recordFolded(t, h, vr, fmt.Sprintf("job-%d", i))
		renders = append(renders, vr)
	}

	// The uninstall (ReleaseFinalizers): the manager is stopped; a process of its own charges each
	// running job its estimate and settles the budget.
	uninstall := New(h.server, h.server, clocktesting.NewFakeClock(now.Add(time.Minute)), 10*time.Second, NewLedgers("ops"))
	for _, vr := range renders {
		c := ChargeOf(vr)
		c.Estimate, c.Seconds = true, 100
		if err := uninstall.Charge(t.Context(), "team-a", c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := uninstall.SettleAll(t.Context(), "team-a"); err != nil {
		t.Fatal(err)
	}
	if b := h.budget(t); b.Status.Used.RenderSeconds != 200 || len(b.Status.Reservations) != 0 {
		t.Fatalf("control: after the uninstall used %d s, reservations %+v; want 200 s and none", b.Status.Used.RenderSeconds, b.Status.Reservations)
	}

	// Installed again later in the month; a GitOps sync replaces the budget. The jobs ended at
	// 400 s each (the uninstall charged their 100 s estimate: nobody read their end).
	g2 := New(h.server, h.server, clocktesting.NewFakeClock(now.Add(time.Hour)), 10*time.Second, NewLedgers("ops"))
	clk := clocktesting.NewFakeClock(now.Add(time.Hour))
	jobs := &fakeJobs{ends: map[string]*JobEnd{"job-0": {Seconds: 400}, "job-1": {Seconds: 400}}}
	r := opsController(h, g2, clk, jobs)
	opsReconcile(t, r, clk, 1)
	deleteBudget(t, h)
	opsReconcile(t, r, clk, 1)
	createBudget(t, h, spec, nil)
	opsReconcile(t, r, clk, 3)

	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 200 || len(b.Status.Reservations) != 0 {
		t.Errorf("the uninstall charged 200 s and settled every reservation; the budget created again says %d s, reservations %+v "+
			"(service reads %v): the uninstall's last writes never reached the ledger", b.Status.Used.RenderSeconds,
			b.Status.Reservations, jobs.reads)
	}
}

// docs/spend-guard.md "A limit added to a live budget counts the renders already running ... A
// budget written by an older manager ... has them rebuilt from the renders", and "Renders whose
// length the request does not bound run one at a time".
//
// 0.1.0's reservations hold no estimate and no flags. A 0.1.0 manager recorded a project render's
// job (a project render: unbounded, may consume credits) and no budget write had counted it when
// the manager was upgraded. The new manager's VideoBudget controller folds the recorded job into
// a running job's reservation; were it to keep 0.1.0's zero estimate and no flag (since the
// render holds a reservation, it is not rebuilt from the render), a second render without upper
// bound would be admitted beside the first under maxRenderSeconds.
func TestOpsUpgradeFromAnOlderManagersReservationKeepsUnboundedRendersOneAtATime(t *testing.T) {
	spec := videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](600)}
	now := time.Now()
	start, end := PeriodBounds(videov1alpha1.BudgetPeriodMonthly, now)
	project := batchRender(1)
	project.Spec.ProjectID = ptr.To("proj-1")
	project.Status.JobID = "job-1"
	project.Status.SubmittedAt = &metav1.Time{Time: now.Add(-5 * time.Minute)}
	h := newBatchHarness(t, spec, project)
	close(h.hold)
	// The budget as 0.1.0 left it: no ledger taken over, no windows, running jobs not reserved,
	// an in-flight reservation without an estimate.
	b := h.budget(t)
	b.Status = videov1alpha1.VideoBudgetStatus{Period: videov1alpha1.BudgetPeriodMonthly,
		PeriodStart: &metav1.Time{Time: start}, PeriodEnd: &metav1.Time{Time: end},
		Reservations: []videov1alpha1.BudgetReservation{{Kind: "VideoRender", Name: project.Name, UID: string(project.UID),
			AttemptID: "old-attempt", ReservedAt: metav1.NewTime(now.Add(-6 * time.Minute).Truncate(time.Second))}}}
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}

	clk := clocktesting.NewFakeClock(now)
	r := opsController(h, h.g, clk, &fakeJobs{ends: map[string]*JobEnd{}})
	opsReconcile(t, r, clk, 2)
	b = h.budget(t)
	if b.Status.Used.Renders != 1 || !b.Status.RunningReserved {
		t.Fatalf("control: the upgraded budget: used %+v, runningReserved %v, reservations %+v", b.Status.Used, b.Status.RunningReserved, b.Status.Reservations)
	}
	blog := bound.Estimate{Seconds: bound.DefaultSceneSeconds, Unbounded: true}
	d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(2), "a", "", blog, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Wait {
		t.Errorf("a render without upper bound is admitted while a project render (no upper bound) submitted by 0.1.0 runs: "+
			"its reservation %+v keeps no estimate and no flag (reserved %+v)", h.budget(t).Status.Reservations, b.Status.Reserved)
	}
}

// Held: a Secret deleted and created again (kubectl delete secret, then create it again with the
// same name) while a gone render's job runs: its reservation is held while the key cannot be
// read, and the job's own seconds are charged once it can, not its guess.
func TestOpsASecretDeletedAndCreatedAgainStillChargesAGoneRendersJobItsOwnSeconds(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](600)})
	close(h.hold)
	now := time.Now()
	blog := bound.Estimate{Seconds: bound.DefaultSceneSeconds, Unbounded: true}
	vr := batchRender(1)
	vr.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "team-key", Key: "api-key"}
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a1", "", blog, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v %v", d, err)
	}
	recordFolded(t, h, vr, "job-1")
	// The render is gone (finalizer stripped); the Secret is deleted.
	if err := h.server.Delete(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	jobs := &keyedJobs{secrets: map[string]bool{}, ends: map[string]*JobEnd{"job-1": {Seconds: 450}}}
	clk := clocktesting.NewFakeClock(now.Add(2 * time.Minute))
	r := opsController(h, h.g, clk, jobs)
	opsReconcile(t, r, clk, 3)
	if b := h.budget(t); len(b.Status.Reservations) != 1 || b.Status.Used.RenderSeconds != 0 {
		t.Fatalf("while the key cannot be read the room must be held: reservations %+v, used %d s", b.Status.Reservations, b.Status.Used.RenderSeconds)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(2), "a", "", blog, nil); err != nil || !d.Wait {
		t.Fatalf("a second render without upper bound is admitted while the first one's end cannot be read: %+v, %v", d, err)
	}
	// The Secret is created again.
	jobs.mu.Lock()
	jobs.secrets["team-key/api-key"] = true
	jobs.mu.Unlock()
	opsReconcile(t, r, clk, 2)
	if b := h.budget(t); len(b.Status.Reservations) != 0 || b.Status.Used.RenderSeconds != 450 {
		t.Fatalf("once the Secret is back: reservations %+v, used %d s, want none and 450 s", b.Status.Reservations, b.Status.Used.RenderSeconds)
	}
}

// Held: a budget restored WITHOUT its status (Velero's default; a GitOps prune and create;
// kubectl replace --force) while one render's job runs and another render's submission is in
// flight: the new budget takes the ledger's usage over and rebuilds both reservations from the
// objects, with the estimates their submissions recorded, so a render waiting under
// maxRenderSeconds stays waiting.
func TestOpsBudgetRestoredWithoutStatusKeepsUsageAndTheRoomOfRendersInFlightAndRunning(t *testing.T) {
	spec := videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](240), MaxRenders: ptr.To[int64](10)}
	h := newBatchHarness(t, spec)
	close(h.hold)
	now := time.Now()
	running, flying := batchRender(1), batchRender(2)
	for _, vr := range []*videov1alpha1.VideoRender{running, flying} {
		if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a1", "", bound.Estimate{Seconds: 100}, nil); err != nil || d.Wait {
			t.Fatalf("reserve %s: %+v %v", vr.Name, d, err)
		}
	}
	recordFolded(t, h, running, "job-1")
	flying.Status.Submission = &videov1alpha1.Submission{AttemptID: "a1", StartedAt: metav1.NewTime(now),
		BudgetEstimate: &videov1alpha1.BudgetEstimate{Seconds: 100}}
	if err := h.server.Create(t.Context(), flying); err != nil {
		t.Fatal(err)
	}
	if err := h.g.Charge(t.Context(), "team-a", JobCharge{JobID: "job-0", Seconds: 40}); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(now.Add(time.Minute / 2))
	r := opsController(h, h.g, clk, &fakeJobs{ends: map[string]*JobEnd{}})
	deleteBudget(t, h)
	opsReconcile(t, r, clk, 1)
	createBudget(t, h, spec, nil)
	opsReconcile(t, r, clk, 1)
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 40 || b.Status.Used.Renders != 1 || b.Status.Reserved.RenderSeconds != 200 {
		t.Fatalf("restored without status: used %+v, reserved %+v (reservations %+v); want 40 s, 1 render, 200 s reserved",
			b.Status.Used, b.Status.Reserved, b.Status.Reservations)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(3), "a", "", bound.Estimate{Seconds: 5}, nil); err != nil || !d.Wait {
		t.Fatalf("maxRenderSeconds 240 with 40 s used and 200 s reserved: a render is admitted (%+v, %v)", d, err)
	}
}
