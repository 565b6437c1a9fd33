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

package jobmemo

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// Issue 10, "Callback authentication": two callbacks naming different jobs for one attempt (a
// replayed URL with another body) contest it; neither is adopted.
func TestCallbackContestedAttemptIsNotAdopted(t *testing.T) {
	memo := New(clocktesting.NewFakeClock(time.Now()))
	for _, job := range []string{"job-genuine", "job-forged"} {
		memo.RememberFromCallback("attempt-1", job)
	}
	if job, ok := memo.Lookup("attempt-1"); ok {
		t.Fatalf("a contested attempt was adopted as %q", job)
	}
	memo.Remember("attempt-2", "job-own", true)
	memo.RememberFromCallback("attempt-2", "job-other")
	if job, ok := memo.Lookup("attempt-2"); !ok || job != "job-own" {
		t.Fatalf("the job this process got from its own call must win: %q %v", job, ok)
	}
}

func TestRememberedJobsExpireAfterTTL(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	memo := New(clk)
	memo.Remember("a1", "job-1", true)
	memo.SettleNoJob("a2")
	if job, ok := memo.Lookup("a1"); !ok || job != "job-1" || !memo.CallsBack("a1") || memo.FromCallback("a1") {
		t.Fatalf("a remembered job: %q %v", job, ok)
	}
	if !memo.CreatedNoJob("a2") || memo.CreatedNoJob("a1") {
		t.Fatal("CreatedNoJob must name only the settled attempt")
	}
	clk.Step(TTL + 2*time.Minute)
	memo.Remember("a3", "job-3", false) // any write sweeps
	if _, ok := memo.Lookup("a1"); ok {
		t.Error("a job id older than the TTL is still remembered")
	}
	if memo.CreatedNoJob("a2") {
		t.Error("an attempt settled longer ago than the TTL is still remembered")
	}
}

func TestAWakeIsTakenOnce(t *testing.T) {
	memo := New(clocktesting.NewFakeClock(time.Now()))
	memo.WakeFor("job-1", "a1", nil)
	if !memo.TakeWake("job-1") || memo.TakeWake("job-1") {
		t.Fatal("a wake-up must be taken exactly once")
	}
	if len(memo.UntakenWakes()) != 0 {
		t.Error("a wake-up without an object is never written down for the next leader")
	}
}
