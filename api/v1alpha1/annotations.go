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

package v1alpha1

// Annotations a user sets on a VideoStoryboard or a VideoRender to unblock it when only a human
// can. They are part of the API: the controller acts on them, and clients (kubectl video, GitOps
// repositories) set them.
const (
	// AnnotationRetry asks for a new job for the current spec after a failed or refused one. Any
	// new value triggers one retry (for example a timestamp): the value handled last is kept in
	// status.lastHandledRetry, so a GitOps tool re-applying the same value never pays twice.
	AnnotationRetry = "video.videoops.io/retry"

	// AnnotationConfirmResubmit confirms that a submission whose outcome is unknown (condition
	// Stalled, reason SubmissionUnknown) may be sent again. Its value must be the attempt id
	// quoted in the condition message, so a stale annotation can never confirm a later attempt.
	AnnotationConfirmResubmit = "video.videoops.io/confirm-resubmit"
)
