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

package failurecause

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The interface document's "Errors": a 400 names the offending field (the same body is refused
// again), and an invalid voice speaker fails the job with TEXT_TO_VIDEO_FAILED (a new job fails
// the same way, and is paid for).
func TestOfTellsTheSpecsFailuresFromTheOthers(t *testing.T) {
	cases := []struct {
		name   string
		jobID  string
		code   string
		msg    string
		reason videov1alpha1.ConditionReason
		want   Cause
	}{
		{"a 400 before any job", "", "HTTP_400", "scenes[0].story: required", videov1alpha1.ReasonInvalidRequest, RefusedSpec},
		{"an unknown project", "", "NOT_FOUND", "project not found", videov1alpha1.ReasonProjectNotFound, RefusedSpec},
		{"an unknown voice fails the job", "job-1", CodeTextToVideoFailed, `Invalid voice speaker "Nobody"`, videov1alpha1.ReasonJobFailed, FailedSpec},
		{"a body the service rejects in the job", "job-1", CodeInvalidRequestBody, "bad body", videov1alpha1.ReasonJobFailed, FailedSpec},
		{"text to video failed for another cause", "job-1", CodeTextToVideoFailed, "the renderer crashed", videov1alpha1.ReasonJobFailed, Unknown},
		{"a deadline", "job-1", "JOB_DEADLINE_EXCEEDED", "took too long", videov1alpha1.ReasonJobDeadlineExceeded, Unknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &videov1alpha1.JobStatus{JobID: c.jobID, Failure: &videov1alpha1.JobFailure{Code: c.code, Message: c.msg}}
			if got := Of(st, c.reason); got != c.want {
				t.Errorf("Of = %v, want %v", got, c.want)
			}
			st.Conditions = []metav1.Condition{{Type: string(videov1alpha1.ConditionStalled), Status: metav1.ConditionTrue, Reason: string(c.reason)}}
			why, again := FailsAgain(st)
			if again != (c.want != Unknown) {
				t.Errorf("FailsAgain = %v, want %v", again, c.want != Unknown)
			}
			if again && !strings.Contains(why, c.code) {
				t.Errorf("FailsAgain names no code: %q", why)
			}
		})
	}
	if Of(&videov1alpha1.JobStatus{}, videov1alpha1.ReasonInvalidRequest) != Unknown {
		t.Error("no failure recorded is no cause")
	}
}
