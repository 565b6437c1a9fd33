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
	"errors"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/videoops/video-operator/internal/apiclient"
)

// Circuits pauses the paid submissions of an API key after one of them had an unknown outcome
// (a 5xx, a timeout, an unreadable answer): the service may be failing, and each further paid
// call could be one more job nobody can identify (docs/architecture.md "Never pay twice"). Keys are
// identified by their fingerprint, never the key.
//
// A key's circuit is closed (calls go), open (paid calls wait; a cheap read probes the service)
// or half-open: one trial paid call goes and the others wait for its answer; a definite answer
// (a job, or a refusal) closes the circuit, an unknown one opens it again. A key this process
// has not called yet starts half-open, so that after a restart in the middle of an outage only
// one paid call is at risk, not one per worker.
//
// An outage of the paid endpoint alone, behind a brand list that still answers, cannot be seen
// without a paid call: there, consecutive unknown outcomes space the trials out exponentially
// (from the backoff base to its maximum), so such an outage costs a few calls an hour, not one
// per object.
//
// A paid call goes only when the service answered a call of the key within the last second
// (the fresh window); otherwise the brand list is read first. An idle key pays one cheap read for
// that, a busy one nothing, and an outage that began while the key was idle costs no paid call.
// A 5xx, a timeout or an unreadable answer to any call, a read included, opens the circuit.
//
// A paid call that is still unanswered after a fifth of the call timeout makes the key suspect:
// new paid submissions wait for its answer, so that an outage in the form of hanging calls costs
// the calls already sent, not one more per object while the first waits for its timeout.
type Circuits struct {
	clock     clock.PassiveClock
	base, max time.Duration
	slow      time.Duration
	// fresh is how recent an answer of the service must be for a paid call to go without a
	// check first.
	fresh time.Duration

	mu    sync.Mutex
	state map[string]*circuit
	// sweptAt is when the circuits of idle keys were last dropped.
	sweptAt time.Time
}

// circuitIdle is how long the circuit of a key with nothing under way is kept after its last
// answer. A key seen again later starts as a new one: checked, then one trial.
const circuitIdle = 10 * time.Minute

type circuit struct {
	closed bool
	// open: the last paid call's outcome was unknown; a probe must succeed before a trial, and
	// not before until.
	open  bool
	until time.Time
	// unknowns counts consecutive unknown outcomes.
	unknowns int
	// trial is the attempt id of the trial call under way, if any.
	trial string
	// inFlight are the paid calls under way, by attempt id, with when they started.
	inFlight map[string]time.Time
	// answered is when a call of the key last got an answer that shows the service up.
	answered time.Time
	// probing is set while a check of the service is under way: one at a time per key, so that
	// a hanging service holds one worker, not all of them.
	probing bool
}

// circuitFreshness is how recent an answer of the service must be for a paid call to go without
// checking the service first.
const circuitFreshness = time.Second

// NewCircuits returns the circuits of keys whose budget allows rate calls per second: an answer
// is fresh for a second, or for two calls' time at a rate under two calls a second, so that the
// check before a paid call is still fresh when the call's own slot comes.
func NewCircuits(c clock.PassiveClock, base, maxDelay, slow time.Duration, rate float64) *Circuits {
	fresh := circuitFreshness
	if rate > 0 {
		fresh = max(fresh, time.Duration(2*float64(time.Second)/rate))
	}
	return &Circuits{clock: c, base: base, max: maxDelay, slow: slow, fresh: fresh, state: map[string]*circuit{}}
}

func (c *Circuits) get(keyID string) *circuit {
	s, ok := c.state[keyID]
	if !ok {
		s = &circuit{inFlight: map[string]time.Time{}}
		c.state[keyID] = s
	}
	return s
}

// UnprovenPaidCalls bounds what a service that starts to hang costs: the paid calls already in
// flight and at most this many more, sent since its last answer and unanswered. While answers
// keep coming, paid calls go side by side; a slow but healthy service gets this many at a time.
const UnprovenPaidCalls = 8

// suspect reports a paid call of the key unanswered for longer than the slow threshold, or
// UnprovenPaidCalls paid calls sent since the service last answered, all unanswered.
func (c *Circuits) suspect(s *circuit) bool {
	now := c.clock.Now()
	unproven := 0
	for _, started := range s.inFlight {
		if now.Sub(started) > c.slow {
			return true
		}
		if !started.Before(s.answered) {
			unproven++
		}
	}
	return unproven >= UnprovenPaidCalls
}

// Admission is what a paid submission of a key may do now.
type Admission int

const (
	// AdmitGo means the paid call goes now.
	AdmitGo Admission = iota
	// AdmitTrial means the paid call goes as the one trial of a half-open circuit.
	AdmitTrial
	// AdmitProbe means the service is checked first with a cheap read; the call comes back after.
	AdmitProbe
	// AdmitWait means a check, a trial or an unanswered call of the key is under way; wait for it.
	AdmitWait
)

// Admit decides for one submission. attempt becomes the trial when it is admitted as one.
func (c *Circuits) Admit(keyID, attempt string) Admission {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.sweep(now)
	s := c.get(keyID)
	switch {
	case c.suspect(s):
		return AdmitWait
	case s.trial != "", s.probing, s.open && now.Before(s.until):
		return AdmitWait
	case s.open, now.Sub(s.answered) > c.fresh:
		s.probing = true
		return AdmitProbe
	case s.closed:
		return AdmitGo
	}
	s.trial = attempt
	return AdmitTrial
}

// sweep drops, at most once per idle period, the circuits of keys with nothing under way, no
// pause running, and no answer for an idle period.
func (c *Circuits) sweep(now time.Time) {
	if now.Sub(c.sweptAt) < circuitIdle {
		return
	}
	c.sweptAt = now
	for id, s := range c.state {
		if len(s.inFlight) == 0 && s.trial == "" && !s.probing && !s.until.After(now) && now.Sub(s.answered) > circuitIdle {
			delete(c.state, id)
		}
	}
}

// Holding reports whether admit would make a submission of the key wait now, without changing
// anything: outage is true when the circuit is open (the service failed), false when a check, a
// trial or an unanswered call of the key is under way.
func (c *Circuits) Holding(keyID string) (hold, outage bool, until time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.state[keyID]
	if !ok {
		return false, false, 0
	}
	now := c.clock.Now()
	switch {
	case s.open && now.Before(s.until):
		return true, true, s.until.Sub(now)
	case c.suspect(s), s.trial != "", s.probing:
		return true, false, 0
	}
	return false, false, 0
}

// Answered records an answer of the service to a call of the key.
func (c *Circuits) Answered(keyID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.get(keyID).answered = c.clock.Now()
}

// Troubled records a call of the key that was sent and got no usable answer (a 5xx, a timeout,
// an unreadable body): the next paid submission checks the service first. It counts no unknown
// outcome: nothing paid is at stake in a read.
func (c *Circuits) Troubled(keyID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.get(keyID)
	s.answered = time.Time{}
	if s.closed {
		s.closed, s.open = false, true
	}
}

// Calling records that the paid call of attempt starts now: only the service's time counts
// toward the suspect threshold, not the status writes before the call.
func (c *Circuits) Calling(keyID, attempt string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.get(keyID).inFlight[attempt] = c.clock.Now()
}

// Probed records a probe that found the service answering: the next submission is the trial.
func (c *Circuits) Probed(keyID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.get(keyID)
	s.open, s.probing = false, false
	s.answered = c.clock.Now()
}

// ProbeFailed records a check that found the service not answering: the next one waits for the
// key's backoff.
func (c *Circuits) ProbeFailed(keyID string, retryIn time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.get(keyID)
	s.probing = false
	s.closed, s.open = false, true
	s.until = laterOf(s.until, c.clock.Now().Add(retryIn))
}

// Outcome records the answer to a paid call of the key: definite (a job or a refusal) closes
// the circuit, unknown opens it. It also ends the attempt's trial.
func (c *Circuits) Outcome(keyID, attempt string, definite bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.get(keyID)
	if s.trial == attempt {
		s.trial = ""
	}
	delete(s.inFlight, attempt)
	s.closed, s.open = definite, !definite
	if definite {
		s.unknowns = 0
		return
	}
	delay := c.base << min(s.unknowns, 20)
	s.unknowns++
	s.until = c.clock.Now().Add(min(delay, c.max))
}

// Abandon ends an Admission whose call was not made (its in-flight write failed): the next
// submission tries again. After an outcome it is a no-op.
func (c *Circuits) Abandon(keyID, attempt string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.get(keyID)
	if s.trial == attempt {
		s.trial = ""
	}
	delete(s.inFlight, attempt)
}

// ServiceAnswers reports an answer that shows the service up, whatever it says of the key.
func ServiceAnswers(err error) bool {
	var ae *apiclient.APIError
	if err == nil {
		return true
	}
	return errors.As(err, &ae) && ae.StatusCode >= 400 && ae.StatusCode < 500 &&
		!apiclient.IsRateLimited(err) && ae.StatusCode != http.StatusRequestTimeout
}
