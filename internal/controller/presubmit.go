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
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// This file holds the rules of the interface document that the API server cannot afford to check
// at admission: a CEL rule's estimated cost is one evaluation times the maxItems of every list
// around it, and rules on every transcript word or every template subtitle and layer would force
// bounds the document does not set. The controller checks them before it submits, so a request
// that breaks one stalls with InvalidRequest and the field path, and nothing is paid. Every other
// rule stays in the CRD schema (see the README, "API limits and sizes").

// maxPresubmitErrors is how many violations the status message lists; the rest are counted.
const maxPresubmitErrors = 5

// presubmitErrors checks the rules of req that admission leaves to the controller; root is the
// path of the request in the object (spec, or spec.storyboard of a VideoRender).
func presubmitErrors(req *videov1alpha1.StoryboardRequest, root *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range req.Scenes {
		sc := &req.Scenes[i]
		sp := root.Child("scenes").Index(i)
		for j := range sc.Transcript {
			for k, w := range sc.Transcript[j].Words {
				// "Scene": word end_time (number >= start_time).
				if w.EndTime < w.StartTime {
					errs = append(errs, field.Invalid(sp.Child("transcript").Index(j).Child("words").Index(k).Child("end_time"),
						w.EndTime, fmt.Sprintf("end_time must not be before start_time (%v)", w.StartTime)))
				}
			}
		}
		if to := sc.TemplateOverride; to != nil {
			tp := sp.Child("templateOverride")
			for j := range to.Subtitles {
				errs = append(errs, layerStyleErrors(to.Subtitles[j].Style, tp.Child("subtitles").Index(j).Child("style"))...)
			}
			for j, group := range to.Layers {
				for k := range group {
					errs = append(errs, layerStyleErrors(group[k].Style, tp.Child("layers").Index(j).Index(k).Child("style"))...)
				}
			}
		}
	}
	return errs
}

// layerStyleErrors checks the SubtitleStyle rules of a template subtitle's or layer's style: the
// same rules, with the same messages, that the CRD checks on every other SubtitleStyle.
func layerStyleErrors(st *videov1alpha1.LayerStyle, p *field.Path) field.ErrorList {
	if st == nil {
		return nil
	}
	var errs field.ErrorList
	if st.FontURL != nil && st.FontFamily == nil {
		errs = append(errs, field.Required(p.Child("fontFamily"), "fontFamily is required when fontUrl is given"))
	}
	if len(st.Animations) == 2 && st.Animations[0].Type == st.Animations[1].Type {
		errs = append(errs, field.Invalid(p.Child("animations"), string(st.Animations[1].Type),
			"animations holds at most one entry and one exit animation"))
	}
	for i, a := range st.Animations {
		ap := p.Child("animations").Index(i)
		if a.Speed == "custom" && a.CustomSpeedValue == nil {
			errs = append(errs, field.Required(ap.Child("customSpeedValue"), "customSpeedValue is required when speed is custom"))
		}
		if a.FutureWords != nil && (a.Type != "entry" || (a.Name != "fade" && a.Name != "blur")) {
			errs = append(errs, field.Invalid(ap.Child("futureWords"), string(*a.FutureWords),
				"futureWords applies only to fade and blur entry animations"))
		}
	}
	return errs
}

// presubmitMessage lists the first violations, each with its field path, and counts the rest.
func presubmitMessage(errs field.ErrorList) string {
	shown := errs
	if len(shown) > maxPresubmitErrors {
		shown = shown[:maxPresubmitErrors]
	}
	parts := make([]string, 0, len(shown)+1)
	for _, e := range shown {
		parts = append(parts, e.Error())
	}
	if more := len(errs) - len(shown); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return "refused before submitting, nothing was sent: " + strings.Join(parts, "; ")
}

// requestPath is where the request t sends sits in the object: spec of a VideoStoryboard, or
// spec.storyboard of a VideoRender; for a storyboardRef render, spec of that VideoStoryboard.
func requestPath(t *target) *field.Path {
	if t.render != nil && t.sourceUID == "" {
		return field.NewPath("spec", "storyboard")
	}
	return field.NewPath("spec")
}

// checkBeforeSubmit refuses a request that breaks a rule admission could not check: the object
// stalls with InvalidRequest before anything is written in flight or sent. Like a 400 from the
// service, the refusal is final for this generation and consumes a pending retry.
func (l *lifecycle[T]) checkBeforeSubmit(tx *statusTxn[T], t *target, retry string) bool {
	req := t.request()
	if req == nil {
		return true
	}
	errs := presubmitErrors(req, requestPath(t))
	if len(errs) == 0 {
		return true
	}
	obj := tx.obj
	st := l.adapter.jobStatus(obj)
	msg := presubmitMessage(errs)
	if t.sourceUID != "" {
		msg = "the reviewed VideoStoryboard's request was " + msg
	}
	l.recordRefused(tx, string(videov1alpha1.ReasonInvalidRequest), msg)
	if retry != "" {
		st.LastHandledRetry = retry
	}
	l.adapter.setRecordedSource(obj, t.sourceGeneration, t.sourceUID)
	l.stall(tx, videov1alpha1.ReasonInvalidRequest, failureMessage(st))
	return false
}
