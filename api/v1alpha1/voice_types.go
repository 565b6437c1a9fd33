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

// VoiceOver is the narration of the video, or of one scene when set on a scene. It uses either AI
// voices or a recorded external voice, never both.
// +kubebuilder:validation:XValidation:rule="!(has(self.aiVoices) && has(self.externalVoice))",message="aiVoices and externalVoice are mutually exclusive"
type VoiceOver struct {
	// enabled turns the voice-over on or off.
	// +required
	Enabled bool `json:"enabled"`

	// aiVoices are up to 10 AI voices; exclusive with externalVoice.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	AIVoices []AIVoice `json:"aiVoices,omitempty"`

	// externalVoice is a recorded voice track; exclusive with aiVoices.
	// +optional
	ExternalVoice *ExternalVoice `json:"externalVoice,omitempty"`
}

// AIVoice is one synthetic voice.
type AIVoice struct {
	// speaker is a voice name, or a premium-provider voice id, which the service adds to the
	// voice library on first use. The controller cannot check it: an unknown speaker fails the
	// job (TEXT_TO_VIDEO_FAILED).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=500
	Speaker string `json:"speaker"`

	// speed in percent of normal speed, 50 to 200; the service's default is 100.
	// +optional
	// +kubebuilder:validation:Minimum=50
	// +kubebuilder:validation:Maximum=200
	Speed *float64 `json:"speed,omitempty"`

	// amplificationLevel changes the loudness, -1 to 1; the service's default is 0.
	// +optional
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=1
	AmplificationLevel *float64 `json:"amplificationLevel,omitempty"`

	// premiumVoiceSettings tune a premium-provider voice.
	// +optional
	PremiumVoiceSettings *PremiumVoiceSettings `json:"premiumVoiceSettings,omitempty"`
}

// PremiumVoiceSettings tune a premium-provider voice. The percentages are strings, as the service
// takes them.
type PremiumVoiceSettings struct {
	// modelId is the premium voice model.
	// +optional
	ModelID *PremiumVoiceModel `json:"modelId,omitempty"`

	// stability as a percentage string, for example "50".
	// +optional
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[1-9]?[0-9](\.[0-9]+)?)%?$`
	Stability *string `json:"stability,omitempty"`

	// similarityBoost as a percentage string, for example "75".
	// +optional
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[1-9]?[0-9](\.[0-9]+)?)%?$`
	SimilarityBoost *string `json:"similarityBoost,omitempty"`

	// style as a percentage string, for example "0".
	// +optional
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^(100(\.0+)?|[1-9]?[0-9](\.[0-9]+)?)%?$`
	Style *string `json:"style,omitempty"`

	// useSpeakerBoost boosts the similarity to the original speaker.
	// +optional
	UseSpeakerBoost *bool `json:"useSpeakerBoost,omitempty"`
}

// PremiumVoiceModel is a premium-provider voice model.
// +kubebuilder:validation:Enum=premium_v3;premium_multilingual_v2;premium_flash_v2_5;premium_turbo_v2_5;premium_turbo_v2;premium_flash_v2;premium_multilingual_v1;premium_monolingual_v1
type PremiumVoiceModel string

// ExternalVoice is a recorded voice track used as the narration.
type ExternalVoice struct {
	// voiceUrl is the URL of the recording.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	VoiceURL string `json:"voiceUrl"`

	// syncVoice synchronises the recording with the subtitles automatically.
	// +optional
	SyncVoice *bool `json:"syncVoice,omitempty"`

	// amplificationLevel changes the loudness, -1 to 1; the service's default is 0.
	// +optional
	// +kubebuilder:validation:Minimum=-1
	// +kubebuilder:validation:Maximum=1
	AmplificationLevel *float64 `json:"amplificationLevel,omitempty"`
}

// BackgroundMusic is the music of the video: chosen by the service (autoMusic) or the caller's own
// track (musicUrl). A track from the service's licensed library yields a platform clearance code.
// +kubebuilder:validation:XValidation:rule="!(has(self.autoMusic) && self.autoMusic && has(self.musicUrl))",message="autoMusic and musicUrl are mutually exclusive"
type BackgroundMusic struct {
	// enabled turns the background music on or off.
	// +required
	Enabled bool `json:"enabled"`

	// autoMusic lets the service pick a track from its library; exclusive with musicUrl.
	// +optional
	AutoMusic *bool `json:"autoMusic,omitempty"`

	// musicUrl is the URL of your own track; exclusive with autoMusic.
	// +optional
	// +kubebuilder:validation:MaxLength=3000
	// +kubebuilder:validation:Format=uri
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+([/?#]\S*)?$`
	MusicURL *string `json:"musicUrl,omitempty"`

	// volume of the music, 0 to 1; the service's default is 0.5.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	Volume *float64 `json:"volume,omitempty"`

	// clips are up to 10 parts of the track to play, in seconds.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	Clips []MediaClip `json:"clips,omitempty"`
}

// SceneBackgroundMusic turns the video's background music on or off for one scene.
type SceneBackgroundMusic struct {
	// enabled plays (true) or mutes (false) the background music during this scene.
	// +required
	Enabled bool `json:"enabled"`
}
