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
	"errors"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// A GitOps replace (the budget deleted and created again) that lands between a guard write of the
// budget (a reservation) and its copy to the ledger, with the VideoBudget controller taking the
// ledger over for the new budget at once, on another worker: the take-over waits for that copy,
// or the new budget admits a render in the room of one already admitted (2 paid under maxRenders
// 1). The guard holds the ledger's turn from its budget write until the copy is written.
func TestAReplaceBetweenAGuardWriteAndItsLedgerCopyLosesNothing(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{videov1alpha1.AddToScheme, corev1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	spec := videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}
	budget := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName, UID: "b1"},
		Spec: spec, Status: videov1alpha1.VideoBudgetStatus{LedgerBudgetUID: "b1"}}
	server := fake.NewClientBuilder().WithScheme(s).WithObjects(budget, batchRender(0), batchRender(1)).WithStatusSubresource(budget).Build()
	ledgers := NewLedgers("ops")
	clk := clocktesting.NewFakeClock(time.Now())
	var armed atomic.Bool
	var g *Guard
	tookOver := make(chan struct{})
	c := interceptor.NewClient(server, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			var cur videov1alpha1.VideoBudget
			if _, ok := obj.(*videov1alpha1.VideoBudget); ok && obj.GetUID() != "" &&
				c.Get(ctx, client.ObjectKeyFromObject(obj), &cur) == nil && cur.UID != obj.GetUID() {
				return apierrors.NewConflict(videov1alpha1.GroupVersion.WithResource("videobudgets").GroupResource(), obj.GetName(),
					errors.New("the object was deleted and created again"))
			}
			if err := c.SubResource(sub).Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			if _, ok := obj.(*videov1alpha1.VideoBudget); !ok || !armed.CompareAndSwap(true, false) {
				return nil
			}
			// The guard's write is on the API server. Before it copies it to the ledger: the
			// replace, and the controller's look at the new budget on another worker.
			old := &videov1alpha1.VideoBudget{}
			if err := server.Get(ctx, client.ObjectKeyFromObject(obj), old); err != nil {
				return err
			}
			if err := server.Delete(ctx, old); err != nil {
				return err
			}
			fresh := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName, UID: "b2"}, Spec: spec}
			if err := server.Create(ctx, fresh); err != nil {
				return err
			}
			go func() {
				defer close(tookOver)
				r := NewReconciler(ReconcilerOptions{Client: server, Reader: server, Clock: clk, Grace: time.Minute, Recheck: time.Hour,
					Retry: time.Second, Ledgers: ledgers, Guard: g})
				if _, err := r.Reconcile(context.Background(), opsRequest); err != nil {
					t.Errorf("the new budget's look: %v", err)
				}
			}()
			// Its look comes first, unless it waits for the copy (then the guard goes on at once).
			select {
			case <-tookOver:
			case <-time.After(time.Second):
			}
			return nil
		},
	})
	g = New(c, c, clk, 10*time.Second, ledgers)
	first := &videov1alpha1.VideoBudget{}
	if err := server.Get(t.Context(), client.ObjectKeyFromObject(budget), first); err != nil {
		t.Fatal(err)
	}
	RollPeriod(first, clk.Now())
	if err := ledgers.write(t.Context(), server, first); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	paid := 0
	for i := range 2 {
		d, err := g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", bound.Estimate{Seconds: 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			<-tookOver
		}
		if !d.Wait {
			paid++
		}
	}
	if paid != 1 {
		b := &videov1alpha1.VideoBudget{}
		_ = server.Get(t.Context(), client.ObjectKeyFromObject(budget), b)
		t.Errorf("%d renders paid under maxRenders 1: the new budget %s took the ledger over without the reservation written before the replace "+
			"(reservations %+v)", paid, b.UID, b.Status.Reservations)
	}
}
