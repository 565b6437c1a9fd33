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
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// Issue 10, "Callback authentication": two callbacks naming different jobs for one attempt (a
// replayed URL with another body) contest it; neither is adopted.
func TestCallbackContestedAttemptIsNotAdopted(t *testing.T) {
	memo := newAttemptMemo(clocktesting.NewFakeClock(time.Now()))
	for _, job := range []string{"job-genuine", "job-forged"} {
		memo.RememberFromCallback("attempt-1", job)
	}
	if job, ok := memo.lookup("attempt-1"); ok {
		t.Fatalf("a contested attempt was adopted as %q", job)
	}
	memo.remember("attempt-2", "job-own", true)
	memo.RememberFromCallback("attempt-2", "job-other")
	if job, ok := memo.lookup("attempt-2"); !ok || job != "job-own" {
		t.Fatalf("the job this process got from its own call must win: %q %v", job, ok)
	}
}
