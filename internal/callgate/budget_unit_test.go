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

// Issue 11, "A call budget per API key that never blocks a worker".

// Urgent calls beyond the burst hold slots in the order they asked, one interval apart, and a
// held slot is used, not taken twice, when its object comes back.
func TestBudgetUrgentCallsHoldSlotsInOrder(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 4, time.Hour) // 10 calls/s, 4 at once
	for i := range 4 {
		if wait := b.Urgent("a", fmt.Sprint("o", i)); wait != 0 {
			t.Fatalf("call %d of the burst waits %s", i, wait)
		}
	}
	var last time.Duration
	for i := 4; i < 10; i++ {
		wait := b.Urgent("a", fmt.Sprint("o", i))
		if wait <= last {
			t.Fatalf("call %d waits %s, not after the previous one (%s)", i, wait, last)
		}
		last = wait
	}
	if want := 600 * time.Millisecond; last != want {
		t.Errorf("the 10th call of a 4-call burst at 10/s waits %s, want %s", last, want)
	}
	// o9 comes back early: it still waits for its own slot, and takes no new one.
	clk.Step(300 * time.Millisecond)
	if wait := b.Urgent("a", "o9"); wait != 300*time.Millisecond {
		t.Errorf("an object back early waits %s for its held slot, want 300ms", wait)
	}
	clk.Step(300 * time.Millisecond)
	if wait := b.Urgent("a", "o9"); wait != 0 {
		t.Errorf("an object back at its slot waits %s", wait)
	}
	if _, held, _ := b.Size(); held != 5 {
		t.Errorf("%d slots held, want the 5 not used yet (o4..o8 are past theirs but not back)", held)
	}
}

// Routine polls never take the reserve kept for urgent calls, and never hold a slot.
func TestBudgetRoutinePollsLeaveTheReserve(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 8, time.Hour) // reserve: 2 of 8
	went := 0
	for range 20 {
		if b.Routine("a") == 0 {
			went++
		}
	}
	if went != 6 {
		t.Errorf("%d routine polls went at once, want 6 (a burst of 8 minus a reserve of 2)", went)
	}
	if _, held, _ := b.Size(); held != 0 {
		t.Errorf("routine polls hold %d slots", held)
	}
	for i := range 2 {
		if wait := b.Urgent("a", fmt.Sprint("s", i)); wait != 0 {
			t.Errorf("urgent call %d waits %s behind routine polls", i, wait)
		}
	}
	if wait := b.Routine("a"); wait <= 0 {
		t.Errorf("a routine poll went with the bucket empty")
	}
}

// One tenant's backlog never delays another tenant's calls.
func TestBudgetKeysAreIndependent(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 20, time.Hour)
	for i := range 300 {
		b.Urgent("tenant-a", fmt.Sprint("a", i))
	}
	if wait := b.Urgent("tenant-a", "late"); wait < 25*time.Second {
		t.Fatalf("tenant A's 301st call waits only %s", wait)
	}
	for i := range 10 {
		if wait := b.Urgent("tenant-b", fmt.Sprint("b", i)); wait != 0 {
			t.Errorf("tenant B's call %d waits %s behind tenant A's backlog", i, wait)
		}
	}
}

// A 429 pauses the whole key until Retry-After, and the calls after it are spread, not sent at
// the same instant.
func TestBudgetPauseAfterRateLimit(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 100, 20, time.Hour)
	b.Pause("a", 30*time.Second)
	seen := map[time.Duration]bool{}
	for i := range 40 {
		wait := b.Urgent("a", fmt.Sprint("o", i))
		if wait < 30*time.Second {
			t.Fatalf("call %d waits %s, inside the 30 s pause", i, wait)
		}
		seen[wait] = true
	}
	if len(seen) < 35 {
		t.Errorf("40 calls after a pause come back at %d distinct times: not spread", len(seen))
	}
	if wait := b.Routine("a"); wait < 30*time.Second {
		t.Errorf("a routine poll waits %s, inside the pause", wait)
	}
	if wait := b.Urgent("b", "x"); wait != 0 {
		t.Errorf("another key waits %s for a's pause", wait)
	}
	// A shorter Retry-After later does not shorten the pause.
	b.Pause("a", time.Second)
	if wait := b.Routine("a"); wait < 29*time.Second {
		t.Errorf("a shorter Retry-After cut the pause to %s", wait)
	}
}

// The poll spacing of a key's jobs grows with their number, so that together they stay within
// pollShare of the rate; done jobs stop counting.
func TestBudgetPollSpacing(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 20, time.Hour)
	var spacing time.Duration
	for i := range 1000 {
		spacing = b.PollSpacing("a", fmt.Sprint("job", i))
	}
	if want := 125 * time.Second; spacing != want { // 1000 jobs / (10/s × 0.8)
		t.Errorf("1000 jobs at 10 calls/s are spaced %s, want %s", spacing, want)
	}
	for i := range 500 {
		b.Done("a", fmt.Sprint("job", i))
	}
	if n := b.ActiveJobs("a"); n != 500 {
		t.Errorf("%d active jobs after 500 of 1000 ended", n)
	}
	b.Done("", "job999") // an object deleted, its key unknown
	if n := b.ActiveJobs("a"); n != 499 {
		t.Errorf("%d active jobs after a deletion, want 499", n)
	}
}

// Memory stays bounded: slots nobody came back for, jobs nobody polls any more and idle keys
// are dropped.
func TestBudgetEviction(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 1, time.Minute)
	for k := range 50 {
		for i := range 20 {
			b.Urgent(fmt.Sprint("key", k), fmt.Sprint("o", i))
			b.PollSpacing(fmt.Sprint("key", k), fmt.Sprint("o", i))
		}
	}
	if keys, held, active := b.Size(); keys != 50 || held != 50*19 || active != 50*20 {
		t.Fatalf("kept %d keys, %d held slots, %d active jobs; want 50, 950, 1000", keys, held, active)
	}
	clk.Step(10 * time.Minute)
	b.Urgent("other", "x") // sweeps
	if keys, held, active := b.Size(); keys != 1 || held != 0 || active != 0 {
		t.Errorf("after 10 idle minutes kept %d keys, %d held slots, %d active jobs; want only the key in use", keys, held, active)
	}
}

func TestRoundForMessages(t *testing.T) {
	for _, c := range []struct {
		in   time.Duration
		want time.Duration
	}{{800 * time.Millisecond, time.Second}, {31 * time.Second, 50 * time.Second}, {125 * time.Second, 200 * time.Second},
		{1250 * time.Second, 2000 * time.Second}} {
		if got := RoundDuration(c.in); got != c.want {
			t.Errorf("RoundDuration(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// Issue 10, "An outage costs at most what was in flight when it began": a paid call goes
// without a check only right after an answer of the service; a failed read opens the circuit.
func TestCircuitChecksAnIdleKeyFirst(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	c := NewCircuits(clk, time.Second, time.Minute, 6*time.Second, 10)
	if a := c.Admit("k", "a1"); a != AdmitProbe {
		t.Fatalf("a key never heard from: Admission %d, want a probe first", a)
	}
	c.Probed("k")
	if a := c.Admit("k", "a1"); a != AdmitTrial {
		t.Fatalf("after a probe: Admission %d, want one trial", a)
	}
	c.Outcome("k", "a1", true)
	if a := c.Admit("k", "a2"); a != AdmitGo {
		t.Errorf("right after a definite answer: Admission %d, want go", a)
	}
	clk.Step(2 * circuitFreshness)
	if a := c.Admit("k", "a3"); a != AdmitProbe {
		t.Errorf("after %s without an answer: Admission %d, want a probe", 2*circuitFreshness, a)
	}
	if a := c.Admit("k", "b3"); a != AdmitWait {
		t.Errorf("while a check is under way: Admission %d, want wait (one check at a time)", a)
	}
	c.Probed("k")
	if a := c.Admit("k", "a3"); a != AdmitGo {
		t.Errorf("right after a check: Admission %d, want go", a)
	}
	clk.Step(2 * circuitFreshness)
	c.Answered("k") // a poll answered
	if a := c.Admit("k", "a4"); a != AdmitGo {
		t.Errorf("right after a poll's answer: Admission %d, want go", a)
	}
	c.Troubled("k") // a poll got a 500
	if a := c.Admit("k", "a5"); a != AdmitProbe {
		t.Errorf("after a read failed: Admission %d, want a probe", a)
	}
	c.ProbeFailed("k", time.Minute)
	if a := c.Admit("k", "a5"); a != AdmitWait {
		t.Errorf("after a failed check: Admission %d, want wait for the backoff", a)
	}
	clk.Step(time.Minute + time.Second)
	if a := c.Admit("k", "a5"); a != AdmitProbe {
		t.Errorf("after the backoff: Admission %d, want another check", a)
	}
}

// The circuits of keys no longer used are dropped; one with a call under way is kept.
func TestCircuitEviction(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	c := NewCircuits(clk, time.Second, time.Minute, 6*time.Second, 10)
	for i := range 100 {
		c.Answered(fmt.Sprint("key", i))
	}
	c.Admit("busy", "a1") // a check under way
	clk.Step(circuitIdle + time.Second)
	c.Admit("new", "b1")
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.state["busy"]; !ok || len(c.state) != 2 {
		t.Errorf("after an idle period kept %d circuits (busy kept: %v), want the busy one and the new one", len(c.state), ok)
	}
}
