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

package requestrules

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// reference is the API server's own evaluator of a schema's rules, cel.Validator, as Check used it
// before issue 39. It stays here so that every case keeps being compared with what admission
// would say.
type reference struct {
	schema    *structuralschema.Structural
	validator *cel.Validator
}

func newReference(t testing.TB, props *apiextensionsv1.JSONSchemaProps, perCallLimit uint64) *reference {
	t.Helper()
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, &internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	v := cel.NewValidator(s, false, perCallLimit)
	if v == nil {
		t.Fatal("the schema has no CEL rule")
	}
	return &reference{schema: s, validator: v}
}

func (r *reference) validate(t testing.TB, obj any, root *field.Path, budget int64) (field.ErrorList, int64) {
	errs, remaining := r.validator.Validate(t.Context(), root, r.schema, obj, nil, budget)
	return errs, budget - remaining
}

func requestProps(t testing.TB) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	var props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(requestSchema, &props); err != nil {
		t.Fatal(err)
	}
	return &props
}

// sorted orders errors by field and message: the Validator walks an object's properties in the
// order of Go's map iteration, so the order of its errors is not part of what it says.
func sorted(errs field.ErrorList) field.ErrorList {
	out := append(field.ErrorList(nil), errs...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Field != out[j].Field {
			return out[i].Field < out[j].Field
		}
		return out[i].Error() < out[j].Error()
	})
	return out
}

func describe(errs field.ErrorList) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  %s %s: %#v", e.Type, e.Field, e.Detail)
	}
	return b.String()
}

// sameErrors fails unless got and want hold the same errors: type, field, value and detail.
func sameErrors(t *testing.T, what string, got, want field.ErrorList) {
	t.Helper()
	got, want = sorted(got), sorted(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\ngot%s\nwant%s", what, describe(got), describe(want))
	}
}

// sceneCase is a scene that breaks a rule, or several, or none.
type sceneCase struct{ name, scene string }

// sceneCases break each rule of the request schema at least once (TestEquivalenceCoversEveryRule),
// the scenes' rules as internal/admissionpolicy's sceneCases do and the PresubmitOnly ones below
// them, plus scenes that break none.
var sceneCases = []sceneCase{
	{"valid story", "{story: A valid scene.}"},
	{"valid everything", "{story: a, caption: c, captionLanguage: en, isSSMLStory: false, subtitleStyleId: s, " +
		"subtitleStyle: {fontUrl: 'https://f.io/f', fontFamily: F, animations: [{name: fade, type: entry, speed: custom, customSpeedValue: 1, futureWords: hidden}, {name: wipe, type: exit, speed: slow}]}, " +
		"avatar: {top: '1', left: '1'}, background: {type: video, aiVisual: {model: veo3.1, videoDuration: 4s, firstFrameImageUrl: 'https://f.io/i'}}}"},
	{"valid elements", "{story: a, elements: [{type: text, text: hi, textVariant: heading, position: top-center}, " +
		"{type: image, visualUrl: 'https://e.com/i.png', top: '40%', left: '10%', width: '30%'}, " +
		"{type: shape, name: rectangle, fill: '#102030', borderRadius: 4, position: bottom-left}, " +
		"{type: video, aiVisual: {model: veo3.1, prompt: p, videoDuration: 6s}, settings: {loop: true}}]}"},
	{"valid audio", "{audioUrl: 'https://e.com/a.mp3', audioLanguage: en-US, transcript: [{words: [{word: a, start_time: 0, end_time: 1}, {word: b, start_time: 1, end_time: 1}]}]}"},
	{"valid template override", "{templateOverride: {subtitles: [{text: t, style: {fontUrl: 'https://f.io/f', fontFamily: F}}], layers: [[{text: t, style: {animations: [{type: entry, name: fade, speed: slow}]}}]]}}"},

	// The scenes' rules, as internal/admissionpolicy's sceneCases.
	{"two sources", "{story: a, blogUrl: 'https://example.com/b'}"},
	{"no source", "{hideSubtitles: true}"},
	{"brief and storyCoPilot", "{brief: {prompt: a}, storyCoPilot: {prompt: b}}"},
	{"audio without language", "{audioUrl: 'https://example.com/a.mp3', transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}]}"},
	{"video without transcript", "{videoUrl: 'https://example.com/a.mp4', audioLanguage: en-US}"},
	{"speaker notes without ppt", "{story: a, useSpeakerNotes: true}"},
	{"slide animation without ppt", "{story: a, pptSlideAnimation: {enabled: true}}"},
	{"SSML without story", "{blogUrl: 'https://example.com/b', isSSMLStory: true}"},
	{"caption without story", "{blogUrl: 'https://example.com/b', caption: Hi}"},
	{"caption language without caption", "{story: a, captionLanguage: en}"},
	{"repurpose without media", "{story: a, mediaRepurposeSettings: {removeSilences: true}}"},
	{"subtitle style id and name", "{story: a, subtitleStyleId: s-1, subtitleStyleName: Clean}"},
	{"avatar id", "{story: a, avatar: {avatarId: a-2}}"},
	{"avatar position and top", "{story: a, avatar: {position: top-left, top: '10%'}}"},
	{"background two sources", "{story: a, background: {color: '#000000', visualUrl: 'https://example.com/i.png'}}"},
	{"background without type", "{story: a, background: {aiVisual: {model: flux-schnell, prompt: a cat}}}"},
	{"background type mismatch", "{story: a, background: {type: video, aiVisual: {model: flux-schnell, prompt: a cat}}}"},
	{"ken burns on video", "{story: a, background: {type: video, visualUrl: 'https://example.com/v.mp4', settings: {kenBurnsEffect: true}}}"},
	{"zoom and ken burns", "{story: a, background: {type: image, visualUrl: 'https://example.com/i.png', settings: {zoomAndPan: true, kenBurnsEffect: true}}}"},
	{"media style on video", "{story: a, background: {type: video, aiVisual: {model: veo3.1, prompt: a cat, mediaStyle: photorealistic}}}"},
	{"reference image on video", "{story: a, background: {type: video, aiVisual: {model: veo3.1, prompt: a cat, referenceImageUrl: 'https://example.com/i.png'}}}"},
	{"first frame on image", "{story: a, background: {type: image, aiVisual: {model: flux-schnell, prompt: a cat, firstFrameImageUrl: 'https://example.com/i.png'}}}"},
	{"reference images on image", "{story: a, background: {type: image, aiVisual: {model: flux-schnell, prompt: a cat, referenceImageUrls: ['https://example.com/i.png']}}}"},
	{"first frame and reference images", "{story: a, background: {type: video, aiVisual: {model: veo3.1, prompt: a cat, firstFrameImageUrl: 'https://example.com/i.png', referenceImageUrls: ['https://example.com/i.png']}}}"},
	{"duration on image", "{story: a, background: {type: image, aiVisual: {model: flux-schnell, prompt: a cat, videoDuration: 5s}}}"},
	{"pixverse duration", "{story: a, background: {type: video, aiVisual: {model: pixverse5.5, prompt: a cat, videoDuration: 4s}}}"},
	{"veo duration", "{story: a, background: {type: video, aiVisual: {model: veo3.1, prompt: a cat, videoDuration: 5s}}}"},
	{"brief goal and type", "{brief: {prompt: a, videoGoal: Marketing, videoType: Marketing}}"},
	{"storyCoPilot goal and type", "{storyCoPilot: {prompt: a, videoGoal: Marketing, videoType: Marketing}}"},
	{"subtitle font without family", "{story: a, subtitleStyle: {fontUrl: 'https://example.com/f.ttf'}}"},
	{"two entry animations", "{story: a, subtitleStyle: {animations: [{type: entry, name: fade, speed: slow}, {type: entry, name: blur, speed: slow}]}}"},
	{"custom speed without value", "{story: a, subtitleStyle: {animations: [{type: entry, name: fade, speed: custom}]}}"},
	{"future words on exit", "{story: a, subtitleStyle: {animations: [{type: exit, name: fade, speed: slow, futureWords: subtle}]}}"},
	{"voices and external voice", "{story: a, voiceOver: {enabled: true, aiVoices: [{speaker: Matthew}], externalVoice: {voiceUrl: 'https://example.com/v.mp3'}}}"},
	{"everything wrong at once", "{story: a, blogUrl: 'https://e.com/b', useSpeakerNotes: true, captionLanguage: en, subtitleStyleId: s, subtitleStyleName: n, " +
		"avatar: {position: top-left, left: '1', avatarId: x}, background: {type: image, color: '#000', visualUrl: 'https://e.com/i', aiVisual: {model: veo3.1, mediaStyle: m, videoDuration: 9s, referenceImageUrl: 'https://e.com/r'}, settings: {zoomAndPan: true, kenBurnsEffect: true}}}"},

	// The PresubmitOnly places: scene elements.
	{"element position and top", "{story: a, elements: [{type: text, text: hi, position: top-left, top: '1%'}]}"},
	{"shape without name", "{story: a, elements: [{type: shape}]}"},
	{"text without text", "{story: a, elements: [{type: text}]}"},
	{"image without source", "{story: a, elements: [{type: image}]}"},
	{"image with two sources", "{story: a, elements: [{type: video, visualUrl: 'https://e.com/v.mp4', searchFilter: {query: cats}}]}"},
	{"short search query", "{story: a, elements: [{type: image, searchFilter: {query: a}}]}"},
	{"search without query", "{story: a, elements: [{type: image, searchFilter: {}}]}"},
	{"border radius on a circle", "{story: a, elements: [{type: shape, name: circle, borderRadius: 3}]}"},
	{"fill on text", "{story: a, elements: [{type: text, text: a, fill: '#000'}]}"},
	{"text on a shape", "{story: a, elements: [{type: shape, name: rectangle, text: a, textVariant: body}]}"},
	{"visual on text", "{story: a, elements: [{type: text, text: a, visualUrl: 'https://e.com/i.png'}]}"},
	{"settings on image", "{story: a, elements: [{type: image, visualUrl: 'https://e.com/i.png', settings: {loop: true}}]}"},
	{"element model mismatch", "{story: a, elements: [{type: image, aiVisual: {model: veo3.1, prompt: a}}]}"},
	{"element media style on video", "{story: a, elements: [{type: video, aiVisual: {model: veo3.1, prompt: a, mediaStyle: m}}]}"},
	{"element reference image on video", "{story: a, elements: [{type: video, aiVisual: {model: pixverse5.5, prompt: a, referenceImageUrl: 'https://e.com/i'}}]}"},
	{"element first frame on image", "{story: a, elements: [{type: image, aiVisual: {model: nanobanana, prompt: a, firstFrameImageUrl: 'https://e.com/i'}}]}"},
	{"element reference images on image", "{story: a, elements: [{type: image, aiVisual: {model: seedream3.0, prompt: a, referenceImageUrls: ['https://e.com/i']}}]}"},
	{"element first frame and reference images", "{story: a, elements: [{type: video, aiVisual: {model: veo3.1_fast, prompt: a, firstFrameImageUrl: 'https://e.com/i', referenceImageUrls: ['https://e.com/i']}}]}"},
	{"element duration on image", "{story: a, elements: [{type: image, aiVisual: {model: flux-schnell, prompt: a, videoDuration: 4s}}]}"},
	{"element pixverse duration", "{story: a, elements: [{type: video, aiVisual: {model: pixverse5.5, prompt: a, videoDuration: 6s}}]}"},
	{"element veo duration", "{story: a, elements: [{type: video, aiVisual: {model: veo3.1_fast, prompt: a, videoDuration: 10s}}]}"},
	{"element font without family", "{story: a, elements: [{type: text, text: a, style: {fontUrl: 'https://e.com/f.ttf'}}]}"},
	{"element two exit animations", "{story: a, elements: [{type: text, text: a, style: {animations: [{type: exit, name: fade, speed: slow}, {type: exit, name: wipe, speed: fast}]}}]}"},
	{"element custom speed", "{story: a, elements: [{type: text, text: a, style: {animations: [{type: exit, name: fade, speed: fast}, {type: entry, name: fade, speed: custom}]}}]}"},
	{"element future words", "{story: a, elements: [{type: text, text: a, style: {animations: [{type: entry, name: wipe, speed: slow, futureWords: hidden}]}}]}"},
	{"several elements wrong", "{story: a, elements: [{type: text}, {type: shape}, {type: image}, {type: video, settings: {mute: true}, text: t}]}"},

	// B-rolls.
	{"broll two sources", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, color: '#000', visualUrl: 'https://e.com/i.png'}]}"},
	{"broll no source", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}}]}"},
	{"broll search only", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, searchFilter: {query: cats}}]}"},
	{"broll without type", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, aiVisual: {model: flux-schnell, prompt: a}}]}"},
	{"broll type mismatch", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, type: image, aiVisual: {model: veo3.1, prompt: a}}]}"},
	{"broll ken burns on video", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, type: video, visualUrl: 'https://e.com/v', settings: {kenBurnsEffect: true}}]}"},
	{"broll zoom and ken burns", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, visualUrl: 'https://e.com/v', settings: {zoomAndPan: true, kenBurnsEffect: true}}]}"},
	{"broll media style on video", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, type: video, aiVisual: {model: veo3.1, prompt: a, mediaStyle: m}}]}"},
	{"broll reference image on video", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, type: video, aiVisual: {model: veo3.1, prompt: a, referenceImageUrl: 'https://e.com/i'}}]}"},
	{"broll first frame on image", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, type: image, aiVisual: {model: flux-schnell, prompt: a, firstFrameImageUrl: 'https://e.com/i'}}]}"},
	{"broll reference images on image", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, type: image, aiVisual: {model: flux-schnell, prompt: a, referenceImageUrls: ['https://e.com/i']}}]}"},
	{"broll first frame and reference images", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, type: video, aiVisual: {model: veo3.1, prompt: a, firstFrameImageUrl: 'https://e.com/i', referenceImageUrls: ['https://e.com/i']}}]}"},
	{"broll duration on image", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, type: image, aiVisual: {model: nanobanana-pro, prompt: a, videoDuration: 4s}}]}"},
	{"broll pixverse duration", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, type: video, aiVisual: {model: pixverse5.5, prompt: a, videoDuration: 4s}}]}"},
	{"broll veo duration", "{story: a, backgroundBrolls: [{brollClip: {start: 0, end: 1}, type: video, aiVisual: {model: veo3.1, prompt: a, videoDuration: 5s}}, {brollClip: {start: 1, end: 2}, color: '#fff'}]}"},

	// Transcript words: the one rule with a messageExpression.
	{"word ends before it starts", "{audioUrl: 'https://e.com/a.mp3', audioLanguage: en, transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}, {words: [{word: b, start_time: 2.5, end_time: 2}, {word: c, start_time: 3, end_time: 1}]}]}"},

	// Template styles.
	{"template subtitle font without family", "{templateOverride: {subtitles: [{text: t}, {text: t, style: {fontUrl: 'https://e.com/f'}}]}}"},
	{"template subtitle animations", "{templateOverride: {subtitles: [{text: t, style: {animations: [{type: entry, name: fade, speed: custom}, {type: entry, name: wipe, speed: slow, futureWords: hidden}]}}]}}"},
	{"template layer font without family", "{templateOverride: {layers: [[{text: t}], [{text: u}, {text: t, style: {fontUrl: 'https://e.com/f'}}]]}}"},
	{"template layer animations", "{templateOverride: {layers: [[{text: t, style: {animations: [{type: exit, name: fade, speed: custom}, {type: exit, name: wipe, speed: slow, futureWords: hidden}]}}]]}}"},
}

// requestCases are whole requests: each scene case as the second of two scenes, then requests
// that relate scenes to the request (sceneErrors) or hold many scenes.
func requestCases(t testing.TB) map[string]*videov1alpha1.StoryboardRequest {
	t.Helper()
	reqs := map[string]*videov1alpha1.StoryboardRequest{}
	parse := func(name, body string) {
		var req videov1alpha1.StoryboardRequest
		if err := yaml.UnmarshalStrict([]byte(body), &req); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		reqs[name] = &req
	}
	var all []string
	for _, c := range sceneCases {
		parse(c.name, "{videoName: t, scenes: [{story: fine}, "+c.scene+"]}")
		all = append(all, c.scene)
	}
	parse("every scene case in one request", "{videoName: t, scenes: ["+strings.Join(all, ", ")+"]}")
	parse("template override without templateId", "{videoName: t, smartLayoutName: l, scenes: [{story: a, maxSubtitleLines: 2, templateOverride: {sceneId: s}}]}")
	parse("AI storyboard", "{videoName: t, aiStoryboard: {enabled: true}, scenes: [{brief: {prompt: a}}, {pptUrl: 'https://e.com/p.pptx'}]}")
	parse("variables", "{videoName: t, templateId: x, variables: {a: b, c: d}, scenes: [{templateOverride: {sceneId: s}}]}")
	for _, n := range []int{1, 12, 60} {
		reqs[fmt.Sprintf("realistic, %d scenes", n)] = realisticRequest(n)
	}
	return reqs
}

// realisticRequest is the request of test/bench's realisticRender: a voice-over, library music, a
// logo, and scenes of a story, a background and three elements.
func realisticRequest(scenes int) *videov1alpha1.StoryboardRequest {
	s := make([]videov1alpha1.Scene, scenes)
	for i := range s {
		s[i] = videov1alpha1.Scene{
			Story:      ptr.To(fmt.Sprintf("Scene %d of a long video. It is told in two sentences.", i)),
			Background: &videov1alpha1.Background{VisualURL: ptr.To(fmt.Sprintf("https://media.example.com/backgrounds/%d.mp4", i))},
			Elements: []videov1alpha1.SceneElement{
				{Type: "text", Text: ptr.To(fmt.Sprintf("Part %d", i)), TextVariant: ptr.To(videov1alpha1.TextVariant("heading")),
					Position: ptr.To(videov1alpha1.ElementPosition("top-center"))},
				{Type: "image", VisualURL: ptr.To(fmt.Sprintf("https://media.example.com/images/%d.png", i)), Top: ptr.To("40%"), Left: ptr.To("10%"), Width: ptr.To("30%")},
				{Type: "shape", Name: ptr.To("rectangle"), Fill: ptr.To("#102030"), BorderRadius: ptr.To(4.0), Position: ptr.To(videov1alpha1.ElementPosition("bottom-left"))},
			},
		}
	}
	return &videov1alpha1.StoryboardRequest{
		VideoName:       "realistic",
		Scenes:          s,
		VoiceOver:       &videov1alpha1.VoiceOver{Enabled: true, AIVoices: []videov1alpha1.AIVoice{{Speaker: "Matthew"}}},
		BackgroundMusic: &videov1alpha1.BackgroundMusic{Enabled: true, AutoMusic: ptr.To(true)},
		Logo:            &videov1alpha1.Logo{URL: "https://media.example.com/logo.png", Position: ptr.To(videov1alpha1.Position("top-right"))},
	}
}

func toUnstructured(t testing.TB, req *videov1alpha1.StoryboardRequest) map[string]any {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(req)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestCheckSaysWhatTheValidatorSays: for every request case, the rules Check evaluates give the
// same errors (type, field, value, detail) and use the same cost as the API server's
// cel.Validator, with the controller's limits and with the API server's, and Check returns them
// after the scenes' errors.
func TestCheckSaysWhatTheValidatorSays(t *testing.T) {
	props := requestProps(t)
	for _, limits := range []struct {
		name           string
		perCall        uint64
		budget         int64
		controllerRule bool
	}{
		{"controller", math.MaxInt64, math.MaxInt64, true},
		{"API server", celconfig.PerCallLimit, celconfig.RuntimeCELCostBudget, false},
	} {
		ref := newReference(t, props, limits.perCall)
		rules, err := newRules(props, limits.perCall)
		if err != nil {
			t.Fatal(err)
		}
		if limits.controllerRule {
			if rules, err = storyboardRules(); err != nil {
				t.Fatal(err)
			}
		}
		root := field.NewPath("spec", "storyboard")
		for name, req := range requestCases(t) {
			obj := toUnstructured(t, req)
			want, wantCost := ref.validate(t, obj, root, limits.budget)
			got, gotCost := rules.Validate(t.Context(), obj, root, limits.budget)
			sameErrors(t, limits.name+", "+name, got, want)
			if gotCost != wantCost {
				t.Errorf("%s, %s: cost %d, the Validator's %d", limits.name, name, gotCost, wantCost)
			}
			if limits.controllerRule {
				checked, err := Check(t.Context(), req, root)
				if err != nil {
					t.Fatal(err)
				}
				scenes := sceneErrors(req, root)
				if len(checked) < len(scenes) || (len(scenes) > 0 && !reflect.DeepEqual(checked[:len(scenes)], scenes)) {
					t.Errorf("%s: Check does not start with the scenes' errors", name)
				}
				sameErrors(t, "Check, "+name, checked[len(scenes):], want)
			}
		}
	}
}

// TestEquivalenceCoversEveryRule: every rule of the request schema is broken by some request
// case, so that TestCheckSaysWhatTheValidatorSays compares each rule's refusal, not only its
// silence.
func TestEquivalenceCoversEveryRule(t *testing.T) {
	props := requestProps(t)
	ref := newReference(t, props, math.MaxInt64)
	// A refusal's field with its list indexes and map keys taken out, and its detail.
	seen := map[string]bool{}
	index := regexp.MustCompile(`\[[^]]*\]`)
	for _, req := range requestCases(t) {
		errs, _ := ref.validate(t, toUnstructured(t, req), field.NewPath("spec"), math.MaxInt64)
		for _, e := range errs {
			seen[index.ReplaceAllString(e.Field, "[]")+" "+e.Detail] = true
		}
	}
	rules := 0
	var walk func(p *apiextensionsv1.JSONSchemaProps, path string)
	walk = func(p *apiextensionsv1.JSONSchemaProps, path string) {
		for _, r := range p.XValidations {
			rules++
			detail := r.Message
			if r.MessageExpression != "" {
				// The one messageExpression names the word's start_time.
				detail = "end_time must not be before start_time (2.5)"
			}
			if !seen[path+r.FieldPath+" "+detail] {
				t.Errorf("no case breaks the rule at %s%s: %s", path, r.FieldPath, detail)
			}
		}
		for name, child := range p.Properties {
			walk(&child, path+"."+name)
		}
		if p.Items != nil && p.Items.Schema != nil {
			walk(p.Items.Schema, path+"[]")
		}
		if p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil {
			walk(p.AdditionalProperties.Schema, path+"[]")
		}
	}
	walk(props, "spec")
	t.Logf("%d rules, %d request cases", rules, len(requestCases(t)))
}

// BenchmarkCheck is the check before paying of a request as test/bench's realisticRender builds
// it: its cost should not grow faster than the request (issue 39).
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{1, 12, 60, 600} {
		req := realisticRequest(n)
		b.Run(fmt.Sprintf("scenes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				errs, err := Check(b.Context(), req, field.NewPath("spec", "storyboard"))
				if err != nil || len(errs) != 0 {
					b.Fatal(err, errs)
				}
			}
		})
	}
}

// semanticsSchema holds a rule of each kind the Validator treats apart, most of which the
// request schema has none of yet: rules on scalars, lists and maps, under additionalProperties
// and list-type maps, with a reason, without a message, with messageExpressions that fail,
// fieldPaths into maps, rules that fail to evaluate or cost too much, nullable and int-or-string
// values, formats CEL types, and an embedded resource.
const semanticsSchema = `
type: object
x-kubernetes-validations:
- rule: "!has(self.count) || self.count != 13"
  message: "  thirteen is unlucky  "
  messageExpression: "'count ' + string(self.count) + ' is unlucky'"
- rule: "!has(self.missing) || self.missing.x == 1"
- rule: "!has(self.tags) || self.tags.all(a, self.tags.all(b, self.tags.all(c, a + b + c != '')))"
  message: costly
properties:
  name:
    type: string
    x-kubernetes-validations:
    - rule: "size(self) >= 2"
    - rule: "self != 'reserved'"
      messageExpression: "'name ' + self + ' is reserved'"
    - rule: "self != 'empty'"
      messageExpression: "''"
      message: fallback for an empty message
    - rule: "self != 'broken'"
      messageExpression: "string(self.size() / 0)"
      message: fallback for a broken message
    - rule: "self != 'lines'"
      messageExpression: "'two\\nlines'"
  count:
    type: integer
    x-kubernetes-validations:
    - rule: "self < 100"
      reason: FieldValueDuplicate
      message: too many
    - rule: "self >= 0"
      reason: FieldValueForbidden
      message: negative
    - rule: "self != 7"
      reason: FieldValueRequired
      message: seven
  ratio:
    type: number
    x-kubernetes-validations:
    - rule: "self <= 1.0"
  nullable:
    type: string
    nullable: true
    x-kubernetes-validations:
    - rule: "self != 'x'"
  intOrString:
    x-kubernetes-int-or-string: true
    x-kubernetes-validations:
    - rule: "self == 1 || self == 'one'"
      message: one
    - rule: "self > 0"
      message: positive
  when:
    type: string
    format: date-time
    x-kubernetes-validations:
    - rule: "self > timestamp('2020-01-01T00:00:00Z')"
  missing:
    type: object
    properties:
      x: {type: integer}
      y: {type: integer}
  tags:
    type: array
    x-kubernetes-list-type: set
    items:
      type: string
      x-kubernetes-validations:
      - rule: "self != 'bad'"
        reason: FieldValueInvalid
    x-kubernetes-validations:
    - rule: "size(self) <= 3"
      message: at most three
  labels:
    type: object
    additionalProperties:
      type: string
      x-kubernetes-validations:
      - rule: "self.startsWith('x')"
        messageExpression: "'label ' + self + ' must start with x'"
    x-kubernetes-validations:
    - rule: "!('forbidden' in self)"
      fieldPath: ".forbidden"
      message: forbidden label
    - rule: "!('a.b' in self)"
      fieldPath: "['a.b']"
      message: dotted label
  ports:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [name]
    items:
      type: object
      required: [name]
      properties:
        name: {type: string}
        port: {type: integer}
        extra:
          type: object
          x-kubernetes-preserve-unknown-fields: true
      x-kubernetes-validations:
      - rule: "!has(self.port) || self.port > 0"
        fieldPath: .port
        message: port must be positive
      - rule: "!has(self.extra) || self.extra == self.extra"
  nested:
    type: object
    properties:
      deeper:
        type: array
        items:
          type: array
          items:
            type: object
            properties:
              v: {type: integer}
            x-kubernetes-validations:
            - rule: "!has(self.v) || self.v % 2 == 0"
              message: v must be even
  embedded:
    type: object
    x-kubernetes-embedded-resource: true
    x-kubernetes-preserve-unknown-fields: true
    x-kubernetes-validations:
    - rule: "self.kind == 'Thing'"
      message: only things
`

// semanticsObjects are values of semanticsSchema that break its rules one way or another.
var semanticsObjects = []string{
	`{}`,
	`{name: ok, count: 1, ratio: 0.5, intOrString: one, when: "2021-01-01T00:00:00Z", tags: [a, b], labels: {xa: xb}, ports: [{name: a, port: 1}], nested: {deeper: [[{v: 2}]]}, embedded: {apiVersion: v1, kind: Thing}}`,
	`{name: a}`,
	`{name: reserved}`,
	`{name: empty}`,
	`{name: broken}`,
	`{name: lines}`,
	`{count: 13}`,
	`{count: 100}`,
	`{count: -1}`,
	`{count: 7}`,
	`{ratio: 2}`,
	`{nullable: null}`,
	`{nullable: x}`,
	`{intOrString: 2}`,
	`{intOrString: two}`,
	`{when: "2019-01-01T00:00:00Z"}`,
	`{missing: {y: 1}}`,
	`{tags: [a, bad, c, d]}`,
	`{labels: {a: b, xc: d, forbidden: x, a.b: c}}`,
	`{ports: [{name: a, port: 0}, {name: b, port: -3, extra: {any: [1, 2]}}]}`,
	`{nested: {deeper: [[{v: 1}, {v: 2}], [], [{v: 3}]]}}`,
	`{embedded: {apiVersion: v1, kind: Other, metadata: {name: n}}}`,
	`{name: a, count: 100, tags: [bad, bad2], labels: {a: b}, ports: [{name: a, port: -1}], nested: {deeper: [[{v: 5}]]}, embedded: {kind: Other}}`,
	// Values of the wrong type, which the API server's schema validation would refuse first.
	`{count: "many", tags: {a: b}, labels: [a]}`,
}

// TestRulesSayWhatTheValidatorSays compares the rules' errors and costs with the Validator's on
// semanticsSchema, with the API server's limits, a per-call limit the costly rule exceeds, and
// total budgets that run out at various places.
func TestRulesSayWhatTheValidatorSays(t *testing.T) {
	var props apiextensionsv1.JSONSchemaProps
	if err := yaml.UnmarshalStrict([]byte(semanticsSchema), &props); err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	for _, o := range semanticsObjects {
		// Through JSON, as the API server decodes an object: whole numbers become int64.
		raw, err := yaml.YAMLToJSON([]byte(o))
		if err != nil {
			t.Fatalf("%s: %v", o, err)
		}
		var obj map[string]any
		if err := utiljson.Unmarshal(raw, &obj); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
		objs = append(objs, obj)
	}
	costly := map[string]any{"tags": []any{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}}
	objs = append(objs, costly)

	root := field.NewPath("spec")
	for _, perCall := range []uint64{celconfig.PerCallLimit, 500} {
		ref := newReference(t, &props, perCall)
		rules, err := newRules(&props, perCall)
		if err != nil {
			t.Fatal(err)
		}
		for i, obj := range objs {
			what := fmt.Sprintf("per-call limit %d, %s", perCall, semanticsObjects[min(i, len(semanticsObjects)-1)])
			if i == len(semanticsObjects) {
				what = fmt.Sprintf("per-call limit %d, ten tags", perCall)
			}
			want, wantCost := ref.validate(t, obj, root, celconfig.RuntimeCELCostBudget)
			got, gotCost := rules.Validate(t.Context(), obj, root, celconfig.RuntimeCELCostBudget)
			sameErrors(t, what, got, want)
			if gotCost != wantCost {
				t.Errorf("%s: cost %d, the Validator's %d", what, gotCost, wantCost)
			}
		}
	}

	// A budget that runs out stops the walk where it runs out. The Validator walks an object's
	// properties in Go's map order, so where a budget runs out below the root's rules (which it
	// evaluates first, in order) varies from run to run: there, both must run out, with the same
	// errors before.
	ref := newReference(t, &props, celconfig.PerCallLimit)
	rules, err := newRules(&props, celconfig.PerCallLimit)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"count": int64(13), "tags": []any{"a"}}
	const outOfBudget = "validation failed due to running out of cost budget, no further validation rules will be run"
	for budget := int64(0); budget < 60; budget++ {
		what := fmt.Sprintf("budget %d", budget)
		want, wantCost := ref.validate(t, obj, root, budget)
		got, gotCost := rules.Validate(t.Context(), obj, root, budget)
		if gotCost != wantCost {
			t.Errorf("%s: cost %d, the Validator's %d", what, gotCost, wantCost)
		}
		if n := len(want); n > 0 && want[n-1].Detail == outOfBudget && want[n-1].Field != root.String() {
			if len(got) != n || got[n-1].Detail != outOfBudget {
				t.Errorf("%s: got%s\nwant the budget to run out after%s", what, describe(got), describe(want[:n-1]))
				continue
			}
			sameErrors(t, what, got[:n-1], want[:n-1])
			continue
		}
		sameErrors(t, what, got, want)
	}
}

// TestRulesRefuseWhatTheyDoNotReproduce: a transition rule, or a rule under allOf, is refused
// when the rules are built rather than evaluated differently from the Validator; the request
// schema holds neither.
func TestRulesRefuseWhatTheyDoNotReproduce(t *testing.T) {
	for name, schema := range map[string]string{
		"transition rule":          `{type: object, properties: {a: {type: string, x-kubernetes-validations: [{rule: "self == oldSelf"}]}}}`,
		"optional transition rule": `{type: object, properties: {a: {type: string, x-kubernetes-validations: [{rule: "oldSelf.orValue('') == ''", optionalOldSelf: true}]}}}`,
		"rule under allOf":         `{type: object, properties: {a: {type: string}}, allOf: [{properties: {a: {x-kubernetes-validations: [{rule: "self != ''"}]}}}]}`,
	} {
		var props apiextensionsv1.JSONSchemaProps
		if err := yaml.UnmarshalStrict([]byte(schema), &props); err != nil {
			t.Fatal(err)
		}
		if _, err := newRules(&props, math.MaxInt64); err == nil {
			t.Errorf("%s: newRules takes it", name)
		}
	}
	if strings.Contains(string(requestSchema), "oldSelf") {
		t.Error("the request schema has a transition rule (oldSelf): Check has no old object, and its evaluation does not reproduce the Validator's handling of one")
	}
	if _, err := storyboardRules(); err != nil {
		t.Error(err)
	}
}
