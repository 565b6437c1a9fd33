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
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// WorkShare keeps a share of a controller's workers for the reads of running jobs. Its queue
// serves the highest priority first, so routine polls queued behind a burst of thousands of
// submissions wait for the whole burst; WorkShare hands out tickets to go before submissions, at
// most share of the reconciles the controller works through per second. A poll with a ticket is
// queued ahead; one without waits behind the submissions as before. Polls that do not come take
// nothing: submissions then have every worker.
type WorkShare struct {
	clock clock.PassiveClock
	share float64

	mu sync.Mutex
	// windowStart and count measure the reconciles of the current second; rate is the last
	// seconds' rate, smoothed.
	windowStart time.Time
	count       int
	rate        float64
	// tickets are the tickets not handed out yet, refilled at share × rate, at most one
	// second's worth (at least one: a quiet controller lets one poll go first).
	tickets float64
	filled  time.Time
}

// NewWorkShare returns a share of share (0 to MaxPollShare) of the reconciles; 0 hands out no
// ticket.
func NewWorkShare(c clock.PassiveClock, share float64) *WorkShare {
	now := c.Now()
	return &WorkShare{clock: c, share: min(max(share, 0), MaxPollShare), windowStart: now, filled: now, tickets: 1}
}

// Reconciled counts one reconcile of the controller.
func (w *WorkShare) Reconciled() {
	if w == nil || w.share == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.roll(w.clock.Now())
	w.count++
}

// roll closes the windows of whole seconds gone by.
func (w *WorkShare) roll(now time.Time) {
	for elapsed := now.Sub(w.windowStart); elapsed >= time.Second; elapsed = now.Sub(w.windowStart) {
		// Smoothed over a few seconds: a reconcile rate, not a spike, sets the share.
		w.rate = 0.5*w.rate + 0.5*float64(w.count)
		w.count = 0
		if elapsed >= 10*time.Second {
			// Long idle: the rate is gone.
			w.rate, w.windowStart = 0, now
			break
		}
		w.windowStart = w.windowStart.Add(time.Second)
	}
}

// Take hands out a ticket for a routine poll to go before submissions; false means none is free.
func (w *WorkShare) Take() bool {
	if w == nil || w.share == 0 {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	w.roll(now)
	perSecond := w.share * w.rate
	w.tickets = min(w.tickets+perSecond*now.Sub(w.filled).Seconds(), max(perSecond, 1))
	w.filled = now
	if w.tickets < 1 {
		return false
	}
	w.tickets--
	return true
}
