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
	"fmt"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// A running job's progress reaches the status at most once per interval; a job this process
// never wrote gets it at once, and a negative interval writes every read.
func TestProgressWritesAtMostOncePerInterval(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	p := newProgressWrites(clk, time.Minute)
	if !p.due("adopted") {
		t.Error("the progress of a job never written here is held back")
	}
	p.wrote("j")
	clk.Step(59 * time.Second)
	if p.due("j") {
		t.Error("progress due 59 s after the last write, with an interval of 1 min")
	}
	clk.Step(time.Second)
	if !p.due("j") {
		t.Error("progress not due once the interval has passed")
	}
	p.wrote("j")
	p.ended("j")
	if !p.due("j") {
		t.Error("an ended job is still remembered")
	}
	always := newProgressWrites(clk, -1)
	always.wrote("k")
	if !always.due("k") {
		t.Error("a negative interval holds progress back")
	}
}

// Jobs of deleted objects never end here: their entries are dropped once past the interval.
func TestProgressWritesForgetsOldJobs(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_000_000, 0))
	p := newProgressWrites(clk, time.Minute)
	for i := range 5000 {
		p.wrote(fmt.Sprint("gone-", i))
	}
	clk.Step(2 * time.Minute)
	for i := range 5000 {
		p.wrote(fmt.Sprint("live-", i))
	}
	if n := len(p.written); n > 5000+1024 {
		t.Errorf("%d jobs remembered, want the old ones dropped", n)
	}
}
