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

package callgate

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// break-gather: Keep moves the slot Urgent has just given (the token at "now", already taken
// from the bucket: tat moved on) to now+d, outside the bucket. At now+d the bucket has a token
// for any other caller as well, so the key makes two calls where its burst allows one: a
// render that gathered (Keep) and one that did not (a render of an unguarded namespace on the
// same key, a render back from a call-budget wait whose grant makes gatherReservation pass, a
// callback read) or a routine poll.
func TestBreakGatherKeptSlotExceedsTheKeysBurst(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 1, time.Hour) // 10 calls/s, one at once
	if wait := b.Urgent("a", "gathered"); wait != 0 {
		t.Fatalf("the first call waits %s", wait)
	}
	b.Keep("a", "gathered", time.Second) // it does not call now: gatherReservation
	clk.Step(time.Second)

	var calls []string
	if wait := b.Urgent("a", "gathered"); wait == 0 {
		calls = append(calls, "gathered (kept slot)")
	}
	if wait := b.Urgent("a", "other"); wait == 0 {
		calls = append(calls, "other urgent")
	}
	if wait := b.Routine("a"); wait == 0 {
		calls = append(calls, "routine poll")
	}
	if len(calls) > 1 {
		t.Errorf("at one instant the key makes %d calls %v with a burst of 1 (10 calls/s): the kept slot is not in the bucket", len(calls), calls)
	}
}
