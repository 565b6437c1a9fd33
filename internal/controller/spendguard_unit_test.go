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
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// reserveBudget is the spend guard's gate of submit (docs/architecture.md "The record travels with
// the object": a render reserves before paying). The first render of a budget of one render
// reserves it (a write of the budget's status; the render itself is not written: its charge
// finalizer rides with the job's record); the second waits, Stalled BudgetExhausted, and writes
// nothing.
func TestReserveBudgetReservesOnceThenWaits(t *testing.T) {
	budget := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: fixtureNS, Name: videov1alpha1.VideoBudgetName},
		Spec: videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}}
	f := newStepFixture(t, budget, inlineRender("a"), inlineRender("b"))
	ctx := context.Background()

	a := f.scopeOf("a")
	a.attempt = "attempt-a"
	if end := f.l.reserveBudget(ctx, a); end != nil {
		t.Fatalf("the first render of a budget of one waits (%+v)", end)
	}
	writes := f.Writes()
	if !slices.Contains(writes, "patch VideoBudget/status tenant/default") {
		t.Errorf("writes %q: the reservation is not in the budget's status", writes)
	}
	if slices.Contains(writes, "patch VideoRender tenant/a") {
		t.Errorf("writes %q: the reservation wrote the render; its charge finalizer rides with the job's record (one metadata write per render's life)", writes)
	}
	var b videov1alpha1.VideoBudget
	if err := f.c.Get(ctx, objectKey(budget), &b); err != nil {
		t.Fatal(err)
	}
	if len(b.Status.Reservations) != 1 || b.Status.Reservations[0].AttemptID != "attempt-a" {
		t.Errorf("reservations %+v, want attempt-a's", b.Status.Reservations)
	}

	b2 := f.scopeOf("b")
	b2.attempt = "attempt-b"
	end := f.l.reserveBudget(ctx, b2)
	if end == nil || end.err != nil {
		t.Fatalf("the second render of a budget of one must wait (%+v)", end)
	}
	txB := b2.tx
	if w := f.Writes(); len(w) != 0 {
		t.Errorf("a render that waits wrote %q", w)
	}
	if !stalledWith(&txB.Obj.Status.JobStatus, videov1alpha1.ReasonBudgetExhausted) {
		t.Errorf("in memory: %+v, want Stalled BudgetExhausted", txB.Obj.Status.Conditions)
	}
}
