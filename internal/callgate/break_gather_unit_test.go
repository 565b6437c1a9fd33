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

// break-gather: a render that holds its paid call back to gather its reservation used to take
// its slot first and keep it (Keep) outside the key's bucket: at the end of the window the bucket
// had a token for another caller as well, two calls where the burst allows one. It now only
// looks (Free) and takes its slot when it calls.
func TestBreakGatherAGatheredRenderTakesItsSlotOnlyWhenItCalls(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 1, time.Hour) // 10 calls/s, one at once
	if !b.Free("a") {
		t.Fatal("an unused key has no free slot")
	}
	// It looks, gathers for a second, and comes back: nothing was taken meanwhile.
	if !b.Free("a") {
		t.Fatal("looking took the slot")
	}
	clk.Step(time.Second)

	var calls []string
	if wait := b.Urgent("a", "gathered"); wait == 0 {
		calls = append(calls, "gathered")
	}
	if wait := b.Urgent("a", "other"); wait == 0 {
		calls = append(calls, "other urgent")
	}
	if wait := b.Routine("a"); wait == 0 {
		calls = append(calls, "routine poll")
	}
	if len(calls) != 1 {
		t.Errorf("at one instant the key makes %d calls %v with a burst of 1 (10 calls/s), want 1", len(calls), calls)
	}
	if b.Free("a") {
		t.Error("a slot is free right after the burst was used")
	}
	// "other" holds the next slot (one interval on): the one after it is free.
	clk.Step(200 * time.Millisecond)
	if !b.Free("a") {
		t.Error("no slot is free two intervals later")
	}
}
