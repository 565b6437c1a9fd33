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

// burst queues n urgent calls (submissions) of key a at once and returns when each may call.
func burst(b *Budgets, now time.Time, n int) []time.Time {
	slots := make([]time.Time, n)
	for i := range n {
		slots[i] = now.Add(b.Urgent("a", fmt.Sprint("submit-", i)))
	}
	return slots
}

// busy runs d of a burst: every 10 ms a routine poll asks, and every 50 ms one more submission
// is queued (20/s, twice the key's rate). It returns the polls that went and when each
// submission may call.
func busy(b *Budgets, clk *clocktesting.FakeClock, d time.Duration) (polls int, slots []time.Time) {
	for i, end := 0, clk.Now().Add(d); clk.Now().Before(end); i++ {
		if b.Routine("a") == 0 {
			polls++
		}
		if i%5 == 0 {
			slots = append(slots, clk.Now().Add(b.Urgent("a", fmt.Sprint("submit-", i))))
		}
		clk.Step(10 * time.Millisecond)
	}
	return polls, slots
}

// docs/architecture.md "Load on the cluster": during a burst of submissions, reads of running jobs
// keep a share of the key's budget.
func TestPollShareDuringABurstOfSubmissions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		share float64
		// polls is the least and most routine polls that go in the 10 s the burst lasts.
		minPolls, maxPolls int
	}{
		// Today's rule: once the queue forms, routine polls wait behind all of it (the few that
		// go are the bucket's first tokens, before the queue).
		{"no share", 0, 0, 3},
		// A quarter of 10 calls/s for 10 s is 25 polls, give or take the share's small burst.
		{"a quarter", 0.25, 24, 27},
		{"a share above the bound is the bound", 0.9, 49, 53},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
			b := NewBudgets(clk, 10, 4, time.Hour)
			b.SetPollShare(tc.share)
			b.PollSpacing("a", "running-job")
			polls, slots := busy(b, clk, 10*time.Second)
			if polls < tc.minPolls || polls > tc.maxPolls {
				t.Errorf("%d routine polls went during the burst, want %d to %d", polls, tc.minPolls, tc.maxPolls)
			}
			// The key's rate is kept: the submissions and polls of the first 10 s together
			// are at most its 10 calls/s plus its burst.
			end := time.Unix(1_000_000, 0).Add(10 * time.Second)
			submitted := 0
			for _, at := range slots {
				if at.Before(end) {
					submitted++
				}
			}
			if total := submitted + polls; total > 10*10+4+1 {
				t.Errorf("%d submissions and %d polls in 10 s: over the key's 10 calls/s", submitted, polls)
			}
			if min := int(float64(100)*(1-min(tc.share, MaxPollShare))) - 2; submitted < min {
				t.Errorf("only %d submissions in 10 s, want at least %d: they keep the rest of the rate", submitted, min)
			}
		})
	}
}

// Submissions still go first when the share is idle: with no routine poll waiting (the running
// jobs call back), a burst of urgent calls uses the whole rate.
func TestPollShareIdleLeavesTheRateToSubmissions(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 4, time.Hour)
	b.SetPollShare(0.25)
	b.PollSpacing("a", "running-job-that-calls-back")
	slots := burst(b, clk.Now(), 10)
	if got, want := slots[9].Sub(clk.Now()), 600*time.Millisecond; got != want {
		t.Errorf("the 10th call of a 4-call burst at 10/s waits %s with the share idle, want %s", got, want)
	}
}

// With the share set and no burst, routine polls go as before: from the key's bucket, leaving
// the reserve for urgent calls.
func TestPollShareDoesNotTakeTheReserveWhenCalm(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 8, time.Hour) // reserve: 2 of 8
	b.SetPollShare(0.25)
	b.PollSpacing("a", "running-job")
	for range 6 {
		if wait := b.Routine("a"); wait != 0 {
			t.Fatalf("a routine poll waits %s with the bucket full", wait)
		}
	}
	for i := range 2 {
		if wait := b.Urgent("a", fmt.Sprint("s", i)); wait != 0 {
			t.Errorf("urgent call %d waits %s: the share took the reserve", i, wait)
		}
	}
}

// The polls' share of the workers: one slot every cost ÷ (share × workers); polls that need
// less go at their own pace, polls that need more are spread, none is dropped.
func TestWorkShareSpacesPollsToTheShare(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	w := NewWorkShare(clk, 0.25, 1)
	w.SetWorkers(10)
	if got := w.Slot(2 * time.Second); got != 2*time.Second {
		t.Errorf("the first poll waits %s, want its own 2s", got)
	}
	for range 20 {
		w.Polled(5 * time.Millisecond) // a read of a job still running: no write
	}
	// 0.25 × 10 workers ÷ 5 ms: a slot every 2 ms, 500 a second. 200 polls due in 2 s fit.
	clk.Step(time.Minute)
	for i := range 200 {
		if got := w.Slot(2 * time.Second); got != 2*time.Second {
			t.Fatalf("poll %d of 200 waits %s, want its own 2s: the share has room", i, got)
		}
	}
	// 5,000 polls due in 2 s need 10 s of the share: spread over it, the last about 10 s out.
	clk.Step(time.Minute)
	var last time.Duration
	for i := range 5000 {
		got := w.Slot(2 * time.Second)
		if got < last {
			t.Fatalf("poll %d waits %s, less than the one before (%s)", i, got, last)
		}
		last = got
	}
	if last < 9*time.Second || last > 11*time.Second {
		t.Errorf("the last of 5,000 polls waits %s, want about 10s (a slot every 2 ms, a second's worth at once)", last)
	}
	if got := NewWorkShare(clk, 0, 10).Slot(time.Second); got != time.Second {
		t.Errorf("with no share a poll waits %s, want its own delay", got)
	}
	var none *WorkShare
	none.Polled(time.Millisecond)
	if none.Enabled() {
		t.Error("a nil share is enabled")
	}
}
