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

// The kinds of changes of a budget, a fixed list so that the metrics' label sets stay bounded.
const (
	// ChangeReserve is a reservation written when its render came to pay.
	ChangeReserve = "reserve"
	// ChangeReserveAhead is one written ahead, while its render waited for its key's call budget.
	ChangeReserveAhead = "reserve_ahead"
	// ChangeFold is a recorded fact folded by a guard write (the controller's are ChangeController).
	ChangeFold = "fold"
	// ChangeCharge is the cost of an ended job whose end no status records (Guard.Charge).
	ChangeCharge = "charge"
	// ChangeGiveUp charges the estimate of a job whose end will not be read.
	ChangeGiveUp = "give_up"
	// ChangeRelease gives back a reservation whose attempt created no job.
	ChangeRelease = "release"
	// ChangeUninstall settles every reservation for an uninstall.
	ChangeUninstall = "uninstall"
	// ChangeController is a write of the VideoBudget controller.
	ChangeController = "controller"
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

// WriteObserver counts the budget writes, by writer and cause, and the changes each one carried.
type WriteObserver interface {
	ObserveBudgetWrite(writer, cause, result string)
	ObserveBudgetChanges(change string, n int)
}

// The outcomes of a render that came to pay, for its reservation written ahead (grant.go).
const (
	// GrantUsed: it paid on its reservation written ahead, without a write of its own.
	GrantUsed = "used"
	// GrantNone: none was queued for it (it did not wait for its key's call budget).
	GrantNone = "none"
	// GrantUnwritten: one was queued and its write had not ended.
	GrantUnwritten = "unwritten"
	// GrantRefused: its write failed, or decided that the render waits.
	GrantRefused = "refused"
	// GrantChanged: another attempt or request, its render back too late, or an ended job unfolded.
	GrantChanged = "changed"
)

// Grants lists the grant outcomes, for initialising counters.
var Grants = []string{GrantUsed, GrantNone, GrantUnwritten, GrantRefused, GrantChanged}

// GrantObserver counts the grant outcomes; a WriteObserver that is one receives them.
type GrantObserver interface {
	ObserveGrant(result string)
}

type noWrites struct{}

func (noWrites) ObserveBudgetWrite(string, string, string) {}
func (noWrites) ObserveBudgetChanges(string, int)          {}
func (noWrites) ObserveGrant(string)                       {}

// observeWrites makes the guard count its budget writes in o.
func (g *Guard) observeWrites(o WriteObserver) {
	if o != nil {
		g.observer = o
	}
}

// observeGrant counts one grant outcome.
func (g *Guard) observeGrant(result string) {
	if o, ok := g.observer.(GrantObserver); ok {
		o.ObserveGrant(result)
	}
}
