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

package controller

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/videoops/video-operator/internal/spendguard"
)

// break37vGuard is a spend guard over c, with the VideoBudget controller (over server,
// uncounted) looking at the budget whenever the guard asks it to write what it queued.
func break37vGuard(t *testing.T, c, server client.Client) *spendguard.Guard {
	ledgers := spendguard.NewLedgers("video-operator-system")
	g := spendguard.New(c, c, clock.RealClock{}, WriteTimeout, ledgers)
	r := spendguard.NewReconciler(spendguard.ReconcilerOptions{Client: server, Reader: server, Clock: clock.RealClock{}, Grace: time.Minute,
		Recheck: time.Hour, Retry: time.Second, Ledgers: ledgers, Guard: g})
	// The manager's watch: the ledgers' wake-ups in a workqueue, each a look at the budget.
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	if err := ledgers.Source().Start(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		q.ShutDown()
		<-done
	})
	go func() {
		defer close(done)
		for {
			req, shutdown := q.Get()
			if shutdown {
				return
			}
			_, _ = r.Reconcile(ctx, req)
			q.Done(req)
		}
	}()
	return g
}
