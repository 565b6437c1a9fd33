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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestBackoff(t *testing.T) {
	b := NewBackoff(time.Second, 30*time.Second)
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	prevMax := time.Duration(0)
	for i := range 10 {
		d := b.Next(key, 0)
		lo := time.Duration(float64(min(time.Second<<i, 30*time.Second)) * 0.8)
		hi := time.Duration(float64(min(time.Second<<i, 30*time.Second)) * 1.2)
		if d < lo || d > hi {
			t.Fatalf("failure %d: delay %s outside [%s, %s]", i+1, d, lo, hi)
		}
		prevMax = max(prevMax, d)
	}
	if prevMax > 36*time.Second {
		t.Fatalf("delay %s exceeds the cap with jitter", prevMax)
	}
	if d := b.Next(key, time.Hour); d != time.Hour {
		t.Fatalf("Retry-After of 1h not honoured: %s", d)
	}
	b.Reset(key)
	if d := b.Next(key, 0); d > 1200*time.Millisecond {
		t.Fatalf("after a success the backoff starts again: %s", d)
	}
	for range 1000 {
		if d := b.PollDelay(10*time.Second, 30*time.Second); d < 10*time.Second || d > 30*time.Second {
			t.Fatalf("poll delay %s outside the document's 10-30 s", d)
		}
	}
}
