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

// Package bound is the most a render's request allows it to cost, derived from the request alone and
// the interface document's limits: what the spend guard reserves before a paid submission, and
// what a render's status records with it (docs/spend-guard.md, "The bound").
package bound

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// A render reserves the most its request allows, never a typical length: the length is known only
// at the render's end. The rates are our own, slower than normal speech (docs/spend-guard.md, "The
// bound"). An unbounded request's Seconds is a guess: such renders run one at a time under
// maxRenderSeconds (internal/spendguard), so a burst goes at most one render beyond, whatever the guess.

// DefaultSceneSeconds is the guess for a scene whose length the request does not tell.
const DefaultSceneSeconds = 30

// The bound's rates, in seconds at voice speed 100.
const (
	secondsPerIdeograph = 0.3
	secondsPerHangul    = 0.2
	secondsPerKana      = 0.15
	secondsPerLetter    = 0.1
	secondsPerDigit     = 1.5
	secondsPerSymbol    = 1.0
	secondsPerPause     = 0.5
	minSecondsPerWord   = 0.4
	// The AI voice's speed default and minimum (interface document, VoiceOver and Limits).
	normalSpeed  = 100.0
	slowestSpeed = 50.0
)

// Estimate is what a render reserves before it is paid.
type Estimate struct {
	// Seconds is the most the video may last, or a guess when Unbounded; at least 1.
	Seconds int64
	// Credits: the request may consume AI credits (an aiVisual, an AI avatar, veo slide
	// animation, or content the operator does not see: a project, a templateId, a payloadUrl).
	Credits bool
	// Unreported: credits the job answer does not report (aiCreditsUsed covers aiVisual only).
	Unreported bool
	// Unbounded: no field of the request bounds the video's length.
	Unbounded bool
}

// Record is the estimate as a render's status keeps it.
func (e Estimate) Record() *videov1alpha1.BudgetEstimate {
	return &videov1alpha1.BudgetEstimate{Seconds: e.Seconds, AICredits: e.Credits, Unbounded: e.Unbounded, UnreportedCredits: e.Unreported}
}

// Of is the estimate a render's status recorded.
func Of(r *videov1alpha1.BudgetEstimate) Estimate {
	return Estimate{Seconds: r.Seconds, Credits: r.AICredits, Unbounded: r.Unbounded, Unreported: r.UnreportedCredits}
}

// For is what a storyboard render reserves; nil is a project render.
func For(req *videov1alpha1.StoryboardRequest) Estimate {
	if req == nil {
		return Estimate{Seconds: DefaultSceneSeconds, Credits: true, Unbounded: true}
	}
	var e Estimate
	total := 0.0
	for i := range req.Scenes {
		sc := &req.Scenes[i]
		secs, bounded := sceneBound(req, sc)
		total += secs
		e.Unbounded = e.Unbounded || !bounded
		if a := sc.PPTSlideAnimation; a != nil && a.Enabled != nil && *a.Enabled && a.Model != nil &&
			strings.HasPrefix(string(*a.Model), "veo") {
			e.Unreported = true
		}
	}
	if len(req.Scenes) == 0 {
		total, e.Unbounded = DefaultSceneSeconds, true
	}
	if externalVoice(req.VoiceOver) || req.TemplateID != nil || req.PayloadURL != nil {
		// A recording of any length, a template's or project's own scenes, fetched content.
		e.Unbounded = true
	}
	if req.Avatar != nil {
		e.Unreported = true
	}
	e.Seconds = max(1, int64(math.Ceil(min(total, math.MaxInt32))))
	e.Credits = e.Unreported || usesAIVisual(req) || req.PayloadURL != nil || req.TemplateID != nil
	return e
}

// Preview is what a preview reserves: no seconds (it is counted, not timed), and whether
// an aiVisual may consume credits, so that it waits once maxAICredits is reached.
func Preview(req *videov1alpha1.StoryboardRequest) Estimate {
	return Estimate{Credits: req != nil && usesAIVisual(req)}
}

// sceneBound is the most one scene lasts, and whether the request bounds it at all.
func sceneBound(req *videov1alpha1.StoryboardRequest, sc *videov1alpha1.Scene) (float64, bool) {
	s, bounded, pieces := 0.0, true, 1.0
	switch {
	case sc.Story != nil:
		ssml := sc.IsSSMLStory != nil && *sc.IsSSMLStory
		s = narrationSeconds(*sc.Story) * normalSpeed / slowestVoice(req.VoiceOver, sc.VoiceOver)
		if ssml {
			var pauses float64
			pauses, bounded = ssmlPauses(*sc.Story)
			s += pauses
		}
		if splits(req, sc) {
			pieces = float64(sentences(*sc.Story))
		}
	case sc.Brief != nil && sc.Brief.Duration != nil:
		s = float64(*sc.Brief.Duration)
		bounded = !aiScenes(req, sc)
	case sc.StoryCoPilot != nil && sc.StoryCoPilot.Duration != nil:
		s = float64(*sc.StoryCoPilot.Duration)
		bounded = !aiScenes(req, sc)
	case len(sc.Transcript) > 0:
		// A guess: the media may run past its transcript's last word.
		for _, sen := range sc.Transcript {
			for _, w := range sen.Words {
				s = max(s, w.EndTime)
			}
		}
		bounded = false
	default:
		s, bounded = DefaultSceneSeconds, false
	}
	if externalVoice(sc.VoiceOver) {
		bounded = false
	}
	if sc.MinimumDuration != nil {
		if pieces > 1 {
			// Each piece lasts at least the minimum: at most its narration plus the minimum.
			s += *sc.MinimumDuration * pieces
		} else {
			s = max(s, *sc.MinimumDuration)
		}
	}
	if sc.EndPauseDuration != nil {
		s += *sc.EndPauseDuration * pieces
	}
	return s, bounded
}

// narrationSeconds bounds reading text at normal speed, by character, each word at least
// minSecondsPerWord: Chinese and Japanese have no spaces between words.
func narrationSeconds(text string) float64 {
	total := 0.0
	for _, word := range strings.Fields(text) {
		w := 0.0
		for _, r := range word {
			w += runeSeconds(r)
		}
		total += max(w, minSecondsPerWord)
	}
	return total
}

// abugidas are read at the kana's rate: each letter and vowel sign is a syllable or more.
var abugidas = []*unicode.RangeTable{unicode.Devanagari, unicode.Bengali, unicode.Gurmukhi, unicode.Gujarati, unicode.Oriya,
	unicode.Tamil, unicode.Telugu, unicode.Kannada, unicode.Malayalam, unicode.Sinhala, unicode.Thai, unicode.Lao,
	unicode.Khmer, unicode.Myanmar, unicode.Tibetan}

func runeSeconds(r rune) float64 {
	switch {
	case unicode.Is(unicode.Han, r):
		return secondsPerIdeograph
	case unicode.Is(unicode.Hangul, r):
		return secondsPerHangul
	case unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.In(r, abugidas...):
		return secondsPerKana
	case unicode.IsLetter(r):
		return secondsPerLetter
	case unicode.IsMark(r):
		// A vowel sign of an abugida (Devanagari, Tamil, Thai) is a sound of its own.
		return secondsPerLetter
	case unicode.IsNumber(r):
		// A digit is read as words: "1234567" is "one million two hundred thirty-four thousand...".
		return secondsPerDigit
	case unicode.IsSymbol(r):
		return secondsPerSymbol
	case unicode.IsPunct(r):
		return secondsPerPause
	}
	return 0 // spaces and controls take no time of their own
}

// slowestVoice is the slowest speed of the AI voices that may read a scene; unset is normalSpeed.
func slowestVoice(vos ...*videov1alpha1.VoiceOver) float64 {
	slowest := normalSpeed
	for _, vo := range vos {
		if vo == nil {
			continue
		}
		for _, v := range vo.AIVoices {
			speed := normalSpeed
			if v.Speed != nil {
				speed = *v.Speed
			}
			slowest = min(slowest, max(speed, slowestSpeed))
		}
	}
	return slowest
}

// externalVoice reports a recorded voice track: the video lasts as long as the recording.
func externalVoice(vo *videov1alpha1.VoiceOver) bool {
	return vo != nil && vo.ExternalVoice != nil
}

// ssmlUnbounded is markup whose time the text does not tell: a speaking rate, audio played.
var (
	ssmlBreak     = regexp.MustCompile(`(?i)<break[^>]*\btime\s*=\s*["']\s*([0-9]*\.?[0-9]+)\s*(ms|s)\s*["']`)
	ssmlUnbounded = regexp.MustCompile(`(?i)<(prosody[^>]*\brate\b|audio\b)`)
)

// ssmlPauses is the time of an SSML story's timed breaks; false when its length is unknown.
func ssmlPauses(story string) (float64, bool) {
	if ssmlUnbounded.MatchString(story) {
		return 0, false
	}
	total := 0.0
	for _, m := range ssmlBreak.FindAllStringSubmatch(story, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, false
		}
		if strings.EqualFold(m[2], "ms") {
			v /= 1000
		}
		total += v
	}
	return total, true
}

// splits reports whether a story scene may become several, each with its own minimum and end pause.
func splits(req *videov1alpha1.StoryboardRequest, sc *videov1alpha1.Scene) bool {
	return (sc.CreateSceneOnNewLine != nil && *sc.CreateSceneOnNewLine) ||
		(sc.CreateSceneOnEndOfSentence != nil && *sc.CreateSceneOnEndOfSentence) ||
		(req.AIStoryboard != nil && req.AIStoryboard.Enabled)
}

// sentences counts the pieces a story may be split into: lines, and sentences ended by any
// script's Terminal_Punctuation (which counts commas and colons too: the safe side).
func sentences(story string) int {
	n := 1
	for _, r := range story {
		if r == '\n' || unicode.Is(unicode.Terminal_Punctuation, r) {
			n++
		}
	}
	return n
}

// aiScenes reports a brief whose AI-made scenes each get minimumDuration and endPauseDuration:
// their number is unknown, so the duration alone does not bound the video.
func aiScenes(req *videov1alpha1.StoryboardRequest, sc *videov1alpha1.Scene) bool {
	return req.AIStoryboard != nil && req.AIStoryboard.Enabled && (sc.MinimumDuration != nil || sc.EndPauseDuration != nil)
}

// usesAIVisual looks for an aiVisual in the request's JSON so that no nesting is missed.
func usesAIVisual(req *videov1alpha1.StoryboardRequest) bool {
	raw, err := json.Marshal(req)
	if err != nil {
		return true // the safe side: it may consume credits
	}
	return bytes.Contains(raw, []byte(`"aiVisual":`))
}

// Render is the estimate the render's submission recorded, or, for an older manager's job, one
// from its inline request, or the safe default (storyboardRef and project renders).
func Render(vr *videov1alpha1.VideoRender) Estimate {
	if r := vr.Status.BudgetEstimate; r != nil {
		return Of(r)
	}
	return For(vr.Spec.Storyboard)
}
