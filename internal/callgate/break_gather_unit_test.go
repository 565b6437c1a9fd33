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
	"fmt"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// break-gather: a render that holds its paid call back to gather its reservation used to take
// its slot first and keep it (Keep) outside the key's bucket: at the end of the window the bucket
// had a token for another caller as well, two calls where the burst allows one. It now books the
// slot at the end of the window (UrgentAfter), counted in the key's rate as a call then.
func TestBreakGatherAGatheredRenderBooksItsSlotInTheKeysRate(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 1, time.Hour) // 10 calls/s, one at once
	wait := b.UrgentAfter("a", "gathered", time.Second)
	if wait != time.Second {
		t.Fatalf("the gathered render's slot comes in %s, want at the end of its 1s window", wait)
	}
	clk.Step(time.Second)

	var calls []string
	if wait := b.Urgent("a", "gathered"); wait == 0 {
		calls = append(calls, "gathered (its booked slot)")
	}
	if wait := b.Urgent("a", "other"); wait == 0 {
		calls = append(calls, "other urgent")
	}
	if wait := b.Routine("a"); wait == 0 {
		calls = append(calls, "routine poll")
	}
	if len(calls) != 1 || calls[0] != "gathered (its booked slot)" {
		t.Errorf("at one instant the key makes the calls %v with a burst of 1 (10 calls/s), want only the booked one", calls)
	}
	if _, held, _ := b.Size(); held != 1 {
		t.Errorf("%d slots held, want the other's, one interval on", held)
	}
}

// A render that books behind a queue comes after it: the window is a least wait, not a jump.
func TestUrgentAfterWaitsBehindTheQueue(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 1, time.Hour)
	for i := range 30 {
		_ = b.Urgent("a", fmt.Sprint("queued", i)) // 3 s of calls queued
	}
	if wait := b.UrgentAfter("a", "gathered", time.Second); wait != 3*time.Second {
		t.Errorf("booked behind a 3 s queue, the slot comes in %s, want 3s", wait)
	}
}
