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

// TemplateOverride changes the template's scenes (only with templateId): it picks a template scene
// by id or position, then replaces, inserts, copies or deletes scenes and overrides their
// subtitles and layers.
type TemplateOverride struct {
	// sceneId is the template scene this override applies to.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	SceneID *string `json:"sceneId,omitempty"`

	// insertAfterSceneId inserts the scene after this template scene.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	InsertAfterSceneID *string `json:"insertAfterSceneId,omitempty"`

	// insertBeforeSceneId inserts the scene before this template scene.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	InsertBeforeSceneID *string `json:"insertBeforeSceneId,omitempty"`

	// replaceSceneId replaces this template scene.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	ReplaceSceneID *string `json:"replaceSceneId,omitempty"`

	// baseSceneId is the template scene a new scene is based on.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	BaseSceneID *string `json:"baseSceneId,omitempty"`

	// scenePosition is the position (from 1) of the template scene this override applies to.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ScenePosition *int32 `json:"scenePosition,omitempty"`

	// newScenePosition is the position (from 1) of the new scene.
	// +optional
	// +kubebuilder:validation:Minimum=1
	NewScenePosition *int32 `json:"newScenePosition,omitempty"`

	// replaceScenePosition is the position (from 1) of the template scene to replace.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ReplaceScenePosition *int32 `json:"replaceScenePosition,omitempty"`

	// baseScenePosition is the position (from 1) of the template scene a new scene is based on.
	// +optional
	// +kubebuilder:validation:Minimum=1
	BaseScenePosition *int32 `json:"baseScenePosition,omitempty"`

	// deleteScene deletes the template scene.
	// +optional
	DeleteScene *bool `json:"deleteScene,omitempty"`

	// copyScene copies the template scene.
	// +optional
	CopyScene *bool `json:"copyScene,omitempty"`

	// subtitles replace the scene's subtitles, up to 500.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=500
	Subtitles []TemplateSubtitle `json:"subtitles,omitempty"`

	// layers override the scene's layers: up to 500 groups of 1 to 500 layers each.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=500
	Layers []TemplateLayerGroup `json:"layers,omitempty"`
}

// TemplateSubtitle is one subtitle of a template scene.
type TemplateSubtitle struct {
	// text of the subtitle, 1 to 40000 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40000
	Text string `json:"text"`

	// minimumDuration of the subtitle in seconds.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinimumDuration *float64 `json:"minimumDuration,omitempty"`

	// styleId applies a saved text style by id.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	StyleID *string `json:"styleId,omitempty"`

	// styleName applies a saved text style by name.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	StyleName *string `json:"styleName,omitempty"`

	// style is an inline text style. Its cross-field rules are checked by the controller before
	// it submits (see SubtitleStyle).
	// +optional
	Style *SubtitleStyle `json:"style,omitempty"`
}

// TemplateLayerGroup is one group of 1 to 500 layer overrides.
// +kubebuilder:validation:MinItems=1
// +kubebuilder:validation:MaxItems=500
type TemplateLayerGroup []TemplateLayer

// TemplateLayer overrides one layer of a template scene. Its fields carry only plain bounds and
// no cross-field rules: 500 x 500 layers per scene are more than the API server can afford to
// check rule by rule, so the controller checks the rules of its style before it submits.
type TemplateLayer struct {
	// layerId is the template layer to override, up to 100 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	LayerID *string `json:"layerId,omitempty"`

	// type of the layer: text, image or video.
	// +optional
	Type *LayerType `json:"type,omitempty"`

	// text of a text layer, up to 40000 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=40000
	Text *string `json:"text,omitempty"`

	// url of an image or video layer, up to 3000 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	URL *string `json:"url,omitempty"`

	// styleId applies a saved text style by id.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	StyleID *string `json:"styleId,omitempty"`

	// styleName applies a saved text style by name.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	StyleName *string `json:"styleName,omitempty"`

	// style is an inline text style.
	// +optional
	Style *SubtitleStyle `json:"style,omitempty"`

	// visualLibraryId picks a visual from the library.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=500
	VisualLibraryID *string `json:"visualLibraryId,omitempty"`

	// deleteLayer removes the layer.
	// +optional
	DeleteLayer *bool `json:"deleteLayer,omitempty"`
}

// LayerType is the kind of a template layer.
// +kubebuilder:validation:Enum=text;image;video
type LayerType string
