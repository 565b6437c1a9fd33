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

package apiclient

import (
	"context"
	"crypto/sha256"
	"sync"

	"golang.org/x/time/rate"
)

// Defaults of the client-side rate limit. The interface document gives no numbers behind its 429
// ("Limits": "Numeric rate limits behind the 429 status: not shown"), so these only keep one
// tenant from flooding the service; the manager exposes them as flags.
const (
	DefaultRateLimit rate.Limit = 10
	DefaultBurst     int        = 20
)

// Limiter paces requests. *rate.Limiter satisfies it. Wait must return early, with an error, when
// ctx is done or the wait would outlast its deadline.
type Limiter interface {
	Wait(ctx context.Context) error
}

// LimiterSource gives the limiter of an API key. The same key must always get the same limiter.
type LimiterSource interface {
	ForKey(apiKey string) Limiter
}

// LimiterRegistry holds one token bucket per API key, shared by every client made for that key
// (both controllers), since the service limits the key, not the client. It is keyed by a SHA-256
// of the key so that the key itself is not kept in yet another place.
type LimiterRegistry struct {
	limit rate.Limit
	burst int

	mu       sync.Mutex
	limiters map[[sha256.Size]byte]*rate.Limiter
}

var _ LimiterSource = (*LimiterRegistry)(nil)

// NewLimiterRegistry returns a registry whose buckets refill at limit per second up to burst.
// A limit of rate.Inf disables limiting; a burst below 1 is raised to 1.
func NewLimiterRegistry(limit rate.Limit, burst int) *LimiterRegistry {
	return &LimiterRegistry{limit: limit, burst: max(burst, 1), limiters: map[[sha256.Size]byte]*rate.Limiter{}}
}

// ForKey returns the bucket of apiKey, creating it on first use. Buckets are never dropped: one
// per tenant key is small, and dropping one would hand a burst back to a busy tenant.
func (r *LimiterRegistry) ForKey(apiKey string) Limiter {
	id := sha256.Sum256([]byte(apiKey))
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.limiters[id]
	if !ok {
		l = rate.NewLimiter(r.limit, r.burst)
		r.limiters[id] = l
	}
	return l
}

// Len returns the number of keys seen.
func (r *LimiterRegistry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.limiters)
}
