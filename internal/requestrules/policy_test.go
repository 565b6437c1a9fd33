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
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// TestCheckHoldsThePoliciesRules: the rules the admission policies check (PolicyChecked) are
// checked before paying too, so that a request admitted without its policy (missing, unbound,
// or a request above its scene bound) is refused with the field and nothing is paid.
func TestCheckHoldsThePoliciesRules(t *testing.T) {
	for _, tc := range []struct{ scene, field, message string }{
		{"{story: a, blogUrl: 'https://example.com/b'}", "spec.scenes[1]", "a scene takes exactly one content source"},
		{"{audioUrl: 'https://example.com/a.mp3', transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}]}", "spec.scenes[1]", "audioLanguage is required"},
		{"{story: a, background: {type: video, aiVisual: {model: veo3.1, prompt: a cat, videoDuration: 5s}}}", "spec.scenes[1].background.aiVisual", "videoDuration for veo3.1"},
		{"{story: a, subtitleStyle: {animations: [{type: entry, name: fade, speed: custom}]}}", "spec.scenes[1].subtitleStyle.animations[0]", "customSpeedValue is required"},
	} {
		var req videov1alpha1.StoryboardRequest
		if err := yaml.UnmarshalStrict([]byte("{videoName: t, scenes: [{story: fine}, "+tc.scene+"]}"), &req); err != nil {
			t.Fatal(err)
		}
		errs, err := Check(context.Background(), &req, field.NewPath("spec"))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range errs {
			if strings.HasPrefix(e.Field, tc.field) && strings.Contains(e.Error(), tc.message) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want an error at %s with %q, got %v", tc.scene, tc.field, tc.message, errs)
		}
	}
	if !UnderPolicy(Segments("scenes[].background.aiVisual")) || UnderPolicy(Segments("scenes[].elements[]")) || UnderPolicy(Segments("aiStoryboard")) {
		t.Error("UnderPolicy: scenes[] and below, except the PresubmitOnly places")
	}
}
