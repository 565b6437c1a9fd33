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

package controller

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/boundedset"
	"github.com/videoops/video-operator/internal/simulator"
)

// presubmitCase is a request admission accepts; want lists the violations the pre-submit check
// reports, each as "field path: message", in order (none when the request is valid).
type presubmitCase struct {
	name string
	req  string
	want []string
}

// presubmitCases are the rules the controller checks before it submits (README, "API limits and
// sizes"): the rules relating scenes to the request, and the CEL rules of elements, B-rolls,
// transcript words and template styles. Each reject row names the section of the interface
// document the rule comes from.
var presubmitCases = []presubmitCase{
	{name: "Scene: transcript end_time >= start_time",
		req:  "{videoName: test, scenes: [{videoUrl: 'https://example.com/a.mp4', audioLanguage: en-US, transcript: [{words: [{word: a, start_time: 0, end_time: 1}, {word: b, start_time: 2, end_time: 1.5}]}]}]}",
		want: []string{"spec.scenes[0].transcript[0].words[1].end_time: end_time must not be before start_time"}},
	{name: "Scene: transcript end_time == start_time is allowed",
		req: "{videoName: test, scenes: [{audioUrl: 'https://example.com/a.mp3', audioLanguage: en-US, transcript: [{words: [{word: a, start_time: 1, end_time: 1}]}]}]}"},
	{name: "SubtitleStyle: fontFamily required when fontUrl is given (template layer)",
		req:  "{videoName: test, templateId: tpl-1, scenes: [{templateOverride: {layers: [[{layerId: a}, {layerId: b, style: {fontUrl: 'https://example.com/f.ttf'}}]]}}]}",
		want: []string{"spec.scenes[0].templateOverride.layers[0][1].style.fontFamily: fontFamily is required when fontUrl is given"}},
	{name: "SubtitleStyle: one entry and one exit animation (template layer)",
		req:  "{videoName: test, templateId: tpl-1, scenes: [{templateOverride: {layers: [[{style: {animations: [{name: fade, type: entry, speed: slow}, {name: wipe, type: entry, speed: fast}]}}]]}}]}",
		want: []string{"spec.scenes[0].templateOverride.layers[0][0].style.animations: animations holds at most one entry and one exit animation"}},
	{name: "SubtitleStyle: customSpeedValue required when speed is custom (template subtitle)",
		req:  "{videoName: test, templateId: tpl-1, scenes: [{templateOverride: {subtitles: [{text: a, style: {animations: [{name: fade, type: exit, speed: custom}]}}]}}]}",
		want: []string{"spec.scenes[0].templateOverride.subtitles[0].style.animations[0].customSpeedValue: customSpeedValue is required when speed is custom"}},
	{name: "SubtitleStyle: futureWords only with fade and blur entry animations (template layer)",
		req:  "{videoName: test, templateId: tpl-1, scenes: [{templateOverride: {layers: [[{style: {animations: [{name: drift, type: entry, speed: slow, futureWords: subtle}]}}]]}}]}",
		want: []string{"spec.scenes[0].templateOverride.layers[0][0].style.animations[0].futureWords: futureWords applies only to fade and blur entry animations"}},
	{name: "SubtitleStyle: a valid template style",
		req: "{videoName: test, templateId: tpl-1, scenes: [{templateOverride: {subtitles: [{text: a, style: {fontUrl: 'https://example.com/f.ttf', fontFamily: F, animations: [{name: blur, type: entry, speed: custom, customSpeedValue: 1, futureWords: hidden}, {name: fade, type: exit, speed: slow}]}}]}}]}"},
	{name: "TemplateOverride (only with templateId)",
		req:  "{videoName: test, scenes: [{story: Hello}, {story: Bye, templateOverride: {scenePosition: 1}}]}",
		want: []string{"spec.scenes[1].templateOverride: scenes[].templateOverride is only valid with templateId"}},
	{name: "Scene: maxSubtitleLines not usable with smart layouts",
		req:  "{videoName: test, smartLayoutName: Bold, scenes: [{story: Hello, maxSubtitleLines: 2}]}",
		want: []string{"spec.scenes[0].maxSubtitleLines: scenes[].maxSubtitleLines cannot be used with a smart layout"}},
	{name: "AI storyboard rules: brief mode is a single brief scene",
		req:  "{videoName: test, aiStoryboard: {enabled: true}, scenes: [{story: Hello}, {brief: {prompt: A launch video}}]}",
		want: []string{"spec.scenes[1].brief: a brief (storyCoPilot) scene must be the only scene"}},
	{name: "AI storyboard rules: a single brief scene is brief mode",
		req: "{videoName: test, aiStoryboard: {enabled: true}, scenes: [{brief: {prompt: A launch video}}]}"},
	{name: "AI storyboard rules: presentation, audio and video sources are rejected, each at its scene",
		req: "{videoName: test, aiStoryboard: {enabled: true}, scenes: [{pptUrl: 'https://example.com/d.pptx'}, {audioUrl: 'https://example.com/a.mp3', audioLanguage: en-US, transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}]}]}",
		want: []string{
			"spec.scenes[0].pptUrl: AI storyboard mode does not support presentation (pptUrl) scenes",
			"spec.scenes[1].audioUrl: AI storyboard mode does not support audio (audioUrl) scenes",
		}},
	{name: "SceneElement: name required for a shape (the 20th element of the 3rd scene)",
		req:  "{videoName: test, scenes: [{story: a}, {story: b}, {story: c, elements: [" + strings.Repeat("{type: text, text: Hi}, ", 19) + "{type: shape, fill: '#ffffff'}]}]}",
		want: []string{"spec.scenes[2].elements[19].name: name is required for a shape element"}},
	{name: "Scene: a B-roll is a Background (exactly one source)",
		req:  "{videoName: test, scenes: [{story: Hello, backgroundBrolls: [{color: '#000', brollClip: {start: 0, end: 1}}, {brollClip: {start: 1, end: 2}}]}]}",
		want: []string{"spec.scenes[0].backgroundBrolls[1]: background takes exactly one of visualUrl, color or aiVisual"}},
	{name: "Scene: every violation is reported, in order",
		req: "{videoName: test, scenes: [{story: Hello}, {audioUrl: 'https://example.com/a.mp3', audioLanguage: en-US, transcript: [{words: [{word: a, start_time: 3, end_time: 1}]}, {words: [{word: b, start_time: 5, end_time: 4}]}]}]}",
		want: []string{
			"spec.scenes[1].transcript[0].words[0].end_time: end_time must not be before start_time",
			"spec.scenes[1].transcript[1].words[0].end_time: end_time must not be before start_time",
		}},
}

func decodeRequest(t *testing.T, s string) *videov1alpha1.StoryboardRequest {
	t.Helper()
	var req videov1alpha1.StoryboardRequest
	if err := yaml.UnmarshalStrict([]byte(s), &req); err != nil {
		t.Fatalf("test request does not decode: %v\n%s", err, s)
	}
	return &req
}

func mustPresubmit(t *testing.T, req *videov1alpha1.StoryboardRequest, root *field.Path) field.ErrorList {
	t.Helper()
	errs, err := presubmitErrors(t.Context(), req, root)
	if err != nil {
		t.Fatal(err)
	}
	return errs
}

func TestPresubmitErrors(t *testing.T) {
	for _, tc := range presubmitCases {
		t.Run(tc.name, func(t *testing.T) {
			errs := mustPresubmit(t, decodeRequest(t, tc.req), field.NewPath("spec"))
			// The simulator, an independent reading of the document, must agree on the verdict.
			body, err := yaml.YAMLToJSON([]byte(tc.req))
			if err != nil {
				t.Fatal(err)
			}
			simErrs, err := simulator.ValidateStoryboardRequest(body)
			if err != nil {
				t.Fatal(err)
			}
			if (len(simErrs) == 0) != (len(tc.want) == 0) {
				t.Errorf("the simulator disagrees: it reports %v", simErrs)
			}
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d violations, want %d: %v", len(errs), len(tc.want), errs)
			}
			for i, want := range tc.want {
				path, msg, _ := strings.Cut(want, ": ")
				if errs[i].Field != path || !strings.Contains(errs[i].Error(), msg) {
					t.Errorf("violation %d is %q, want field %s and message %q", i, errs[i].Error(), path, msg)
				}
			}
		})
	}
}

func TestPresubmitPathAndMessage(t *testing.T) {
	req := decodeRequest(t, "{videoName: test, scenes: [{audioUrl: 'https://example.com/a.mp3', audioLanguage: en-US, transcript: [{words: ["+
		strings.TrimSuffix(strings.Repeat("{word: a, start_time: 2, end_time: 1}, ", 8), ", ")+"]}]}]}")
	inline := &target{render: req}
	errs := mustPresubmit(t, req, requestPath(inline))
	if len(errs) != 8 || errs[0].Field != "spec.storyboard.scenes[0].transcript[0].words[0].end_time" {
		t.Fatalf("an inline VideoRender request sits at spec.storyboard: %v", errs)
	}
	msg := presubmitMessage(errs)
	for _, want := range []string{"nothing was sent", "spec.storyboard.scenes[0].transcript[0].words[4].end_time", "and 3 more"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "words[5]") {
		t.Errorf("message %q lists more than %d violations", msg, maxPresubmitErrors)
	}
	if got := requestPath(&target{preview: req}).String(); got != "spec" {
		t.Errorf("a VideoStoryboard's request sits at spec, got %s", got)
	}
}

func TestCheckedRequestsAreNamedByGeneration(t *testing.T) {
	vr := &videov1alpha1.VideoRender{}
	vr.UID, vr.Generation = "u-1", 3
	c := boundedset.New[string](maxChecked)
	now := time.Now()
	inline := checkedKey(vr, &target{})
	c.Add(inline, now)
	if !c.Has(inline) {
		t.Fatal("a request that passed is remembered")
	}
	vr.Generation = 4
	if c.Has(checkedKey(vr, &target{})) {
		t.Error("an edited spec (a new generation) is checked again")
	}
	if c.Has(checkedKey(vr, &target{sourceUID: "u-1", sourceGeneration: 3})) != c.Has(inline) {
		t.Error("a storyboardRef render is named by its VideoStoryboard's uid and generation")
	}
	if c.Has(checkedKey(vr, &target{sourceUID: "vsb-9", sourceGeneration: 3})) {
		t.Error("another VideoStoryboard's request is not the same request")
	}
	for i := range maxChecked {
		c.Add(string(rune(i))+"/x", now)
	}
	if c.Has(inline) || c.Len() > maxChecked {
		t.Errorf("the memory is bounded: %d entries", c.Len())
	}
}
