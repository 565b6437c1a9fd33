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
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
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
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clocktesting.NewFakeClock(time.Now()),
		Grace: time.Minute, Recheck: time.Hour, Retry: time.Second, Ledgers: h.g.ledgers, Guard: h.g})
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}
	for range times {
		if _, err := r.Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
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
	if err := h.server.Status().Update(t.Context(), b); err != nil {
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
		d, err := h.g.Reserve(t.Context(), "VideoRender", batchRender(i), "a", "", Estimate{Seconds: 30}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Wait || d.Limit != videov1alpha1.BudgetLimitRenderSeconds {
			t.Fatalf("render %d admitted with ten 300 s jobs running under maxRenderSeconds 600: %+v", i, d)
		}
	}
	// Each running job's end still replaces its reservation with what it cost.
	if err := h.g.Charge(t.Context(), "team-a", "job-running-0", 280, nil, false); err != nil {
		t.Fatal(err)
	}
	if b := h.budget(t); b.Status.Used.RenderSeconds != 280 || b.Status.Reserved.RenderSeconds != 2700 {
		t.Fatalf("after one end: used %d s, reserved %d s", b.Status.Used.RenderSeconds, b.Status.Reserved.RenderSeconds)
	}
}
