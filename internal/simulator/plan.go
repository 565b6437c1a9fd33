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

package simulator

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// This file turns a valid request into what the job will produce: the storyboard's scenes (with
// narration generated for a brief), the AI credits, whether library music is used, and the first
// unknown voice speaker, which fails the job.

type plannedScene struct {
	story   string
	seconds float64
}

type jobPlan struct {
	videoName     string
	scenes        []plannedScene
	brief         bool
	aiStoryboard  bool
	libraryMusic  bool
	aiVisuals     int
	aiCredits     float64
	badSpeaker    string
	premiumVoices []string
	saveProject   bool
	webhook       string
	webhookInput  json.RawMessage
	renderParams  map[string]any
	// take numbers the brief narrations this server wrote: each job's AI writes anew.
	take int64
	// documents are Options.Documents: the texts at blogUrl and pptUrl addresses.
	documents map[string]string
}

func (p *jobPlan) videoSeconds() float64 {
	total := 0.0
	for _, sc := range p.scenes {
		total += sc.seconds
	}
	return total
}

// narration returns the text of every scene, one per line: the transcript file's content and, in
// brief mode, the generated narration ("AI storyboard rules" 3).
func (p *jobPlan) narration() string {
	lines := make([]string, len(p.scenes))
	for i, sc := range p.scenes {
		lines[i] = sc.story
	}
	return strings.Join(lines, "\n")
}

var (
	sentenceRe = regexp.MustCompile(`[^.!?]+[.!?]*`)
	// premiumVoiceRe is the documented rule for a premium-provider voice id: 20 letters and
	// digits, with at least one digit (the shape of the common providers' ids).
	premiumVoiceRe = regexp.MustCompile(`^[A-Za-z0-9]{20}$`)
)

// IsPremiumVoiceID reports whether a speaker is taken as a premium-provider voice id, which the
// service adds to the voice library on first use ("VoiceOver"): exactly 20 ASCII letters and
// digits including at least one digit, for example "21m00Tcm4TlvDq8ikWAM".
func IsPremiumVoiceID(speaker string) bool {
	return premiumVoiceRe.MatchString(speaker) && strings.ContainsAny(speaker, "0123456789")
}

func (s *Server) planFromRequest(req map[string]any) *jobPlan {
	p := &jobPlan{take: s.briefTakes.Add(1), documents: s.opts.Documents}
	p.videoName, _ = req["videoName"].(string)
	p.saveProject, _ = req["saveProject"].(bool)
	p.webhook, _ = req["webhook"].(string)
	if wi, ok := req["webhookInput"]; ok && wi != nil {
		p.webhookInput, _ = json.Marshal(wi)
	}
	if as, ok := req["aiStoryboard"].(map[string]any); ok {
		p.aiStoryboard, _ = as["enabled"].(bool)
	}
	if bm, ok := req["backgroundMusic"].(map[string]any); ok {
		// Library music: enabled, without the caller's own musicUrl, and autoMusic not turned
		// off (the library is then the only source of music).
		enabled, _ := bm["enabled"].(bool)
		auto, autoSet := bm["autoMusic"].(bool)
		p.libraryMusic = enabled && !has(bm, "musicUrl") && (auto || !autoSet)
	}
	s.checkSpeakers(p, req)
	scenes, _ := req["scenes"].([]any)
	for _, x := range scenes {
		sc, _ := x.(map[string]any)
		s.checkSpeakers(p, sc)
		p.countAIVisuals(sc)
		p.scenes = append(p.scenes, p.expandScene(sc)...)
	}
	if len(p.scenes) == 0 { // a template fills the storyboard
		for i := 1; i <= 3; i++ {
			p.scenes = append(p.scenes, plannedScene{story: fmt.Sprintf("Template scene %d.", i), seconds: 5})
		}
	}
	p.renderParams = renderParams(req, p)
	return p
}

// checkSpeakers records premium voices and the first unknown speaker of a voiceOver in m.
func (s *Server) checkSpeakers(p *jobPlan, m map[string]any) {
	vo, _ := m["voiceOver"].(map[string]any)
	voices, _ := vo["aiVoices"].([]any)
	for _, x := range voices {
		av, _ := x.(map[string]any)
		sp, _ := av["speaker"].(string)
		switch {
		case s.voices[strings.ToLower(sp)]:
		case IsPremiumVoiceID(sp):
			p.premiumVoices = append(p.premiumVoices, sp)
		case p.badSpeaker == "":
			p.badSpeaker = sp
		}
	}
}

// countAIVisuals adds the credits of every aiVisual of a scene: 2.5 per image; per second of
// video 1 (pixverse5.5), 2 (veo3.1_fast) or 4 (veo3.1). "aiCreditsUsed" is present only when
// there is at least one.
func (p *jobPlan) countAIVisuals(sc map[string]any) {
	var visuals []map[string]any
	if bg, ok := sc["background"].(map[string]any); ok {
		visuals = append(visuals, bg)
	}
	for _, key := range []string{"backgroundBrolls", "elements"} {
		items, _ := sc[key].([]any)
		for _, x := range items {
			if m, ok := x.(map[string]any); ok {
				visuals = append(visuals, m)
			}
		}
	}
	for _, v := range visuals {
		ai, ok := v["aiVisual"].(map[string]any)
		if !ok {
			continue
		}
		p.aiVisuals++
		model, _ := ai["model"].(string)
		rate := map[string]float64{"pixverse5.5": 1, "veo3.1_fast": 2, "veo3.1": 4}[model]
		if rate == 0 {
			p.aiCredits += 2.5
			continue
		}
		secs := 8.0
		if model == "pixverse5.5" {
			secs = 5
		}
		if d, ok := ai["videoDuration"].(string); ok {
			if n, err := strconv.ParseFloat(strings.TrimSuffix(d, "s"), 64); err == nil {
				secs = n
			}
		}
		p.aiCredits += rate * secs
	}
}

// expandScene gives the storyboard scenes one request scene becomes.
func (p *jobPlan) expandScene(sc map[string]any) []plannedScene {
	var texts []string
	switch {
	case has(sc, "story"):
		story, _ := sc["story"].(string)
		onSentence, _ := sc["createSceneOnEndOfSentence"].(bool)
		onLine, _ := sc["createSceneOnNewLine"].(bool)
		switch {
		case p.aiStoryboard || onSentence: // "AI storyboard rules" 2: one scene per sentence
			texts = sentences(story)
		case onLine:
			texts = nonEmptyLines(story)
		default:
			texts = []string{strings.TrimSpace(story)}
		}
	case has(sc, "brief") || has(sc, "storyCoPilot"):
		p.brief = true
		b, _ := sc["brief"].(map[string]any)
		if b == nil {
			b, _ = sc["storyCoPilot"].(map[string]any)
		}
		texts = generateNarration(b, p.take)
	case has(sc, "blogUrl"):
		u, _ := sc["blogUrl"].(string)
		if doc, ok := p.documents[u]; ok {
			texts = nonEmptyLines(doc)
			break
		}
		for i := 1; i <= 3; i++ {
			texts = append(texts, fmt.Sprintf("Key point %d of the article at %s.", i, u))
		}
	case has(sc, "pptUrl"):
		u, _ := sc["pptUrl"].(string)
		if doc, ok := p.documents[u]; ok {
			texts = nonEmptyLines(doc)
			break
		}
		for i := 1; i <= 5; i++ {
			texts = append(texts, fmt.Sprintf("Slide %d of the deck at %s.", i, u))
		}
	case has(sc, "audioUrl") || has(sc, "videoUrl"):
		tr, _ := sc["transcript"].([]any)
		for _, x := range tr {
			sent, _ := x.(map[string]any)
			words, _ := sent["words"].([]any)
			var ws []string
			for _, y := range words {
				w, _ := y.(map[string]any)
				if t, ok := w["word"].(string); ok {
					ws = append(ws, t)
				}
			}
			texts = append(texts, strings.Join(ws, " "))
		}
	}
	if len(texts) == 0 {
		texts = []string{""}
	}
	pause := 0.0
	if n, ok := sc["endPauseDuration"].(json.Number); ok {
		pause, _ = n.Float64()
	}
	out := make([]plannedScene, len(texts))
	for i, t := range texts {
		// About 2.5 spoken words per second, at least 3 seconds a scene.
		out[i] = plannedScene{story: t, seconds: math.Max(3, float64(len(strings.Fields(t)))/2.5) + pause}
	}
	return out
}

func sentences(s string) []string {
	var out []string
	for _, m := range sentenceRe.FindAllString(s, -1) {
		if t := strings.TrimSpace(m); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// generateNarration is the simulator's stand-in for the AI writer of brief mode: one sentence per
// ten seconds of the requested duration (default 30), between 2 and 6, derived from the prompt so
// that tests can recognise it. Like a real AI writer it writes differently each time ("AI
// storyboard rules" 3: a render writes the narration again): take, a number drawn per job, is in
// the first sentence, so a test tells a reused narration from a regenerated one.
func generateNarration(b map[string]any, take int64) []string {
	prompt, _ := b["prompt"].(string)
	goal, _ := b["videoGoal"].(string)
	if goal == "" {
		goal, _ = b["videoType"].(string)
	}
	if goal == "" {
		goal = "Explainer"
	}
	duration := 30.0
	if n, ok := b["duration"].(json.Number); ok {
		duration, _ = n.Float64()
	}
	count := int(math.Min(6, math.Max(2, math.Round(duration/10))))
	topic := strings.Join(strings.Fields(prompt), " ")
	if r := []rune(topic); len(r) > 80 {
		topic = string(r[:80])
	}
	out := []string{fmt.Sprintf("Take %d of this %s video is about %s.", take, strings.ToLower(goal), topic)}
	for i := 2; i <= count; i++ {
		out = append(out, fmt.Sprintf("Point %d of %d explains why %s matters.", i-1, count-1, topic))
	}
	return out
}

var ratioSizes = map[string][2]int{"16:9": {1920, 1080}, "9:16": {1080, 1920}, "1:1": {1080, 1080}, "4:5": {1080, 1350}}

// renderParams are the preview's render parameters (their shape is not in the document: these
// are the simulator's choice, echoing the settings the render will use).
func renderParams(req map[string]any, p *jobPlan) map[string]any {
	ratio, _ := req["aspectRatio"].(string)
	if ratio == "" {
		ratio = "16:9"
	}
	size := ratioSizes[ratio]
	width, height := any(size[0]), any(size[1])
	if w, ok := req["videoWidth"].(json.Number); ok {
		width, height = w, req["videoHeight"]
	}
	lang, _ := req["language"].(string)
	if lang == "" {
		lang = "en"
	}
	version := "classic"
	if v, _ := req["storyboardVersion"].(string); v == "v3" {
		version = "v3"
	}
	mode := "classic"
	switch {
	case p.aiStoryboard && p.brief:
		mode = "brief"
	case p.aiStoryboard:
		mode = "script"
	}
	music := "none"
	if bm, ok := req["backgroundMusic"].(map[string]any); ok {
		if en, _ := bm["enabled"].(bool); en {
			music = "custom"
			if p.libraryMusic {
				music = "library"
			}
		}
	}
	params := map[string]any{
		"videoName":         p.videoName,
		"aspectRatio":       ratio,
		"videoWidth":        width,
		"videoHeight":       height,
		"language":          lang,
		"storyboardVersion": version,
		"aiStoryboardMode":  mode,
		"backgroundMusic":   music,
		"sceneCount":        len(p.scenes),
	}
	for _, k := range []string{"brandId", "brandName", "templateId"} {
		if v, ok := req[k].(string); ok {
			params[k] = v
		}
	}
	return params
}
