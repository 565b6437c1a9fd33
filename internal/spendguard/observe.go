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

import videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"

// Metrics receives what the spend guard and the VideoBudget controller do (internal/metrics): each
// budget's state after a reconcile and its deletion, each budget write by writer, cause and result,
// the changes it carried, and the outcome of each render that came to pay on a grant (grant.go).
type Metrics interface {
	ObserveBudget(b *videov1alpha1.VideoBudget)
	ForgetBudget(namespace string)
	ObserveBudgetWrite(writer, cause, result string)
	ObserveBudgetChanges(change string, n int)
	ObserveGrant(result string)
}

// The kinds of changes of a budget, a fixed list so that the metrics' label sets stay bounded.
const (
	ChangeReserve      = "reserve"       // a reservation written when its render came to pay
	ChangeReserveAhead = "reserve_ahead" // one written ahead, while its render waited for its call budget
	ChangeFold         = "fold"          // a recorded fact folded by a guard write
	ChangeCharge       = "charge"        // an ended job's cost no status records (Guard.Charge)
	ChangeGiveUp       = "give_up"       // the estimate of a job whose end will not be read
	ChangeRelease      = "release"       // a reservation whose attempt created no job, given back
	ChangeUninstall    = "uninstall"     // every reservation settled for an uninstall
	ChangeController   = "controller"    // a write of the VideoBudget controller
)

// Changes lists the change kinds, for initialising counters.
var Changes = []string{ChangeReserve, ChangeReserveAhead, ChangeFold, ChangeCharge, ChangeGiveUp, ChangeRelease, ChangeUninstall, ChangeController}

// The writers of a budget, and the outcomes of one write.
const (
	WriterGuard      = "guard"
	WriterController = "controller"
	WriteWritten     = "written"
	WriteConflict    = "conflict"
)

// The outcomes of a render that came to pay, for its reservation written ahead (grant.go).
const (
	GrantUsed      = "used"      // it paid on it, without a write of its own
	GrantNone      = "none"      // none was queued (it did not wait for its call budget)
	GrantUnwritten = "unwritten" // one was queued and its write had not ended
	GrantRefused   = "refused"   // its write failed, or decided that the render waits
	GrantChanged   = "changed"   // another attempt or request, back too late, or an end unfolded
)

// Grants lists the grant outcomes, for initialising counters.
var Grants = []string{GrantUsed, GrantNone, GrantUnwritten, GrantRefused, GrantChanged}

type noMetrics struct{}

func (noMetrics) ObserveBudget(*videov1alpha1.VideoBudget)  {}
func (noMetrics) ForgetBudget(string)                       {}
func (noMetrics) ObserveBudgetWrite(string, string, string) {}
func (noMetrics) ObserveBudgetChanges(string, int)          {}
func (noMetrics) ObserveGrant(string)                       {}

// observeWrites makes the guard count its budget writes in m.
func (g *Guard) observeWrites(m Metrics) {
	if m != nil {
		g.observer = m
	}
}
