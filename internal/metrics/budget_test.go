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

package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// ledgerGauge is each namespace's video_operator_budget_ledger_unavailable.
func ledgerGauge(t *testing.T, m *Metrics) map[string]float64 { return byFirstLabel(t, m.budgetLedger) }

// The fail-closed budget pages someone (VideoOperatorBudgetLedgerUnavailable): the gauge is 1
// while the budget's Ready condition says its ledger cannot be written, 0 once it can, and gone
// with the budget.
func TestBudgetLedgerUnavailableFollowsTheReadyCondition(t *testing.T) {
	m, err := New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	b := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}
	ready := func(status metav1.ConditionStatus, reason videov1alpha1.ConditionReason) {
		b.Status.Conditions = []metav1.Condition{{Type: string(videov1alpha1.ConditionReady), Status: status, Reason: string(reason)}}
		m.ObserveBudget(b)
	}
	ready(metav1.ConditionFalse, videov1alpha1.ReasonLedgerUnavailable)
	if got := ledgerGauge(t, m); got["team-a"] != 1 || len(got) != 1 {
		t.Fatalf("ledger unavailable: gauge %v, want team-a 1", got)
	}
	ready(metav1.ConditionTrue, videov1alpha1.ReasonBudgetActive)
	if got := ledgerGauge(t, m); got["team-a"] != 0 || len(got) != 1 {
		t.Fatalf("ledger written again: gauge %v, want team-a 0", got)
	}
	m.ForgetBudget("team-a")
	if got := ledgerGauge(t, m); len(got) != 0 {
		t.Fatalf("series left for a deleted budget: %v", got)
	}
}
