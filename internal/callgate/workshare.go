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
// submissions would wait for the whole burst. WorkShare gives each poll a slot to go before the
// submissions, spaced so that the polls together take at most share of the workers, at what a
// poll has been costing a worker: at most share × workers ÷ cost slots in each second. A poll is
// requeued for the first second at or after its own delay that has a slot free (a poll asked
// for minutes ahead takes a slot then, not all the slots until then). While the polls need less
// than the share, every slot is free and they go at their own pace; when they need more, each
// waits its turn, and the reads of all running jobs are spread over the time the share needs to
// read each once: no poll is left behind the submissions. Reads of running jobs that do not end
// write nothing and take milliseconds, so the share is many polls for a few submissions; when no
// poll is waiting, submissions have every worker.
type WorkShare struct {
	clock   clock.PassiveClock
	share   float64
	workers int

	mu sync.Mutex
	// cost is the mean duration of a poll's reconcile, smoothed; 0 until one is measured.
	cost time.Duration
	// slots counts the slots given in each second (by Unix second) from now on. A calendar, not
	// one theoretical arrival time: polls ask for slots at very different delays (seconds for a
	// job that is polled, minutes for one that calls back), and a slot far ahead must not push
	// back those due sooner.
	slots map[int64]int
	// sweptAt is the second up to which past seconds were dropped from slots.
	sweptAt int64
}

// NewWorkShare returns a share of share (0 to MaxPollShare) of workers reconcile workers; 0
// turns it off.
func NewWorkShare(c clock.PassiveClock, share float64, workers int) *WorkShare {
	return &WorkShare{clock: c, share: min(max(share, 0), MaxPollShare), workers: max(workers, 1), slots: map[int64]int{}}
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

// Enabled reports whether polls have a share: without one they wait behind submissions.
func (w *WorkShare) Enabled() bool { return w != nil && w.share > 0 }

// Polled records what one reconcile that read a running job cost a worker.
func (w *WorkShare) Polled(d time.Duration) {
	if !w.Enabled() {
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

// Slot reserves the next slot of the share for a poll that wants to go after at least after, and
// returns when to requeue it: after, or later when the share is fully used.
func (w *WorkShare) Slot(after time.Duration) time.Duration {
	if !w.Enabled() {
		return after
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	if w.cost <= 0 {
		// Nothing measured yet: no poll has cost anything to share.
		return after
	}
	w.sweep(now)
	want := now.Add(after)
	// A second's worth of slots may go at once: polls due together are not spaced needlessly.
	perSecond := max(int(float64(time.Second)*w.share*float64(w.workers)/float64(w.cost)), 1)
	sec := want.Unix()
	for w.slots[sec] >= perSecond {
		sec++
	}
	w.slots[sec]++
	at := laterOf(want, time.Unix(sec, 0))
	return at.Sub(now)
}

// sweep drops the seconds that have passed, once a second.
func (w *WorkShare) sweep(now time.Time) {
	sec := now.Unix()
	if sec <= w.sweptAt {
		return
	}
	w.sweptAt = sec
	for s := range w.slots {
		if s < sec {
			delete(w.slots, s)
		}
	}
}
