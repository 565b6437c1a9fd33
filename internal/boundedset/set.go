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
// Package boundedset is a set safe for concurrent use whose memory is bounded: by a size, past
// which it starts again empty, and by age, through Expire. The controllers keep several such
// sets of what this process has seen (objects to read fresh, requests already checked, attempts
// that certainly created no job); each is a cache of knowledge that may be lost at any time, so
// forgetting wholesale is always safe, only more work.
package boundedset

import (
	"sync"
	"time"
)

// Set is a bounded set of K. The zero value is not usable: use New.
type Set[K comparable] struct {
	max int

	mu    sync.Mutex
	items map[K]time.Time
}

// New returns a set that starts again empty when an Add would take it past max entries; max <= 0
// means no bound of size.
func New[K comparable](maxEntries int) *Set[K] {
	return &Set[K]{max: maxEntries, items: map[K]time.Time{}}
}

// Add puts k in the set, added at now (Expire compares it).
func (s *Set[K]) Add(k K, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.items[k]; !ok && s.max > 0 && len(s.items) >= s.max {
		s.items = map[K]time.Time{}
	}
	s.items[k] = now
}

// Has reports whether k is in the set.
func (s *Set[K]) Has(k K) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.items[k]
	return ok
}

// Take removes k and reports whether it was in the set.
func (s *Set[K]) Take(k K) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.items[k]
	delete(s.items, k)
	return ok
}

// Expire drops the entries added before cutoff.
func (s *Set[K]) Expire(cutoff time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, at := range s.items {
		if at.Before(cutoff) {
			delete(s.items, k)
		}
	}
}

// Len is the number of entries.
func (s *Set[K]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.items)
}
