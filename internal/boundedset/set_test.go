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
package boundedset

import (
	"sync"
	"testing"
	"time"
)

func TestSetAddHasTake(t *testing.T) {
	s := New[string](0)
	now := time.Now()
	s.Add("a", now)
	if !s.Has("a") || s.Has("b") {
		t.Fatalf("Has after Add: a=%v b=%v", s.Has("a"), s.Has("b"))
	}
	if !s.Take("a") || s.Take("a") || s.Has("a") {
		t.Fatal("Take must report the entry once and remove it")
	}
}

func TestSetStartsAgainEmptyPastItsBound(t *testing.T) {
	s := New[int](3)
	now := time.Now()
	for i := range 3 {
		s.Add(i, now)
	}
	s.Add(1, now) // already there: no room needed
	if s.Len() != 3 {
		t.Fatalf("re-adding an entry changed the size to %d", s.Len())
	}
	s.Add(3, now)
	if s.Len() != 1 || !s.Has(3) || s.Has(0) {
		t.Fatalf("past the bound the set must start again with only the new entry: len %d", s.Len())
	}
}

func TestSetExpire(t *testing.T) {
	s := New[string](0)
	t0 := time.Now()
	s.Add("old", t0)
	s.Add("new", t0.Add(time.Hour))
	s.Expire(t0.Add(time.Minute))
	if s.Has("old") || !s.Has("new") {
		t.Fatalf("Expire kept old=%v, dropped new=%v", s.Has("old"), !s.Has("new"))
	}
}

func TestSetIsSafeForConcurrentUse(t *testing.T) {
	s := New[int](100)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				s.Add(w*1000+i, time.Now())
				s.Has(i)
				s.Take(i)
			}
		})
	}
	wg.Wait()
	if n := s.Len(); n > 100 {
		t.Fatalf("%d entries, bound 100", n)
	}
}
