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
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// flakyLedgerServer is a fake API server whose ledger (ConfigMap) writes fail while failing is
// set, and are held (until release is closed) while hang is set.
type flakyLedgerServer struct {
	c       client.Client
	failing atomic.Bool
	hang    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func newFlakyLedgerServer(t *testing.T) *flakyLedgerServer {
	t.Helper()
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	f := &flakyLedgerServer{entered: make(chan struct{}), release: make(chan struct{})}
	server := fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(&videov1alpha1.VideoBudget{}).Build()
	gate := func(obj client.Object) error {
		if _, ok := obj.(*corev1.ConfigMap); !ok {
			return nil
		}
		if f.hang.CompareAndSwap(true, false) {
			close(f.entered)
			<-f.release
		}
		if f.failing.Load() {
			return apierrors.NewInternalError(fmt.Errorf("etcdserver: request timed out"))
		}
		return nil
	}
	f.c = interceptor.NewClient(server, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := gate(obj); err != nil {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := gate(obj); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	return f
}

func withCharge(b *videov1alpha1.VideoBudget, rv, job string) *videov1alpha1.VideoBudget {
	c := b.DeepCopy()
	c.ResourceVersion = rv
	c.Status.Used.Renders++
	c.Status.ChargedJobs = append(c.Status.ChargedJobs, job)
	c.Status.ChargeCount++
	return c
}

// Finding 1. readCurrent's promise is that a read deciding on the ledger sees every copy this
// process has held back. flushLocked took the pending copy out (lc.pending = nil) before it
// wrote it; when that write failed (a transient API error), adoptLedger returned the error, and
// its retry found nothing pending and read the ledger without the held-back copy: the new
// budget took over less usage than the old one had. Now a copy whose write fails stays held back,
// and a takeover merges it from memory. Here the held-back copy is a render
// charged and counted (renders 1 under maxRenders 1): the new budget starts from 0 and admits
// another render.
func TestBreak594AFailedFlushDoesNotDropTheHeldBackCopyATakeOverMustRead(t *testing.T) {
	now := time.Now()
	f := newFlakyLedgerServer(t)
	ledgers := NewLedgers("ops")
	old := ledgerBudget("b1", "10", now)
	if err := ledgers.write(t.Context(), f.c, old); err != nil {
		t.Fatal(err)
	}
	// The render's count: its copy's write fails, and it is held back (then: by the ledger's
	// cadence).
	f.failing.Store(true)
	if err := ledgers.write(t.Context(), f.c, withCharge(old, "11", "job-1")); err == nil {
		t.Fatal("the failing write succeeded")
	}
	// The budget is replaced; the first attempt to take over meets one failed ledger write.
	replaced := ledgerBudget("b2", "20", now)
	replaced.Status.LedgerBudgetUID = ""
	first := replaced.DeepCopy()
	if _, err := adoptLedger(t.Context(), f.c, f.c, ledgers, first, now); err != nil {
		t.Fatal(err)
	}
	// The takeover whose flush failed merges the copy this process could not write.
	if first.Status.Used.Renders != 1 || !charged(first, "job-1") {
		t.Fatalf("the new budget took the ledger over without the held-back copy whose flush failed: used %+v, charged %v "+
			"(a second render is admitted under maxRenders 1)", first.Status.Used, first.Status.ChargedJobs)
	}
	// And so does one after it (the write of what it merged failed: the budget is taken over
	// again by the next look), once the ledger can be written.
	f.failing.Store(false)
	if _, err := adoptLedger(t.Context(), f.c, f.c, ledgers, replaced, now); err != nil {
		t.Fatal(err)
	}
	if replaced.Status.Used.Renders != 1 || !charged(replaced, "job-1") {
		t.Fatalf("the new budget took the ledger over without the held-back copy whose flush failed once: used %+v, charged %v "+
			"(a second render is admitted under maxRenders 1)", replaced.Status.Used, replaced.Status.ChargedJobs)
	}
}

// Finding 2. keepInLedger now starts from newest(): the copy of the deleted budget with the
// highest resourceVersion. Its own derived copies (last plus the charges made while the budget
// is gone) keep the resourceVersion of the copy they were derived from, so a real copy with a
// higher version (the VideoBudget controller's write made just before the deletion, whose
// record() lands after the guard's first keepInLedger) counts as newer although it lacks
// those charges. The next batch then starts from it and the first charge made while the budget
// was gone leaves the ledger for good. (Before 594caaa keepInLedger started from last, which
// kept it.)
func TestBreak594AChargeMadeWhileTheBudgetIsGoneSurvivesALateCopyOfItsLastWrite(t *testing.T) {
	now := time.Now()
	f := newFlakyLedgerServer(t)
	ledgers := NewLedgers("ops")
	g := New(f.c, f.c, clocktesting.NewFakeClock(now), 10*time.Second, ledgers)
	x := ledgerBudget("b1", "10", now)
	if err := ledgers.write(t.Context(), f.c, x); err != nil {
		t.Fatal(err)
	}
	// The controller wrote the budget (a condition) at version 11 just before it was deleted; its
	// record() has not run yet.
	y := x.DeepCopy()
	y.ResourceVersion = "11"
	y.Status.ObservedGeneration = 2
	charge := func(job string) []*op {
		return []*op{{kind: "charge", change: func(b *videov1alpha1.VideoBudget) bool {
			b.Status.Used.Renders++
			b.Status.ChargedJobs = append(b.Status.ChargedJobs, job)
			return true
		}, done: make(chan struct{})}}
	}
	// The guard's batch with job-1's charge finds the budget gone.
	latest, _ := g.keepInLedger(t.Context(), "team-a", x, charge("job-1"))
	// The controller's record of its last write lands now.
	if err := ledgers.write(t.Context(), f.c, y); err != nil {
		t.Fatal(err)
	}
	// The next charge while the budget is gone.
	_, _ = g.keepInLedger(t.Context(), "team-a", latest, charge("job-2"))
	if err := ledgers.flushPending(t.Context(), "team-a"); err != nil {
		t.Fatal(err)
	}
	l, _, err := ledgers.read(t.Context(), f.c, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, j := range l.ChargedJobs {
		got[j] = true
	}
	if !got["job-1"] || !got["job-2"] || l.Used.Renders != 2 {
		t.Fatalf("the ledger of the deleted budget holds renders %d, charged %v: a charge made while the budget was gone is lost "+
			"(a budget created again takes over one render less)", l.Used.Renders, l.ChargedJobs)
	}
}

// Finding 3. Fail closed ends when any write of the namespace's ledger succeeds, even one of a
// copy older than the copy whose write failed. The guard's copy at version 12 (a render counted)
// fails to reach the ledger; the failure wakes the VideoBudget controller, whose look writes
// the budget as its cache holds it (version 11, not 12 yet). That write succeeds: the failure is
// cleared and admissions resume, while the ledger lacks version 12's render and nothing holds
// that copy to write it again (it was not pending: a write past the cadence's interval).
func TestBreak594AnOlderCopyWrittenAfterAFailedNewerOneDoesNotEndFailClosed(t *testing.T) {
	now := time.Now()
	f := newFlakyLedgerServer(t)
	ledgers := NewLedgers("ops")
	x := ledgerBudget("b1", "10", now)
	if err := ledgers.write(t.Context(), f.c, x); err != nil {
		t.Fatal(err)
	}
	f.failing.Store(true)
	z := withCharge(x, "12", "job-1")
	if err := ledgers.write(t.Context(), f.c, z); err == nil {
		t.Fatal("the failing write succeeded")
	}
	f.failing.Store(false)
	// The controller's look, the budget from its cache (one version behind).
	y := x.DeepCopy()
	y.ResourceVersion = "11"
	_ = ledgers.write(t.Context(), f.c, y)
	l, _, err := ledgers.read(t.Context(), f.c, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	if ledgers.failure("team-a") == nil && l.Used.Renders < 1 {
		t.Fatalf("fail closed ended (confirmed=%v) while the ledger lacks the newest copy's render (ledger renders %d, budget %d)",
			ledgers.confirmed("team-a"), l.Used.Renders, z.Status.Used.Renders)
	}
}

// Finding 4. holds (every paid submission of a namespace without a budget) now creates a
// tenantLedger (and its mutex) for the namespace through readCurrent/tenantOf, and nothing
// ever removes one: the map grows by one entry per namespace ever asked about (a cluster whose
// CI creates a namespace per run), where 223f4a0's holds created none. maxFree bounds the free
// answers at 10,000 for this reason; the cadences are unbounded.
func TestBreak594HoldsDoesNotGrowALedgerCadencePerNamespaceWithoutABudget(t *testing.T) {
	now := time.Now()
	f := newFlakyLedgerServer(t)
	ledgers := NewLedgers("ops")
	const n = 20_000
	start := time.Now()
	for i := range n {
		if held, _, err := ledgers.holds(t.Context(), f.c, fmt.Sprintf("ci-%d", i), now); err != nil || held {
			t.Fatalf("namespace %d: held %v, %v", i, held, err)
		}
	}
	t.Logf("%d holds in %v", n, time.Since(start))
	ledgers.mu.Lock()
	got := len(ledgers.tenants)
	ledgers.mu.Unlock()
	if got > maxFree {
		t.Fatalf("%d namespaces without a budget were asked about once: the ledgers keep %d cadences for them, never dropped", n, got)
	}
}

// Finding 5. holds now waits on the namespace's io mutex, which a ledger write holds for as long
// as its API call takes, and sync.Mutex does not heed the caller's context: a paid submission of
// a namespace whose ledger write hangs (an API server that accepted the connection and does not
// answer) waits for that write, past its own deadline. Before 594caaa, holds with nothing held
// back read the ledger at once with its own context.
func TestBreak594HoldsHeedsItsContextWhileALedgerWriteHangs(t *testing.T) {
	now := time.Now()
	f := newFlakyLedgerServer(t)
	ledgers := NewLedgers("ops")
	f.hang.Store(true)
	wrote := make(chan error, 1)
	go func() { wrote <- ledgers.write(context.Background(), f.c, ledgerBudget("b1", "10", now)) }()
	<-f.entered
	defer func() {
		close(f.release)
		if err := <-wrote; err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() {
		_, _, _ = ledgers.holds(ctx, f.c, "team-a", now)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		// Without the context heeded it waits for the hung write, which only the test ends.
		t.Fatal("holds with a 100 ms deadline still waits after 30 s for a ledger write that hangs")
	}
}
