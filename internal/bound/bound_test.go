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

package bound

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// japanese is a story of n characters without a space, as Japanese and Chinese are written.
func japanese(n int) string {
	return string([]rune(strings.Repeat("東京の朝は静かです。", n/10+1))[:n])
}

// Issue 37, case 1: "the bound still rests on the estimate where the estimate calls a render
// bounded". A reservation is the most the request allows; what the request cannot bound runs
// alone under a seconds limit.
func TestTheReservationIsTheMostTheRequestAllows(t *testing.T) {
	story := func(s string) videov1alpha1.Scene { return videov1alpha1.Scene{Story: ptr.To(s)} }
	voice := func(speed float64) *videov1alpha1.VoiceOver {
		return &videov1alpha1.VoiceOver{Enabled: true, AIVoices: []videov1alpha1.AIVoice{{Speaker: "Aria", Speed: ptr.To(speed)}}}
	}
	for _, tt := range []struct {
		name string
		req  *videov1alpha1.StoryboardRequest
		// atLeast is a length the service may render for this request: the reservation of a
		// bounded render must not be below it.
		atLeast int64
		// unbounded: no field of the request bounds the video's length.
		unbounded bool
	}{
		{"3,000 Japanese characters without a space (language ja)", &videov1alpha1.StoryboardRequest{
			Language: ptr.To(videov1alpha1.Language("ja")), Scenes: []videov1alpha1.Scene{story(japanese(3000))}}, 450, false},
		{"Chinese narration is counted by character", &videov1alpha1.StoryboardRequest{
			Scenes: []videov1alpha1.Scene{story(strings.Repeat("我们今天讨论预算", 125))}}, 200, false},
		{"an English story of 100 words at normal speed", &videov1alpha1.StoryboardRequest{
			Scenes: []videov1alpha1.Scene{story(strings.TrimSpace(strings.Repeat("budget ", 100)))}}, 40, false},
		{"the slowest voice the request allows reads it (speed 50 doubles it)", &videov1alpha1.StoryboardRequest{
			VoiceOver: voice(50), Scenes: []videov1alpha1.Scene{story(strings.TrimSpace(strings.Repeat("budget ", 100)))}}, 80, false},
		{"a scene's own voice slower than the request's", &videov1alpha1.StoryboardRequest{
			VoiceOver: voice(150), Scenes: []videov1alpha1.Scene{{Story: ptr.To(strings.TrimSpace(strings.Repeat("budget ", 100))), VoiceOver: voice(60)}}}, 66, false},
		{"SSML pauses count for their time, not as a word", &videov1alpha1.StoryboardRequest{
			Scenes: []videov1alpha1.Scene{{Story: ptr.To(`<speak>Welcome. <break time="10s"/> Again. <break time="1500ms"/> Bye.</speak>`), IsSSMLStory: ptr.To(true)}}}, 12, false},
		{"numbers are read as words", &videov1alpha1.StoryboardRequest{
			Scenes: []videov1alpha1.Scene{story("1234567 8901234 5678901")}}, 6, false},
		{"a minimumDuration and an endPauseDuration", &videov1alpha1.StoryboardRequest{
			Scenes: []videov1alpha1.Scene{{Story: ptr.To("Hi."), MinimumDuration: ptr.To(20.0), EndPauseDuration: ptr.To(5.0)}}}, 25, false},
		{"a brief with its duration", &videov1alpha1.StoryboardRequest{
			Scenes: []videov1alpha1.Scene{{Brief: &videov1alpha1.Brief{Prompt: "x", Duration: ptr.To[int32](120)}}}}, 120, false},
		{"an external voice: 1 h of audio over a one-word subtitle", &videov1alpha1.StoryboardRequest{
			VoiceOver: &videov1alpha1.VoiceOver{Enabled: true, ExternalVoice: &videov1alpha1.ExternalVoice{VoiceURL: "https://a/long.mp3"}},
			Scenes:    []videov1alpha1.Scene{story("Welcome.")}}, 0, true},
		{"a scene's external voice", &videov1alpha1.StoryboardRequest{
			Scenes: []videov1alpha1.Scene{{Story: ptr.To("Welcome."), VoiceOver: &videov1alpha1.VoiceOver{Enabled: true,
				ExternalVoice: &videov1alpha1.ExternalVoice{VoiceURL: "https://a/long.mp3"}}}}}, 0, true},
		{"an SSML story that changes the speaking rate", &videov1alpha1.StoryboardRequest{
			Scenes: []videov1alpha1.Scene{{Story: ptr.To(`<speak><prosody rate="x-slow">Slow words.</prosody></speak>`), IsSSMLStory: ptr.To(true)}}}, 0, true},
		{"an audio scene: its media, not its transcript, sets the length", &videov1alpha1.StoryboardRequest{
			Scenes: []videov1alpha1.Scene{{AudioURL: ptr.To("https://a/x.mp3"),
				Transcript: []videov1alpha1.TranscriptSentence{{Words: []videov1alpha1.TranscriptWord{{EndTime: 4}}}}}}}, 0, true},
		{"a video scene", &videov1alpha1.StoryboardRequest{
			Scenes: []videov1alpha1.Scene{{VideoURL: ptr.To("https://a/x.mp4"),
				Transcript: []videov1alpha1.TranscriptSentence{{Words: []videov1alpha1.TranscriptWord{{EndTime: 4}}}}}}}, 0, true},
		{"a blog post", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{{BlogURL: ptr.To("https://b/x")}}}, 0, true},
		{"a deck", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{{PPTURL: ptr.To("https://d/x.pptx")}}}, 0, true},
		{"a brief without duration", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{{Brief: &videov1alpha1.Brief{Prompt: "x"}}}}, 0, true},
		{"a template (no scenes)", &videov1alpha1.StoryboardRequest{VideoName: "t"}, 0, true},
		{"a project", nil, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := For(tt.req)
			if e.Unbounded != tt.unbounded {
				t.Fatalf("unbounded = %v, want %v (%+v)", e.Unbounded, tt.unbounded, e)
			}
			if !tt.unbounded && e.Seconds < tt.atLeast {
				t.Errorf("reserved %d s, below the %d s the service may render for it", e.Seconds, tt.atLeast)
			}
			if e.Seconds < 1 {
				t.Errorf("reserved %d s: at least 1", e.Seconds)
			}
		})
	}
}

func TestForTypicalRequests(t *testing.T) {
	veo := videov1alpha1.SlideAnimationModel("veo3.1")
	pix := videov1alpha1.SlideAnimationModel("pixverse6")
	for _, tt := range []struct {
		name string
		req  *videov1alpha1.StoryboardRequest
		want Estimate
	}{
		{"a project render: the default, and it may consume credits", nil, Estimate{Seconds: DefaultSceneSeconds, Credits: true, Unbounded: true}},
		{"a template without scenes: the default", &videov1alpha1.StoryboardRequest{VideoName: "t"}, Estimate{Seconds: DefaultSceneSeconds, Unbounded: true}},
		{"a story: its letters, each word at least 0.4 s, rounded up", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{
			{Story: ptr.To("one two three four five six seven")}}}, Estimate{Seconds: 3}},
		{"a story with minimumDuration and endPauseDuration", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{
			{Story: ptr.To("short"), MinimumDuration: ptr.To(10.0), EndPauseDuration: ptr.To(2.5)}}}, Estimate{Seconds: 13}},
		{"a brief with its duration", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{
			{Brief: &videov1alpha1.Brief{Duration: ptr.To[int32](90)}}}}, Estimate{Seconds: 90}},
		{"a transcript: its last word's end, a guess", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{
			{Transcript: []videov1alpha1.TranscriptSentence{{Words: []videov1alpha1.TranscriptWord{{EndTime: 41.2}}}}}}}, Estimate{Seconds: 42, Unbounded: true}},
		{"a deck: the default per scene", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{
			{PPTURL: ptr.To("https://x/deck.pptx")}, {PPTURL: ptr.To("https://x/deck2.pptx"),
				PPTSlideAnimation: &videov1alpha1.PPTSlideAnimation{Enabled: ptr.To(true), Model: &pix}}}}, Estimate{Seconds: 60, Unbounded: true}},
		{"slides animated with veo: credits no answer reports", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{
			{PPTURL: ptr.To("https://x/deck.pptx"), PPTSlideAnimation: &videov1alpha1.PPTSlideAnimation{Enabled: ptr.To(true), Model: &veo}}}},
			Estimate{Seconds: DefaultSceneSeconds, Credits: true, Unreported: true, Unbounded: true}},
		{"an aiVisual background may consume credits", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{
			{Story: ptr.To("word"), Background: &videov1alpha1.Background{AIVisual: &videov1alpha1.AIVisual{Model: "flux-schnell"}}}}},
			Estimate{Seconds: 1, Credits: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := For(tt.req); got != tt.want {
				t.Errorf("For = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// Issue 28, docs/architecture.md "The record travels with the object": "a render whose cost its
// request does not bound is never admitted beside another beyond a limit".
func TestUnboundedTellsWhichRequestsStateTheirLength(t *testing.T) {
	slow := videov1alpha1.VoiceOver{Enabled: true, AIVoices: []videov1alpha1.AIVoice{{Speaker: "Aria", Speed: ptr.To(60.0)}}}
	for _, tt := range []struct {
		name string
		req  *videov1alpha1.StoryboardRequest
		want bool
	}{
		{"a project", nil, true},
		{"a template (no scenes)", &videov1alpha1.StoryboardRequest{VideoName: "t"}, true},
		{"a blog post, narrated word for word", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{{BlogURL: ptr.To("https://b/x")}}}, true},
		{"a deck", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{{PPTURL: ptr.To("https://d/x.pptx")}}}, true},
		{"a brief without duration", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{{Brief: &videov1alpha1.Brief{}}}}, true},
		// Issue 37: the bound reads a story at the slowest speed its voices allow, so a slowed voice
		// no longer makes it a guess.
		{"a story read by a slowed voice", &videov1alpha1.StoryboardRequest{VoiceOver: &slow, Scenes: []videov1alpha1.Scene{{Story: ptr.To("a b c")}}}, false},
		{"a scene's slowed voice", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{{Story: ptr.To("a b c"), VoiceOver: &slow}}}, false},
		{"a story at normal speed", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{{Story: ptr.To("a b c")}}}, false},
		{"a brief with duration", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{{Brief: &videov1alpha1.Brief{Duration: ptr.To[int32](60)}}}}, false},
		// Issue 37: the media sets the length, not the transcript.
		{"a transcript", &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{{AudioURL: ptr.To("https://a/x.mp3"),
			Transcript: []videov1alpha1.TranscriptSentence{{Words: []videov1alpha1.TranscriptWord{{EndTime: 4}}}}}}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := For(tt.req); got.Unbounded != tt.want {
				t.Errorf("For = %+v, want unbounded %v", got, tt.want)
			}
		})
	}
}

// When the service may split a story scene (createSceneOnEndOfSentence), each piece lasts at
// least minimumDuration: the bound is the sum over the pieces of max(narration, minimum). The code
// takes max(sum of narration, pieces × minimum), which is smaller as soon as one sentence is
// long and another short: a 40 s sentence and a one-word sentence with minimumDuration 5 last at
// least 45 s, reserved 42 s. Fix: bound each piece (split the story where sentences() counts).
func TestBreakASplitSceneBoundsEachPieceByItsMinimum(t *testing.T) {
	long := strings.TrimSpace(strings.Repeat("word ", 100))
	story := long + ". Bye."
	req := &videov1alpha1.StoryboardRequest{Scenes: []videov1alpha1.Scene{{Story: ptr.To(story),
		CreateSceneOnEndOfSentence: ptr.To(true), MinimumDuration: ptr.To(5.0)}}}
	atLeast := max(narrationSeconds(long+"."), 5) + max(narrationSeconds("Bye."), 5)
	if e := For(req); float64(e.Seconds) < atLeast {
		t.Fatalf("reserved %d s for a 40 s sentence and a short one, each at least 5 s: at least %.1f s", e.Seconds, atLeast)
	}
}
