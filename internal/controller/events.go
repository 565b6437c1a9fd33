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

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Reasons of the events that are not a condition's reason (those are the Reason constants of
// api/v1alpha1): kubectl get events and alerting rules match them.
const (
	eventAdopted                = "Adopted"
	eventAnimatePPTIgnored      = "AnimatePPTIgnored"
	eventClearanceRefreshFailed = "ClearanceRefreshFailed"
	eventRequestUnchanged       = "RequestUnchanged"
	eventResubmissionConfirmed  = "ResubmissionConfirmed"
	eventRetryRequested         = "RetryRequested"
	eventStatusWriteFailed      = "StatusWriteFailed"
	eventSubmitted              = "Submitted"
)

// maxEventNote is the longest note events.k8s.io/v1 accepts, in bytes: the API server refuses
// a longer event outright, and the event is lost.
const maxEventNote = 1024

// boundedRecorder formats each note and cuts it to what the events API accepts, so that a long
// failure message from the service still produces its event.
type boundedRecorder struct {
	recorder.EventRecorder
}

var _ recorder.EventRecorder = boundedRecorder{}

func (r boundedRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", boundNote(note, args))
}

func (r boundedRecorder) AnnotatedEventf(regarding, related runtime.Object, annotations map[string]string,
	eventtype, reason, action, note string, args ...any) {
	r.EventRecorder.AnnotatedEventf(regarding, related, annotations, eventtype, reason, action, "%s", boundNote(note, args))
}

// boundNote formats the note as the events recorder would, then bounds it.
func boundNote(note string, args []any) string {
	return truncateBytes(fmt.Sprintf(note, args...), maxEventNote)
}
