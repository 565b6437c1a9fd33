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

// Scene is one part of the video, built from exactly one content source: story, brief (or its
// former name storyCoPilot), blogUrl, pptUrl, audioUrl or videoUrl. A scene that only carries a
// templateOverride (for example to delete a template scene) may have none.
// +kubebuilder:validation:XValidation:rule="[has(self.story), has(self.brief), has(self.storyCoPilot), has(self.blogUrl), has(self.pptUrl), has(self.audioUrl), has(self.videoUrl)].exists_one(x, x) || (has(self.templateOverride) && !has(self.story) && !has(self.brief) && !has(self.storyCoPilot) && !has(self.blogUrl) && !has(self.pptUrl) && !has(self.audioUrl) && !has(self.videoUrl))",message="a scene takes exactly one content source: story, brief (or storyCoPilot), blogUrl, pptUrl, audioUrl or videoUrl (only a scene with templateOverride may have none)"
// +kubebuilder:validation:XValidation:rule="!(has(self.brief) && has(self.storyCoPilot))",message="brief and storyCoPilot are mutually exclusive: storyCoPilot is the former name of brief",fieldPath=".storyCoPilot"
// +kubebuilder:validation:XValidation:rule="!(has(self.audioUrl) || has(self.videoUrl)) || has(self.audioLanguage)",message="audioLanguage is required with audioUrl or videoUrl",fieldPath=".audioLanguage"
// +kubebuilder:validation:XValidation:rule="!(has(self.audioUrl) || has(self.videoUrl)) || has(self.transcript)",message="transcript is required with audioUrl or videoUrl",fieldPath=".transcript"
// +kubebuilder:validation:XValidation:rule="!has(self.useSpeakerNotes) || has(self.pptUrl)",message="useSpeakerNotes is only valid with pptUrl",fieldPath=".useSpeakerNotes"
// +kubebuilder:validation:XValidation:rule="!has(self.pptSlideAnimation) || has(self.pptUrl)",message="pptSlideAnimation is only valid with pptUrl",fieldPath=".pptSlideAnimation"
// +kubebuilder:validation:XValidation:rule="!has(self.isSSMLStory) || has(self.story)",message="isSSMLStory is only valid with story",fieldPath=".isSSMLStory"
// +kubebuilder:validation:XValidation:rule="!has(self.caption) || has(self.story)",message="caption requires story",fieldPath=".caption"
// +kubebuilder:validation:XValidation:rule="!has(self.captionLanguage) || has(self.caption)",message="captionLanguage is only valid with caption",fieldPath=".captionLanguage"
// +kubebuilder:validation:XValidation:rule="!has(self.mediaRepurposeSettings) || has(self.audioUrl) || has(self.videoUrl)",message="mediaRepurposeSettings is only valid with audioUrl or videoUrl",fieldPath=".mediaRepurposeSettings"
// +kubebuilder:validation:XValidation:rule="!(has(self.subtitleStyleId) && has(self.subtitleStyleName))",message="subtitleStyleId and subtitleStyleName are mutually exclusive",fieldPath=".subtitleStyleName"
type Scene struct {
	// story is the text narrated in the scene, up to 15000 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=15000
	Story *string `json:"story,omitempty"`

	// brief asks the AI to write the narration from a prompt (brief mode). With aiStoryboard
	// enabled the AI designs the storyboard too, and the brief scene must be the only scene.
	// +optional
	Brief *Brief `json:"brief,omitempty"`

	// storyCoPilot is the former name of brief, still accepted; use brief. Not both at once.
	// +optional
	StoryCoPilot *Brief `json:"storyCoPilot,omitempty"`

	// blogUrl is a web page whose text becomes the story.
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	BlogURL *string `json:"blogUrl,omitempty"`

	// pptUrl is a presentation file; each slide becomes a scene.
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	PPTURL *string `json:"pptUrl,omitempty"`

	// audioUrl is an audio file; it needs audioLanguage and transcript.
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	AudioURL *string `json:"audioUrl,omitempty"`

	// videoUrl is a video file; it needs audioLanguage and transcript.
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	VideoURL *string `json:"videoUrl,omitempty"`

	// createSceneOnNewLine starts a new scene at each line break of the story (default false).
	// +optional
	CreateSceneOnNewLine *bool `json:"createSceneOnNewLine,omitempty"`

	// createSceneOnEndOfSentence starts a new scene at each sentence (default false).
	// +optional
	CreateSceneOnEndOfSentence *bool `json:"createSceneOnEndOfSentence,omitempty"`

	// maxSubtitleLines (1 to 4) turns on word-by-word captions synchronised to the voice-over.
	// Not usable with smart layouts.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4
	MaxSubtitleLines *int32 `json:"maxSubtitleLines,omitempty"`

	// highlightKeywords colours the keywords of the subtitles.
	// +optional
	HighlightKeywords *bool `json:"highlightKeywords,omitempty"`

	// hideSubtitles hides the subtitles of the scene.
	// +optional
	HideSubtitles *bool `json:"hideSubtitles,omitempty"`

	// minimumDuration of the scene in seconds.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinimumDuration *float64 `json:"minimumDuration,omitempty"`

	// endPauseDuration is a pause at the end of the scene, in seconds.
	// +optional
	// +kubebuilder:validation:Minimum=0
	EndPauseDuration *float64 `json:"endPauseDuration,omitempty"`

	// sceneTransition into the next scene.
	// +optional
	SceneTransition *SceneTransition `json:"sceneTransition,omitempty"`

	// audioLanguage is the spoken language of audioUrl or videoUrl; required with them.
	// +optional
	AudioLanguage *AudioLanguage `json:"audioLanguage,omitempty"`

	// useSpeakerNotes narrates the slides' speaker notes (pptUrl only).
	// +optional
	UseSpeakerNotes *bool `json:"useSpeakerNotes,omitempty"`

	// pptSlideAnimation animates slides with an AI video model (pptUrl only).
	// +optional
	PPTSlideAnimation *PPTSlideAnimation `json:"pptSlideAnimation,omitempty"`

	// animatePPT is the former slide animation switch. The service still accepts it but ignores
	// it (the deck renders without animation): use pptSlideAnimation.
	// +optional
	AnimatePPT *bool `json:"animatePPT,omitempty"`

	// isSSMLStory says the story is SSML markup (story only; default false).
	// +optional
	IsSSMLStory *bool `json:"isSSMLStory,omitempty"`

	// caption is on-screen text shown instead of the story, up to 3000 characters; it requires
	// story.
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	Caption *string `json:"caption,omitempty"`

	// captionLanguage is the language of caption (only with caption).
	// +optional
	CaptionLanguage *Language `json:"captionLanguage,omitempty"`

	// subtitleStyleId applies a saved text style to the scene; exclusive with subtitleStyleName.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	SubtitleStyleID *string `json:"subtitleStyleId,omitempty"`

	// subtitleStyleName applies a saved text style by name; exclusive with subtitleStyleId.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	SubtitleStyleName *string `json:"subtitleStyleName,omitempty"`

	// subtitleStyle is an inline subtitle style for the scene.
	// +optional
	SubtitleStyle *SubtitleStyle `json:"subtitleStyle,omitempty"`

	// voiceOver overrides the video's voice-over for this scene.
	// +optional
	VoiceOver *VoiceOver `json:"voiceOver,omitempty"`

	// backgroundMusic turns the video's music on or off for this scene.
	// +optional
	BackgroundMusic *SceneBackgroundMusic `json:"backgroundMusic,omitempty"`

	// avatar overrides the avatar's appearance for this scene.
	// +optional
	Avatar *SceneAvatar `json:"avatar,omitempty"`

	// background of the scene.
	// +optional
	Background *Background `json:"background,omitempty"`

	// backgroundBrolls are B-roll visuals, each on screen during its brollClip. Their number is
	// limited only by the object's size (see the README); their rules are checked by the
	// controller before it submits.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32099
	BackgroundBrolls []BackgroundBroll `json:"backgroundBrolls,omitempty"`

	// backgroundCorpus are up to 100 images the service may choose backgrounds from.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	BackgroundCorpus []CorpusItem `json:"backgroundCorpus,omitempty"`

	// transcript of audioUrl or videoUrl, sentence by sentence; required with them. Its length is
	// limited only by the object's size (see the README).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=29676
	Transcript []TranscriptSentence `json:"transcript,omitempty"`

	// mediaRepurposeSettings cut highlights, filler words and silences (audioUrl/videoUrl only).
	// +optional
	MediaRepurposeSettings *MediaRepurposeSettings `json:"mediaRepurposeSettings,omitempty"`

	// templateOverride changes a scene of the template (only with templateId).
	// +optional
	TemplateOverride *TemplateOverride `json:"templateOverride,omitempty"`

	// elements are up to 20 overlays (shapes, text, images, videos) on top of the background.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	Elements []SceneElement `json:"elements,omitempty"`
}

// Brief asks the AI to write the narration (brief mode). It was called storyCoPilot, and its
// videoGoal was called videoType; the former names are still accepted.
// +kubebuilder:validation:XValidation:rule="!(has(self.videoGoal) && has(self.videoType))",message="videoGoal and videoType are mutually exclusive: videoType is the former name of videoGoal",fieldPath=".videoType"
type Brief struct {
	// prompt describes the video to write, 1 to 5000 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=5000
	Prompt string `json:"prompt"`

	// videoGoal is the kind of video; the service's default is Explainer.
	// +optional
	VideoGoal *VideoGoal `json:"videoGoal,omitempty"`

	// videoType is the former name of videoGoal, still accepted; use videoGoal. Not both.
	// +optional
	VideoType *VideoGoal `json:"videoType,omitempty"`

	// duration of the video in seconds, 1 to 600.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600
	Duration *int32 `json:"duration,omitempty"`

	// platform the video is made for.
	// +optional
	Platform *Platform `json:"platform,omitempty"`

	// tone of the narration.
	// +optional
	Tone *Tone `json:"tone,omitempty"`
}

// VideoGoal is the kind of video a brief asks for.
// +kubebuilder:validation:Enum=Explainer;Marketing;"Internal Communication";Tutorial;Product
type VideoGoal string

// Platform is where a briefed video will be published.
// +kubebuilder:validation:Enum=YouTube;TikTok;Instagram;Facebook;LinkedIn;Twitter
type Platform string

// Tone is the tone of a briefed narration.
// +kubebuilder:validation:Enum=professional;casual;friendly;informative;persuasive;exciting;educational;humorous;serious;conversational
type Tone string

// SceneTransition is the transition into the next scene.
// +kubebuilder:validation:Enum=none;wipeup;wipedown;wipeleft;wiperight;smoothleft;smoothright;radial;circlecrop;hblur;fade
type SceneTransition string

// AudioLanguage is the spoken language of an audio or video source.
// +kubebuilder:validation:Enum=en-US;en-AU;en-GB;en-IN;en-IE;en-AB;en-WL;fr-CA;fr-FR;de-CH;de-DE;it-IT;es-ES;es-US;nl-NL;pt-BR;ja-JP;ko-KR;ru-RU;hi-IN;ta-IN;mr-IN
type AudioLanguage string

// TranscriptSentence is one sentence of a transcript.
type TranscriptSentence struct {
	// words of the sentence, at least 1.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=38362
	Words []TranscriptWord `json:"words"`

	// speakerId identifies the speaker of the sentence.
	// +optional
	// +kubebuilder:validation:Minimum=0
	SpeakerID *int32 `json:"speakerId,omitempty"`
}

// TranscriptWord is one word of a transcript, with its timing in the media. Its rule is checked
// by the controller before it submits, not at admission (internal/requestrules).
// +kubebuilder:validation:XValidation:rule="self.end_time >= self.start_time",messageExpression="'end_time must not be before start_time (' + string(self.start_time) + ')'",fieldPath=".end_time"
type TranscriptWord struct {
	// word as spoken.
	// +required
	// +kubebuilder:validation:MaxLength=200
	Word string `json:"word"`

	// start_time of the word in seconds, at least 0.
	// +required
	// +kubebuilder:validation:Minimum=0
	StartTime float64 `json:"start_time"`

	// end_time of the word in seconds, not before start_time.
	// +required
	// +kubebuilder:validation:Minimum=0
	EndTime float64 `json:"end_time"`

	// is_pause marks a pause rather than a word.
	// +optional
	IsPause *bool `json:"is_pause,omitempty"`

	// is_filler marks a filler word (such as "um"), which removeFillerWords cuts.
	// +optional
	IsFiller *bool `json:"is_filler,omitempty"`

	// speakerId identifies the speaker of the word.
	// +optional
	// +kubebuilder:validation:Minimum=0
	SpeakerID *int32 `json:"speakerId,omitempty"`
}

// MediaRepurposeSettings cut an audio or video source into a shorter video.
type MediaRepurposeSettings struct {
	// highlightLength is the length of the highlight to cut, 5 to 180 seconds.
	// +optional
	// +kubebuilder:validation:Minimum=5
	// +kubebuilder:validation:Maximum=180
	HighlightLength *float64 `json:"highlightLength,omitempty"`

	// removeFillerWords cuts filler words (see is_filler in the transcript).
	// +optional
	RemoveFillerWords *bool `json:"removeFillerWords,omitempty"`

	// removeSilences cuts silences longer than silenceThresholdSeconds.
	// +optional
	RemoveSilences *bool `json:"removeSilences,omitempty"`

	// silenceThresholdSeconds is the shortest silence that is cut, 0 to 10 seconds.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	SilenceThresholdSeconds *float64 `json:"silenceThresholdSeconds,omitempty"`
}

// PPTSlideAnimation animates a deck's slides with an AI video model; clips are capped at 10
// seconds.
type PPTSlideAnimation struct {
	// enabled turns slide animation on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// model animates the slides: pixverse6 (the service's default, no AI credits), veo3.1_fast
	// or veo3.1 (both consume AI credits).
	// +optional
	Model *SlideAnimationModel `json:"model,omitempty"`

	// slides are the positions (from 1) of the slides to animate; omitted or empty means every
	// eligible slide.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=786432
	// +kubebuilder:validation:items:Minimum=1
	Slides []int32 `json:"slides,omitempty"`
}

// SlideAnimationModel is the AI video model that animates slides.
// +kubebuilder:validation:Enum=pixverse6;"veo3.1_fast";"veo3.1"
type SlideAnimationModel string

// SceneElement is an overlay on top of the scene's background: a shape, a text, a video or an
// image. Fields that do not apply to the element's type are rejected. A media element that finds
// nothing, fails to generate or runs out of AI credits is skipped; the video still renders.
// +kubebuilder:validation:XValidation:rule="!(has(self.position) && (has(self.top) || has(self.left)))",message="top and left cannot be combined with position"
// +kubebuilder:validation:XValidation:rule="self.type != 'shape' || has(self.name)",message="name is required for a shape element",fieldPath=".name"
// +kubebuilder:validation:XValidation:rule="self.type != 'text' || has(self.text)",message="text is required for a text element",fieldPath=".text"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['video', 'image']) || [has(self.visualUrl), has(self.searchFilter), has(self.aiVisual)].exists_one(x, x)",message="a video or image element takes exactly one of visualUrl, searchFilter or aiVisual"
// +kubebuilder:validation:XValidation:rule="!has(self.searchFilter) || (has(self.searchFilter.query) && size(self.searchFilter.query) >= 2)",message="an element's searchFilter needs a query of 2 to 3000 characters",fieldPath=".searchFilter"
// +kubebuilder:validation:XValidation:rule="!has(self.borderRadius) || (has(self.name) && self.name == 'rectangle')",message="borderRadius applies to rectangle shapes only",fieldPath=".borderRadius"
// +kubebuilder:validation:XValidation:rule="self.type == 'shape' || !(has(self.name) || has(self.fill) || has(self.stroke) || has(self.strokeWidth) || has(self.borderRadius))",message="name, fill, stroke, strokeWidth and borderRadius apply only to shape elements"
// +kubebuilder:validation:XValidation:rule="self.type == 'text' || !(has(self.text) || has(self.textVariant) || has(self.style))",message="text, textVariant and style apply only to text elements"
// +kubebuilder:validation:XValidation:rule="self.type in ['video', 'image'] || !(has(self.visualUrl) || has(self.searchFilter) || has(self.aiVisual) || has(self.colorOverlay))",message="visualUrl, searchFilter, aiVisual and colorOverlay apply only to video and image elements"
// +kubebuilder:validation:XValidation:rule="self.type == 'video' || !has(self.settings)",message="settings apply only to video elements",fieldPath=".settings"
// +kubebuilder:validation:XValidation:rule="!has(self.aiVisual) || ((self.type == 'video') == (self.aiVisual.model in ['pixverse5.5', 'veo3.1_fast', 'veo3.1']))",message="aiVisual.model must match the element type: image elements need an image model (flux-schnell, seedream3.0, nanobanana, nanobanana-pro), video elements a video model (pixverse5.5, veo3.1_fast, veo3.1)",fieldPath=".aiVisual.model"
type SceneElement struct {
	// type of the element: shape, text, video or image.
	// +required
	Type ElementType `json:"type"`

	// name of the shape (shape only, required there): rectangle, circle, line or a library shape.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	Name *string `json:"name,omitempty"`

	// fill colour of the shape.
	// +optional
	// +kubebuilder:validation:MaxLength=50
	Fill *string `json:"fill,omitempty"`

	// stroke colour of the shape.
	// +optional
	// +kubebuilder:validation:MaxLength=50
	Stroke *string `json:"stroke,omitempty"`

	// strokeWidth of the shape in pixels.
	// +optional
	// +kubebuilder:validation:Minimum=0
	StrokeWidth *float64 `json:"strokeWidth,omitempty"`

	// borderRadius of a rectangle shape.
	// +optional
	// +kubebuilder:validation:Minimum=0
	BorderRadius *float64 `json:"borderRadius,omitempty"`

	// text to show (text only, required there), up to 2000 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=2000
	Text *string `json:"text,omitempty"`

	// textVariant is heading, subheading or body (the service's default).
	// +optional
	TextVariant *TextVariant `json:"textVariant,omitempty"`

	// style overrides the text style (text only).
	// +optional
	Style *SubtitleStyle `json:"style,omitempty"`

	// visualUrl of the image or video (media only); exclusive with searchFilter and aiVisual.
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	VisualURL *string `json:"visualUrl,omitempty"`

	// searchFilter picks stock media (media only); its query is required, 2 to 3000 characters.
	// If nothing matches the element is skipped.
	// +optional
	SearchFilter *SearchFilter `json:"searchFilter,omitempty"`

	// aiVisual generates the media (media only; consumes AI credits). Its model must match type.
	// +optional
	AIVisual *AIVisual `json:"aiVisual,omitempty"`

	// settings of a video element.
	// +optional
	Settings *ElementSettings `json:"settings,omitempty"`

	// colorOverlay tints a video or image element.
	// +optional
	ColorOverlay *ColorOverlay `json:"colorOverlay,omitempty"`

	// position of the element; exclusive with top and left.
	// +optional
	Position *ElementPosition `json:"position,omitempty"`

	// top offset as a percentage string; exclusive with position.
	// +optional
	// +kubebuilder:validation:MaxLength=10
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[1-9]?[0-9](\.[0-9]+)?)%?$`
	Top *string `json:"top,omitempty"`

	// left offset as a percentage string; exclusive with position.
	// +optional
	// +kubebuilder:validation:MaxLength=10
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[1-9]?[0-9](\.[0-9]+)?)%?$`
	Left *string `json:"left,omitempty"`

	// width as a percentage of the canvas. A media element without width is sized to stay fully
	// on screen.
	// +optional
	// +kubebuilder:validation:MaxLength=10
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[1-9]?[0-9](\.[0-9]+)?)%?$`
	Width *string `json:"width,omitempty"`
}

// ElementType is the kind of a scene element.
// +kubebuilder:validation:Enum=shape;text;video;image
type ElementType string

// TextVariant is the role of a text element.
// +kubebuilder:validation:Enum=heading;subheading;body
type TextVariant string

// ElementSettings control the playback of a video element.
type ElementSettings struct {
	// loop repeats the video (the service's default is true).
	// +optional
	Loop *bool `json:"loop,omitempty"`

	// mute silences the video (the service's default is true).
	// +optional
	Mute *bool `json:"mute,omitempty"`
}
