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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// Adversarial review of ed18289 (one copy of each ledger: the latest this process wrote or its
// watch sent; holds answers from it once the watch synced).

// deletedBudgetThisMonth is budget b1 of team-a, deleted: its last status, of the current month.
func deletedBudgetThisMonth(now time.Time) *videov1alpha1.VideoBudget {
	start, end := PeriodBounds(videov1alpha1.BudgetPeriodMonthly, now)
	return &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName, UID: "b1"},
		Spec: videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodMonthly, MaxRenders: ptr.To[int64](3)},
		Status: videov1alpha1.VideoBudgetStatus{Period: videov1alpha1.BudgetPeriodMonthly, PeriodStart: &metav1.Time{Time: start},
			PeriodEnd: &metav1.Time{Time: end}, Used: videov1alpha1.BudgetUsage{Renders: 3}, LedgerBudgetUID: "b1"}}
}

// ledgerCM is team-a's ledger ConfigMap as the API server holds it.
func ledgerCM(t *testing.T, c client.Client) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), NewLedgers("ops").at("team-a"), cm); err != nil {
		t.Fatalf("reading the ledger ConfigMap: %v", err)
	}
	return cm
}

// W1. An older manager (before ledger version 2, docs/spend-guard.md "Migration"; also one rolled
// back to) kept team-a's ledger, labelled, in the manager's namespace, and budget b1 was deleted
// this month with maxRenders reached: its limits hold (holds reads any ledger with a budget uid
// and a current period, as 59f52d9 did and the older manager itself did). Once the ledgers' watch
// has synced, holds answers from the copy; the watch drops a ledger whose version is below 2
// (Ledgers.watcher: "gone"), so the copy is empty and the namespace pays without limits.
func TestBreakWatchAnOlderManagersLedgerOfADeletedBudgetHoldsItsLimitsOnceTheWatchSynced(t *testing.T) {
	server := withUIDs(fake.NewClientBuilder().WithScheme(recordsScheme(t)).Build())
	now := time.Now()
	writeOlderLedger(t, server, deletedBudgetThisMonth(now))
	cm := ledgerCM(t, server)
	cm.Labels = map[string]string{"app.kubernetes.io/managed-by": "video-operator", videov1alpha1.LabelLedgerNamespace: "team-a"}
	if err := server.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	g := New(server, server, clocktesting.NewFakeClock(now), 10*time.Second, NewLedgers("ops"))
	if d, err := g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || !d.Wait {
		t.Fatalf("control, before the watch synced (a read): %+v %v; want a wait, the deleted budget's limits hold", d, err)
	}
	// The manager's ledger watch lists the labelled ledgers: this one among them.
	inf := &fakeInformer{}
	if err := g.ledgers.Watch(inf); err != nil {
		t.Fatal(err)
	}
	g.ledgers.watcher().OnAdd(ledgerCM(t, server), true)
	inf.synced.Store(true)
	d, err := g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{Seconds: 10}, nil)
	if err != nil || !d.Wait {
		t.Errorf("once the ledgers' watch synced, a render of a namespace whose deleted budget's ledger (an older manager's, "+
			"maxRenders 3 reached this month) holds its limits is admitted: %+v %v", d, err)
	}
}

// W2. docs/spend-guard.md "Removing the limits on purpose": the platform deletes the VideoBudget
// and its ledger; "waiting objects then submit at their next look". Budget b1 was deleted this
// month (its limits hold); a job's charge is written to the ledger (charges go to the ledger
// without a budget), and the platform deletes the ledger right after that write. The watch delivers
// the write and the delete before store sends its own copy (Ledgers.store: send after the Patch
// returned); send then keeps the deleted ConfigMap's copy (its delete already came: nothing
// removes it), and holds, answering from the copy, says "held" until the period ends: the
// namespace waits for the rest of the month (or a restart), the ledger gone.
func TestBreakWatchALedgerDeletedRightAfterThisProcesssWriteStaysHeldUntilThePeriodEnds(t *testing.T) {
	now := time.Now()
	server := withUIDs(fake.NewClientBuilder().WithScheme(recordsScheme(t)).Build())
	ledgers := NewLedgers("ops")
	if err := ledgers.write(t.Context(), server, deletedBudgetThisMonth(now)); err != nil {
		t.Fatal(err)
	}
	armed := false
	c := interceptor.NewClient(server, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := c.Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			if cm, ok := obj.(*corev1.ConfigMap); ok && armed {
				armed = false
				written := cm.DeepCopy()
				ledgers.watcher().OnUpdate(nil, written)       // the watch sends the write...
				if err := c.Delete(ctx, written); err != nil { // ...the platform deletes the ledger...
					return err
				}
				ledgers.watcher().OnDelete(written) // ...and the watch sends the delete, before store's send
			}
			return nil
		},
	})
	clk := clocktesting.NewFakeClock(now)
	g := New(c, c, clk, 10*time.Second, ledgers)
	inf := &fakeInformer{}
	if err := ledgers.Watch(inf); err != nil {
		t.Fatal(err)
	}
	ledgers.watcher().OnAdd(ledgerCM(t, server), true)
	inf.synced.Store(true)
	if d, err := g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || !d.Wait {
		t.Fatalf("control: the deleted budget's limits hold: %+v %v; want a wait", d, err)
	}
	armed = true
	if err := g.Charge(t.Context(), "team-a", JobCharge{JobID: "job-9", Seconds: 5}); err != nil {
		t.Fatal(err)
	}
	if err := server.Get(t.Context(), ledgers.at("team-a"), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("precondition: the platform deleted the ledger: %v", err)
	}
	clk.Step(time.Hour) // an hour on: every watch event of that ledger came long ago
	d, err := g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{Seconds: 10}, nil)
	if err != nil || d.Wait {
		t.Errorf("the platform deleted the budget and its ledger to remove the limits; an hour later a render still waits "+
			"(%q, until %v): holds answers from a copy of the deleted ConfigMap (%v)", d.Message, d.ResetAt, ledgers.copyOf("team-a") != nil)
	}
}

// laggingCache is the guard's cache whose VideoBudget is b (nil: as the API server holds it): its
// watch has not delivered the budget's later writes yet.
type laggingCache struct {
	client.Client
	b *videov1alpha1.VideoBudget
}

func (l laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if vb, ok := obj.(*videov1alpha1.VideoBudget); ok && l.b != nil {
		l.b.DeepCopyInto(vb)
		return nil
	}
	return l.Client.Get(ctx, key, obj, opts...)
}

// W3. One manager, no failure: the watches lag by a few events, as they do. maxRenderSeconds 300;
// r0 (unbounded, guessed 30 s) runs; r1's reservation is written ahead into ledger A. The platform
// deletes A (docs: "a ledger deleted while its budget exists is written again from the budget's
// view"; a restore that deletes and creates does the same). r0's job ends at 764 s: the guard's
// next write finds A gone, creates ledger B from the view and folds 764 s into it. Then the
// ledger watch delivers A's last update, late (it was behind): `later` takes a copy of another
// ConfigMap whatever its age, so the copy goes back to A (r1's reservation, 0 s used), though the
// watch sends A's events before B's and has not sent B's yet; the budget
// cache has not delivered the fold's view write yet either. r1 comes back and pays on its grant,
// 764 s used of 300: the copy that was to catch a lagging view (59f52d9: the last ledger this
// process wrote, never older) lags with it.
func TestBreakWatchALateEventOfTheDeletedLedgerTakesTheCopyBackAndAGrantPaysPastTheLimit(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(map[bool]string{false: "control, no late event", true: "the old ledger's update arrives late"}[late], func(t *testing.T) {
			vr0, vr1 := batchRender(2), batchRender(1) // r0 is render 2
			h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](300)}, vr0, vr1)
			close(h.hold)
			h.pump(t)
			h.g.setGrace(time.Minute)
			if d, err := h.g.reserve(t.Context(), "VideoRender", vr0, "a0", "", bound.Estimate{Seconds: 30, Unbounded: true}, nil); err != nil || d.Wait {
				t.Fatalf("r0: %+v %v", d, err)
			}
			vr0 = h.recordJob(t, 2, "job-0")
			h.foldNow(t)
			gatherWritten(t, h, vr1)
			a := ledgerCM(t, h.server) // ledger A as the API server last wrote it: r1's reservation in it
			view := h.budget(t)        // the budget as the cache holds it from here on
			// The watch lags from here on: it will send A's delete, then B's create, later still.
			h.watchLags.Store(late)
			if err := h.server.Delete(t.Context(), a); err != nil {
				t.Fatal(err)
			}
			h.recordEnd(t, vr0, 764)
			h.foldNow(t) // A is gone: B is created from the view, with r0's 764 s folded
			l := ledgerCM(t, h.server)
			if l.UID == a.UID {
				t.Fatal("precondition: the ledger was created again")
			}
			if got := h.budget(t); got.Status.Used.RenderSeconds < 764 {
				t.Fatalf("precondition: the view shows %d s used, not r0's 764 s", got.Status.Used.RenderSeconds)
			}
			if late {
				h.g.ledgers.watcher().OnUpdate(nil, a)
			}
			h.g.client = laggingCache{Client: h.g.client, b: view}
			cur := &videov1alpha1.VideoRender{}
			if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr1), cur); err != nil {
				t.Fatal(err)
			}
			counted := &grantCounter{got: map[string]int{}}
			h.g.observeWrites(counted)
			d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: cur, Attempt: "a1", Est: bound.Estimate{Seconds: 10}})
			if err != nil {
				t.Fatal(err)
			}
			if !d.Wait || counted.got[GrantUsed] != 0 {
				t.Errorf("r1 paid (grants %v, %+v) under maxRenderSeconds 300 while the ledger holds 764 s used", counted.got, d)
			}
		})
	}
}

// Writes this process did not expect on its ledger's ConfigMap (the same uid): a ledger edited by
// hand into nonsense, or an older manager's written over it (a second manager by mistake, rolled
// back). The guard's next write loses its lock, reads the ledger and rebuilds the state
// (migrate); its copy must be that write. On 2c1b0b5 the nonsense one marked the ConfigMap
// deleted (the copy was gone for good), and the older one's write count (0) made the rebuilt
// ledger's writes look fewer than the copy's, so the copy stayed the stale one and the next write
// "caught up" to it, over the ledger.
func TestTheLedgerCopyFollowsThisProcesssWriteOverANonsenseOrAnOlderManagersLedger(t *testing.T) {
	for _, older := range []bool{false, true} {
		t.Run(map[bool]string{false: "nonsense", true: "an older manager's"}[older], func(t *testing.T) {
			h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](10)}, batchRender(0), batchRender(1), batchRender(2))
			close(h.hold)
			payRender(t, h, 0)
			payRender(t, h, 1)
			if cm := storedLedger(t, h); older {
				writeOlderLedger(t, h.server, h.budget(t))
			} else if cm.Data[ledgerKey] = "not a ledger"; h.server.Update(t.Context(), cm) != nil {
				t.Fatal("writing the nonsense")
			}
			h.g.ledgers.watcher().OnUpdate(nil, storedLedger(t, h))
			payRender(t, h, 2)
			payRender(t, h, 3)
			got, want := h.g.ledgers.copyOf("team-a"), storedLedger(t, h)
			if got == nil || got.rv != want.ResourceVersion {
				t.Fatalf("the guard's copy of the ledger is %+v, not its last write (resourceVersion %s)", got, want.ResourceVersion)
			}
			l, _, err := readLedgerAt(t.Context(), h.server, h.g.ledgers.at("team-a"))
			if err != nil || l == nil || l.Used.Renders != 4 || len(l.Reservations) != 4 {
				t.Errorf("four renders paid and running; the ledger holds %+v (%v)", l, err)
			}
		})
	}
}
