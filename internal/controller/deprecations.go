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

// warnDeprecations emits a Warning event, once per submission, for fields the service accepts
// but ignores ("Versioning": animatePPT is ignored in favour of pptSlideAnimation). The renamed
// storyCoPilot and videoType are passed through as written: the service still accepts them.
func (l *lifecycle[T]) warnDeprecations(obj T, t *target) {
	req := t.request()
	if req == nil {
		return
	}
	for i, s := range req.Scenes {
		if s.AnimatePPT != nil {
			l.opts.Recorder.Eventf(obj, nil, "Warning", eventAnimatePPTIgnored, "Submit",
				"scenes[%d].animatePPT is ignored by the service (the deck renders without animation); use pptSlideAnimation instead", i)
			return
		}
	}
}
