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
	"context"
	"fmt"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/videoops/video-operator/internal/apiclient"
)

// Review of the per-key call budget (branch review): unit tests that fail on the change as
// reviewed.

// timingOutReads answers every GetJob only when the call's deadline passes, as a hanging service
// does.
type timingOutReads struct{ apiclient.Interface }

func (timingOutReads) GetJob(ctx context.Context, _ string) (*apiclient.Job, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("get job: %w", ctx.Err())
}

// R4. keyedClient.observe takes any error whose ctx is done as "cut by our own deadline or
// shutdown", but the ctx it is given is the call's context with the call timeout: a read that
// times out against a hanging service is exactly that case, so a timeout never marks the key
// troubled, contrary to circuit.go ("A 5xx, a timeout or an unreadable answer to any call, a
// read included, opens the circuit") and keyedclient.go's own doc.
func TestReviewReadTimeoutMarksKeyTroubled(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	c := NewCircuits(clk, time.Second, time.Minute, 6*time.Second, 10)
	b := NewBudgets(clk, 10, 20, time.Hour)
	// The key is busy and healthy: closed circuit, an answer just now.
	c.Outcome("k", "a0", true)
	c.Answered("k")
	kc := &KeyedClient{Interface: timingOutReads{}, keyID: "k", budgets: b, circuits: c, pause: time.Second}

	callCtx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond) // l.callContext
	_, err := kc.GetJob(callCtx, "job-1")
	cancel()
	if err == nil {
		t.Fatal("the read did not time out")
	}
	if got := c.Admit("k", "a1"); got != AdmitProbe {
		t.Errorf("after a read timed out against the service, a paid submission is admitted as %v, want a check first (AdmitProbe=%v)",
			got, AdmitProbe)
	}
}

// R5. docs/architecture.md "Never pay twice": an outage costs at most the calls already in flight.
// With the fresh window, a busy key whose service starts hanging keeps admitting paid calls for a
// second after its last answer, one per free urgent slot: up to rate + burst paid calls (30 at the
// defaults) that each end in SubmissionUnknown, since the suspect check only starts after a
// fifth of the call timeout.
func TestReviewHangingOutageCostsOnePaidCall(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	c := NewCircuits(clk, time.Second, time.Minute, 6*time.Second, 10) // slow: 30 s / 5
	b := NewBudgets(clk, 10, 20, time.Hour)                            // the defaults
	c.Outcome("k", "a0", true)
	c.Answered("k") // the last answer; from now on every call hangs
	sent := 0
	for i := range 100 {
		clk.Step(10 * time.Millisecond)
		if b.Urgent("k", fmt.Sprint("o", i)) != 0 {
			continue
		}
		attempt := fmt.Sprint("a", i+1)
		if a := c.Admit("k", attempt); a == AdmitGo || a == AdmitTrial {
			c.Calling("k", attempt) // hangs: no outcome before the suspect threshold
			sent++
		}
	}
	// The bound the circuit keeps (UnprovenPaidCalls): paid calls side by side need answers to keep
	// coming, so a hang costs a few, not the budget's burst.
	if sent > UnprovenPaidCalls {
		t.Errorf("%d paid calls sent into a hanging service in the second after its last answer; each is a SubmissionUnknown", sent)
	}
}

// R6. A submission that finds the circuit waiting already took an urgent slot and comes back for
// a new one every backoff.short(): the budget's tat runs ahead of the clock by the number of
// waiting objects, so routine polls get no token while no call at all is made.
func TestReviewWaitingSubmissionsConsumeNoBudget(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	c := NewCircuits(clk, time.Second, time.Minute, 6*time.Second, 10)
	b := NewBudgets(clk, 10, 4, time.Hour)
	c.Outcome("k", "a0", true)
	c.Answered("k")
	c.Calling("k", "hung") // a paid call that does not answer
	clk.Step(7 * time.Second)
	// 20 submissions wait for it, each looking again when its slot comes, as submit does.
	next := map[string]time.Time{}
	for i := range 20 {
		next[fmt.Sprint("o", i)] = clk.Now()
	}
	polls := 0
	for range 100 { // 10 s in steps of 100 ms
		for obj, at := range next {
			if clk.Now().Before(at) {
				continue
			}
			// submit asks the circuit before it takes a slot of the budget.
			if hold, _, _ := c.Holding("k"); hold {
				next[obj] = clk.Now().Add(time.Millisecond) // backoff.short() in the specs
				continue
			}
			if wait := b.Urgent("k", obj); wait > 0 {
				next[obj] = clk.Now().Add(wait)
				continue
			}
			if c.Admit("k", "x"+obj) == AdmitWait {
				next[obj] = clk.Now().Add(time.Millisecond) // backoff.short() in the specs
			}
		}
		if b.Routine("k") == 0 {
			polls++
		}
		clk.Step(100 * time.Millisecond)
	}
	if polls < 50 {
		t.Errorf("%d routine polls in 10 s at 10 calls/s while no call was made but the hung one", polls)
	}
}

// R7. pause sets pauseJitter and nothing ever clears it: an hour after a 429 with a five-minute
// Retry-After, every routine poll the budget turns away still comes back up to a minute later
// than its token, on top of the spread.
func TestReviewPauseJitterEndsWithThePause(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 1, 24*time.Hour)
	b.Pause("k", 5*time.Minute)
	clk.Step(time.Hour)
	if wait := b.Urgent("k", "o1"); wait != 0 {
		t.Fatalf("an hour after the pause, the first call waits %s", wait)
	}
	worst := time.Duration(0)
	for range 200 {
		worst = max(worst, b.Routine("k")) // turned away: the token is 100 ms ahead
	}
	if worst > 100*time.Millisecond {
		t.Errorf("an hour after a 5-minute pause, a routine poll turned away waits up to %s for a token 100ms ahead", worst)
	}
}

// R8. A slot held before a 429 is used at its time even while the key is paused: urgent returns
// 0 for a held slot that came, without looking at pausedUntil. Every object queued behind the
// burst calls into the pause and gets a 429 of its own.
func TestReviewHeldSlotWaitsForThePause(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	b := NewBudgets(clk, 10, 1, time.Hour)
	for i := range 10 {
		b.Urgent("k", fmt.Sprint("o", i)) // o0 now, o1..o9 held 100 ms apart
	}
	b.Pause("k", 5*time.Second) // o0's call got a 429
	clk.Step(500 * time.Millisecond)
	if wait := b.Urgent("k", "o5"); wait < 4500*time.Millisecond {
		t.Errorf("an object whose slot came during a 5 s pause is told to wait %s; it calls into the pause", wait)
	}
}
