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

// Package jobmemo is what this process remembers of its submissions and jobs between reconciles:
// the job id each paid call returned (adopted when its status write was lost), the job ids
// callbacks proved, the wake-ups callbacks caused, the attempts that certainly created no job,
// and the reads of completed jobs for their clearance codes. It is lost on restart, which is
// exactly when an interrupted submission becomes SubmissionUnknown.
package jobmemo

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/videoops/video-operator/internal/boundedset"
	"github.com/videoops/video-operator/internal/callback"
)

// TTL bounds how long a submission's job id is remembered: long enough for any write
// retry or stale cache to resolve, short enough that memory stays bounded.
const TTL = time.Hour

// Memo remembers, in this process, the job id each submit call returned, from the moment
// the call returns until long after its status write. A reconcile that finds an in-flight record
// (because the write failed, or the cache has not caught up yet) adopts the job from here
// instead of stalling. It is lost on restart, which is exactly when SubmissionUnknown applies.
type Memo struct {
	clock clock.PassiveClock

	mu        sync.Mutex
	jobs      map[string]memoEntry    // by attempt id
	noJob     *boundedset.Set[string] // attempt ids that certainly created no job: never sent, or refused
	noRefresh *boundedset.Set[string] // job ids whose clearance refresh gave up
	reads     map[string]jobReads     // by job id: when the job was last read, for clearance reads
	woken     map[string]wakeEntry    // job ids a callback said ended: their next read goes first
	// sweptAt is when expired entries were last dropped: at most once a minute, not on every
	// call, since the maps hold one entry per job.
	sweptAt time.Time
}

// jobReads is what the clearance logic needs to know of a job's reads.
type jobReads struct {
	last      time.Time
	rechecked bool // read again after completion for a clearance code
}

type memoEntry struct {
	jobID string
	at    time.Time
	// fromCallback: the job id came from a callback, not from this process's own call.
	fromCallback bool
	// contested: callbacks named different jobs for the attempt; none is adopted.
	contested bool
	// callsBack: this process's request carried the operator's callback URL.
	callsBack bool
}

// New returns an empty memo on clock c.
func New(c clock.PassiveClock) *Memo {
	return &Memo{clock: c, jobs: map[string]memoEntry{}, noJob: boundedset.New[string](0),
		noRefresh: boundedset.New[string](0), reads: map[string]jobReads{}, woken: map[string]wakeEntry{}}
}

// Remember records the job id this process's paid call of attemptID returned; callsBack says
// whether its request carried the operator's callback URL.
func (m *Memo) Remember(attemptID, jobID string, callsBack bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	m.jobs[attemptID] = memoEntry{jobID: jobID, at: now, callsBack: callsBack}
	m.expireLocked(now)
}

// RememberFromCallback records the job id a callback reported for an attempt, unless this process
// already knows it from the submit call itself. Two callbacks that name different jobs for one
// attempt contest it: one of them lies (a replayed URL with another body), so neither is adopted
// and the object stays for a human to decide.
func (m *Memo) RememberFromCallback(attemptID, jobID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.jobs[attemptID]
	switch {
	case !ok:
		m.jobs[attemptID] = memoEntry{jobID: jobID, at: m.clock.Now(), fromCallback: true}
	case e.fromCallback && e.jobID != jobID:
		e.contested = true
		m.jobs[attemptID] = e
	}
}

// wakeEntry is a wake-up not taken yet; obj and attempt are set when a callback answered by this
// replica caused it, so that it can be written down for the next leader if this one stops first.
type wakeEntry struct {
	at      time.Time
	obj     client.Object
	attempt string
}

// Wake records that a callback said the job ended: its next read is not a routine poll.
func (m *Memo) Wake(jobID string) { m.WakeFor(jobID, "", nil) }

// WakeFor is wake for a callback of attempt about obj that this replica answered.
func (m *Memo) WakeFor(jobID, attempt string, obj client.Object) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	m.woken[jobID] = wakeEntry{at: now, obj: obj, attempt: attempt}
	m.expireLocked(now)
}

// UntakenWakes returns the wake-ups callbacks caused that no reconcile has taken yet.
func (m *Memo) UntakenWakes() []callback.Wake {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []callback.Wake
	for jobID, e := range m.woken {
		if e.obj != nil {
			out = append(out, callback.Wake{JobID: jobID, AttemptID: e.attempt, Object: e.obj})
		}
	}
	return out
}

var _ callback.Memo = (*Memo)(nil)

// TakeWake reports, once, that a callback woke the job.
func (m *Memo) TakeWake(jobID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.woken[jobID]
	delete(m.woken, jobID)
	return ok
}

// FromCallback reports whether the job id remembered for attempt came from a callback, not from
// this process's own call: it must be confirmed with the object's key before it is adopted.
func (m *Memo) FromCallback(attemptID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.jobs[attemptID].fromCallback
}

// CallsBack reports whether this process's request of attempt carried the callback URL, or a
// callback named its job.
func (m *Memo) CallsBack(attemptID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.jobs[attemptID]
	return e.callsBack || e.fromCallback
}

// Forget drops what a callback said of attempt, once the service disowned that job.
func (m *Memo) Forget(attemptID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.jobs, attemptID)
}

// Lookup returns the job id remembered for attemptID, unless callbacks contested it.
func (m *Memo) Lookup(attemptID string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.jobs[attemptID]
	if e.contested {
		return "", false
	}
	return e.jobID, ok
}

// SettleNoJob records that attempt certainly created no job: it was never sent (its in-flight
// write failed), or the service refused it. Finding its record on the server later (because the
// write that would have cleared it failed) is resolved by clearing it, not by a human.
func (m *Memo) SettleNoJob(attemptID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	m.noJob.Add(attemptID, now)
	m.expireLocked(now)
}

// CreatedNoJob reports an attempt recorded by settleNoJob.
func (m *Memo) CreatedNoJob(attemptID string) bool { return m.noJob.Has(attemptID) }

// JobRead records a successful read of a job.
func (m *Memo) JobRead(jobID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	r := m.reads[jobID]
	r.last = now
	m.reads[jobID] = r
	m.expireLocked(now)
}

// LastRead is when the job was last read by this process; zero when not since the start.
func (m *Memo) LastRead(jobID string) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads[jobID].last
}

// ClearanceChecked records that a completed job was read again for its clearance code.
func (m *Memo) ClearanceChecked(jobID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.reads[jobID]
	r.rechecked = true
	m.reads[jobID] = r
}

// ClearanceRechecked reports a job read again for its clearance code (ClearanceChecked).
func (m *Memo) ClearanceRechecked(jobID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads[jobID].rechecked
}

// GiveUpRefresh stops clearance refreshes of a job the service no longer reports as completed.
func (m *Memo) GiveUpRefresh(jobID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	m.noRefresh.Add(jobID, now)
	m.expireLocked(now)
}

// RefreshGaveUp reports a job whose clearance refreshes were given up (GiveUpRefresh).
func (m *Memo) RefreshGaveUp(jobID string) bool { return m.noRefresh.Has(jobID) }

func (m *Memo) expireLocked(now time.Time) {
	if now.Sub(m.sweptAt) < time.Minute {
		return
	}
	m.sweptAt = now
	for k, e := range m.jobs {
		if now.Sub(e.at) > TTL {
			delete(m.jobs, k)
		}
	}
	m.noJob.Expire(now.Add(-TTL))
	// A job that expected a callback, or was read, a day ago has long ended; forget it.
	for k, r := range m.reads {
		if now.Sub(r.last) > 24*time.Hour {
			delete(m.reads, k)
		}
	}
	// A refresh given up a day ago may be tried once more; a wake-up nobody took is for an
	// object that is gone.
	m.noRefresh.Expire(now.Add(-24 * time.Hour))
	for k, e := range m.woken {
		if now.Sub(e.at) > 24*time.Hour {
			delete(m.woken, k)
		}
	}
}
