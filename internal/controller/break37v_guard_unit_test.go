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

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/spendguard"
)

// break37vGuard is a spend guard over c, with the VideoBudget controller (over server,
// uncounted) looking at the budget whenever the guard asks it to write what it queued.
func break37vGuard(t *testing.T, c, server client.Client) *spendguard.Guard {
	ledgers := spendguard.NewLedgers("video-operator-system")
	g := spendguard.New(c, c, clock.RealClock{}, WriteTimeout, ledgers)
	r := spendguard.NewReconciler(spendguard.ReconcilerOptions{Client: server, Reader: server, Clock: clock.RealClock{}, Grace: time.Minute,
		Recheck: time.Hour, Retry: time.Second, Ledgers: ledgers, Guard: g})
	wake := ledgers.Wake()
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
				_, _ = r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ev.Object.GetNamespace(), Name: videov1alpha1.VideoBudgetName}})
			}
		}
	}()
	return g
}
