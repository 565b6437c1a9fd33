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

package controller

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// attemptMemoTTL bounds how long a submission's job id is remembered: long enough for any write
// retry or stale cache to resolve, short enough that memory stays bounded.
const attemptMemoTTL = time.Hour

// attemptMemo remembers, in this process, the job id each submit call returned, from the moment
// the call returns until long after its status write. A reconcile that finds an in-flight record
// (because the write failed, or the cache has not caught up yet) adopts the job from here
// instead of stalling. It is lost on restart, which is exactly when SubmissionUnknown applies.
type attemptMemo struct {
	clock clock.PassiveClock

	mu        sync.Mutex
	jobs      map[string]memoEntry // by attempt id
	noRefresh map[string]time.Time // job ids whose clearance refresh gave up
	callback  map[string]time.Time // job ids whose request carries the operator's callback
}

type memoEntry struct {
	jobID string
	at    time.Time
}

func newAttemptMemo(c clock.PassiveClock) *attemptMemo {
	return &attemptMemo{clock: c, jobs: map[string]memoEntry{}, noRefresh: map[string]time.Time{}, callback: map[string]time.Time{}}
}

func (m *attemptMemo) remember(attemptID, jobID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	m.jobs[attemptID] = memoEntry{jobID: jobID, at: now}
	m.expireLocked(now)
}

// rememberFromCallback records the job id a callback reported for an attempt, unless this process
// already knows it from the submit call itself.
func (m *attemptMemo) rememberFromCallback(attemptID, jobID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.jobs[attemptID]; !ok {
		m.jobs[attemptID] = memoEntry{jobID: jobID, at: m.clock.Now()}
	}
}

// expectCallback records that the job's request carries the operator's callback URL.
func (m *attemptMemo) expectCallback(jobID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.callback[jobID] = m.clock.Now()
}

// callbackExpected reports whether the job will call back. It is false after a restart, so such
// jobs are polled at the normal pace: the safe side.
func (m *attemptMemo) callbackExpected(jobID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.callback[jobID]
	return ok
}

func (m *attemptMemo) lookup(attemptID string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.jobs[attemptID]
	return e.jobID, ok
}

// giveUpRefresh stops clearance refreshes of a job the service no longer reports as completed.
func (m *attemptMemo) giveUpRefresh(jobID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.noRefresh[jobID] = m.clock.Now()
}

func (m *attemptMemo) refreshGaveUp(jobID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.noRefresh[jobID]
	return ok
}

func (m *attemptMemo) expireLocked(now time.Time) {
	for k, e := range m.jobs {
		if now.Sub(e.at) > attemptMemoTTL {
			delete(m.jobs, k)
		}
	}
	// A job that expected a callback for a day has long ended; forget it.
	for k, at := range m.callback {
		if now.Sub(at) > 24*time.Hour {
			delete(m.callback, k)
		}
	}
}
