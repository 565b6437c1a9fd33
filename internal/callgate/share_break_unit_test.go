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

// Issue 23 attacked: the polls' share of the key's budget and of the workers.

// simulate runs d of traffic on key a: the queued objects come back at the delay the budget gave
// them and call when it says 0 (asking again otherwise, as a requeued reconcile does), a routine
// poll asks every 10 ms, and every newEvery one more submission is queued (0: none). It returns
// the calls made (submissions and polls) and the polls among them.
func simulate(b *Budgets, clk *clocktesting.FakeClock, queued map[string]time.Time, d, newEvery time.Duration) (calls, polls int) {
	end := clk.Now().Add(d)
	var next time.Time
	for i := 0; clk.Now().Before(end); i++ {
		now := clk.Now()
		if newEvery > 0 && !now.Before(next) {
			queued[fmt.Sprint("late-", i)] = now
			next = now.Add(newEvery)
		}
		for obj, at := range queued {
			if at.After(now) {
				continue
			}
			if wait := b.Urgent("a", obj); wait > 0 {
				queued[obj] = now.Add(wait)
				continue
			}
			delete(queued, obj)
			calls++
		}
		if b.Routine("a") == 0 {
			calls++
			polls++
		}
		clk.Step(10 * time.Millisecond)
	}
	return calls, polls
}

// docs/operating.md "Load on the cluster": "routine polls take up to share of it from a lane of
// their own, so the key's rate is never exceeded". A burst of submissions queued while no poll
// waited (the jobs had not started, or their polls had found the bucket free) holds slots at the
// whole rate; the polls that come next must not get their share on top of it.
func TestPollShareKeepsTheRateWhenTheBurstCameFirst(t *testing.T) {
	for _, share := range []float64{0.25, 0.35, 0.5} {
		t.Run(fmt.Sprint(share), func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
			b := NewBudgets(clk, 10, 4, time.Hour)
			b.SetPollShare(share)
			// 200 creations at once, none of their jobs running yet: 20 s of the key's rate.
			queued := map[string]time.Time{}
			for i := range 200 {
				queued[fmt.Sprint("submit-", i)] = clk.Now().Add(b.Urgent("a", fmt.Sprint("submit-", i)))
			}
			// The first jobs run: their routine polls ask from now on.
			b.PollSpacing("a", "running-job")
			calls, polls := simulate(b, clk, queued, 10*time.Second, 0)
			if limit := 10*10 + 4 + 1; calls > limit {
				t.Errorf("%d calls in 10 s (%d of them polls): over the key's 10 calls/s and burst of 4 (%d)", calls, polls, limit)
			}
			// The share still works: the polls are not left behind the 20 s queue.
			if want := int(share*100) - 3; polls < want {
				t.Errorf("only %d routine polls in 10 s, want at least %d (share %g of 10 calls/s)", polls, want, share)
			}
		})
	}
}

// The same while submissions keep coming (twice the key's rate) after a burst queued before any
// poll waited: the sum stays within the rate over a longer run.
func TestPollShareKeepsTheRateWhileTheBurstGoesOn(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 4, time.Hour)
	b.SetPollShare(0.35)
	queued := map[string]time.Time{}
	for i := range 100 {
		queued[fmt.Sprint("submit-", i)] = clk.Now().Add(b.Urgent("a", fmt.Sprint("submit-", i)))
	}
	b.PollSpacing("a", "running-job")
	calls, polls := simulate(b, clk, queued, 30*time.Second, 50*time.Millisecond)
	if limit := 10*30 + 4 + 1; calls > limit {
		t.Errorf("%d calls in 30 s (%d of them polls): over the key's 10 calls/s", calls, polls)
	}
	if polls < 30*35/10-3 {
		t.Errorf("only %d routine polls in 30 s, want about %d", polls, 30*35/10)
	}
}

// A poll that asked for a slot far ahead (a job that calls back is read only every few minutes,
// a key's spacing may be minutes) must not push back the slots of polls due sooner: otherwise
// every running job of every tenant is read no sooner than the furthest poll of any, and a job
// that ended is not seen for minutes.
func TestWorkShareAFarPollDoesNotDelayNearOnes(t *testing.T) {
	for _, cost := range []time.Duration{0, 5 * time.Millisecond} {
		t.Run(fmt.Sprint("cost ", cost), func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
			w := NewWorkShare(clk, 0.35, 10)
			if cost > 0 {
				w.Polled(cost)
			}
			// The fallback read of a job that calls back, 5 minutes out.
			if got := w.Slot(5 * time.Minute); got != 5*time.Minute {
				t.Fatalf("the far poll waits %s, want its own 5m0s", got)
			}
			// Then a few polls of jobs that do not call back, due in 2 to 6 s: the share has
			// room for hundreds a second.
			for i, want := range []time.Duration{2 * time.Second, 6 * time.Second, 3 * time.Second} {
				if got := w.Slot(want); got > want+time.Second {
					t.Errorf("poll %d, due in %s, waits %s behind the far one", i, want, got)
				}
			}
		})
	}
}

// The share still spaces polls due at the same time when a far one was asked for meanwhile.
func TestWorkShareStillSpreadsPollsAfterAFarOne(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	w := NewWorkShare(clk, 0.25, 10)
	w.Polled(5 * time.Millisecond) // a slot every 2 ms: 500 a second
	w.Slot(10 * time.Minute)
	var last time.Duration
	for i := range 5000 {
		got := w.Slot(2 * time.Second)
		if got < last {
			t.Fatalf("poll %d waits %s, less than the one before (%s)", i, got, last)
		}
		last = got
	}
	if last < 9*time.Second || last > 11*time.Second {
		t.Errorf("the last of 5,000 polls due in 2 s waits %s, want about 10s", last)
	}
}
