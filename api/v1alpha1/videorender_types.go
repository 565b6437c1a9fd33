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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VideoRenderSpec says what to render, from exactly one source.
// +kubebuilder:validation:XValidation:rule="[has(self.storyboard), has(self.storyboardRef), has(self.projectId)].exists_one(x, x)",message="exactly one of storyboard, storyboardRef or projectId is required"
type VideoRenderSpec struct {
	// storyboard is a storyboard request rendered directly, without a preview.
	// +optional
	Storyboard *StoryboardRequest `json:"storyboard,omitempty"`

	// storyboardRef renders a VideoStoryboard of this namespace once its preview completed and
	// was approved, with the request that was previewed: the review step before paying for the
	// render. See storyboardRef.approvedDigest and storyboardRef.approval for what counts as
	// approved.
	// +optional
	StoryboardRef *StoryboardReference `json:"storyboardRef,omitempty"`

	// projectId renders an existing project: one created in the application, or saved by a
	// request with saveProject true.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=500
	ProjectID *string `json:"projectId,omitempty"`

	// apiKeySecretRef names the Secret key holding the service's API key, in this object's
	// namespace. Defaults to name video-api-key, key apiKey.
	// +optional
	// +default={"name": "video-api-key", "key": "apiKey"}
	APIKeySecretRef *SecretKeyRef `json:"apiKeySecretRef,omitempty"`
}

// StoryboardReference names a VideoStoryboard in the same namespace and says which of its
// previews a person approved for rendering.
// +kubebuilder:validation:XValidation:rule="!(has(self.approvedDigest) && has(self.approval) && self.approval == 'Latest')",message="approvedDigest pins one preview; it cannot be combined with approval Latest"
type StoryboardReference struct {
	// name of the VideoStoryboard.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// approvedDigest pins the approval to one preview: the render is paid for only when the
	// VideoStoryboard's current completed preview has this digest (its status.preview.digest, as
	// printed by kubectl video preview). While the current preview has another digest (an edit,
	// a new preview) the render waits, condition Reconciling reason AwaitingApproval naming both
	// digests, and pays nothing; setting the new digest here renders that preview once. Written
	// by kubectl video approve and kubectl video render, or in Git. When set, approval is
	// ignored.
	// +optional
	// +kubebuilder:validation:MaxLength=71
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	ApprovedDigest string `json:"approvedDigest,omitempty"`

	// approval says what is approved when approvedDigest is not set. Consent is a record, never
	// an inference: without approvedDigest nothing is rendered (the render waits, condition
	// Reconciling reason AwaitingApproval, with the command that approves) unless approval is
	// Latest. Pinned (the default): only the preview named by approvedDigest is rendered.
	// Latest: every new preview of the storyboard is rendered, and paid for, as soon as it
	// completes, without anyone reviewing it. PreviewAtApproval is retired: it approved the
	// preview that had completed when the spec was last written, so a key rotation, a restore or a
	// GitOps sync approved a preview nobody saw; a render that names it behaves as Pinned and
	// says so in its AwaitingApproval message.
	// +optional
	Approval ApprovalPolicy `json:"approval,omitempty"`

	// narration says what the render narrates when the approved preview is an AI brief-mode
	// storyboard (a single brief scene, whose narration the service's AI wrote for the preview).
	// Approved (the default): the render request is the previewed request with the brief scene
	// replaced by one script-mode story scene per previewed scene, holding that scene's
	// narration word for word, so the video says exactly what was reviewed; the AI still
	// designs layout and visuals anew. If the narration in the storyboard's status is incomplete
	// the render stalls (NarrationIncomplete) before paying; if the brief scene sets more than
	// its brief (a scene-level voice-over, subtitles, background), which one story scene per
	// previewed scene would not carry as previewed, it stalls (BriefSettingsNotCarried) before
	// paying. Regenerate: the previewed request is
	// sent unchanged and the service's AI writes the narration again, which may differ from the
	// one reviewed.
	// +optional
	Narration NarrationPolicy `json:"narration,omitempty"`
}

// ApprovalPolicy says which preview of a storyboard a render without approvedDigest may pay for.
// +kubebuilder:validation:Enum=PreviewAtApproval;Pinned;Latest
type ApprovalPolicy string

const (
	// ApprovalPreviewAtApproval is retired and behaves as ApprovalPinned; the value is still
	// accepted so that objects written by an older version stay valid.
	ApprovalPreviewAtApproval ApprovalPolicy = "PreviewAtApproval"
	// ApprovalPinned renders only the preview named by approvedDigest (the default).
	ApprovalPinned ApprovalPolicy = "Pinned"
	// ApprovalLatest renders, and pays for, every new preview without review.
	ApprovalLatest ApprovalPolicy = "Latest"
)

// NarrationPolicy says whether a brief-mode render narrates the approved narration.
// +kubebuilder:validation:Enum=Approved;Regenerate
type NarrationPolicy string

const (
	// NarrationApproved narrates the previewed narration word for word.
	NarrationApproved NarrationPolicy = "Approved"
	// NarrationRegenerate lets the service's AI write the narration again.
	NarrationRegenerate NarrationPolicy = "Regenerate"
)

// VideoRenderStatus is the render job and, once it completed, its outputs.
type VideoRenderStatus struct {
	JobStatus `json:",inline"`

	// storyboardGeneration is, for a storyboardRef render, the generation of the VideoStoryboard
	// whose preview the current job renders. A newer previewed generation is rendered again.
	// +optional
	// +kubebuilder:validation:Minimum=0
	StoryboardGeneration int64 `json:"storyboardGeneration,omitempty"`

	// storyboardUID is the uid of that VideoStoryboard, so a storyboard deleted and created again
	// (at generation 1 anew) is rendered again.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	StoryboardUID string `json:"storyboardUID,omitempty"`

	// storyboardDigest is, for a storyboardRef render, the digest of the preview the current job
	// renders (the approved one): what was paid for.
	// +optional
	// +kubebuilder:validation:MaxLength=71
	StoryboardDigest string `json:"storyboardDigest,omitempty"`

	// narrationPinned is true when the current job's request narrates the approved brief-mode
	// narration word for word (storyboardRef.narration Approved); false or absent when the
	// service wrote the narration anew or the request was not a brief.
	// +optional
	NarrationPinned *bool `json:"narrationPinned,omitempty"`

	// approval is, for a storyboardRef render, who approved the preview the current job renders
	// and what they approved, as the admission policies recorded it (docs/approval.md). Absent
	// when the job renders no approved preview; approvedBy empty when the approval was written
	// without a recorded approver (before the policies were installed).
	// +optional
	Approval *ApprovalRecord `json:"approval,omitempty"`

	// outputs are the URLs of the rendered files.
	// +optional
	Outputs *RenderOutputs `json:"outputs,omitempty"`

	// videoDuration is the length of the video.
	// +optional
	VideoDuration *metav1.Duration `json:"videoDuration,omitempty"`

	// encodingDuration is how long the service took to encode and render.
	// +optional
	EncodingDuration *metav1.Duration `json:"encodingDuration,omitempty"`

	// aiCreditsUsed is the total of AI credits the video's aiVisual scenes used, as a decimal
	// string (Kubernetes status carries no floats).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	AICreditsUsed string `json:"aiCreditsUsed,omitempty"`

	// clearance is the platform clearance code for a video with a track from the licensed music
	// library. Each code clears one upload and expires after 7 days; the controller then records
	// a fresh one.
	// +optional
	Clearance *Clearance `json:"clearance,omitempty"`

	// previous is the last completed render of an older spec generation, kept when a newer
	// generation is submitted: those outputs were paid for and stay usable.
	// +optional
	Previous *PreviousRender `json:"previous,omitempty"`
}

// ApprovalRecord is who approved a paid render, and what.
type ApprovalRecord struct {
	// approvedBy is the user who wrote the approval (set or changed spec.storyboardRef.approvedDigest,
	// approval Latest or what they cover, or wrote the inline storyboard or projectId the job
	// renders), as the API server authenticated them; empty when not recorded.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ApprovedBy string `json:"approvedBy,omitempty"`

	// digest is the digest of the approved preview the job renders; empty for an inline
	// storyboard or a project.
	// +optional
	// +kubebuilder:validation:MaxLength=71
	Digest string `json:"digest,omitempty"`
}

// PreviousRender is a completed render that a newer spec generation replaced.
type PreviousRender struct {
	// jobId is the service's id of that render job.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	JobID string `json:"jobId,omitempty"`

	// jobGeneration is the spec generation it rendered.
	// +optional
	// +kubebuilder:validation:Minimum=0
	JobGeneration int64 `json:"jobGeneration,omitempty"`

	// completedAt is when the controller saw it complete.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`

	// outputs are its URLs.
	// +optional
	Outputs *RenderOutputs `json:"outputs,omitempty"`

	// clearance is its last recorded clearance code; it is not refreshed any more.
	// +optional
	Clearance *Clearance `json:"clearance,omitempty"`
}

// RenderOutputs are the URLs of the rendered files.
type RenderOutputs struct {
	// videoURL is the download URL of the MP4 video.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	VideoURL string `json:"videoURL,omitempty"`

	// videoShareURL is the share link.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	VideoShareURL string `json:"videoShareURL,omitempty"`

	// videoEmbedURL is the URL to embed in an iframe.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	VideoEmbedURL string `json:"videoEmbedURL,omitempty"`

	// audioURL is the MP3 audio track.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	AudioURL string `json:"audioURL,omitempty"`

	// thumbnail is the URL of the video's thumbnail.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	Thumbnail string `json:"thumbnail,omitempty"`

	// srtFile is the captions in SRT.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	SRTFile string `json:"srtFile,omitempty"`

	// txtFile is the transcript; in brief mode it holds the narration the AI wrote.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	TXTFile string `json:"txtFile,omitempty"`

	// vttFile is the captions in WebVTT.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	VTTFile string `json:"vttFile,omitempty"`
}

// Clearance is a platform clearance code for the licensed music in a video.
type Clearance struct {
	// code clears one upload of the video to a platform.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Code string `json:"code,omitempty"`

	// expiresAt is when the code expires.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
}

// VideoRender is a paid render: from an inline storyboard, from a reviewed VideoStoryboard, or
// of a stored project. Its status carries the video, audio, thumbnail and caption URLs.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vr,categories=videos
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Progress",type=integer,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Video",type=string,JSONPath=`.status.outputs.videoURL`
// +kubebuilder:printcolumn:name="Job ID",type=string,JSONPath=`.status.jobId`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VideoRender struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says what to render.
	// +required
	Spec VideoRenderSpec `json:"spec"`

	// status is the render job and its outputs.
	// +optional
	Status VideoRenderStatus `json:"status,omitempty"`
}

// VideoRenderList is a list of VideoRender.
// +kubebuilder:object:root=true
type VideoRenderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VideoRender `json:"items"`
}

func init() {
	knownTypes = append(knownTypes, &VideoRender{}, &VideoRenderList{})
}
