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
	"bytes"
	"encoding/json"
	"math"
	"strings"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The length of a video is known only when its render completes, so before paying a render
// reserves an estimate of it. The interface document gives no price and no length model; this
// is our own, written down in docs/spend-guard.md:
//   - a story scene: its narration at 150 words a minute (0.4 s a word), at least its
//     minimumDuration, plus its endPauseDuration;
//   - a brief scene: its duration (1-600 s) when given;
//   - an audio or video scene: the end of its transcript's last word;
//   - any other scene (a deck, a blog, a brief without duration): DefaultSceneSeconds;
//   - a request without scenes (a template) or a project render: DefaultSceneSeconds.
// Every render is estimated at least one second.
//
// Where the request states no length (the DefaultSceneSeconds cases, and narration read by a
// slowed voice, slower than the 150 words a minute above), the estimate is a guess that can be
// short by any amount: a blog post is narrated word for word, whatever its length. Such a render
// is Unbounded, and under maxRenderSeconds no two of them run at once (limits.go), so a burst
// still goes at most one render beyond the limit whatever the guess.

// DefaultSceneSeconds is the estimate of a scene whose length the request does not tell.
const DefaultSceneSeconds = 30

// secondsPerWord is narration at 150 words a minute.
const secondsPerWord = 0.4

// Estimate is what a render is expected to cost before it is paid.
type Estimate struct {
	// Seconds is the estimated length of the video, at least 1.
	Seconds int64
	// Credits is set when the request may consume AI credits, whose amount only the job's end
	// tells: an aiVisual anywhere, slides animated with a veo model, or a project render (its
	// content is not known to the operator).
	Credits bool
	// Unreported is set when the request consumes AI credits that the job answer does not report
	// (aiCreditsUsed is promised only for aiVisual scenes): slides animated with a veo model.
	Unreported bool
	// Unbounded is set when no field of the request bounds the video's length, so Seconds is a
	// guess: a blogUrl or pptUrl scene, a brief without duration, an audio or video scene without
	// a transcript, a voice slower than normal speed, a template (no scenes) or a project.
	Unbounded bool
}

// Record is the estimate as a render's status keeps it.
func (e Estimate) Record() *videov1alpha1.BudgetEstimate {
	return &videov1alpha1.BudgetEstimate{Seconds: e.Seconds, AICredits: e.Credits, Unbounded: e.Unbounded, UnreportedCredits: e.Unreported}
}

// EstimateOf is the estimate a render's status recorded.
func EstimateOf(r *videov1alpha1.BudgetEstimate) Estimate {
	return Estimate{Seconds: r.Seconds, Credits: r.AICredits, Unbounded: r.Unbounded, Unreported: r.UnreportedCredits}
}

// EstimateRequest estimates a storyboard render's seconds and credits; nil is a project render.
// Whether the request bounds its length is Unbounded's answer; Estimate gives both.
func EstimateRequest(req *videov1alpha1.StoryboardRequest) Estimate {
	if req == nil {
		return Estimate{Seconds: DefaultSceneSeconds, Credits: true}
	}
	var e Estimate
	total := 0.0
	for i := range req.Scenes {
		total += sceneSeconds(&req.Scenes[i])
		if a := req.Scenes[i].PPTSlideAnimation; a != nil && a.Enabled != nil && *a.Enabled && a.Model != nil &&
			strings.HasPrefix(string(*a.Model), "veo") {
			e.Unreported = true
		}
	}
	if len(req.Scenes) == 0 {
		total = DefaultSceneSeconds
	}
	e.Seconds = max(1, int64(math.Ceil(min(total, math.MaxInt32))))
	e.Credits = e.Unreported || usesAIVisual(req)
	return e
}

// EstimateFor is the estimate a render reserves before it is paid: EstimateRequest's seconds and
// credits, and whether its length is Unbounded. nil is a project render.
func EstimateFor(req *videov1alpha1.StoryboardRequest) Estimate {
	e := EstimateRequest(req)
	e.Unbounded = Unbounded(req)
	return e
}

// Unbounded reports whether no field of the request bounds the video's length: a project (nil),
// a template (no scenes), a scene whose length the estimate guesses (DefaultSceneSeconds), or a
// voice slower than normal speed.
func Unbounded(req *videov1alpha1.StoryboardRequest) bool {
	if req == nil || len(req.Scenes) == 0 || slowed(req.VoiceOver) {
		return true
	}
	for i := range req.Scenes {
		if !sceneBounded(&req.Scenes[i]) || slowed(req.Scenes[i].VoiceOver) {
			return true
		}
	}
	return false
}

// slowed reports a voice slower than normal speed (100): its narration takes longer than the
// 150 words a minute the estimate assumes, by a factor the interface document does not give.
func slowed(vo *videov1alpha1.VoiceOver) bool {
	if vo == nil {
		return false
	}
	for _, v := range vo.AIVoices {
		if v.Speed != nil && *v.Speed < 100 {
			return true
		}
	}
	return false
}

// sceneBounded reports whether a field of the scene states its length: its narration, a brief's
// duration or a transcript (sceneSeconds' cases other than the default).
func sceneBounded(sc *videov1alpha1.Scene) bool {
	return sc.Story != nil || (sc.Brief != nil && sc.Brief.Duration != nil) ||
		(sc.StoryCoPilot != nil && sc.StoryCoPilot.Duration != nil) || len(sc.Transcript) > 0
}

// sceneSeconds estimates one scene.
func sceneSeconds(sc *videov1alpha1.Scene) float64 {
	s := 0.0
	switch {
	case sc.Story != nil:
		s = float64(len(strings.Fields(*sc.Story))) * secondsPerWord
	case sc.Brief != nil && sc.Brief.Duration != nil:
		s = float64(*sc.Brief.Duration)
	case sc.StoryCoPilot != nil && sc.StoryCoPilot.Duration != nil:
		s = float64(*sc.StoryCoPilot.Duration)
	case len(sc.Transcript) > 0:
		for _, sen := range sc.Transcript {
			for _, w := range sen.Words {
				s = max(s, w.EndTime)
			}
		}
	default:
		s = DefaultSceneSeconds
	}
	if sc.MinimumDuration != nil {
		s = max(s, *sc.MinimumDuration)
	}
	if sc.EndPauseDuration != nil {
		s += *sc.EndPauseDuration
	}
	return s
}

// usesAIVisual reports an aiVisual anywhere in the request (backgrounds, B-rolls, elements,
// template overrides): looked for in its JSON, so that no nesting is missed.
func usesAIVisual(req *videov1alpha1.StoryboardRequest) bool {
	raw, err := json.Marshal(req)
	if err != nil {
		return true // the safe side: it may consume credits
	}
	return bytes.Contains(raw, []byte(`"aiVisual":`))
}
