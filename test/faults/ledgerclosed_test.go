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

package faults

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// Issue 37, case 6, with the manager as its own process: a manager whose ledger namespace does
// not exist admits nothing in a guarded namespace and says why on the VideoBudget; deleting and
// creating the budget again pays nothing either; once the namespace exists the budget resumes,
// and the same replace pays no second render under maxRenders 1 (before: 2 paid).
func TestAManagerWithoutItsLedgerNamespacePaysNothingAndThenOnce(t *testing.T) {
	w := newWorld(t, simulator.Options{RenderDuration: time.Minute})
	ledgerNS := fmt.Sprintf("ledgers-%d", time.Now().UnixNano()%1_000_000_000)
	budget := `
apiVersion: video.videoops.io/v1alpha1
kind: VideoBudget
metadata: {name: default}
spec: {period: Monthly, maxRenders: 1}
`
	createYAML(t, w.ns, budget)
	w.startManager("--budget-ledger-namespace=" + ledgerNS)
	for i := range 2 {
		createYAML(t, w.ns, guardedRender(i))
	}
	readyReason := func() string {
		var b videov1alpha1.VideoBudget
		if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: videov1alpha1.VideoBudgetName}, &b); err != nil {
			return ""
		}
		if c := meta.FindStatusCondition(b.Status.Conditions, string(videov1alpha1.ConditionReady)); c != nil {
			return string(c.Status) + "/" + c.Reason
		}
		return ""
	}
	waitingOnTheLedger := func() bool {
		items, err := w.renders(t.Context())
		must(t, err)
		n := 0
		for i := range items {
			if c := meta.FindStatusCondition(items[i].Status.Conditions, string(videov1alpha1.ConditionStalled)); c != nil &&
				c.Reason == string(videov1alpha1.ReasonBudgetExhausted) && strings.Contains(c.Message, "ledger") {
				n++
			}
		}
		return n == 2
	}
	waitFor(t, 90*time.Second, "both renders waiting on the ledger, and the budget saying why", func() bool {
		return waitingOnTheLedger() && readyReason() == "False/"+string(videov1alpha1.ReasonLedgerUnavailable)
	})
	if n := w.sim.Submissions(apiKey); n != 0 {
		t.Fatalf("%d renders paid while the ledger could not be written", n)
	}

	// The replace that paid the waiting render before.
	replace := func() {
		t.Helper()
		var old videov1alpha1.VideoBudget
		must(t, k8s.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: videov1alpha1.VideoBudgetName}, &old))
		must(t, k8s.Delete(t.Context(), &old))
		waitFor(t, 30*time.Second, "the budget deleted", func() bool {
			var b videov1alpha1.VideoBudget
			err := k8s.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: videov1alpha1.VideoBudgetName}, &b)
			return err != nil
		})
		createYAML(t, w.ns, budget)
	}
	t.Logf("%s replace with the ledger unwritable", time.Now().Format("15:04:05.000"))
	replace()
	waitFor(t, 90*time.Second, "the new budget saying why", func() bool {
		return readyReason() == "False/"+string(videov1alpha1.ReasonLedgerUnavailable)
	})
	if n := w.sim.Submissions(apiKey); n != 0 {
		t.Fatalf("%d renders paid after the budget was replaced with the ledger unwritable\n%s", n, w.budgetAccount())
	}

	// The ledger's namespace appears: the budget resumes by itself and pays one render.
	t.Logf("%s the ledger's namespace created", time.Now().Format("15:04:05.000"))
	must(t, k8s.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ledgerNS}}))
	waitFor(t, 90*time.Second, "the budget enforced again and one render paid", func() bool {
		return readyReason() == "True/"+string(videov1alpha1.ReasonBudgetActive) && w.sim.Submissions(apiKey) == 1
	})
	t.Logf("%s replace with the ledger written", time.Now().Format("15:04:05.000"))
	replace()
	waitFor(t, 90*time.Second, "the new budget taking the ledger over (1 render used)", func() bool {
		var b videov1alpha1.VideoBudget
		if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: videov1alpha1.VideoBudgetName}, &b); err != nil {
			return false
		}
		return string(b.UID) == b.Status.LedgerBudgetUID && b.Status.Used.Renders == 1
	})
	// Nothing happens: the waiting render stays unpaid under the new budget (each render looks
	// again at least every poll and on every budget change).
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if n := w.sim.Submissions(apiKey); n != 1 {
			t.Fatalf("%d renders paid under maxRenders 1 after the budget was replaced\n%s", n, w.budgetAccount())
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.note = fmt.Sprintf("ledger namespace missing: 0 paid, budget Ready False/LedgerUnavailable, replace: 0 paid; namespace created: 1 paid; replace: %d paid in all",
		w.sim.Submissions(apiKey))
}

// budgetAccount says what the budget and the renders hold, for a failure's message.
func (w *world) budgetAccount() string {
	var b videov1alpha1.VideoBudget
	out := []string{}
	if err := k8s.Get(w.t.Context(), client.ObjectKey{Namespace: w.ns, Name: videov1alpha1.VideoBudgetName}, &b); err == nil {
		out = append(out, fmt.Sprintf("budget %s: ledgerBudgetUID %s, used %+v, reservations %+v", b.UID, b.Status.LedgerBudgetUID, b.Status.Used, b.Status.AllReservations()))
	}
	for _, j := range w.sim.Jobs() {
		out = append(out, fmt.Sprintf("job %s created %s", j.ID, j.CreatedAt.Format("15:04:05.000")))
	}
	items, _ := w.renders(w.t.Context())
	for i := range items {
		st := items[i].Status
		out = append(out, fmt.Sprintf("render %s: job %q submitted %v", items[i].Name, st.JobID, st.SubmittedAt))
	}
	// What the managers said about the money: CI keeps only the test's output.
	w.mu.Lock()
	procs := append([]*managerProc(nil), w.procs...)
	w.mu.Unlock()
	for n, p := range procs {
		raw, err := os.ReadFile(p.log)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if moneyLine.MatchString(line) {
				out = append(out, fmt.Sprintf("manager %d: %s", n, line))
			}
		}
	}
	return strings.Join(out, "\n")
}

// moneyLine matches the manager's log lines about budgets, ledgers, reservations and payments.
var moneyLine = regexp.MustCompile(`(?i)budget|ledger|reserv|charg|paid submission`)
