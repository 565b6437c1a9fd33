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
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// docs/spend-guard.md "A ledger restored from an older backup": it is written again "at each
// manager's first look at the budget, when it holds less of the same budget's usage". The manager's
// namespace is restored from an older backup while no manager runs (its ledger goes back from 3
// renders to 1); the manager starts, looks at the budget, and the budget is then replaced before
// any write of its own: the budget created again takes over 3 renders, and a fourth waits under
// maxRenders 3. (Without the first look's rewrite (Ledgers.ensure): 1 render, and a fourth paid.)
func TestOpsLedgerRestoredWhileNoManagerRanDoesNotLowerUsageAcrossAReplace(t *testing.T) {
	spec := videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](3)}
	h := ledgerRestoredToTheFirstOfThree(t, spec)
	// A new manager: nothing in memory. Its controller's first look at the budget.
	clk := clocktesting.NewFakeClock(time.Now().Add(time.Minute))
	h.g = New(h.server, h.server, clk, 10*time.Second, NewLedgers("ops"))
	r := opsController(h, h.g, clk, nil)
	opsReconcile(t, r, clk, 1)
	// A GitOps replace of the budget, before any write of it.
	replaceKeepsThreeRenders(t, h, r, clk, spec, "from an older backup while no manager ran")
}
