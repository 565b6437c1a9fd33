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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// ledgerGate is a fake API server whose next ledger write, once armed, is held in flight until
// a ledger read has been answered (or half a second has passed): it shows what a read made
// while a copy of the ledger is on its way learns.
type ledgerGate struct {
	c        client.Client
	mu       sync.Mutex
	armed    bool
	entered  chan struct{} // closed when the armed write is held
	answered chan struct{} // closed when a ledger read was answered while the write was held
}

func newLedgerGate(t *testing.T) *ledgerGate {
	t.Helper()
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	server := fake.NewClientBuilder().WithScheme(s).Build()
	lg := &ledgerGate{}
	hold := func() {
		lg.mu.Lock()
		armed := lg.armed
		lg.armed = false
		lg.mu.Unlock()
		if !armed {
			return
		}
		close(lg.entered)
		select {
		case <-lg.answered:
		case <-time.After(500 * time.Millisecond):
			// Nothing read meanwhile (a read that waits for this write): let it go.
		}
	}
	lg.c = interceptor.NewClient(server, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				hold()
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				hold()
			}
			return c.Create(ctx, obj, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			err := c.Get(ctx, key, obj, opts...)
			if _, ok := obj.(*corev1.ConfigMap); ok {
				lg.mu.Lock()
				if lg.entered != nil && !lg.armed {
					select {
					case <-lg.answered:
					default:
						select {
						case <-lg.entered:
							close(lg.answered)
						default:
						}
					}
				}
				lg.mu.Unlock()
			}
			return err
		},
	})
	return lg
}

// arm holds the next ledger write in flight.
func (lg *ledgerGate) arm() {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	lg.armed, lg.entered, lg.answered = true, make(chan struct{}), make(chan struct{})
}

// ledgerBudget is a budget of namespace team-a at resourceVersion rv, in its current month.
func ledgerBudget(uid, rv string, now time.Time) *videov1alpha1.VideoBudget {
	b := &videov1alpha1.VideoBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName, UID: types.UID(uid), ResourceVersion: rv},
		Spec:       videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)},
	}
	RollPeriod(b, now)
	b.Status.LedgerBudgetUID = uid
	return b
}

func reserved(b *videov1alpha1.VideoBudget, uid string) bool {
	for _, r := range b.Status.Reservations {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// A fault run (issue 37, case 6: the budget replaced once its ledger can be written) paid a
// second render under maxRenders 1: the first render's reservation was in a ledger copy on its
// way to the API server (then: the VideoBudget controller wrote what the ledger's cadence held
// back when it saw the old budget deleted; now: the copy of the reservation's own budget write)
// while the new budget took the ledger over, read the ledger without it, and admitted the
// second. A read that decides on the ledger sees every copy this process has started to write.
func TestABudgetTakingOverReadsTheLedgerCopyInFlight(t *testing.T) {
	now := time.Now()
	lg := newLedgerGate(t)
	ledgers := NewLedgers("ops")
	old := ledgerBudget("b1", "10", now)
	if err := ledgers.write(t.Context(), lg.c, old); err != nil {
		t.Fatal(err)
	}
	// The first render's reservation: its copy is on its way, held in flight, and the old budget
	// is deleted.
	withFirst := old.DeepCopy()
	withFirst.ResourceVersion = "11"
	withFirst.Status.Reservations = append(withFirst.Status.Reservations, videov1alpha1.BudgetReservation{
		Kind: "VideoRender", Name: "r1", UID: "uid-1", AttemptID: "a1", ReservedAt: metav1.NewTime(now), EstimatedSeconds: 5})
	lg.arm()
	flushed := make(chan error, 1)
	go func() { flushed <- ledgers.write(context.Background(), lg.c, withFirst) }()
	<-lg.entered

	// The new budget takes the ledger over meanwhile.
	replaced := ledgerBudget("b2", "20", now)
	replaced.Status.LedgerBudgetUID = ""
	if _, err := adoptLedger(t.Context(), lg.c, lg.c, ledgers, replaced, now); err != nil {
		t.Fatal(err)
	}
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if !reserved(replaced, "uid-1") {
		t.Fatalf("the new budget took the ledger over without the first render's reservation, whose copy was in flight: "+
			"it would admit a second render under maxRenders 1 (reservations %+v, used %+v)", replaced.Status.Reservations, replaced.Status.Used)
	}
	recountReserved(replaced)
	if _, _, reached := exhausted(replaced, "VideoRender", Estimate{Seconds: 5}); !reached {
		t.Fatalf("the new budget admits a second render under maxRenders 1: %+v", replaced.Status)
	}
}

// The same for a namespace left without a budget: the deleted budget's first ledger copy is on
// its way while a render asks whether the ledger keeps its limits; it must not read "no ledger"
// and pay.
func TestANamespaceWithoutABudgetReadsTheLedgerCopyInFlight(t *testing.T) {
	now := time.Now()
	lg := newLedgerGate(t)
	ledgers := NewLedgers("ops")
	lg.arm()
	wrote := make(chan error, 1)
	go func() { wrote <- ledgers.write(context.Background(), lg.c, ledgerBudget("b1", "10", now)) }()
	<-lg.entered
	held, _, err := ledgers.holds(t.Context(), lg.c, "team-a", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !held {
		t.Fatal("a namespace whose deleted budget's ledger copy was in flight reads as unlimited: its renders are paid")
	}
}

// Two writers of one budget (a render's reservation and the VideoBudget controller) record
// their copies in the order their goroutines reach the ledger, not the order the API server
// wrote them: an older copy recorded last must not stand for the ledger over a newer one.
func TestAnOlderCopyOfTheBudgetNeverReplacesANewerOneInTheLedger(t *testing.T) {
	now := time.Now()
	lg := newLedgerGate(t)
	ledgers := NewLedgers("ops")
	if err := ledgers.write(t.Context(), lg.c, ledgerBudget("b1", "10", now)); err != nil {
		t.Fatal(err)
	}
	newer := ledgerBudget("b1", "12", now)
	newer.Status.Reservations = []videov1alpha1.BudgetReservation{
		{Kind: "VideoRender", Name: "r1", UID: "uid-1", AttemptID: "a1", ReservedAt: metav1.NewTime(now)},
		{Kind: "VideoRender", Name: "r2", UID: "uid-2", AttemptID: "a2", ReservedAt: metav1.NewTime(now)},
	}
	older := ledgerBudget("b1", "11", now)
	older.Status.Reservations = newer.Status.Reservations[:1]
	for _, b := range []*videov1alpha1.VideoBudget{newer, older} {
		if err := ledgers.write(t.Context(), lg.c, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := ledgers.flushPending(t.Context(), "team-a"); err != nil {
		t.Fatal(err)
	}
	// A write of an older copy, once more, changes nothing either.
	if err := ledgers.write(t.Context(), lg.c, older); err != nil {
		t.Fatal(err)
	}
	l, _, err := ledgers.read(t.Context(), lg.c, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	if l == nil || len(l.Reservations) != 2 {
		t.Fatalf("the ledger holds %+v, want the newer copy's two reservations", l)
	}
}

// A copy of a replaced budget whose write failed is held back; once the budget that took the
// ledger over (merging that copy) has its own copy written, the held-back one is not written
// over it later, and while the ledger fails, the new budget's copy is what is held back.
func TestAReplacedBudgetsHeldBackCopyIsNotWrittenOverItsSuccessor(t *testing.T) {
	now := time.Now()
	f := newFlakyLedgerServer(t)
	ledgers := NewLedgers("ops")
	old := withCharge(ledgerBudget("b1", "10", now), "11", "job-1")
	f.failing.Store(true)
	if err := ledgers.write(t.Context(), f.c, old); err == nil {
		t.Fatal("the failing write succeeded")
	}
	successor := ledgerBudget("b2", "20", now)
	successor.Status.LedgerBudgetUID = ""
	if _, err := adoptLedger(t.Context(), f.c, f.c, ledgers, successor, now); err != nil {
		t.Fatal(err)
	}
	if successor.Status.Used.Renders != 1 {
		t.Fatalf("the successor took over %d renders, want the held-back copy's 1", successor.Status.Used.Renders)
	}
	successor.Status.LedgerBudgetUID = "b2"
	successor.ResourceVersion = "21"
	if err := ledgers.write(t.Context(), f.c, successor); err == nil {
		t.Fatal("the failing write succeeded")
	}
	ledgers.mu.Lock()
	held := ledgers.tenants["team-a"].pending
	ledgers.mu.Unlock()
	if held == nil || held.UID != "b2" {
		t.Fatalf("while the ledger fails, the held-back copy is %s, want the successor's", describeCopy(held))
	}
	f.failing.Store(false)
	if err := ledgers.flushPending(t.Context(), "team-a"); err != nil {
		t.Fatal(err)
	}
	if err := ledgers.flushPending(t.Context(), "team-a"); err != nil {
		t.Fatal(err)
	}
	l, _, err := ledgers.read(t.Context(), f.c, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	if l == nil || l.BudgetUID != "b2" || l.Used.Renders != 1 {
		t.Fatalf("the ledger holds %+v, want the successor's copy with the render it took over", l)
	}
}

func describeCopy(b *videov1alpha1.VideoBudget) string {
	if b == nil {
		return "none"
	}
	return fmt.Sprintf("budget %s's at version %s", b.UID, b.ResourceVersion)
}
