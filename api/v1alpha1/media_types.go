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

// Background is what a scene shows behind its text: exactly one of a URL, a solid colour or an AI
// visual; or only a searchFilter, which picks stock media.
// +kubebuilder:validation:XValidation:rule="[has(self.visualUrl), has(self.color), has(self.aiVisual)].exists_one(x, x) || (has(self.searchFilter) && !has(self.visualUrl) && !has(self.color) && !has(self.aiVisual))",message="background takes exactly one of visualUrl, color or aiVisual (or only a searchFilter to pick stock media)"
// +kubebuilder:validation:XValidation:rule="!has(self.aiVisual) || has(self.type)",message="type (image or video) is required with aiVisual",fieldPath=".type"
// +kubebuilder:validation:XValidation:rule="!has(self.aiVisual) || !has(self.type) || ((self.type == 'video') == (self.aiVisual.model in ['pixverse5.5', 'veo3.1_fast', 'veo3.1']))",message="type must match the aiVisual model: image models (flux-schnell, seedream3.0, nanobanana, nanobanana-pro) need type image, video models (pixverse5.5, veo3.1_fast, veo3.1) need type video",fieldPath=".type"
// +kubebuilder:validation:XValidation:rule="!has(self.settings) || !has(self.settings.kenBurnsEffect) || !self.settings.kenBurnsEffect || !has(self.type) || self.type == 'image'",message="settings.kenBurnsEffect applies to images only, not to type video",fieldPath=".settings.kenBurnsEffect"
type Background struct {
	// visualUrl is the URL of an image or video; exclusive with color and aiVisual.
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	VisualURL *string `json:"visualUrl,omitempty"`

	// color is a solid colour, RGBA ("rgba(26, 115, 232, 1)") or hex ("#1a73e8"); exclusive
	// with visualUrl and aiVisual.
	// +optional
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:Pattern=`^(rgba\(\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(0|1|0?\.[0-9]+|1\.0+)\s*\)|#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8}))$`
	Color *string `json:"color,omitempty"`

	// aiVisual generates the background with an AI model (consumes AI credits); exclusive with
	// visualUrl and color. It needs type.
	// +optional
	AIVisual *AIVisual `json:"aiVisual,omitempty"`

	// colorOverlay tints the background. A scene with colorOverlay uses the v3 storyboard engine.
	// +optional
	ColorOverlay *ColorOverlay `json:"colorOverlay,omitempty"`

	// type of the visual, image or video; required with aiVisual, where it must match the model.
	// +optional
	Type *MediaType `json:"type,omitempty"`

	// searchFilter searches stock media for the background.
	// +optional
	SearchFilter *SearchFilter `json:"searchFilter,omitempty"`

	// clips are parts of a video background to play, in seconds.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=78643
	Clips []MediaClip `json:"clips,omitempty"`

	// settings for playback and motion.
	// +optional
	Settings *BackgroundSettings `json:"settings,omitempty"`
}

// BackgroundSettings control playback and motion of a background.
// +kubebuilder:validation:XValidation:rule="!(has(self.zoomAndPan) && self.zoomAndPan && has(self.kenBurnsEffect) && self.kenBurnsEffect)",message="zoomAndPan and kenBurnsEffect are mutually exclusive"
type BackgroundSettings struct {
	// mute silences a video background.
	// +optional
	Mute *bool `json:"mute,omitempty"`

	// loop repeats a video background for the length of the scene.
	// +optional
	Loop *bool `json:"loop,omitempty"`

	// zoomAndPan moves over the visual; exclusive with kenBurnsEffect.
	// +optional
	ZoomAndPan *bool `json:"zoomAndPan,omitempty"`

	// kenBurnsEffect slowly zooms an image; images only, exclusive with zoomAndPan.
	// +optional
	KenBurnsEffect *bool `json:"kenBurnsEffect,omitempty"`
}

// BackgroundBroll is a B-roll item: a background shown during brollClip of the scene. Its own
// colorOverlay wins over the scene's while it is on screen.
type BackgroundBroll struct {
	Background `json:",inline"`

	// brollClip is when the B-roll is on screen, in seconds.
	// +required
	BrollClip MediaClip `json:"brollClip"`
}

// MediaClip is a span of time in seconds. The interface document sets no order between start
// and end, so none is checked.
type MediaClip struct {
	// start of the span, in seconds.
	// +required
	// +kubebuilder:validation:Minimum=0
	Start float64 `json:"start"`

	// end of the span, in seconds.
	// +required
	// +kubebuilder:validation:Minimum=0
	End float64 `json:"end"`
}

// MediaType says whether a visual is an image or a video.
// +kubebuilder:validation:Enum=video;image
type MediaType string

// Media types.
const (
	MediaTypeVideo MediaType = "video"
	MediaTypeImage MediaType = "image"
)

// SearchFilter searches the stock libraries. If nothing matches, the element is skipped and the
// video still renders.
type SearchFilter struct {
	// category of stock media to search.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	Category *string `json:"category,omitempty"`

	// query is the search text, up to 3000 characters (2 to 3000 and required in an element).
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	Query *string `json:"query,omitempty"`

	// keywords are up to 10 search keywords of 2 to 100 characters.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MinLength=2
	// +kubebuilder:validation:items:MaxLength=100
	Keywords []string `json:"keywords,omitempty"`

	// libraries restricts the search to these stock libraries.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=2
	Libraries []StockLibrary `json:"libraries,omitempty"`
}

// StockLibrary is a stock media library.
// +kubebuilder:validation:Enum=stocklib_1;stocklib_2
type StockLibrary string

// ColorOverlay tints a visual. It works on auto-selected visuals, stock search, direct URLs, AI
// visuals, solid colours, B-roll items and video/image elements.
type ColorOverlay struct {
	// color of the tint: RGB, RGBA or hex. The alpha channel of an RGBA value is ignored; use
	// opacity.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:Pattern=`^(rgb\(\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*\)|rgba\(\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(0|1|0?\.[0-9]+|1\.0+)\s*\)|#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8}))$`
	Color string `json:"color"`

	// opacity of the tint, 0 to 1; the service's default is 0.4.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	Opacity *float64 `json:"opacity,omitempty"`
}

// AIVisual generates an image or a video clip with an AI model; it consumes AI credits (images per
// image, videos per second of output). If generation fails or credits run out, an element is
// skipped and the video still renders.
// +kubebuilder:validation:XValidation:rule="!has(self.mediaStyle) || !(self.model in ['pixverse5.5', 'veo3.1_fast', 'veo3.1'])",message="mediaStyle applies to image models only (flux-schnell, seedream3.0, nanobanana, nanobanana-pro)",fieldPath=".mediaStyle"
// +kubebuilder:validation:XValidation:rule="!has(self.referenceImageUrl) || !(self.model in ['pixverse5.5', 'veo3.1_fast', 'veo3.1'])",message="referenceImageUrl applies to image models only; video models take firstFrameImageUrl or referenceImageUrls",fieldPath=".referenceImageUrl"
// +kubebuilder:validation:XValidation:rule="!has(self.firstFrameImageUrl) || self.model in ['pixverse5.5', 'veo3.1_fast', 'veo3.1']",message="firstFrameImageUrl applies to video models only (pixverse5.5, veo3.1_fast, veo3.1)",fieldPath=".firstFrameImageUrl"
// +kubebuilder:validation:XValidation:rule="!has(self.referenceImageUrls) || self.model in ['pixverse5.5', 'veo3.1_fast', 'veo3.1']",message="referenceImageUrls applies to video models only (pixverse5.5, veo3.1_fast, veo3.1); image models take referenceImageUrl",fieldPath=".referenceImageUrls"
// +kubebuilder:validation:XValidation:rule="!(has(self.firstFrameImageUrl) && has(self.referenceImageUrls))",message="firstFrameImageUrl and referenceImageUrls are mutually exclusive",fieldPath=".referenceImageUrls"
// +kubebuilder:validation:XValidation:rule="!has(self.videoDuration) || self.model in ['pixverse5.5', 'veo3.1_fast', 'veo3.1']",message="videoDuration applies to video models only; image models take none",fieldPath=".videoDuration"
// +kubebuilder:validation:XValidation:rule="!has(self.videoDuration) || self.model != 'pixverse5.5' || self.videoDuration in ['5s', '8s', '10s']",message="videoDuration for pixverse5.5 must be 5s, 8s or 10s",fieldPath=".videoDuration"
// +kubebuilder:validation:XValidation:rule="!has(self.videoDuration) || !(self.model in ['veo3.1', 'veo3.1_fast']) || self.videoDuration in ['4s', '6s', '8s']",message="videoDuration for veo3.1 and veo3.1_fast must be 4s, 6s or 8s",fieldPath=".videoDuration"
type AIVisual struct {
	// prompt describes the visual, up to 500 characters. When a story is split into several
	// scenes it is the creative direction for the generated per-scene prompts.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	Prompt *string `json:"prompt,omitempty"`

	// model generates the visual. Image models: flux-schnell, seedream3.0, nanobanana,
	// nanobanana-pro. Video models: pixverse5.5, veo3.1_fast, veo3.1.
	// +required
	Model AIVisualModel `json:"model"`

	// mediaStyle is the look of an image (image models only).
	// +optional
	MediaStyle *MediaStyle `json:"mediaStyle,omitempty"`

	// videoDuration is the clip length (video models only): 5s, 8s or 10s for pixverse5.5; 4s,
	// 6s or 8s for veo3.1 and veo3.1_fast, where reference images force 8s.
	// +optional
	VideoDuration *AIVideoDuration `json:"videoDuration,omitempty"`

	// visualContinuity uses each scene's output as the reference for the next, within a story
	// and across consecutive stories.
	// +optional
	VisualContinuity *bool `json:"visualContinuity,omitempty"`

	// firstFrameImageUrl is the image a video starts from (video models only); exclusive with
	// referenceImageUrls.
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	FirstFrameImageURL *string `json:"firstFrameImageUrl,omitempty"`

	// referenceImageUrl guides an image (image models only).
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	ReferenceImageURL *string `json:"referenceImageUrl,omitempty"`

	// referenceImageUrls are 1 or 2 images that guide a video (video models only); exclusive
	// with firstFrameImageUrl.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:MaxLength=3000
	// +kubebuilder:validation:items:Format=uri
	// +kubebuilder:validation:items:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	ReferenceImageURLs []string `json:"referenceImageUrls,omitempty"`
}

// AIVisualModel is an AI image or video model.
// +kubebuilder:validation:Enum="flux-schnell";"seedream3.0";"nanobanana";"nanobanana-pro";"pixverse5.5";"veo3.1_fast";"veo3.1"
type AIVisualModel string

// MediaStyle is the look of an AI image.
// +kubebuilder:validation:Enum=photorealistic;artistic;cartoon;minimalist;vintage;futuristic
type MediaStyle string

// AIVideoDuration is the length of an AI video clip; which values are valid depends on the model.
// +kubebuilder:validation:Enum="4s";"5s";"6s";"8s";"10s"
type AIVideoDuration string

// CorpusItem is a visual the service may choose from for the scene.
type CorpusItem struct {
	// visualUrl is the URL of the image.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	VisualURL string `json:"visualUrl"`

	// type of the visual; only image.
	// +optional
	Type *CorpusItemType `json:"type,omitempty"`

	// prefer asks the service to favour this visual.
	// +optional
	Prefer *bool `json:"prefer,omitempty"`
}

// CorpusItemType is the type of a backgroundCorpus item; only image.
// +kubebuilder:validation:Enum=image
type CorpusItemType string
