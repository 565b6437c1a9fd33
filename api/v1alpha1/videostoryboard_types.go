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
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VideoStoryboardSpec is the service's StoryboardRequest, field for field, plus the Secret that
// holds the API key.
type VideoStoryboardSpec struct {
	StoryboardRequest `json:",inline"`

	// apiKeySecretRef names the Secret key holding the service's API key, in this object's
	// namespace. Defaults to name video-api-key, key apiKey.
	// +optional
	// +default={"name": "video-api-key", "key": "apiKey"}
	APIKeySecretRef *SecretKeyRef `json:"apiKeySecretRef,omitempty"`
}

// VideoStoryboardStatus is the preview job and, once it completed, the preview.
type VideoStoryboardStatus struct {
	JobStatus `json:",inline"`

	// previewedGeneration is the spec generation whose preview completed. A VideoRender with
	// storyboardRef renders only when it equals metadata.generation, so what is rendered is
	// always what was reviewed.
	// +optional
	// +kubebuilder:validation:Minimum=0
	PreviewedGeneration int64 `json:"previewedGeneration,omitempty"`

	// preview is the storyboard the service proposed: scene thumbnails, narration and render
	// parameters.
	// +optional
	Preview *StoryboardPreview `json:"preview,omitempty"`

	// aiCreditsUsed is the total of AI credits the preview job's aiVisual scenes used, as the
	// service reported it with the job's end (a decimal string: Kubernetes status carries no
	// floats). The namespace's VideoBudget charges it from here, as a render's.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	AICreditsUsed string `json:"aiCreditsUsed,omitempty"`
}

// StoryboardPreview is the result of a completed preview job.
type StoryboardPreview struct {
	// digest identifies what a reviewer sees of this preview: sha256 of the canonical JSON of
	// every scene's narration and thumbnail URL, in order, and the render parameters, as the
	// service returned them (all scenes, also those omitted here for size), and of the
	// previewed request (the spec without apiKeySecretRef), which a render of it sends. The
	// same preview always has the same digest; a new preview has a new one. Empty for a
	// preview whose spec was edited before it completed, and for a preview adopted from a job
	// whose request is not known to be this spec's (see unverified): neither can be approved
	// or rendered. A VideoRender
	// pins its approval to it (spec.storyboardRef.approvedDigest).
	// +optional
	// +kubebuilder:validation:MaxLength=71
	Digest string `json:"digest,omitempty"`

	// unverified says why this preview, shown for review, cannot be approved: it was adopted
	// from a job named by annotation video.videoops.io/job-id without a request digest that
	// matches this spec's request, so what it previews may be another request's script. A fresh
	// preview of this spec (an edit of the spec) can be approved. Empty when the preview is this
	// spec's.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Unverified string `json:"unverified,omitempty"`
	// digestVersion is the version of digest's encoding (docs/backup-restore.md, "Digest
	// versions"). Absent means 1, the encoding before digests carried a version.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DigestVersion int32 `json:"digestVersion,omitempty"`

	// digestV1 is this preview's digest in version 1, when digest is of a later version: an
	// approvedDigest written before the upgrade (in Git, by kubectl video) names the preview by
	// it, and still approves it.
	// +optional
	// +kubebuilder:validation:MaxLength=71
	DigestV1 string `json:"digestV1,omitempty"`

	// generation is the VideoStoryboard generation this preview belongs to.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Generation int64 `json:"generation,omitempty"`

	// incomplete says why the narration recorded here is not the whole narration the service
	// returned (scenes omitted for size, a narration over the 15000 characters a story scene
	// holds, a shape kept only in raw); empty when it is whole. A render cannot narrate an
	// incomplete narration word for word, and stalls instead of guessing.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Incomplete string `json:"incomplete,omitempty"`

	// scenes of the proposed storyboard, in order; as many as fit in 512 KiB of status (the
	// rest are named in outputsOmitted).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16384
	Scenes []PreviewScene `json:"scenes,omitempty"`

	// renderParameters are the render parameters the service returned, as it returned them.
	// +optional
	RenderParameters *apiextensionsv1.JSON `json:"renderParameters,omitempty"`

	// raw is the storyboard exactly as the service returned it, kept when its shape is not the
	// one scenes and renderParameters were read from (the interface document does not give
	// it), and only when it is small enough for the object.
	// +optional
	Raw *apiextensionsv1.JSON `json:"raw,omitempty"`
}

// PreviewScene is one scene of a preview.
type PreviewScene struct {
	// thumbnail is the URL of the scene's thumbnail image.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	Thumbnail string `json:"thumbnail,omitempty"`

	// story is the scene's narration; in brief mode it is the narration the AI wrote.
	// +optional
	// +kubebuilder:validation:MaxLength=15000
	Story string `json:"story,omitempty"`
}

// VideoStoryboard is a preview job: the service breaks the request into scenes with thumbnails
// and render parameters, to review before the paid render. A VideoRender with storyboardRef
// renders it once the preview completed.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vsb,categories=videos
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Progress",type=integer,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Preview",type=string,JSONPath=`.status.preview.scenes[0].thumbnail`
// +kubebuilder:printcolumn:name="Job ID",type=string,JSONPath=`.status.jobId`,priority=1
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VideoStoryboard struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's standard metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the storyboard request to preview.
	// +required
	Spec VideoStoryboardSpec `json:"spec"`

	// status is the preview job and its result.
	// +optional
	Status VideoStoryboardStatus `json:"status,omitempty"`
}

// VideoStoryboardList is a list of VideoStoryboard.
// +kubebuilder:object:root=true
type VideoStoryboardList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VideoStoryboard `json:"items"`
}

func init() {
	knownTypes = append(knownTypes, &VideoStoryboard{}, &VideoStoryboardList{})
}

// NamedBy reports whether digest names this preview: its digest, or its version 1 digest (a pin
// written before digests carried a version, which still approves the same preview).
func (p *StoryboardPreview) NamedBy(digest string) bool {
	if p == nil || digest == "" {
		return false
	}
	return digest == p.Digest || digest == p.DigestV1
}

// DigestOfVersion1 is this preview's version 1 digest: digest itself when it is of version 1
// (written before versions existed), digestV1 otherwise; "" when unknown.
func (p *StoryboardPreview) DigestOfVersion1() string {
	switch {
	case p == nil:
		return ""
	case p.DigestVersion <= 1:
		return p.Digest
	default:
		return p.DigestV1
	}
}
