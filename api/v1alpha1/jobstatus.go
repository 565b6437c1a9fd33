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

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// JobObject is what the operator's shared job lifecycle reads and writes of either kind whose
// spec becomes a job at the service (VideoStoryboard, VideoRender). What differs in behaviour
// between the kinds (what the spec asks for, how a job's outputs map into status, how it is
// charged) lives with the controller; these are only where each kind keeps its fields.
// +kubebuilder:object:generate=false
type JobObject interface {
	metav1.Object
	runtime.Object
	// JobKind is the Kind, for events, metrics, reservations and logs (a typed object read from
	// a cache carries no TypeMeta).
	JobKind() string
	// Job is the job status both kinds share.
	Job() *JobStatus
	// StatusValue is the whole status, to tell whether a reconcile changed anything.
	StatusValue() any
	// APIKeyRef is spec.apiKeySecretRef, nil for the default Secret.
	APIKeyRef() *SecretKeyRef
	// JobSource is the upstream object (the previewed VideoStoryboard of a storyboardRef render)
	// the current job renders, as its submission recorded it; zero for a kind without one.
	JobSource() Submission
	// SetJobSource records what the submission sub consumed as the current job's source.
	SetJobSource(sub *Submission)
	// CurrentClearance is the recorded platform clearance code, or nil.
	CurrentClearance() *Clearance
	// DescribeRequest names what the spec asks for, so that a user can find its job at the
	// service: the request's videoName, or the project or storyboard it renders.
	DescribeRequest() string
}

var (
	_ JobObject = &VideoStoryboard{}
	_ JobObject = &VideoRender{}
)

// JobKind is "VideoStoryboard".
func (*VideoStoryboard) JobKind() string { return "VideoStoryboard" }

// Job is the preview's job status.
func (o *VideoStoryboard) Job() *JobStatus { return &o.Status.JobStatus }

// StatusValue is the whole status.
func (o *VideoStoryboard) StatusValue() any { return &o.Status }

// APIKeyRef is spec.apiKeySecretRef.
func (o *VideoStoryboard) APIKeyRef() *SecretKeyRef { return o.Spec.APIKeySecretRef }

// JobSource is zero: a preview renders no upstream object.
func (*VideoStoryboard) JobSource() Submission { return Submission{} }

// SetJobSource does nothing: a preview renders no upstream object.
func (*VideoStoryboard) SetJobSource(*Submission) {}

// CurrentClearance is nil: a preview has no clearance code.
func (*VideoStoryboard) CurrentClearance() *Clearance { return nil }

// DescribeRequest names the preview's videoName.
func (o *VideoStoryboard) DescribeRequest() string {
	return fmt.Sprintf("a preview with videoName %q", o.Spec.VideoName)
}

// JobKind is "VideoRender".
func (*VideoRender) JobKind() string { return "VideoRender" }

// Job is the render's job status.
func (o *VideoRender) Job() *JobStatus { return &o.Status.JobStatus }

// StatusValue is the whole status.
func (o *VideoRender) StatusValue() any { return &o.Status }

// APIKeyRef is spec.apiKeySecretRef.
func (o *VideoRender) APIKeyRef() *SecretKeyRef { return o.Spec.APIKeySecretRef }

// CurrentClearance is status.clearance.
func (o *VideoRender) CurrentClearance() *Clearance { return o.Status.Clearance }

// JobSource is the previewed VideoStoryboard the current job renders, as status records it.
func (o *VideoRender) JobSource() Submission {
	sub := Submission{StoryboardGeneration: o.Status.StoryboardGeneration, StoryboardUID: o.Status.StoryboardUID,
		StoryboardDigest: o.Status.StoryboardDigest, NarrationPinned: o.Status.NarrationPinned}
	if o.Status.Approval != nil {
		sub.ApprovedBy = o.Status.Approval.ApprovedBy
	}
	return sub
}

// SetJobSource records the storyboard fields of sub as the current job's source.
func (o *VideoRender) SetJobSource(sub *Submission) {
	o.Status.StoryboardGeneration, o.Status.StoryboardUID = sub.StoryboardGeneration, sub.StoryboardUID
	o.Status.StoryboardDigest, o.Status.NarrationPinned = sub.StoryboardDigest, sub.NarrationPinned
	o.Status.Approval = nil
	if sub.StoryboardDigest != "" || sub.ApprovedBy != "" {
		o.Status.Approval = &ApprovalRecord{ApprovedBy: sub.ApprovedBy, Digest: sub.StoryboardDigest}
	}
}

// DescribeRequest names what the spec renders: its videoName, project or storyboard.
func (o *VideoRender) DescribeRequest() string {
	switch {
	case o.Spec.Storyboard != nil:
		return fmt.Sprintf("videoName %q", o.Spec.Storyboard.VideoName)
	case o.Spec.ProjectID != nil:
		return fmt.Sprintf("a render of project %q", *o.Spec.ProjectID)
	case o.Spec.StoryboardRef != nil:
		return fmt.Sprintf("the request of VideoStoryboard %q", o.Spec.StoryboardRef.Name)
	}
	return "no request"
}

// JobStatusOf returns the job status both job kinds share (VideoStoryboard, VideoRender), or nil
// for any other object.
func JobStatusOf(obj any) *JobStatus {
	if o, ok := obj.(JobObject); ok {
		return o.Job()
	}
	return nil
}
