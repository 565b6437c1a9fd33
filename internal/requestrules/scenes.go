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
	"k8s.io/apimachinery/pkg/util/validation/field"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// sceneErrors checks the rules that relate each scene to the request. They are not CEL rules:
// the API server evaluates a rule that iterates over a list in time quadratic in its length (its
// cost tracking searches a stack that grows with every item), so one such rule took 28 s on
// 120,000 scenes and a 1.5 MiB storyboard timed out at admission. Here they are one pass.
func sceneErrors(req *videov1alpha1.StoryboardRequest, root *field.Path) field.ErrorList {
	var errs field.ErrorList
	ai := req.AIStoryboard != nil && req.AIStoryboard.Enabled
	smartLayout := req.SmartLayoutID != nil || req.SmartLayoutName != nil
	for i := range req.Scenes {
		sc := &req.Scenes[i]
		p := root.Child("scenes").Index(i)
		// "TemplateOverride (only with templateId)".
		if sc.TemplateOverride != nil && req.TemplateID == nil {
			errs = append(errs, field.Forbidden(p.Child("templateOverride"), "scenes[].templateOverride is only valid with templateId"))
		}
		// "Scene": maxSubtitleLines "not usable with smart layouts".
		if sc.MaxSubtitleLines != nil && smartLayout {
			errs = append(errs, field.Forbidden(p.Child("maxSubtitleLines"),
				"scenes[].maxSubtitleLines cannot be used with a smart layout (smartLayoutId or smartLayoutName)"))
		}
		if !ai {
			continue
		}
		// "AI storyboard rules": brief mode is a single brief scene; text-to-video sources only.
		if len(req.Scenes) > 1 {
			if sc.Brief != nil {
				errs = append(errs, field.Forbidden(p.Child("brief"), briefAlone))
			}
			if sc.StoryCoPilot != nil {
				errs = append(errs, field.Forbidden(p.Child("storyCoPilot"), briefAlone))
			}
		}
		if sc.PPTURL != nil {
			errs = append(errs, field.Forbidden(p.Child("pptUrl"),
				"AI storyboard mode does not support presentation (pptUrl) scenes: use story, blogUrl or brief scenes"))
		}
		if sc.AudioURL != nil {
			errs = append(errs, field.Forbidden(p.Child("audioUrl"),
				"AI storyboard mode does not support audio (audioUrl) scenes: use story, blogUrl or brief scenes"))
		}
		if sc.VideoURL != nil {
			errs = append(errs, field.Forbidden(p.Child("videoUrl"),
				"AI storyboard mode does not support video (videoUrl) scenes: use story, blogUrl or brief scenes"))
		}
	}
	return errs
}

const briefAlone = "in AI storyboard brief mode a brief (storyCoPilot) scene must be the only scene: the AI writes the whole narration from it"
