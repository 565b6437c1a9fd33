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

// Package failurecause says whether a recorded failure is one the same spec causes again. The
// controller's messages and kubectl video retry share it, so that no message advises the retry
// the plugin refuses: a retry of such a failure sends the same request and, for a job, pays for
// it again.
package failurecause

import (
	"fmt"
	"regexp"
	"strings"

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

// CodeInvalidRequestBody is the service's code for a request body it rejects (interface
// document, "Errors").
const CodeInvalidRequestBody = "INVALID_REQUEST_BODY"

// CodeTextToVideoFailed is the job failure the interface document gives for an invalid voice
// speaker ("Errors"). The document lists no other cause but says the list of codes is not
// complete, so the code alone does not say the spec caused it: the message must name the voice.
const CodeTextToVideoFailed = "TEXT_TO_VIDEO_FAILED"

var voiceInMessage = regexp.MustCompile(`(?i)\b(voice|speaker)s?\b`)

// Cause is what a failure says about the spec that led to it.
type Cause int

const (
	// Unknown is a failure the spec may not cause again: a retry may succeed.
	Unknown Cause = iota
	// RefusedSpec is a request the service refused before any job: a retry is refused again
	// (and costs nothing).
	RefusedSpec
	// FailedSpec is a job that failed because of its spec: a retry pays for a new job that fails the
	// same way.
	FailedSpec
)

// Of classifies the failure recorded in st, given the reason the object is (or is about to be)
// stalled with. It returns Unknown when st records no failure.
func Of(st *videov1alpha1.JobStatus, reason videov1alpha1.ConditionReason) Cause {
	f := st.Failure
	switch {
	case f == nil:
		return Unknown
	case refusedSpec[reason]:
		return RefusedSpec
	case f.Code == CodeInvalidRequestBody,
		f.Code == CodeTextToVideoFailed && voiceInMessage.MatchString(f.Message):
		return FailedSpec
	}
	return Unknown
}

// Stalled classifies the failure recorded in st by the reason of its Stalled condition.
func Stalled(st *videov1alpha1.JobStatus) Cause {
	var reason videov1alpha1.ConditionReason
	if c := meta.FindStatusCondition(st.Conditions, string(videov1alpha1.ConditionStalled)); c != nil && c.Status == metav1.ConditionTrue {
		reason = videov1alpha1.ConditionReason(c.Reason)
	}
	return Of(st, reason)
}

// FailsAgain says whether the recorded failure is one the same spec causes again, and why, for a
// person deciding on a retry.
func FailsAgain(st *videov1alpha1.JobStatus) (string, bool) {
	f := st.Failure
	switch Stalled(st) {
	case RefusedSpec:
		return fmt.Sprintf("the service refused this spec (%s: %s); a retry sends the same request and is refused again",
			f.Code, oneLine(f.Message)), true
	case FailedSpec:
		job := "the job"
		if st.JobID != "" {
			job = "job " + st.JobID
		}
		return fmt.Sprintf("%s failed because of its spec (%s: %s); a new job for the same spec would be paid for and fail the same way",
			job, f.Code, oneLine(f.Message)), true
	}
	return "", false
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
