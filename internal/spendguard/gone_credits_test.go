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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A preview records its credits in its status with its end. A GitOps replace whose gap (the
// budget deleted, not yet created again) meets that end must not lose the credits: the budget
// created again takes the preview's running reservation over from the ledger and folds the end.
// Under maxAICredits 100, a preview reporting 7 credits: 7 used.
func TestAPreviewsCreditsChargedWhileItsBudgetIsGoneAreTakenOverByTheBudgetCreatedAgain(t *testing.T) {
	h, sb := previewHarness(t)
	h.foldNow(t)
	if b := h.budget(t); b.Status.Used.Previews != 1 || b.Status.Reserved.AICreditRenders != 1 {
		t.Fatalf("control: the preview's job was not folded into a running reservation: used %+v reserved %+v", b.Status.Used, b.Status.Reserved)
	}
	spec := h.budget(t).Spec
	deleteBudget(t, h)
	if err := reconcileOnce(t, h); err != nil {
		t.Logf("the controller's look at the deleted budget: %v", err)
	}
	// The preview's job ends while no budget exists: its end is written with its credits.
	chargePreviewCredits(t, h, sb)
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(sb), sb); err != nil {
		t.Fatal(err)
	}
	sb.Status.CompletedAt = ptr.To(metav1.NewTime(h.g.clock.Now()))
	if err := h.server.Update(t.Context(), sb); err != nil {
		t.Fatal(err)
	}
	// The budget is created again; its controller takes the ledger over, and a write folds the end.
	createBudget(t, h, spec, nil)
	if err := reconcileOnce(t, h); err != nil {
		t.Fatal(err)
	}
	h.foldNow(t)
	if b := h.budget(t); b.Status.LedgerBudgetUID != "b2" {
		t.Fatalf("the budget created again did not take the ledger over: %+v", b.Status)
	}
	assertPreviewPaidOnce(t, h)
	if b := h.budget(t); len(b.Status.Reservations) != 0 {
		t.Errorf("the ended preview still holds room: %+v", b.Status.Reservations)
	}
}
