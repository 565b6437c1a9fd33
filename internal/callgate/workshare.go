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
// submissions would wait for the whole burst. WorkShare hands out tickets to go before the
// submissions: as many per second as share of the workers can serve, at what a poll has been
// costing a worker (share × workers ÷ the mean poll's duration). A poll with a ticket is queued
// ahead; one without waits behind the submissions as before. Reads of running jobs that do not
// end write nothing and take milliseconds, so the share is many polls for a few submissions.
// Tickets not asked for are not kept beyond a second's worth: with no poll waiting,
// submissions have every worker.
type WorkShare struct {
	clock   clock.PassiveClock
	share   float64
	workers int

	mu sync.Mutex
	// cost is the mean duration of a poll's reconcile, smoothed; 0 until one is measured.
	cost time.Duration
	// tickets are the tickets not handed out yet, refilled since filled.
	tickets float64
	filled  time.Time
}

// NewWorkShare returns a share of share (0 to MaxPollShare) of workers reconcile workers; 0 hands
// out no ticket.
func NewWorkShare(c clock.PassiveClock, share float64, workers int) *WorkShare {
	return &WorkShare{clock: c, share: min(max(share, 0), MaxPollShare), workers: max(workers, 1),
		filled: c.Now(), tickets: 1}
}

// SetWorkers sets the number of workers the share is taken from (the controller's
// MaxConcurrentReconciles), once they are known.
func (w *WorkShare) SetWorkers(n int) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.workers = max(n, 1)
}

// Polled records what one reconcile that read a running job cost a worker.
func (w *WorkShare) Polled(d time.Duration) {
	if w == nil || w.share == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cost == 0 {
		w.cost = d
		return
	}
	w.cost = (7*w.cost + d) / 8
}

// Take hands out a ticket for a routine poll to go before submissions; false means none is free.
func (w *WorkShare) Take() bool {
	if w == nil || w.share == 0 {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	perSecond := 1.0 // until a poll's cost is known
	if w.cost > 0 {
		perSecond = w.share * float64(w.workers) / w.cost.Seconds()
	}
	w.tickets = min(w.tickets+perSecond*now.Sub(w.filled).Seconds(), max(perSecond, 1))
	w.filled = now
	if w.tickets < 1 {
		return false
	}
	w.tickets--
	return true
}
