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

	"k8s.io/apimachinery/pkg/types"
)

// Backoff computes poll delays with jitter, and exponential delays after failed calls,
// per object. Jitter spreads thousands of jobs over the interval instead of polling in waves.
type Backoff struct {
	base, max time.Duration

	mu       sync.Mutex
	failures map[types.NamespacedName]int
}

// NewBackoff returns delays from base, doubling per consecutive failure up to maxDelay.
func NewBackoff(base, maxDelay time.Duration) *Backoff {
	return &Backoff{base: base, max: maxDelay, failures: map[types.NamespacedName]int{}}
}

// PollDelay is a uniformly jittered delay in [lo, hi].
func (b *Backoff) PollDelay(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + rand.N(hi-lo+1) //nolint:gosec // jitter, not security
}

// Next is the delay after one more consecutive failure of key: base·2ⁿ with ±20% jitter, capped
// at max, and never shorter than the server's Retry-After.
func (b *Backoff) Next(key types.NamespacedName, retryAfter time.Duration) time.Duration {
	b.mu.Lock()
	n := b.failures[key]
	b.failures[key] = n + 1
	b.mu.Unlock()

	d := b.base
	for i := 0; i < n && d < b.max; i++ {
		d *= 2
	}
	d = min(d, b.max)
	d = time.Duration(float64(d) * (0.8 + 0.4*rand.Float64())) //nolint:gosec // jitter
	return max(d, retryAfter)
}

// Reset forgets the failures of key: its next failure starts again from the base delay.
func (b *Backoff) Reset(key types.NamespacedName) {
	b.mu.Lock()
	delete(b.failures, key)
	b.mu.Unlock()
}

// Short is the delay before reading an object again after a write conflict.
func (b *Backoff) Short() time.Duration { return b.PollDelay(b.Unit(), 2*b.Unit()) }

// Unit scales the small fixed delays with the configured backoff, so tests with a fast clock
// stay fast: a tenth of the base delay.
func (b *Backoff) Unit() time.Duration { return max(b.base/10, time.Millisecond) }
