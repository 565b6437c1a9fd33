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
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// backoffTracker computes poll delays with jitter, and exponential delays after failed calls,
// per object. Jitter spreads thousands of jobs over the interval instead of polling in waves.
type backoffTracker struct {
	base, max time.Duration

	mu       sync.Mutex
	failures map[types.NamespacedName]int
}

func newBackoffTracker(base, maxDelay time.Duration) *backoffTracker {
	return &backoffTracker{base: base, max: maxDelay, failures: map[types.NamespacedName]int{}}
}

// pollDelay is a uniformly jittered delay in [lo, hi].
func (b *backoffTracker) pollDelay(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + rand.N(hi-lo+1) //nolint:gosec // jitter, not security
}

// next is the delay after one more consecutive failure of key: base·2ⁿ with ±20% jitter, capped
// at max, and never shorter than the server's Retry-After.
func (b *backoffTracker) next(key types.NamespacedName, retryAfter time.Duration) time.Duration {
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

func (b *backoffTracker) reset(key types.NamespacedName) {
	b.mu.Lock()
	delete(b.failures, key)
	b.mu.Unlock()
}

// short is the delay before reading an object again after a write conflict.
func (b *backoffTracker) short() time.Duration { return b.pollDelay(b.unit(), 2*b.unit()) }

// unit scales the small fixed delays with the configured backoff, so tests with a fast clock
// stay fast: a tenth of the base delay.
func (b *backoffTracker) unit() time.Duration { return max(b.base/10, time.Millisecond) }

func objectKey(obj client.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}
