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

package kubectlvideo

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// refusedSpec are the stalls where the service refused the request itself, before any job: the
// same spec is refused again (a 400 names the offending field; a projectId the service does not
// know stays unknown).
var refusedSpec = map[videov1alpha1.ConditionReason]bool{
	videov1alpha1.ReasonInvalidRequest:  true,
	videov1alpha1.ReasonProjectNotFound: true,
}

// codeInvalidRequestBody is the service's code for a request body it rejects (interface
// document, "Errors").
const codeInvalidRequestBody = "INVALID_REQUEST_BODY"

// codeTextToVideoFailed is the job failure the interface document gives for an invalid voice
// speaker ("Errors"). The document lists no other cause but says the list of codes is not
// complete, so the code alone does not say the spec caused it: the message must name the voice.
const codeTextToVideoFailed = "TEXT_TO_VIDEO_FAILED"

var voiceInMessage = regexp.MustCompile(`(?i)\b(voice|speaker)s?\b`)

// failsAgain says whether the recorded failure is one the same spec causes again, and why: a
// retry would submit the same request, and for a job that failed, pay for it again.
func failsAgain(st *videov1alpha1.JobStatus) (string, bool) {
	f := st.Failure
	if f == nil {
		return "", false
	}
	stalled := meta.FindStatusCondition(st.Conditions, string(videov1alpha1.ConditionStalled))
	if stalled != nil && stalled.Status == metav1.ConditionTrue && refusedSpec[videov1alpha1.ConditionReason(stalled.Reason)] {
		return fmt.Sprintf("the service refused this spec (%s: %s); a retry sends the same request and is refused again",
			f.Code, oneLine(f.Message)), true
	}
	switch {
	case f.Code == codeInvalidRequestBody,
		f.Code == codeTextToVideoFailed && voiceInMessage.MatchString(f.Message):
		job := "the job"
		if st.JobID != "" {
			job = "job " + st.JobID
		}
		return fmt.Sprintf("%s failed because of its spec (%s: %s); a new job for the same spec would be paid for and fail the same way",
			job, f.Code, oneLine(f.Message)), true
	}
	return "", false
}
