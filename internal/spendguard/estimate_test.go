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

package spendguard

import (
	"fmt"
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
			e := EstimateFor(tt.req)
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

// Issue 37, case 1, against the real Guard: twenty Japanese renders the service renders 450 s
// long under maxRenderSeconds 600. Before the bound counted characters, each was estimated at 1 s
// and all twenty were admitted (9,000 s used). Admission goes through Guard as the controller
// calls it; each admitted render records its job in its own status, and each round its job ends,
// recorded there too: the next round's budget writes fold them (fold.go) before they decide.
func TestJapaneseRendersUnderASecondsLimitUseAtMostOneRenderBeyondIt(t *testing.T) {
	const limit, rendered = 600, 450
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](limit)})
	close(h.hold)
	req := &videov1alpha1.StoryboardRequest{Language: ptr.To(videov1alpha1.Language("ja")),
		Scenes: []videov1alpha1.Scene{{Story: ptr.To(japanese(3000))}}}
	est := EstimateFor(req)
	now := h.g.clock.Now()
	paid := map[int]bool{}
	for round := 0; round < 25 && len(paid) < 20; round++ {
		var running []*videov1alpha1.VideoRender
		for i := range 20 {
			if paid[i] {
				continue
			}
			r := batchRender(i)
			d, err := h.g.reserve(t.Context(), "VideoRender", r, "a", "", est, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d.Wait {
				continue
			}
			paid[i] = true
			recordInStatus(t, h.server, r, fmt.Sprintf("job-%d", i), now)
			running = append(running, r)
		}
		if len(running) == 0 {
			break
		}
		for _, r := range running {
			endInStatus(t, h.server, r, rendered, now)
		}
	}
	// The last ends ride with the namespace's next write.
	foldByGuardWrite(t, h.g)
	b := h.budget(t)
	used := b.Status.Used.RenderSeconds
	t.Logf("reserved %d s a render; %d renders paid, %d s used under maxRenderSeconds %d", est.Seconds, len(paid), used, limit)
	if used > limit+rendered {
		t.Fatalf("%d renders paid, %d s used under maxRenderSeconds %d: more than one render beyond the limit", len(paid), used, limit)
	}
	if len(paid) == 0 {
		t.Fatal("no render admitted under an empty budget")
	}
	if used != int64(len(paid))*rendered || len(b.Status.Reservations) != 0 {
		t.Fatalf("%d renders paid, %d s used, reservations %+v: every end folded once", len(paid), used, b.Status.Reservations)
	}
}
