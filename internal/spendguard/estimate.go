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
}

// EstimateRequest estimates a storyboard render; nil is a project render.
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
