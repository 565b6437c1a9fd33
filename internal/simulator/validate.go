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
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is the interface document's StoryboardRequest rules ("Resources and their fields",
// "Limits", and the "common causes of 400" of "Errors") implemented over generic JSON, on
// purpose independently of the operator's API types: the two implementations check each other.
// Unknown fields are ignored, as the document does not say the service rejects them.

// FieldError is one entry of a 400 answer's "fields".
type FieldError struct {
	Name   string `json:"name"`
	Errors string `json:"errors"`
}

var (
	videoNameChars = regexp.MustCompile(`^[A-Za-z0-9 _-]+$`)
	// percentRe is "a percentage string": 0 to 100, decimals allowed, the % sign optional.
	percentRe = regexp.MustCompile(`^(100(\.0+)?|[1-9]?[0-9](\.[0-9]+)?)%?$`)
	// intPercentRe is the avatar's "integer percentage 0-100%".
	intPercentRe = regexp.MustCompile(`^(100|[1-9]?[0-9])%?$`)
	// The colour formats the document names: RGB, RGBA (functional notation) and hex.
	rgbRe  = regexp.MustCompile(`^rgb\(\s*` + channel + `\s*,\s*` + channel + `\s*,\s*` + channel + `\s*\)$`)
	rgbaRe = regexp.MustCompile(`^rgba\(\s*` + channel + `\s*,\s*` + channel + `\s*,\s*` + channel + `\s*,\s*(0|1|0?\.[0-9]+|1\.0+)\s*\)$`)
	hexRe  = regexp.MustCompile(`^#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$`)

	aspectRatios    = []string{"1:1", "16:9", "9:16", "4:5"}
	languages       = []string{"zh", "nl", "en", "fr", "de", "hi", "it", "ja", "ko", "mr", "pt", "ru", "es", "ta"}
	positions       = []string{"top-left", "top-center", "top-right", "center-left", "center-center", "center-right", "bottom-left", "bottom-center", "bottom-right"}
	elementPos      = append([]string{"center"}, positions...)
	premiumModels   = []string{"premium_v3", "premium_multilingual_v2", "premium_flash_v2_5", "premium_turbo_v2_5", "premium_turbo_v2", "premium_flash_v2", "premium_multilingual_v1", "premium_monolingual_v1"}
	videoGoals      = []string{"Explainer", "Marketing", "Internal Communication", "Tutorial", "Product"}
	platforms       = []string{"YouTube", "TikTok", "Instagram", "Facebook", "LinkedIn", "Twitter"}
	tones           = []string{"professional", "casual", "friendly", "informative", "persuasive", "exciting", "educational", "humorous", "serious", "conversational"}
	transitions     = []string{"none", "wipeup", "wipedown", "wipeleft", "wiperight", "smoothleft", "smoothright", "radial", "circlecrop", "hblur", "fade"}
	audioLanguages  = []string{"en-US", "en-AU", "en-GB", "en-IN", "en-IE", "en-AB", "en-WL", "fr-CA", "fr-FR", "de-CH", "de-DE", "it-IT", "es-ES", "es-US", "nl-NL", "pt-BR", "ja-JP", "ko-KR", "ru-RU", "hi-IN", "ta-IN", "mr-IN"}
	slideModels     = []string{"pixverse6", "veo3.1_fast", "veo3.1"}
	imageModels     = []string{"flux-schnell", "seedream3.0", "nanobanana", "nanobanana-pro"}
	videoModels     = []string{"pixverse5.5", "veo3.1_fast", "veo3.1"}
	mediaStyles     = []string{"photorealistic", "artistic", "cartoon", "minimalist", "vintage", "futuristic"}
	libraries       = []string{"stocklib_1", "stocklib_2"}
	alignments      = []string{"left", "center", "right"}
	decorations     = []string{"bold", "underline", "italics", "linethrough"}
	cases           = []string{"uppercase", "lowercase", "capitalize", "smallcapitalize"}
	animNames       = []string{"none", "fade", "drift", "wipe", "text reveal", "elastic", "typewriter", "blur", "bulletin"}
	animTypes       = []string{"entry", "exit"}
	animSpeeds      = []string{"slow", "medium", "fast", "custom"}
	directions      = []string{"up", "down", "left", "right"}
	writingStyles   = []string{"character", "word", "line", "paragraph"}
	futureWords     = []string{"hidden", "subtle", "prominent"}
	elementTypes    = []string{"shape", "text", "video", "image"}
	textVariants    = []string{"heading", "subheading", "body"}
	contentRatings  = []string{"violence", "drugs", "language", "nudity", "advertisement", "safe", "unrated"}
	privacyViews    = []string{"anybody", "contacts", "disable", "nobody", "password", "unlisted", "users"}
	privacyEmbeds   = []string{"private", "public", "whitelist"}
	privacyComments = []string{"anybody", "contacts", "nobody"}
	borderRadii     = []string{"0", "50", "100"}
	visualTypes     = []string{"video", "image"}

	// sceneSources are the content sources of a scene, of which exactly one is allowed.
	sceneSources = []string{"story", "storyCoPilot", "brief", "blogUrl", "pptUrl", "audioUrl", "videoUrl"}
)

// channel is one colour channel, 0 to 255.
const channel = `(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`

// validator collects field errors; its helpers return the value when it is present and valid.
type validator struct{ errs []FieldError }

func (v *validator) add(path, format string, args ...any) {
	v.errs = append(v.errs, FieldError{Name: path, Errors: fmt.Sprintf(format, args...)})
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// has reports a present, non-null field.
func has(m map[string]any, k string) bool {
	x, ok := m[k]
	return ok && x != nil
}

func (v *validator) required(m map[string]any, path, k string) bool {
	if !has(m, k) {
		v.add(join(path, k), "is required")
		return false
	}
	return true
}

func (v *validator) str(m map[string]any, path, k string, maxLen int) (string, bool) {
	if !has(m, k) {
		return "", false
	}
	s, ok := m[k].(string)
	if !ok {
		v.add(join(path, k), "must be a string")
		return "", false
	}
	if maxLen > 0 && utf8.RuneCountInString(s) > maxLen {
		v.add(join(path, k), "must be at most %d characters", maxLen)
		return s, false
	}
	return s, true
}

func (v *validator) enum(m map[string]any, path, k string, allowed []string) (string, bool) {
	s, ok := v.str(m, path, k, 0)
	if !ok {
		return "", false
	}
	for _, a := range allowed {
		if s == a {
			return s, true
		}
	}
	v.add(join(path, k), "must be one of %s", strings.Join(allowed, ", "))
	return s, false
}

func (v *validator) uri(m map[string]any, path, k string, maxLen int) {
	s, ok := v.str(m, path, k, maxLen)
	if !ok {
		return
	}
	if u, err := url.Parse(s); err != nil || u.Scheme == "" || u.Host == "" {
		v.add(join(path, k), "must be an absolute URI")
	}
}

// boolean returns m[k] when it is a boolean, and false when it is absent or not a boolean (then
// recording the error).
func (v *validator) boolean(m map[string]any, path, k string) bool {
	if !has(m, k) {
		return false
	}
	b, ok := m[k].(bool)
	if !ok {
		v.add(join(path, k), "must be a boolean")
	}
	return b
}

// num checks a number within [lo, hi]; a NaN bound is open.
func (v *validator) num(m map[string]any, path, k string, lo, hi float64, integer bool) (float64, bool) {
	if !has(m, k) {
		return 0, false
	}
	n, ok := m[k].(json.Number)
	if !ok {
		v.add(join(path, k), "must be a number")
		return 0, false
	}
	f, err := n.Float64()
	if err != nil {
		v.add(join(path, k), "must be a number")
		return 0, false
	}
	if integer {
		if _, err := n.Int64(); err != nil {
			v.add(join(path, k), "must be an integer")
			return f, false
		}
	}
	if (!math.IsNaN(lo) && f < lo) || (!math.IsNaN(hi) && f > hi) {
		switch {
		case math.IsNaN(lo):
			v.add(join(path, k), "must be at most %v", hi)
		case math.IsNaN(hi):
			v.add(join(path, k), "must be at least %v", lo)
		default:
			v.add(join(path, k), "must be between %v and %v", lo, hi)
		}
		return f, false
	}
	return f, true
}

func (v *validator) obj(m map[string]any, path, k string) (map[string]any, bool) {
	if !has(m, k) {
		return nil, false
	}
	o, ok := m[k].(map[string]any)
	if !ok {
		v.add(join(path, k), "must be an object")
	}
	return o, ok
}

func (v *validator) arr(m map[string]any, path, k string, minItems, maxItems int) ([]any, bool) {
	if !has(m, k) {
		return nil, false
	}
	a, ok := m[k].([]any)
	if !ok {
		v.add(join(path, k), "must be an array")
		return nil, false
	}
	if maxItems > 0 && len(a) > maxItems {
		v.add(join(path, k), "must have at most %d items", maxItems)
		return a, false
	}
	if len(a) < minItems {
		v.add(join(path, k), "must have at least %d items", minItems)
		return a, false
	}
	return a, true
}

// each calls f for every object item of m[k], reporting non-object items.
func (v *validator) each(m map[string]any, path, k string, minItems, maxItems int, f func(item map[string]any, p string)) {
	a, _ := v.arr(m, path, k, minItems, maxItems)
	for i, x := range a {
		p := index(join(path, k), i)
		o, ok := x.(map[string]any)
		if !ok {
			v.add(p, "must be an object")
			continue
		}
		f(o, p)
	}
}

func (v *validator) exclusive(m map[string]any, path, a, b string) {
	if has(m, a) && has(m, b) {
		v.add(join(path, b), "%s and %s are mutually exclusive", a, b)
	}
}

func (v *validator) together(m map[string]any, path, a, b string) {
	if has(m, a) != has(m, b) {
		missing := a
		if !has(m, b) {
			missing = b
		}
		v.add(join(path, missing), "%s and %s must be supplied together", a, b)
	}
}

// onlyWith reports field k when the field it depends on is absent.
func (v *validator) onlyWith(m map[string]any, path, k, dep, why string) {
	if has(m, k) && !has(m, dep) {
		v.add(join(path, k), "%s", why)
	}
}

// percent checks "a percentage string", 0 to 100.
func (v *validator) percent(m map[string]any, path, k string) {
	if s, ok := v.str(m, path, k, 0); ok && !percentRe.MatchString(s) {
		v.add(join(path, k), "must be a percentage from 0 to 100 such as 20%% or 12.5%%")
	}
}

// intPercent checks "an integer percentage 0-100%".
func (v *validator) intPercent(m map[string]any, path, k string) {
	if s, ok := v.str(m, path, k, 0); ok && !intPercentRe.MatchString(s) {
		v.add(join(path, k), "must be an integer percentage from 0 to 100 such as 20%%")
	}
}

// colour checks a colour in one of the formats named ("rgb", "rgba", "hex").
func (v *validator) colour(m map[string]any, path, k string, formats ...string) {
	s, ok := v.str(m, path, k, 0)
	if !ok {
		return
	}
	for _, f := range formats {
		if (f == "rgb" && rgbRe.MatchString(s)) || (f == "rgba" && rgbaRe.MatchString(s)) || (f == "hex" && hexRe.MatchString(s)) {
			return
		}
	}
	v.add(join(path, k), "must be a colour in the format %s", strings.Join(formats, " or "))
}

func (v *validator) clips(m map[string]any, path, k string, maxItems int) {
	v.each(m, path, k, 0, maxItems, func(c map[string]any, p string) { v.clip(c, p) })
}

func (v *validator) clip(c map[string]any, p string) {
	nan := nanF()
	if v.required(c, p, "start") {
		v.num(c, p, "start", 0, nan, false)
	}
	if v.required(c, p, "end") {
		v.num(c, p, "end", 0, nan, false)
	}
}

// nanF is an open bound for num.
func nanF() float64 { return math.NaN() }

// ValidateStoryboardRequest checks a StoryboardRequest body as the storyboard endpoints do and
// returns its field errors (none when the service would accept it). Tests use it to hold the
// operator's admission and pre-submit checks against this independent reading of the document.
func ValidateStoryboardRequest(body []byte) ([]FieldError, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var req map[string]any
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("decoding the request: %w", err)
	}
	return validateRequest(req), nil
}

// validateRequest checks a StoryboardRequest and returns its field errors, in document order.
func validateRequest(req map[string]any) []FieldError {
	v := &validator{}
	nan := nanF()

	// "Common causes of 400": missing videoName.
	if v.required(req, "", "videoName") {
		if s, ok := v.str(req, "", "videoName", 150); ok && !videoNameChars.MatchString(s) {
			v.add("videoName", "must contain only letters, digits, spaces, underscores and hyphens")
		}
	}
	v.num(req, "", "videoWidth", 1, nan, true)
	v.num(req, "", "videoHeight", 1, nan, true)
	v.together(req, "", "videoWidth", "videoHeight")
	v.enum(req, "", "aspectRatio", aspectRatios)
	v.enum(req, "", "language", languages)
	v.boolean(req, "", "saveProject")
	v.uri(req, "", "webhook", 500)
	v.obj(req, "", "webhookInput")
	v.str(req, "", "templateId", 0)
	if vars, ok := v.obj(req, "", "variables"); ok {
		v.onlyWith(req, "", "variables", "templateId", "variables is only valid with templateId")
		for k, x := range vars {
			if _, isStr := x.(string); !isStr {
				v.add("variables."+k, "must be a string")
			}
		}
	}
	for _, pair := range [][2]string{{"brandId", "brandName"}, {"smartLayoutId", "smartLayoutName"}, {"subtitleStyleId", "subtitleStyleName"}} {
		v.str(req, "", pair[0], 0)
		v.str(req, "", pair[1], 0)
		v.exclusive(req, "", pair[0], pair[1])
	}
	if s, ok := v.str(req, "", "storyboardVersion", 0); ok && s != "v3" {
		v.add("storyboardVersion", "must be v3, or omitted for the classic storyboard")
	}
	if st, ok := v.obj(req, "", "subtitleStyle"); ok {
		v.subtitleStyle(st, "subtitleStyle")
	}
	v.str(req, "", "objectstoreConnectionId", 500)
	v.str(req, "", "videohostConnectionId", 500)
	v.each(req, "", "destinations", 0, 5, v.destination)
	voiceEnabled := false
	if vo, ok := v.obj(req, "", "voiceOver"); ok {
		voiceEnabled = v.voiceOver(vo, "voiceOver")
	}
	if bm, ok := v.obj(req, "", "backgroundMusic"); ok {
		v.backgroundMusic(bm, "backgroundMusic", true)
	}
	if logo, ok := v.obj(req, "", "logo"); ok {
		if v.required(logo, "logo", "url") {
			v.uri(logo, "logo", "url", 0)
		}
		v.enum(logo, "logo", "position", positions)
		v.percent(logo, "logo", "width")
	}
	if av, ok := v.obj(req, "", "avatar"); ok {
		v.avatar(av, voiceEnabled)
	}
	ai := false
	if as, ok := v.obj(req, "", "aiStoryboard"); ok {
		if v.required(as, "aiStoryboard", "enabled") {
			ai = v.boolean(as, "aiStoryboard", "enabled")
		}
	}
	v.uri(req, "", "payloadUrl", 0)
	v.obj(req, "", "projectMetadata")

	templated := has(req, "templateId")
	smartLayout := has(req, "smartLayoutId") || has(req, "smartLayoutName")
	// "Common causes of 400": missing scenes without templateId.
	if !templated {
		if v.required(req, "", "scenes") {
			v.arr(req, "", "scenes", 1, 0)
		}
	}
	v.each(req, "", "scenes", 0, 0, func(sc map[string]any, p string) {
		v.scene(sc, p, templated, smartLayout)
	})
	if ai {
		v.aiStoryboardRules(req)
	}
	return v.errs
}

// aiStoryboardRules are "AI storyboard rules" 3 and 4: text-to-video only, and a single scene in
// brief mode. Each rejection names the rule, as the document promises an explicit message.
func (v *validator) aiStoryboardRules(req map[string]any) {
	const why = "is not supported when aiStoryboard.enabled is true (AI storyboard is text-to-video only)"
	for _, k := range []string{"templateId", "smartLayoutId", "smartLayoutName", "variables"} {
		if has(req, k) {
			v.add(k, "%s %s", k, why)
		}
	}
	if r, _ := req["aspectRatio"].(string); r == "4:5" {
		v.add("aspectRatio", "the 4:5 aspect ratio %s", why)
	}
	scenes, _ := req["scenes"].([]any)
	briefs := 0
	for i, x := range scenes {
		sc, _ := x.(map[string]any)
		for _, k := range []string{"pptUrl", "audioUrl", "videoUrl"} {
			if has(sc, k) {
				v.add(index("scenes", i)+"."+k, "%s scenes are rejected: presentation, audio and video sources %s", k, why)
			}
		}
		if has(sc, "brief") || has(sc, "storyCoPilot") {
			briefs++
		}
	}
	if briefs > 0 && len(scenes) != 1 {
		v.add("scenes", "brief mode takes a single brief scene when aiStoryboard.enabled is true")
	}
}

func (v *validator) destination(d map[string]any, p string) {
	if !v.required(d, p, "type") {
		return
	}
	t, ok := v.enum(d, p, "type", []string{"videohost", "objectstore"})
	if !ok {
		return
	}
	// oneOf: the fields of the other variant are not part of this one.
	if t == "objectstore" {
		for _, k := range []string{"bucket", "region", "key"} {
			if v.required(d, p, k) {
				v.str(d, p, k, 0)
			}
		}
		for _, k := range []string{"folder_uri", "content_rating", "privacy"} {
			if has(d, k) {
				v.add(join(p, k), "%s applies only to videohost destinations", k)
			}
		}
		return
	}
	for _, k := range []string{"bucket", "region", "key"} {
		if has(d, k) {
			v.add(join(p, k), "%s applies only to objectstore destinations", k)
		}
	}
	v.str(d, p, "folder_uri", 0)
	if cr, ok := v.arr(d, p, "content_rating", 0, 0); ok {
		v.stringsIn(cr, join(p, "content_rating"), contentRatings)
	}
	if pr, ok := v.obj(d, p, "privacy"); ok {
		pp := join(p, "privacy")
		v.enum(pr, pp, "view", privacyViews)
		v.enum(pr, pp, "embed", privacyEmbeds)
		v.enum(pr, pp, "comments", privacyComments)
		v.boolean(pr, pp, "add")
		v.boolean(pr, pp, "download")
	}
}

func (v *validator) stringsIn(items []any, p string, allowed []string) {
	for i, x := range items {
		s, _ := x.(string)
		found := false
		for _, a := range allowed {
			found = found || s == a
		}
		if !found {
			v.add(index(p, i), "must be one of %s", strings.Join(allowed, ", "))
		}
	}
}

// voiceOver validates a VoiceOver and returns whether it is enabled.
func (v *validator) voiceOver(vo map[string]any, p string) bool {
	enabled := false
	if v.required(vo, p, "enabled") {
		enabled = v.boolean(vo, p, "enabled")
	}
	v.exclusive(vo, p, "aiVoices", "externalVoice")
	v.each(vo, p, "aiVoices", 0, 10, func(av map[string]any, ap string) {
		if v.required(av, ap, "speaker") {
			if s, ok := v.str(av, ap, "speaker", 0); ok && strings.TrimSpace(s) == "" {
				v.add(join(ap, "speaker"), "must not be empty")
			}
		}
		v.num(av, ap, "speed", 50, 200, false)
		v.num(av, ap, "amplificationLevel", -1, 1, false)
		if ps, ok := v.obj(av, ap, "premiumVoiceSettings"); ok {
			pp := join(ap, "premiumVoiceSettings")
			v.enum(ps, pp, "modelId", premiumModels)
			for _, k := range []string{"stability", "similarityBoost", "style"} {
				v.percent(ps, pp, k)
			}
			v.boolean(ps, pp, "useSpeakerBoost")
		}
	})
	if ev, ok := v.obj(vo, p, "externalVoice"); ok {
		ep := join(p, "externalVoice")
		if v.required(ev, ep, "voiceUrl") {
			v.uri(ev, ep, "voiceUrl", 0)
		}
		v.boolean(ev, ep, "syncVoice")
		v.num(ev, ep, "amplificationLevel", -1, 1, false)
	}
	return enabled
}

func (v *validator) backgroundMusic(bm map[string]any, p string, full bool) {
	if v.required(bm, p, "enabled") {
		v.boolean(bm, p, "enabled")
	}
	if !full {
		return
	}
	// Mutually exclusive: a musicUrl with autoMusic true (autoMusic false asks for no library track).
	if v.boolean(bm, p, "autoMusic") && has(bm, "musicUrl") {
		v.add(join(p, "musicUrl"), "autoMusic and musicUrl are mutually exclusive")
	}
	v.uri(bm, p, "musicUrl", 0)
	v.num(bm, p, "volume", 0, 1, false)
	v.clips(bm, p, "clips", 10)
}

func (v *validator) avatar(av map[string]any, voiceEnabled bool) {
	const p = "avatar"
	if v.required(av, p, "avatarId") {
		v.str(av, p, "avatarId", 0)
	}
	if !voiceEnabled {
		v.add(p, "avatars require voiceOver.enabled to be true")
	}
	v.avatarLook(av, p)
}

// avatarLook holds the fields shared by the avatar and its scene-level override.
func (v *validator) avatarLook(av map[string]any, p string) {
	v.enum(av, p, "position", positions)
	v.intPercent(av, p, "width")
	v.enum(av, p, "borderRadius", borderRadii)
	v.colour(av, p, "borderColor", "rgba")
	v.num(av, p, "borderThickness", 0, nanF(), false)
	v.colour(av, p, "backgroundColor", "rgba")
	v.boolean(av, p, "hide")
}

func (v *validator) subtitleStyle(st map[string]any, p string) {
	v.uri(st, p, "fontUrl", 0)
	if has(st, "fontUrl") {
		v.required(st, p, "fontFamily")
	}
	v.str(st, p, "fontFamily", 0)
	v.num(st, p, "fontSize", 1, nanF(), true)
	v.colour(st, p, "color", "rgba")
	for _, k := range []string{"backgroundColor", "shadowColor", "shadowWidth", "keywordColor", "paragraphWidth"} {
		v.str(st, p, k, 0)
	}
	v.enum(st, p, "position", positions)
	v.enum(st, p, "alignment", alignments)
	if d, ok := v.arr(st, p, "decorations", 0, 0); ok {
		v.stringsIn(d, join(p, "decorations"), decorations)
	}
	v.enum(st, p, "case", cases)
	seen := map[string]bool{}
	v.each(st, p, "animations", 0, 2, func(a map[string]any, ap string) {
		var name, typ, speed string
		if v.required(a, ap, "name") {
			name, _ = v.enum(a, ap, "name", animNames)
		}
		if v.required(a, ap, "type") {
			typ, _ = v.enum(a, ap, "type", animTypes)
		}
		if v.required(a, ap, "speed") {
			speed, _ = v.enum(a, ap, "speed", animSpeeds)
		}
		if typ != "" && seen[typ] {
			v.add(join(ap, "type"), "at most one %s animation", typ)
		}
		seen[typ] = true
		if speed == "custom" {
			v.required(a, ap, "customSpeedValue")
		}
		v.num(a, ap, "customSpeedValue", 0.5, nanF(), false)
		v.enum(a, ap, "direction", directions)
		v.enum(a, ap, "writingStyle", writingStyles)
		if _, ok := v.enum(a, ap, "futureWords", futureWords); ok && ((name != "fade" && name != "blur") || typ != "entry") {
			v.add(join(ap, "futureWords"), "futureWords is only allowed with fade and blur entry animations")
		}
	})
}

// scene validates one Scene ("Scene" and "Limits").
func (v *validator) scene(sc map[string]any, p string, templated, smartLayout bool) {
	var sources []string
	for _, k := range sceneSources {
		if has(sc, k) {
			sources = append(sources, k)
		}
	}
	switch {
	case len(sources) > 1:
		v.add(p, "a scene takes exactly one content source, got %s", strings.Join(sources, ", "))
	case len(sources) == 0 && !has(sc, "templateOverride"):
		// Only a scene that overrides a template scene (templateOverride, itself only valid with
		// templateId) may have none, for example one that deletes a template scene.
		v.add(p, "a scene needs one content source: story, brief, blogUrl, pptUrl, audioUrl or videoUrl")
	}
	v.str(sc, p, "story", 15000)
	for _, k := range []string{"storyCoPilot", "brief"} {
		if b, ok := v.obj(sc, p, k); ok {
			v.brief(b, join(p, k))
		}
	}
	for _, k := range []string{"blogUrl", "pptUrl", "audioUrl", "videoUrl"} {
		v.uri(sc, p, k, 3000)
	}
	media := has(sc, "audioUrl") || has(sc, "videoUrl")
	if media {
		v.required(sc, p, "audioLanguage")
		v.required(sc, p, "transcript")
	}
	v.enum(sc, p, "audioLanguage", audioLanguages)
	for _, k := range []string{"createSceneOnNewLine", "createSceneOnEndOfSentence", "highlightKeywords", "hideSubtitles", "isSSMLStory", "useSpeakerNotes", "animatePPT"} {
		v.boolean(sc, p, k)
	}
	if _, ok := v.num(sc, p, "maxSubtitleLines", 1, 4, true); ok && smartLayout {
		v.add(join(p, "maxSubtitleLines"), "maxSubtitleLines cannot be used with smart layouts")
	}
	nan := nanF()
	v.num(sc, p, "minimumDuration", 0, nan, false)
	v.num(sc, p, "endPauseDuration", 0, nan, false)
	v.enum(sc, p, "sceneTransition", transitions)
	v.onlyWith(sc, p, "useSpeakerNotes", "pptUrl", "useSpeakerNotes is only valid with pptUrl")
	v.onlyWith(sc, p, "pptSlideAnimation", "pptUrl", "pptSlideAnimation is only valid with pptUrl")
	if sa, ok := v.obj(sc, p, "pptSlideAnimation"); ok {
		sp := join(p, "pptSlideAnimation")
		v.boolean(sa, sp, "enabled")
		v.enum(sa, sp, "model", slideModels)
		if sl, ok := v.arr(sa, sp, "slides", 0, 0); ok {
			for i, x := range sl {
				if n, isNum := x.(json.Number); !isNum || !positiveInt(n) {
					v.add(index(join(sp, "slides"), i), "must be a slide position starting at 1")
				}
			}
		}
	}
	v.onlyWith(sc, p, "isSSMLStory", "story", "isSSMLStory is only valid with story")
	v.str(sc, p, "caption", 3000)
	v.onlyWith(sc, p, "caption", "story", "caption requires story")
	v.enum(sc, p, "captionLanguage", languages)
	v.onlyWith(sc, p, "captionLanguage", "caption", "captionLanguage is only valid with caption")
	v.str(sc, p, "subtitleStyleId", 0)
	v.str(sc, p, "subtitleStyleName", 0)
	v.exclusive(sc, p, "subtitleStyleId", "subtitleStyleName")
	if st, ok := v.obj(sc, p, "subtitleStyle"); ok {
		v.subtitleStyle(st, join(p, "subtitleStyle"))
	}
	if vo, ok := v.obj(sc, p, "voiceOver"); ok {
		v.voiceOver(vo, join(p, "voiceOver"))
	}
	if bm, ok := v.obj(sc, p, "backgroundMusic"); ok {
		v.backgroundMusic(bm, join(p, "backgroundMusic"), false)
	}
	if av, ok := v.obj(sc, p, "avatar"); ok {
		ap := join(p, "avatar")
		if has(av, "avatarId") {
			v.add(join(ap, "avatarId"), "avatarId cannot be changed at scene level")
		}
		if has(av, "position") && (has(av, "top") || has(av, "left")) {
			v.add(join(ap, "position"), "top and left cannot be combined with position")
		}
		v.intPercent(av, ap, "top")
		v.intPercent(av, ap, "left")
		v.avatarLook(av, ap)
	}
	if bg, ok := v.obj(sc, p, "background"); ok {
		v.background(bg, join(p, "background"))
	}
	v.each(sc, p, "backgroundBrolls", 0, 0, func(b map[string]any, bp string) {
		v.background(b, bp)
		if v.required(b, bp, "brollClip") {
			if c, ok := v.obj(b, bp, "brollClip"); ok {
				v.clip(c, join(bp, "brollClip"))
			}
		}
	})
	v.each(sc, p, "backgroundCorpus", 0, 100, func(c map[string]any, cp string) {
		v.uri(c, cp, "visualUrl", 0)
		v.enum(c, cp, "type", []string{"image"})
		v.boolean(c, cp, "prefer")
	})
	v.each(sc, p, "transcript", 0, 0, v.sentence)
	if mr, ok := v.obj(sc, p, "mediaRepurposeSettings"); ok {
		mp := join(p, "mediaRepurposeSettings")
		if !media {
			v.add(mp, "mediaRepurposeSettings is only valid with audioUrl or videoUrl")
		}
		v.num(mr, mp, "highlightLength", 5, 180, false)
		v.boolean(mr, mp, "removeFillerWords")
		v.boolean(mr, mp, "removeSilences")
		v.num(mr, mp, "silenceThresholdSeconds", 0, 10, false)
	}
	if to, ok := v.obj(sc, p, "templateOverride"); ok {
		tp := join(p, "templateOverride")
		if !templated {
			v.add(tp, "templateOverride is only valid with templateId")
		}
		v.templateOverride(to, tp)
	}
	v.each(sc, p, "elements", 0, 20, v.element)
}

func positiveInt(n json.Number) bool {
	i, err := n.Int64()
	return err == nil && i >= 1
}

func (v *validator) brief(b map[string]any, p string) {
	if v.required(b, p, "prompt") {
		if s, ok := v.str(b, p, "prompt", 5000); ok && s == "" {
			v.add(join(p, "prompt"), "must be 1 to 5000 characters")
		}
	}
	v.enum(b, p, "videoType", videoGoals)
	v.enum(b, p, "videoGoal", videoGoals)
	v.exclusive(b, p, "videoGoal", "videoType")
	v.num(b, p, "duration", 1, 600, true)
	v.enum(b, p, "platform", platforms)
	v.enum(b, p, "tone", tones)
}

func (v *validator) sentence(s map[string]any, p string) {
	v.num(s, p, "speakerId", nanF(), nanF(), true)
	if !v.required(s, p, "words") {
		return
	}
	v.each(s, p, "words", 1, 0, func(w map[string]any, wp string) {
		if v.required(w, wp, "word") {
			v.str(w, wp, "word", 0)
		}
		var start, end float64
		var okS, okE bool
		if v.required(w, wp, "start_time") {
			start, okS = v.num(w, wp, "start_time", 0, nanF(), false)
		}
		if v.required(w, wp, "end_time") {
			end, okE = v.num(w, wp, "end_time", 0, nanF(), false)
		}
		if okS && okE && end < start {
			v.add(join(wp, "end_time"), "must be at least start_time")
		}
		v.boolean(w, wp, "is_pause")
		v.boolean(w, wp, "is_filler")
		v.num(w, wp, "speakerId", nanF(), nanF(), true)
	})
}

// background validates a Background ("Background", "AiVisual").
func (v *validator) background(bg map[string]any, p string) {
	n := 0
	for _, k := range []string{"visualUrl", "color", "aiVisual"} {
		if has(bg, k) {
			n++
		}
	}
	if n > 1 || (n == 0 && !has(bg, "searchFilter")) {
		v.add(p, "a background takes exactly one of visualUrl, color or aiVisual (or only a searchFilter to pick stock media)")
	}
	v.uri(bg, p, "visualUrl", 0)
	v.colour(bg, p, "color", "rgba", "hex")
	typ, _ := v.enum(bg, p, "type", visualTypes)
	if ai, ok := v.obj(bg, p, "aiVisual"); ok {
		v.required(bg, p, "type")
		v.aiVisual(ai, join(p, "aiVisual"), typ)
	}
	if co, ok := v.obj(bg, p, "colorOverlay"); ok {
		v.colorOverlay(co, join(p, "colorOverlay"))
	}
	if sf, ok := v.obj(bg, p, "searchFilter"); ok {
		v.searchFilter(sf, join(p, "searchFilter"), false)
	}
	v.clips(bg, p, "clips", 0)
	if st, ok := v.obj(bg, p, "settings"); ok {
		sp := join(p, "settings")
		for _, k := range []string{"mute", "loop", "zoomAndPan", "kenBurnsEffect"} {
			v.boolean(st, sp, k)
		}
		// Booleans: the exclusion and "images only" concern the effects turned on, not a false.
		if v.boolean(st, sp, "zoomAndPan") && v.boolean(st, sp, "kenBurnsEffect") {
			v.add(join(sp, "kenBurnsEffect"), "zoomAndPan and kenBurnsEffect are mutually exclusive")
		}
		if v.boolean(st, sp, "kenBurnsEffect") && typ == "video" {
			v.add(join(sp, "kenBurnsEffect"), "kenBurnsEffect applies to images only")
		}
	}
}

func (v *validator) colorOverlay(co map[string]any, p string) {
	if v.required(co, p, "color") {
		v.colour(co, p, "color", "rgb", "rgba", "hex")
	}
	v.num(co, p, "opacity", 0, 1, false)
}

func (v *validator) searchFilter(sf map[string]any, p string, element bool) {
	v.str(sf, p, "category", 0)
	if element {
		if v.required(sf, p, "query") {
			if s, ok := v.str(sf, p, "query", 3000); ok && utf8.RuneCountInString(s) < 2 {
				v.add(join(p, "query"), "must be 2 to 3000 characters")
			}
		}
	} else {
		v.str(sf, p, "query", 3000)
	}
	if kw, ok := v.arr(sf, p, "keywords", 0, 10); ok {
		for i, x := range kw {
			s, isStr := x.(string)
			if n := utf8.RuneCountInString(s); !isStr || n < 2 || n > 100 {
				v.add(index(join(p, "keywords"), i), "must be a string of 2 to 100 characters")
			}
		}
	}
	if l, ok := v.arr(sf, p, "libraries", 0, 0); ok {
		v.stringsIn(l, join(p, "libraries"), libraries)
	}
}

// aiVisual validates an AiVisual of the given media type ("image" or "video"; "" when unknown).
func (v *validator) aiVisual(ai map[string]any, p, typ string) {
	v.str(ai, p, "prompt", 500)
	allModels := append(append([]string{}, imageModels...), videoModels...)
	model := ""
	if v.required(ai, p, "model") {
		model, _ = v.enum(ai, p, "model", allModels)
	}
	isVideo := typ == "video"
	if model != "" && typ != "" {
		want := imageModels
		if isVideo {
			want = videoModels
		}
		if !contains(want, model) {
			v.add(join(p, "model"), "model %s is not a %s model", model, typ)
		}
	}
	if _, ok := v.enum(ai, p, "mediaStyle", mediaStyles); ok && isVideo {
		v.add(join(p, "mediaStyle"), "mediaStyle applies to the image type only")
	}
	if d, ok := v.str(ai, p, "videoDuration", 0); ok {
		allowed := map[string][]string{"pixverse5.5": {"5s", "8s", "10s"}, "veo3.1": {"4s", "6s", "8s"}, "veo3.1_fast": {"4s", "6s", "8s"}}[model]
		if !isVideo || (allowed != nil && !contains(allowed, d)) {
			v.add(join(p, "videoDuration"), "videoDuration %q is not valid for model %q", d, model)
		}
	}
	v.boolean(ai, p, "visualContinuity")
	v.uri(ai, p, "firstFrameImageUrl", 0)
	v.uri(ai, p, "referenceImageUrl", 0)
	if has(ai, "firstFrameImageUrl") && !isVideo {
		v.add(join(p, "firstFrameImageUrl"), "firstFrameImageUrl applies to the video type only")
	}
	v.exclusive(ai, p, "firstFrameImageUrl", "referenceImageUrls")
	if has(ai, "referenceImageUrl") && isVideo {
		v.add(join(p, "referenceImageUrl"), "referenceImageUrl applies to the image type only")
	}
	if refs, ok := v.arr(ai, p, "referenceImageUrls", 1, 2); ok {
		if !isVideo {
			v.add(join(p, "referenceImageUrls"), "referenceImageUrls applies to the video type only")
		}
		for i, x := range refs {
			if s, _ := x.(string); !isURI(s) {
				v.add(index(join(p, "referenceImageUrls"), i), "must be an absolute URI")
			}
		}
	}
}

func (v *validator) element(e map[string]any, p string) {
	typ := ""
	if v.required(e, p, "type") {
		typ, _ = v.enum(e, p, "type", elementTypes)
	}
	if has(e, "position") && (has(e, "top") || has(e, "left")) {
		v.add(join(p, "position"), "position and top/left are mutually exclusive")
	}
	v.enum(e, p, "position", elementPos)
	// "Applies to": a field of another element type is not part of this one.
	appliesTo := map[string][]string{
		"name": {"shape"}, "fill": {"shape"}, "stroke": {"shape"}, "strokeWidth": {"shape"}, "borderRadius": {"shape"},
		"text": {"text"}, "textVariant": {"text"}, "style": {"text"},
		"visualUrl": {"video", "image"}, "searchFilter": {"video", "image"}, "aiVisual": {"video", "image"}, "colorOverlay": {"video", "image"},
		"settings": {"video"},
	}
	if typ != "" {
		for _, k := range sortedKeys(appliesTo) {
			if has(e, k) && !contains(appliesTo[k], typ) {
				v.add(join(p, k), "%s applies only to %s elements", k, strings.Join(appliesTo[k], " and "))
			}
		}
	}
	v.percent(e, p, "top")
	v.percent(e, p, "left")
	v.percent(e, p, "width")
	switch typ {
	case "shape":
		if v.required(e, p, "name") {
			v.str(e, p, "name", 0)
		}
		v.num(e, p, "strokeWidth", 0, nanF(), false)
		if _, ok := v.num(e, p, "borderRadius", 0, nanF(), false); ok {
			if n, _ := e["name"].(string); n != "rectangle" {
				v.add(join(p, "borderRadius"), "borderRadius applies to rectangles only")
			}
		}
	case "text":
		if v.required(e, p, "text") {
			v.str(e, p, "text", 2000)
		}
		v.enum(e, p, "textVariant", textVariants)
		if st, ok := v.obj(e, p, "style"); ok {
			v.subtitleStyle(st, join(p, "style"))
		}
	case "video", "image":
		n := 0
		for _, k := range []string{"visualUrl", "searchFilter", "aiVisual"} {
			if has(e, k) {
				n++
			}
		}
		if n != 1 {
			v.add(p, "a %s element takes exactly one of visualUrl, searchFilter or aiVisual", typ)
		}
		v.uri(e, p, "visualUrl", 0)
		if sf, ok := v.obj(e, p, "searchFilter"); ok {
			v.searchFilter(sf, join(p, "searchFilter"), true)
		}
		if ai, ok := v.obj(e, p, "aiVisual"); ok {
			v.aiVisual(ai, join(p, "aiVisual"), typ)
		}
		if co, ok := v.obj(e, p, "colorOverlay"); ok {
			v.colorOverlay(co, join(p, "colorOverlay"))
		}
		if st, ok := v.obj(e, p, "settings"); ok && typ == "video" {
			v.boolean(st, join(p, "settings"), "loop")
			v.boolean(st, join(p, "settings"), "mute")
		}
	}
}

func (v *validator) templateOverride(to map[string]any, p string) {
	for _, k := range []string{"scenePosition", "newScenePosition", "replaceScenePosition", "baseScenePosition"} {
		v.num(to, p, k, 1, nanF(), true)
	}
	v.each(to, p, "subtitles", 0, 500, func(s map[string]any, sp string) {
		if v.required(s, sp, "text") {
			if t, ok := v.str(s, sp, "text", 40000); ok && t == "" {
				v.add(join(sp, "text"), "must be 1 to 40000 characters")
			}
		}
		v.num(s, sp, "minimumDuration", 0, nanF(), false)
		if st, ok := v.obj(s, sp, "style"); ok {
			v.subtitleStyle(st, join(sp, "style"))
		}
	})
	layers, _ := v.arr(to, p, "layers", 0, 500)
	for i, x := range layers {
		lp := index(join(p, "layers"), i)
		inner, ok := x.([]any)
		if !ok || len(inner) < 1 || len(inner) > 500 {
			v.add(lp, "must be an array of 1 to 500 layers")
			continue
		}
		for j, y := range inner {
			l, _ := y.(map[string]any)
			ip := index(lp, j)
			v.str(l, ip, "layerId", 100)
			v.enum(l, ip, "type", []string{"text", "image", "video"})
			v.str(l, ip, "text", 40000)
			v.str(l, ip, "url", 3000)
			if s, ok := v.str(l, ip, "visualLibraryId", 0); ok && s == "" {
				v.add(join(ip, "visualLibraryId"), "must not be empty")
			}
			if st, ok := v.obj(l, ip, "style"); ok {
				v.subtitleStyle(st, join(ip, "style"))
			}
		}
	}
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && u.Host != ""
}
