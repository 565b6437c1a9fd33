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
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// StoryboardRequest is the service's request body for a preview (VideoStoryboard) or a render
// (VideoRender), field for field with the service's JSON names, so an example from the service's
// documentation pastes into YAML. Every rule that needs no call to the service is checked at
// admission where the API server can afford it, otherwise by the controller before it submits
// (internal/requestrules); what only the service knows (a brand name, a voice) is checked by the
// service.
//
// The rules that relate a scene to the request (templateOverride only with templateId,
// maxSubtitleLines not with a smart layout, the AI storyboard rules on scene sources and the single
// brief scene) are checked by the controller before it submits: as CEL rules they iterate over
// every scene, and the API server's evaluation of such a rule slows quadratically with the number
// of scenes (a storyboard of 1.5 MiB timed out at admission).
//
// +kubebuilder:validation:XValidation:rule="has(self.scenes) || has(self.templateId)",message="scenes is required unless templateId is given",fieldPath=".scenes"
// +kubebuilder:validation:XValidation:rule="has(self.videoWidth) == has(self.videoHeight)",message="videoWidth and videoHeight must be given together"
// +kubebuilder:validation:XValidation:rule="!(has(self.brandId) && has(self.brandName))",message="brandId and brandName are mutually exclusive",fieldPath=".brandName"
// +kubebuilder:validation:XValidation:rule="!(has(self.smartLayoutId) && has(self.smartLayoutName))",message="smartLayoutId and smartLayoutName are mutually exclusive",fieldPath=".smartLayoutName"
// +kubebuilder:validation:XValidation:rule="!(has(self.subtitleStyleId) && has(self.subtitleStyleName))",message="subtitleStyleId and subtitleStyleName are mutually exclusive",fieldPath=".subtitleStyleName"
// +kubebuilder:validation:XValidation:rule="!has(self.variables) || has(self.templateId)",message="variables are only valid with templateId",fieldPath=".variables"
// +kubebuilder:validation:XValidation:rule="!has(self.avatar) || (has(self.voiceOver) && self.voiceOver.enabled)",message="avatar requires voiceOver with enabled: true",fieldPath=".avatar"
// +kubebuilder:validation:XValidation:rule="!(has(self.aiStoryboard) && self.aiStoryboard.enabled) || !has(self.templateId)",message="AI storyboard mode does not support templates: remove templateId or disable aiStoryboard",fieldPath=".templateId"
// +kubebuilder:validation:XValidation:rule="!(has(self.aiStoryboard) && self.aiStoryboard.enabled) || !(has(self.smartLayoutId) || has(self.smartLayoutName))",message="AI storyboard mode does not support smart layouts: remove smartLayoutId/smartLayoutName or disable aiStoryboard"
// +kubebuilder:validation:XValidation:rule="!(has(self.aiStoryboard) && self.aiStoryboard.enabled) || !has(self.variables)",message="AI storyboard mode does not support template variables: remove variables or disable aiStoryboard",fieldPath=".variables"
// +kubebuilder:validation:XValidation:rule="!(has(self.aiStoryboard) && self.aiStoryboard.enabled) || !has(self.aspectRatio) || self.aspectRatio != '4:5'",message="AI storyboard mode does not support the 4:5 aspect ratio: use 1:1, 16:9 or 9:16",fieldPath=".aspectRatio"
type StoryboardRequest struct {
	// videoName names the video: up to 150 letters, digits, spaces, underscores and hyphens.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=150
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9 _-]+$`
	VideoName string `json:"videoName"`

	// videoWidth is the video's width in pixels; give it together with videoHeight.
	// +optional
	// +kubebuilder:validation:Minimum=1
	VideoWidth *int32 `json:"videoWidth,omitempty"`

	// videoHeight is the video's height in pixels; give it together with videoWidth.
	// +optional
	// +kubebuilder:validation:Minimum=1
	VideoHeight *int32 `json:"videoHeight,omitempty"`

	// aspectRatio of the video: 1:1, 16:9, 9:16 or 4:5 (4:5 is not available with aiStoryboard).
	// +optional
	AspectRatio *AspectRatio `json:"aspectRatio,omitempty"`

	// language of the video's text and voice-over.
	// +optional
	Language *Language `json:"language,omitempty"`

	// saveProject keeps the result in the account's project list (default false), so that a
	// VideoRender can later render it again by projectId.
	// +optional
	SaveProject *bool `json:"saveProject,omitempty"`

	// webhook is a URL the service POSTs the job result to when the job ends. When omitted, the
	// operator may set its own callback URL; polling is the fallback either way.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	Webhook *string `json:"webhook,omitempty"`

	// webhookInput is any JSON object; the service echoes it in the webhook payload.
	// +optional
	// +kubebuilder:validation:Type=object
	WebhookInput *apiextensionsv1.JSON `json:"webhookInput,omitempty"`

	// templateId is the id of a template, or of an existing project, to build the video from.
	// With templateId, scenes may be omitted.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=500
	TemplateID *string `json:"templateId,omitempty"`

	// variables fills the template's variables, name to value; only valid with templateId.
	// +optional
	Variables map[string]string `json:"variables,omitempty"`

	// brandId applies a video brand by id (see GET /v1/brands/video); exclusive with brandName.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	BrandID *string `json:"brandId,omitempty"`

	// brandName applies a video brand by name; exclusive with brandId. The controller checks the
	// name exists before it submits.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	BrandName *string `json:"brandName,omitempty"`

	// smartLayoutId selects a smart layout by id; exclusive with smartLayoutName.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	SmartLayoutID *string `json:"smartLayoutId,omitempty"`

	// smartLayoutName selects a smart layout by name; exclusive with smartLayoutId.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	SmartLayoutName *string `json:"smartLayoutName,omitempty"`

	// storyboardVersion v3 selects the experimental storyboard engine; omit it for the classic
	// one. Scenes with colorOverlay use v3 anyway.
	// +optional
	StoryboardVersion *StoryboardVersion `json:"storyboardVersion,omitempty"`

	// subtitleStyleId applies a saved text style by id; exclusive with subtitleStyleName.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	SubtitleStyleID *string `json:"subtitleStyleId,omitempty"`

	// subtitleStyleName applies a saved text style by name; exclusive with subtitleStyleId.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	SubtitleStyleName *string `json:"subtitleStyleName,omitempty"`

	// subtitleStyle is an inline subtitle style for the whole video.
	// +optional
	SubtitleStyle *SubtitleStyle `json:"subtitleStyle,omitempty"`

	// objectstoreConnectionId is the connection used to read private object-store assets.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	ObjectstoreConnectionID *string `json:"objectstoreConnectionId,omitempty"`

	// videohostConnectionId is the connection used to upload the video to a video host.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	VideohostConnectionID *string `json:"videohostConnectionId,omitempty"`

	// destinations are up to 5 places the finished video is uploaded to.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=5
	Destinations []Destination `json:"destinations,omitempty"`

	// voiceOver configures the narration for the whole video.
	// +optional
	VoiceOver *VoiceOver `json:"voiceOver,omitempty"`

	// backgroundMusic configures the music for the whole video.
	// +optional
	BackgroundMusic *BackgroundMusic `json:"backgroundMusic,omitempty"`

	// logo places a logo on the video.
	// +optional
	Logo *Logo `json:"logo,omitempty"`

	// avatar places an AI avatar on the video; it requires voiceOver with enabled: true.
	// +optional
	Avatar *Avatar `json:"avatar,omitempty"`

	// aiStoryboard lets the AI design each scene (layout, on-screen text, colours). It is
	// text-to-video only: templates, smart layouts, variables, the 4:5 ratio and pptUrl,
	// audioUrl and videoUrl scenes are rejected. The design step adds 1 to 3 minutes to a job.
	// +optional
	AIStoryboard *AIStoryboard `json:"aiStoryboard,omitempty"`

	// scenes of the video, in order; required unless templateId is given. Their number is
	// limited only by the object's size (the bound is how many of the smallest scene,
	// {"story":""}, fill 1.5 MiB; see the README).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=120989
	Scenes []Scene `json:"scenes,omitempty"`

	// payloadUrl is a URL from which the service fetches a payload; use it for requests too large
	// to keep in a Kubernetes object.
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	PayloadURL *string `json:"payloadUrl,omitempty"`

	// projectMetadata is any JSON object, stored with the saved project.
	// +optional
	// +kubebuilder:validation:Type=object
	ProjectMetadata *apiextensionsv1.JSON `json:"projectMetadata,omitempty"`
}

// AIStoryboard switches AI storyboard mode on. In script mode (story or blogUrl scenes) the text
// is narrated word for word, one designed scene per sentence by default; in brief mode a single
// brief scene lets the AI write the narration too. The interface document does not show its
// fields other than enabled, so any other field is kept as written and sent to the service.
// +kubebuilder:pruning:PreserveUnknownFields
type AIStoryboard struct {
	// enabled turns AI storyboard mode on.
	// +required
	Enabled bool `json:"enabled"`

	// Extra holds the fields other than enabled, as written; they are sent to the service
	// unchanged. In YAML they sit beside enabled.
	Extra map[string]apiextensionsv1.JSON `json:"-"`
}

// UnmarshalJSON reads enabled and keeps every other field in Extra.
func (a *AIStoryboard) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	*a = AIStoryboard{}
	for k, v := range fields {
		if k == "enabled" {
			if err := json.Unmarshal(v, &a.Enabled); err != nil {
				return fmt.Errorf("aiStoryboard.enabled: %w", err)
			}
			continue
		}
		if a.Extra == nil {
			a.Extra = map[string]apiextensionsv1.JSON{}
		}
		a.Extra[k] = apiextensionsv1.JSON{Raw: append([]byte(nil), v...)}
	}
	return nil
}

// MarshalJSON writes enabled and the fields kept in Extra.
func (a AIStoryboard) MarshalJSON() ([]byte, error) {
	out := make(map[string]json.RawMessage, len(a.Extra)+1)
	for k, v := range a.Extra {
		raw := v.Raw
		if len(raw) == 0 {
			raw = []byte("null")
		}
		out[k] = raw
	}
	enabled, err := json.Marshal(a.Enabled)
	if err != nil {
		return nil, err
	}
	out["enabled"] = enabled
	return json.Marshal(out)
}

// AspectRatio of the video.
// +kubebuilder:validation:Enum="1:1";"16:9";"9:16";"4:5"
type AspectRatio string

// Language of the video, also used for captionLanguage.
// +kubebuilder:validation:Enum=zh;nl;en;fr;de;hi;it;ja;ko;mr;pt;ru;es;ta
type Language string

// StoryboardVersion selects the storyboard engine; only v3 (experimental) exists.
// +kubebuilder:validation:Enum=v3
type StoryboardVersion string

// Destination is where the finished video is uploaded: a video host or an object store, chosen by
// type. Fields of the other variant are rejected.
// +kubebuilder:validation:XValidation:rule="self.type != 'objectstore' || (has(self.bucket) && has(self.region) && has(self.key))",message="bucket, region and key are required for an objectstore destination"
// +kubebuilder:validation:XValidation:rule="self.type == 'objectstore' || !(has(self.bucket) || has(self.region) || has(self.key))",message="bucket, region and key apply only to objectstore destinations"
// +kubebuilder:validation:XValidation:rule="self.type == 'videohost' || !(has(self.folder_uri) || has(self.content_rating) || has(self.privacy))",message="folder_uri, content_rating and privacy apply only to videohost destinations"
type Destination struct {
	// type is videohost (upload through videohostConnectionId) or objectstore (bucket, region, key).
	// +required
	Type DestinationType `json:"type"`

	// folder_uri is the video host folder to upload into (videohost only).
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	FolderURI *string `json:"folder_uri,omitempty"`

	// content_rating labels the upload for the video host (videohost only).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=7
	ContentRating []ContentRating `json:"content_rating,omitempty"`

	// privacy of the upload on the video host (videohost only).
	// +optional
	Privacy *VideohostPrivacy `json:"privacy,omitempty"`

	// bucket of the object store (objectstore only, required there).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Bucket *string `json:"bucket,omitempty"`

	// region of the object store (objectstore only, required there).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	Region *string `json:"region,omitempty"`

	// key is the object key the video is written to (objectstore only, required there).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Key *string `json:"key,omitempty"`
}

// DestinationType chooses the destination variant.
// +kubebuilder:validation:Enum=videohost;objectstore
type DestinationType string

// Destination types.
const (
	DestinationVideohost   DestinationType = "videohost"
	DestinationObjectstore DestinationType = "objectstore"
)

// ContentRating labels a video host upload.
// +kubebuilder:validation:Enum=violence;drugs;language;nudity;advertisement;safe;unrated
type ContentRating string

// VideohostPrivacy is who can see, embed and comment on the uploaded video.
type VideohostPrivacy struct {
	// view says who can watch the video.
	// +optional
	View *PrivacyView `json:"view,omitempty"`

	// embed says where the video can be embedded.
	// +optional
	Embed *PrivacyEmbed `json:"embed,omitempty"`

	// comments says who can comment.
	// +optional
	Comments *PrivacyComments `json:"comments,omitempty"`

	// add says whether viewers can add the video to their collections.
	// +optional
	Add *bool `json:"add,omitempty"`

	// download says whether viewers can download the video.
	// +optional
	Download *bool `json:"download,omitempty"`
}

// PrivacyView is who can watch an uploaded video.
// +kubebuilder:validation:Enum=anybody;contacts;disable;nobody;password;unlisted;users
type PrivacyView string

// PrivacyEmbed is where an uploaded video can be embedded.
// +kubebuilder:validation:Enum=private;public;whitelist
type PrivacyEmbed string

// PrivacyComments is who can comment on an uploaded video.
// +kubebuilder:validation:Enum=anybody;contacts;nobody
type PrivacyComments string
