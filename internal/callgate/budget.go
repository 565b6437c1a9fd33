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
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Budgets paces the calls to the service, one budget per API key (the service limits the
// key, not the client), without ever making a reconcile worker wait: a call that does not fit
// the budget now is not made, and the object is requeued for when it fits (docs/architecture.md
// "Scale targets"). A worker parked on one tenant's bucket would starve every other tenant.
//
// Each key's budget is a token bucket kept as a theoretical arrival time (GCRA): a call at time
// now conforms when tat-now <= tolerance, and moves tat on by one interval.
//
// Calls have two priorities. Urgent calls (submissions, the read a callback asks for, the check
// of an unknown outcome) reserve their slot even in the future: the object is requeued for the
// slot and holds it, so urgent calls go in the order they asked. Routine polls take a token only
// when one is free now and a reserve stays for urgent calls; otherwise they come back later
// without reserving. Routine polls are also spaced so that, together, they use at most
// pollShare of the rate: pollSpacing.
//
// While urgent calls are queued (their slots reserved in the future), routine polls of running
// jobs still get a guaranteed share of the key's rate (SetPollShare, the manager's --poll-share):
// queued urgent calls are then spaced at (1-share) of the rate and routine polls take the rest
// from a lane of their own, so that a burst of submissions cannot hide for minutes that a job
// ended. A key with no running jobs to poll leaves the whole rate to urgent calls: the share is
// only kept while it can be used.
//
// A 429 pauses the whole key until its Retry-After, and every call after the pause gets a
// random delay on top, so that the objects that were told the same Retry-After do not all come
// back at the same instant.
//
// Keys are identified by their fingerprint, never the key.
type Budgets struct {
	clock     clock.PassiveClock
	interval  time.Duration // one call's share of a second: 1/rate
	tolerance time.Duration // how far ahead tat may run: (burst-1) intervals
	reserve   time.Duration // what routine polls leave free for urgent calls
	idle      time.Duration // a key with nothing held and unused this long is forgotten
	// share is the part of the rate guaranteed to routine polls while urgent calls are queued
	// (0: none, routine polls wait for the queue to drain).
	share float64

	mu   sync.Mutex
	keys map[string]*keyBudget
	// sweptAt is when forgotten keys and reservations were last dropped.
	sweptAt time.Time
}

// pollShare is the part of a key's rate that routine polls may use; the rest goes to submissions
// and reads that cannot wait.
const pollShare = 0.8

type keyBudget struct {
	tat time.Time
	// shareTAT is the theoretical arrival time of the routine polls' guaranteed lane;
	// polledUntil is when the last routine poll that asked comes back: until then the share is
	// in use.
	shareTAT    time.Time
	polledUntil time.Time
	// fullUntil is the end of the latest urgent slot reserved at the whole rate (with no room
	// left for the polls' share). A routine poll the share lets through before it takes one of
	// those slots: the queued urgent calls each move back by one interval (shift), or the key
	// would get the share on top of its whole rate.
	fullUntil time.Time
	// shift is how far the held slots have moved back since the key was created: held keeps each
	// slot minus the shift at the time it was reserved.
	shift       time.Duration
	pausedUntil time.Time
	// pauseJitter spreads the calls that come after a pause.
	pauseJitter time.Duration
	usedAt      time.Time
	// held are the urgent slots reserved by objects, by object (kind/namespace/name), each less
	// the shift when it was reserved (slot).
	held map[string]time.Time
	// active are the running jobs polled with this key, with when they were last seen, so that
	// the poll interval grows with the number of jobs instead of the calls overrunning the budget.
	active map[string]time.Time
}

// NewBudgets returns budgets of rate calls per second and burst calls at once per key.
func NewBudgets(c clock.PassiveClock, rate float64, burst int, idle time.Duration) *Budgets {
	burst = max(burst, 1)
	interval := time.Duration(float64(time.Second) / rate)
	return &Budgets{
		clock:     c,
		interval:  interval,
		tolerance: time.Duration(burst-1) * interval,
		reserve:   time.Duration(burst/4) * interval,
		idle:      idle,
		keys:      map[string]*keyBudget{},
	}
}

func (b *Budgets) key(keyID string, now time.Time) *keyBudget {
	k, ok := b.keys[keyID]
	if !ok {
		k = &keyBudget{tat: now, shareTAT: now, held: map[string]time.Time{}, active: map[string]time.Time{}}
		b.keys[keyID] = k
	}
	k.usedAt = now
	return k
}

// SetPollShare guarantees routine polls share (0 to 0.5) of each key's rate while urgent calls
// are queued; it is set once, before the budgets are used.
func (b *Budgets) SetPollShare(share float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.share = min(max(share, 0), MaxPollShare)
}

// MaxPollShare bounds the guaranteed share of routine polls: submissions keep at least half.
const MaxPollShare = 0.5

// Urgent takes a slot for a call of obj that cannot wait for a routine poll: 0 means call now;
// otherwise the slot is held for obj, which comes back after the returned delay and then calls
// without asking again.
func (b *Budgets) Urgent(keyID string, obj string) time.Duration {
	return b.UrgentAfter(keyID, obj, 0)
}

// UrgentAfter is Urgent for a call that will not be made before after from now: the slot it
// takes (and holds for obj) is the first at or after that time, counted in the key's rate as a
// call then, so that a caller holding its call back for a moment neither wastes a slot now nor
// makes a call beside the key's burst later. A slot obj already holds is answered as by Urgent.
func (b *Budgets) UrgentAfter(keyID string, obj string, after time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	b.sweep(now)
	k := b.key(keyID, now)
	k.endPause(now)
	if _, ok := k.held[obj]; ok {
		at := k.slot(obj)
		if at.Before(k.pausedUntil) {
			// Held before a 429 paused the key: the pause comes first.
			at = k.pausedUntil.Add(k.jitter())
			k.hold(obj, at)
		}
		if wait := at.Sub(now); wait > 0 {
			return wait
		}
		delete(k.held, obj)
		return 0
	}
	start := laterOf(now.Add(max(after, 0)), k.pausedUntil)
	tat := laterOf(k.tat, start)
	at := laterOf(tat.Add(-b.tolerance), start)
	step := b.interval
	if at.After(now) && b.share > 0 && !k.polledUntil.Before(now) {
		// A queued call, while routine polls wait to read running jobs: it leaves the polls'
		// share free. With no poll waiting (every job calls back, or none runs), the share is
		// idle and queued calls have the whole rate.
		step = time.Duration(float64(b.interval) / (1 - b.share))
	}
	k.tat = tat.Add(step)
	if step == b.interval {
		k.fullUntil = k.tat
	}
	if k.pausedUntil.After(now) {
		at = at.Add(k.jitter())
	}
	if !at.After(now) {
		return 0
	}
	k.hold(obj, at)
	return at.Sub(now)
}

// slot is when the urgent slot held by obj comes, shifts included.
func (k *keyBudget) slot(obj string) time.Time { return k.held[obj].Add(k.shift) }

// hold reserves the urgent slot at for obj.
func (k *keyBudget) hold(obj string, at time.Time) { k.held[obj] = at.Add(-k.shift) }

// Routine takes a token for a routine poll when one is free now, leaving the reserve for urgent
// calls, or else from the polls' guaranteed share; otherwise it returns when to try again, with
// jitter, and takes nothing.
func (b *Budgets) Routine(keyID string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	b.sweep(now)
	k := b.key(keyID, now)
	k.endPause(now)
	start := laterOf(now, k.pausedUntil)
	tat := laterOf(k.tat, start)
	at := laterOf(tat.Add(b.reserve-b.tolerance), start)
	if !at.After(now) {
		k.tat = tat.Add(b.interval)
		return 0
	}
	wait := b.routineWait(k, now, start, at)
	k.polledUntil = laterOf(k.polledUntil, now.Add(wait+b.interval))
	return wait
}

// routineWait is Routine when the key's bucket has no token free for it: 0 when the polls' share
// has one, or else when to come back.
func (b *Budgets) routineWait(k *keyBudget, now, start, at time.Time) time.Duration {
	if b.share > 0 && len(k.held) > 0 {
		// Urgent calls are queued: the share's own bucket: a burst of a quarter of the key's, at share of its rate.
		shareInterval := time.Duration(float64(b.interval) / b.share)
		stat := laterOf(k.shareTAT, start)
		shareAt := laterOf(stat.Add(-time.Duration(float64(b.tolerance)*b.share/4)), start)
		if !shareAt.After(now) {
			k.shareTAT = stat.Add(shareInterval)
			if now.Before(k.fullUntil) {
				// The urgent slots around now were reserved at the whole rate: this poll takes
				// one of them, and every queued urgent call moves back by one interval.
				k.shift += b.interval
				k.tat = k.tat.Add(b.interval)
				k.fullUntil = k.fullUntil.Add(b.interval)
			}
			return 0
		}
		if shareAt.Before(at) {
			// The share's next token comes first: the polls turned away come back over the time
			// the share needs to read every running job once, not all at that token.
			window := time.Duration(max(len(k.active), 1)) * shareInterval
			return shareAt.Sub(now) + k.jitter() + rand.N(window) //nolint:gosec // jitter, not security
		}
	}
	return at.Sub(now) + k.jitter() + b.spread(k)
}

// endPause forgets a pause and its jitter once both are over.
func (k *keyBudget) endPause(now time.Time) {
	if k.pauseJitter > 0 && now.After(k.pausedUntil.Add(k.pauseJitter)) {
		k.pauseJitter = 0
	}
}

// jitter is the random delay added to calls that follow a pause.
func (k *keyBudget) jitter() time.Duration {
	if k.pauseJitter <= 0 {
		return 0
	}
	return rand.N(k.pauseJitter) //nolint:gosec // jitter, not security
}

// spread is a random delay over the time the key's active jobs need to be polled once, so that
// routine polls turned away together do not come back together.
func (b *Budgets) spread(k *keyBudget) time.Duration {
	window := b.Spacing(len(k.active))
	if window <= 0 {
		return 0
	}
	return rand.N(window) //nolint:gosec // jitter, not security
}

// Pause stops every call of the key until retryAfter from now (a 429). The calls after it get a
// random delay of up to a fifth of the pause, or the time the burst takes at the key's rate.
func (b *Budgets) Pause(keyID string, retryAfter time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	k := b.key(keyID, now)
	until := now.Add(retryAfter)
	if until.After(k.pausedUntil) {
		k.pausedUntil = until
		k.pauseJitter = max(retryAfter/5, b.tolerance+b.interval)
	}
}

// PollSpacing is the least delay between two routine polls of one job of the key, so that its
// active jobs together stay within pollShare of the rate: active / (rate × pollShare). It
// records obj as one of them.
func (b *Budgets) PollSpacing(keyID string, obj string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	k := b.key(keyID, now)
	k.active[obj] = now
	return b.Spacing(len(k.active))
}

// Holds reports a slot held by obj.
func (b *Budgets) Holds(keyID, obj string) bool {
	return b.has(keyID, obj, func(k *keyBudget) map[string]time.Time { return k.held })
}

// Tracks reports whether obj is one of the key's running jobs this process polls.
func (b *Budgets) Tracks(keyID, obj string) bool {
	return b.has(keyID, obj, func(k *keyBudget) map[string]time.Time { return k.active })
}

func (b *Budgets) has(keyID, obj string, set func(*keyBudget) map[string]time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.keys[keyID]
	if !ok {
		return false
	}
	_, in := set(k)[obj]
	return in
}

// Spacing is the least delay between two routine polls of one of n running jobs of a key, so
// that together they use at most pollShare of its rate.
func (b *Budgets) Spacing(n int) time.Duration {
	return time.Duration(float64(n) * float64(b.interval) / pollShare)
}

// ActiveJobs is how many running jobs of the key this process polls.
func (b *Budgets) ActiveJobs(keyID string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if k, ok := b.keys[keyID]; ok {
		return len(k.active)
	}
	return 0
}

// Done forgets obj: its job ended, or the object is gone. Its held slot is given up. An empty
// keyID (an object deleted, its key unknown) looks in every key.
func (b *Budgets) Done(keyID string, obj string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, k := range b.keys {
		if keyID == "" || id == keyID {
			delete(k.active, obj)
			delete(k.held, obj)
		}
	}
}

// sweep drops, at most once per idle period, what nobody will ask for again: slots held by
// objects that did not come back (deleted meanwhile), active jobs not polled for twice their
// spacing and an idle period (their objects are gone), and keys unused for an idle period with
// nothing held.
func (b *Budgets) sweep(now time.Time) {
	if now.Sub(b.sweptAt) < b.idle {
		return
	}
	b.sweptAt = now
	for id, k := range b.keys {
		for obj := range k.held {
			if now.Sub(k.slot(obj)) > b.idle {
				delete(k.held, obj)
			}
		}
		stale := 2*b.Spacing(len(k.active)) + b.idle
		for obj, seen := range k.active {
			if now.Sub(seen) > stale {
				delete(k.active, obj)
			}
		}
		if len(k.held) == 0 && len(k.active) == 0 && now.Sub(k.usedAt) > b.idle && !k.pausedUntil.After(now) {
			delete(b.keys, id)
		}
	}
}

// Size is the number of keys, held slots and active jobs kept, for tests of eviction.
func (b *Budgets) Size() (keys, held, active int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range b.keys {
		held += len(k.held)
		active += len(k.active)
	}
	return len(b.keys), held, active
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// RoundDuration rounds d up to one of 1, 2 and 5 times a power of ten seconds: a number for a
// message that must not change at every reconcile.
func RoundDuration(d time.Duration) time.Duration {
	for unit := time.Second; ; unit *= 10 {
		for _, m := range []time.Duration{1, 2, 5} {
			if d <= m*unit {
				return m * unit
			}
		}
	}
}
