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
)

// The shrunk sequences the simulation found once the ledger kept the manager's cadence (10 s
// then): each is a manager killed while the ledger was behind its budget, and the budget replaced
// before the next manager's first look. The copy held back in memory was lost with the process,
// and the new budget took over less than the old one had used. Each failed with a 10 s cadence
// (at 9d96668: -args -sim.ledger-interval=10s) and passes with the ledger written through.
func TestSimulationCasesOfALedgerBehindItsBudgetAtAKill(t *testing.T) {
	const (
		admitAny  = 0
		deleteAny = 0
	)
	cases := []struct {
		name string
		ops  []simOp
	}{{
		// Seed 989: 402 s charged 0 s.
		name: "an unbounded render paid, its budget replaced, the render deleted with its finalizer stripped, the manager killed",
		ops: []simOp{
			{kind: opCreate, a: 0, b: 402},
			{kind: opAdmit, a: admitAny},
			{kind: opReplace},
			{kind: opDeleteStripped, a: deleteAny},
			{kind: opCrash},
		},
	}, {
		// Seed 320: admitted beyond maxRenderSeconds 1200 while the jobs cost 1282 s.
		name: "renders paid up to the seconds limit, one deleted with its finalizer stripped, the manager killed, the budget replaced",
		ops: []simOp{
			{kind: opCreate, a: 397, b: 393},
			{kind: opAdmit, a: 0},
			{kind: opCreate, a: 216, b: 139},
			{kind: opAdmit, a: 0},
			{kind: opCreate, a: 549, b: 333},
			{kind: opCreate, a: 509, b: 417},
			{kind: opAdmit, a: 0},
			{kind: opCreate, a: 411, b: 340},
			{kind: opAdmit, a: 0},
			{kind: opDeleteStripped, a: 0},
			{kind: opCrash},
			{kind: opReplace},
			{kind: opAdmit, a: 0},
		},
	}, {
		// Seed 30: the month's renders went from 2 to 1.
		// (Then: a charge written and the manager killed before the end; the render's end is now a
		// fact in its status, and the kill comes after it is written.)
		name: "an end written and the manager killed before a budget write folded it, a render deleted with its finalizer stripped, the budget replaced",
		ops: []simOp{
			{kind: opSetRenders, a: 3},
			{kind: opCreate, a: 0, b: 163},
			{kind: opAdmit, a: 0},
			{kind: opCreate, a: 169, b: 88},
			{kind: opAdmit, a: 0},
			{kind: opCrashAfterEnd, a: 0},
			{kind: opDeleteStripped, a: 0},
			{kind: opReplace},
			{kind: opCreate, a: 0, b: 391},
			{kind: opAdmit, a: 0},
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if at, err := simRun(t, tc.ops, testing.Verbose()); err != nil {
				t.Fatalf("step %d: %v", at, err)
			}
		})
	}
}
