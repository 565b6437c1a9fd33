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

// Position places a logo, an avatar or subtitles on a 3 by 3 grid.
// +kubebuilder:validation:Enum=top-left;top-center;top-right;center-left;center-center;center-right;bottom-left;bottom-center;bottom-right
type Position string

// ElementPosition places a scene element; besides the Position values it accepts center.
// +kubebuilder:validation:Enum=top-left;top-center;top-right;center-left;center;center-center;center-right;bottom-left;bottom-center;bottom-right
type ElementPosition string

// TextStyle is the part of a text style that needs no cross-field check; SubtitleStyle adds the
// animations.
type TextStyle struct {
	// fontUrl is the URL of a font file; it needs fontFamily.
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	FontURL *string `json:"fontUrl,omitempty"`

	// fontFamily names the font; required when fontUrl is given.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	FontFamily *string `json:"fontFamily,omitempty"`

	// fontSize in points, at least 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	FontSize *int32 `json:"fontSize,omitempty"`

	// color of the text, an RGBA colour such as "rgba(255, 255, 255, 1)".
	// +optional
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:Pattern=`^rgba\(\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(0|1|0?\.[0-9]+|1\.0+)\s*\)$`
	Color *string `json:"color,omitempty"`

	// backgroundColor behind the text.
	// +optional
	// +kubebuilder:validation:MaxLength=50
	BackgroundColor *string `json:"backgroundColor,omitempty"`

	// shadowColor of the text shadow.
	// +optional
	// +kubebuilder:validation:MaxLength=50
	ShadowColor *string `json:"shadowColor,omitempty"`

	// shadowWidth of the text shadow.
	// +optional
	// +kubebuilder:validation:MaxLength=50
	ShadowWidth *string `json:"shadowWidth,omitempty"`

	// keywordColor highlights keywords (see highlightKeywords on a scene).
	// +optional
	// +kubebuilder:validation:MaxLength=50
	KeywordColor *string `json:"keywordColor,omitempty"`

	// paragraphWidth is the width of the text block.
	// +optional
	// +kubebuilder:validation:MaxLength=50
	ParagraphWidth *string `json:"paragraphWidth,omitempty"`

	// position of the text on the canvas.
	// +optional
	Position *Position `json:"position,omitempty"`

	// alignment of the text: left, center or right.
	// +optional
	Alignment *TextAlignment `json:"alignment,omitempty"`

	// decorations are any of bold, underline, italics and linethrough.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=4
	Decorations []TextDecoration `json:"decorations,omitempty"`

	// case changes the letters: uppercase, lowercase, capitalize, smallcapitalize.
	// +optional
	Case *TextCase `json:"case,omitempty"`
}

// SubtitleStyle is an inline text style, for the video, a scene, a text element, or a template
// subtitle or layer. In template subtitles and layers (500, and 500 x 500, per scene) its rules
// are checked by the controller before it submits (internal/requestrules).
// +kubebuilder:validation:XValidation:rule="!has(self.fontUrl) || has(self.fontFamily)",message="fontFamily is required when fontUrl is given",fieldPath=".fontFamily"
// +kubebuilder:validation:XValidation:rule="!has(self.animations) || size(self.animations) < 2 || self.animations[0].type != self.animations[1].type",message="animations holds at most one entry and one exit animation",fieldPath=".animations"
type SubtitleStyle struct {
	TextStyle `json:",inline"`

	// animations are at most two: one entry and one exit animation.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	Animations []TextAnimation `json:"animations,omitempty"`
}

// TextAlignment aligns text.
// +kubebuilder:validation:Enum=left;center;right
type TextAlignment string

// TextDecoration decorates text.
// +kubebuilder:validation:Enum=bold;underline;italics;linethrough
type TextDecoration string

// TextCase changes the letters of text.
// +kubebuilder:validation:Enum=uppercase;lowercase;capitalize;smallcapitalize
type TextCase string

// TextAnimation animates text in (entry) or out (exit).
// +kubebuilder:validation:XValidation:rule="self.speed != 'custom' || has(self.customSpeedValue)",message="customSpeedValue is required when speed is custom",fieldPath=".customSpeedValue"
// +kubebuilder:validation:XValidation:rule="!has(self.futureWords) || (self.type == 'entry' && self.name in ['fade', 'blur'])",message="futureWords applies only to fade and blur entry animations",fieldPath=".futureWords"
type TextAnimation struct {
	// name of the animation.
	// +required
	Name TextAnimationName `json:"name"`

	// type says when the animation plays: entry or exit.
	// +required
	Type AnimationType `json:"type"`

	// speed of the animation; custom needs customSpeedValue.
	// +required
	Speed AnimationSpeed `json:"speed"`

	// customSpeedValue is the speed when speed is custom, at least 0.5.
	// +optional
	// +kubebuilder:validation:Minimum=0.5
	CustomSpeedValue *float64 `json:"customSpeedValue,omitempty"`

	// direction the text moves in.
	// +optional
	Direction *AnimationDirection `json:"direction,omitempty"`

	// writingStyle is the unit the animation reveals: character, word, line or paragraph.
	// +optional
	WritingStyle *WritingStyle `json:"writingStyle,omitempty"`

	// futureWords is how words not yet spoken look: hidden, subtle or prominent. Only for fade
	// and blur entry animations.
	// +optional
	FutureWords *FutureWords `json:"futureWords,omitempty"`
}

// TextAnimationName names a text animation.
// +kubebuilder:validation:Enum=none;fade;drift;wipe;"text reveal";elastic;typewriter;blur;bulletin
type TextAnimationName string

// AnimationType says when a text animation plays.
// +kubebuilder:validation:Enum=entry;exit
type AnimationType string

// AnimationSpeed is the speed of a text animation.
// +kubebuilder:validation:Enum=slow;medium;fast;custom
type AnimationSpeed string

// AnimationDirection is the direction text moves in.
// +kubebuilder:validation:Enum=up;down;left;right
type AnimationDirection string

// WritingStyle is the unit a text animation reveals.
// +kubebuilder:validation:Enum=character;word;line;paragraph
type WritingStyle string

// FutureWords is how words not yet spoken look.
// +kubebuilder:validation:Enum=hidden;subtle;prominent
type FutureWords string

// Logo is an image placed on every scene.
type Logo struct {
	// url of the logo image.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	URL string `json:"url"`

	// position of the logo.
	// +optional
	Position *Position `json:"position,omitempty"`

	// width of the logo as a percentage string, for example "10%".
	// +optional
	// +kubebuilder:validation:MaxLength=10
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[1-9]?[0-9](\.[0-9]+)?)%?$`
	Width *string `json:"width,omitempty"`
}

// AvatarAppearance is how an avatar looks, at video level or overridden per scene.
type AvatarAppearance struct {
	// position of the avatar.
	// +optional
	Position *Position `json:"position,omitempty"`

	// width of the avatar as an integer percentage, "0%" to "100%"; the service's default is 20%.
	// +optional
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:Pattern=`^(100|[1-9]?[0-9])%?$`
	Width *string `json:"width,omitempty"`

	// borderRadius shapes the avatar: "0" square, "50" rounded, "100" circular.
	// +optional
	BorderRadius *AvatarBorderRadius `json:"borderRadius,omitempty"`

	// borderColor is an RGBA colour such as "rgba(0, 0, 0, 1)".
	// +optional
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:Pattern=`^rgba\(\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(0|1|0?\.[0-9]+|1\.0+)\s*\)$`
	BorderColor *string `json:"borderColor,omitempty"`

	// borderThickness of the border, at least 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	BorderThickness *float64 `json:"borderThickness,omitempty"`

	// backgroundColor behind the avatar, RGBA.
	// +optional
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:Pattern=`^rgba\(\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\s*,\s*(0|1|0?\.[0-9]+|1\.0+)\s*\)$`
	BackgroundColor *string `json:"backgroundColor,omitempty"`

	// hide hides the avatar (default false).
	// +optional
	Hide *bool `json:"hide,omitempty"`
}

// AvatarBorderRadius shapes an avatar.
// +kubebuilder:validation:Enum="0";"50";"100"
type AvatarBorderRadius string

// Avatar is an AI presenter shown over the video. It requires voiceOver with enabled: true.
type Avatar struct {
	// avatarId is account-scoped: take it from the account's avatar list (GET /v1/avatars), never
	// from an example. It cannot be changed per scene.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=500
	AvatarID string `json:"avatarId"`

	AvatarAppearance `json:",inline"`
}

// SceneAvatar overrides the avatar's appearance for one scene. The avatar itself (avatarId) is
// set once for the video.
// +kubebuilder:validation:XValidation:rule="!(has(self.position) && (has(self.top) || has(self.left)))",message="top and left cannot be combined with position"
// +kubebuilder:validation:XValidation:rule="!has(self.avatarId)",message="avatarId cannot be changed at scene level: set it once in avatar.avatarId of the request",fieldPath=".avatarId"
type SceneAvatar struct {
	AvatarAppearance `json:",inline"`

	// avatarId cannot be changed at scene level; the field exists so that a scene setting it is
	// refused with a message instead of being dropped.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	AvatarID *string `json:"avatarId,omitempty"`

	// top offset of the avatar as an integer percentage string; exclusive with position.
	// +optional
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:Pattern=`^(100|[1-9]?[0-9])%?$`
	Top *string `json:"top,omitempty"`

	// left offset of the avatar as an integer percentage string; exclusive with position.
	// +optional
	// +kubebuilder:validation:MaxLength=4
	// +kubebuilder:validation:Pattern=`^(100|[1-9]?[0-9])%?$`
	Left *string `json:"left,omitempty"`
}
