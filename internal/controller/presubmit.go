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
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/requestrules"
)

// The rules of the interface document that the API server cannot afford to check at admission
// (the CEL rules under requestrules.PresubmitOnly: elements, B-rolls, transcript words, template
// styles) are checked here, before anything is written in flight or sent, by evaluating every
// rule of the request's markers (internal/requestrules). A request that breaks one stalls with
// InvalidRequest and the field path, and nothing is paid. See the README, "API limits and sizes".

// maxPresubmitErrors is how many violations the status message lists; the rest are counted.
const maxPresubmitErrors = 5

// presubmitErrors checks every rule of req's markers; root is the path of the request in the
// object (spec, or spec.storyboard of a VideoRender).
func presubmitErrors(ctx context.Context, req *videov1alpha1.StoryboardRequest, root *field.Path) (field.ErrorList, error) {
	errs, err := requestrules.Check(ctx, req, root)
	if err != nil {
		return nil, fmt.Errorf("checking the request's rules: %w", err)
	}
	return errs, nil
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

// checkBeforeSubmit is submit's first gate: it refuses a request that breaks a rule admission could not check: the object
// stalls with InvalidRequest before anything is written in flight or sent. Like a 400 from the
// service, the refusal is final for this generation and consumes a pending retry.
func (l *lifecycle[T]) checkBeforeSubmit(ctx context.Context, s *scope[T]) *stop {
	tx, t, retry := s.tx, s.target, s.retry
	req := t.request()
	if req == nil {
		return nil
	}
	key := checkedKey(tx.Obj, t)
	if l.checked.Has(key) {
		return nil
	}
	errs, err := presubmitErrors(ctx, req, requestPath(t))
	if err != nil {
		return stopOn(err)
	}
	if len(errs) == 0 {
		l.checked.Add(key, l.opts.Clock.Now())
		return nil
	}
	obj, st := s.obj, s.st
	msg := presubmitMessage(errs)
	if t.sourceUID != "" {
		msg = "the reviewed VideoStoryboard's request was " + msg
	}
	l.recordRefused(tx, string(videov1alpha1.ReasonInvalidRequest), msg)
	if retry != "" {
		st.LastHandledRetry = retry
	}
	obj.SetJobSource(&videov1alpha1.Submission{StoryboardGeneration: t.sourceGeneration,
		StoryboardUID: string(t.sourceUID), StoryboardDigest: t.recordedSourceDigest(), NarrationPinned: narrationPinned(t),
		ApprovedBy: t.approvedBy})
	l.stall(tx, videov1alpha1.ReasonInvalidRequest, failureMessage(st))
	return stopHere()
}

// checked (lifecycle.checked) remembers which requests passed the pre-submit check, so that a
// submission waiting for the call budget or the circuit, requeued many times, is checked once:
// the check of a 1.5 MiB transcript takes about half a second. A request is named by the object
// (or, for a storyboardRef render, the VideoStoryboard) it comes from and its generation, which
// changes with every edit of the spec. It is forgotten wholesale when it grows past maxChecked.
const maxChecked = 50_000

func checkedKey(obj client.Object, t *target) string {
	if t.sourceUID != "" {
		if t.narrationPinned {
			// A brief narrated word for word is another request than the brief itself.
			return fmt.Sprintf("%s/%d/narration", t.sourceUID, t.sourceGeneration)
		}
		return fmt.Sprintf("%s/%d", t.sourceUID, t.sourceGeneration)
	}
	return fmt.Sprintf("%s/%d", obj.GetUID(), obj.GetGeneration())
}
