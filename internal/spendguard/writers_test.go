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
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// callerKey marks the contexts of the spend guard's callers in this test: the render reconciler
// that reserves, and the VideoBudget controller's reconcile.
type callerKey struct{}

// Issue 37: "nothing writes the API from a timer or a goroutine outside a reconcile". Every
// write of the spend guard (the budget's status, the ledger ConfigMap) carries its caller's
// context: the changes nobody waits for (a reservation written ahead, with the jobs and ends the
// renders recorded in their own status riding with it) and the ledger's held-back copy are
// written by the VideoBudget controller's reconcile once due, the timers only wake it. Before,
// time.AfterFunc wrote them with a context of its own.
func TestNothingInTheSpendGuardWritesTheAPIFromATimer(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](10)}, batchRender(0), batchRender(1), batchRender(2), batchRender(3))
	close(h.hold)
	var (
		mu      sync.Mutex
		outside []string
	)
	check := func(ctx context.Context, what string) {
		if ctx.Value(callerKey{}) == nil {
			mu.Lock()
			outside = append(outside, what)
			mu.Unlock()
		}
	}
	c := interceptor.NewClient(h.server.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			check(ctx, fmt.Sprintf("%T status", obj))
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			check(ctx, fmt.Sprintf("create %T", obj))
			return c.Create(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			check(ctx, fmt.Sprintf("patch %T", obj))
			return c.Patch(ctx, obj, patch, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			check(ctx, fmt.Sprintf("update %T", obj))
			return c.Update(ctx, obj, opts...)
		},
	})
	ledgers := NewLedgers("ops")
	g := New(c, c, clocktesting.NewFakeClock(time.Now()), 10*time.Second, ledgers)
	r := NewReconciler(ReconcilerOptions{Client: c, Reader: c, Clock: clocktesting.NewFakeClock(time.Now()), Grace: time.Hour, Recheck: time.Hour,
		Retry: time.Second, Ledgers: ledgers, Guard: g})
	caller := context.WithValue(t.Context(), callerKey{}, true)

	// The VideoBudget controller, woken by the guard as the manager's watch does.
	wake := wakes(t, ledgers)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case ns := <-wake:
				_, _ = r.Reconcile(caller, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: videov1alpha1.VideoBudgetName}})
			}
		}
	}()
	defer func() {
		close(stop)
		<-done
	}()

	for i := range 3 {
		if d, err := g.reserve(caller, "VideoRender", batchRender(i), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v %v", i, d, err)
		}
	}
	// The renders record their jobs, and two of them their ends, in their own status (the render
	// controller's writes, not the guard's): nothing is queued for them.
	now := g.clock.Now()
	for i := range 3 {
		recordInStatus(t, h.server, batchRender(i), fmt.Sprintf("job-%d", i), now)
	}
	endInStatus(t, h.server, batchRender(0), 7, now)
	endInStatus(t, h.server, batchRender(1), 8, now)
	// A reservation written ahead is queued: its write, due within aheadWindow, carries them.
	g.reserveAhead("VideoRender", batchRender(3), "a", "", bound.Estimate{Seconds: 10}, nil, 0)

	deadline := time.Now().Add(3 * (aheadWindow + settleDelay))
	for {
		var b videov1alpha1.VideoBudget
		if err := h.server.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}, &b); err != nil {
			t.Fatal(err)
		}
		b.Status.ExpandRunningJobs()
		var cm corev1.ConfigMap
		var l ledger
		if err := h.server.Get(t.Context(), client.ObjectKey{Namespace: "ops", Name: ledgers.Name("team-a")}, &cm); err == nil {
			_ = json.Unmarshal([]byte(cm.Data[ledgerKey]), &l)
		}
		settled := b.Status.Used.Renders == 3 && b.Status.Used.RenderSeconds == 15 && granted(g, batchRender(3).UID) &&
			(JobCharge{JobID: "job-2"}).pending(&b) >= 0 && len(b.Status.Reservations) == 2
		if settled && l.Used.RenderSeconds == 15 && l.Used.Renders == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queued changes were not all written: used %+v, %d reservations; ledger %+v", b.Status.Used, len(b.Status.Reservations), l.Used)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(outside) > 0 {
		t.Fatalf("%d writes of the API outside a caller's context (a timer's or a goroutine's): %v", len(outside), outside)
	}
}

// granted reports whether g holds a reservation written ahead for uid.
func granted(g *Guard, uid types.UID) bool {
	attempt, _ := g.grantOf(uid)
	return attempt != ""
}
