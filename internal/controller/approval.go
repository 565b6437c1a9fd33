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
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The approval gate of a storyboardRef render (DESIGN.md "What is paid for is what was
// approved"): which preview a render may pay for, and the request that narrates the approved
// narration in brief mode.

// DefaultApprovalClockSkew is the default of Options.ApprovalClockSkew.
const DefaultApprovalClockSkew = 5 * time.Second

// approvedPreview decides whether the storyboard's current completed preview (digest) is
// approved by the render. It returns nil when it is, or the reason to wait.
func (a renderAdapter) approvedPreview(ctx context.Context, o *videov1alpha1.VideoRender, sb *videov1alpha1.VideoStoryboard) (*waiting, error) {
	ref := o.Spec.StoryboardRef
	digest := ""
	if sb.Status.Preview != nil {
		digest = sb.Status.Preview.Digest
	}
	current := fmt.Sprintf("the current preview of VideoStoryboard %q (generation %d) has digest %s", sb.Name, sb.Generation, digestOrNone(digest))
	approve := fmt.Sprintf("to render it, run: kubectl video approve vr/%s -n %s --digest %s", o.Name, o.Namespace, digestOrNone(digest))
	switch {
	case ref.ApprovedDigest != "":
		if sb.Status.Preview.NamedBy(ref.ApprovedDigest) {
			return nil, nil
		}
		return awaiting(fmt.Sprintf("Approved preview %s is not the current preview: no current preview of VideoStoryboard %q has the approved digest; %s; %s",
			ref.ApprovedDigest, sb.Name, current, approve)), nil
	case ref.Approval == videov1alpha1.ApprovalLatest:
		return nil, nil
	case ref.Approval == videov1alpha1.ApprovalPinned:
		return awaiting(fmt.Sprintf("Approval is Pinned and no approvedDigest is set; %s; %s", current, approve)), nil
	}
	// PreviewAtApproval: the preview must have completed before the spec was last written. The
	// time is read once per generation and kept in status: managedFields keep one time per field
	// manager, which a later metadata-only write by the spec's manager moves forward.
	var written time.Time
	if sw := o.Status.SpecWritten; sw != nil && sw.Generation == o.Generation {
		written = sw.At.Time
	} else {
		var err error
		if written, err = a.lastSpecWrite(ctx, o); err != nil {
			return nil, err
		}
		o.Status.SpecWritten = &videov1alpha1.GenerationTime{Generation: o.Generation, At: metav1.NewTime(written)}
	}
	done := sb.Status.CompletedAt
	if digest != "" && done != nil && done.Add(a.skew).Before(written) {
		return nil, nil
	}
	when := "has no completion time"
	if done != nil {
		when = "completed at " + done.UTC().Format(time.RFC3339)
	}
	return awaiting(fmt.Sprintf("The current preview of VideoStoryboard %q (generation %d, digest %s) %s, not before this render's spec was written at %s (approval PreviewAtApproval, clock skew allowance %s), so nobody approved it; %s",
		sb.Name, sb.Generation, digestOrNone(digest), when, written.UTC().Format(time.RFC3339), a.skew, approve)), nil
}

func awaiting(msg string) *waiting {
	return &waiting{reason: videov1alpha1.ReasonAwaitingApproval, message: msg}
}

func digestOrNone(digest string) string {
	if digest == "" {
		return "(none)"
	}
	return digest
}

// lastSpecWrite is when the render's spec was last written, by the API server's clock: the
// newest managedFields entry of the main resource that owns a spec field, or the creation time.
// The manager's cache drops managedFields, so they are read from the API server, only when a
// preview's approval must be decided.
func (a renderAdapter) lastSpecWrite(ctx context.Context, o *videov1alpha1.VideoRender) (time.Time, error) {
	written := o.CreationTimestamp.Time
	if a.reader == nil {
		return written, nil
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(videov1alpha1.GroupVersion.WithKind("VideoRender"))
	if err := a.reader.Get(ctx, client.ObjectKeyFromObject(o), meta); err != nil {
		return time.Time{}, fmt.Errorf("reading when the spec of VideoRender %s/%s was written: %w", o.Namespace, o.Name, err)
	}
	written = meta.CreationTimestamp.Time
	for _, mf := range meta.ManagedFields {
		if mf.Subresource != "" || mf.Time == nil || mf.FieldsV1 == nil || !ownsSpec(mf.FieldsV1.GetRawBytes()) {
			continue
		}
		if mf.Time.After(written) {
			written = mf.Time.Time
		}
	}
	return written, nil
}

// ownsSpec reports whether a managedFields entry's field set owns a field under spec. Only the
// top-level key counts: a label or an annotation whose key is "spec" is "f:spec" too, one level
// down. A field set that cannot be read is no write of spec: an approval it would renew is
// asked for again (a pin), never assumed.
func ownsSpec(fields []byte) bool {
	var set map[string]json.RawMessage
	if err := json.Unmarshal(fields, &set); err != nil {
		return false
	}
	_, ok := set["f:spec"]
	return ok
}

// isBrief reports whether req is an AI brief-mode request ("AI storyboard rules" 3): AI
// storyboard enabled and a single brief (or storyCoPilot) scene.
func isBrief(req *videov1alpha1.StoryboardRequest) bool {
	if req.AIStoryboard == nil || !req.AIStoryboard.Enabled || len(req.Scenes) != 1 {
		return false
	}
	return req.Scenes[0].Brief != nil || req.Scenes[0].StoryCoPilot != nil
}

// briefSceneSettings names, in JSON, what the brief scene sets besides its brief: the pinned
// request has no scene to carry it the way the preview had it.
func briefSceneSettings(s videov1alpha1.Scene) []string {
	raw, err := json.Marshal(s)
	if err != nil {
		return []string{"(a scene that cannot be encoded)"}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return []string{"(a scene that cannot be encoded)"}
	}
	delete(fields, "brief")
	delete(fields, "storyCoPilot")
	return slices.Sorted(maps.Keys(fields))
}

// pinNarration returns the render request that narrates the approved narration word for word:
// the previewed request with its brief scene replaced by one script-mode story scene per
// previewed scene ("AI storyboard rules" 2), each holding only that scene's narration, and
// aiStoryboard still enabled so that the AI designs the scenes. A brief scene with other settings
// never gets here (briefSceneSettings): repeated on every story scene they would not be what was
// previewed (an aiVisual there would be paid once per scene).
// It fails, with the reason to stall, when the narration in status is not whole.
func pinNarration(req *videov1alpha1.StoryboardRequest, p *videov1alpha1.StoryboardPreview) (*videov1alpha1.StoryboardRequest, string) {
	switch {
	case p == nil || len(p.Scenes) == 0:
		return nil, "the preview in the VideoStoryboard's status has no scenes, so there is no narration to narrate"
	case p.Incomplete != "":
		return nil, p.Incomplete
	}
	out := req.DeepCopy()
	scenes := make([]videov1alpha1.Scene, 0, len(p.Scenes))
	for i, s := range p.Scenes {
		if s.Story == "" {
			return nil, fmt.Sprintf("scene %d of the preview has no narration", i+1)
		}
		scenes = append(scenes, videov1alpha1.Scene{Story: ptr.To(s.Story)})
	}
	out.Scenes = scenes
	return out, ""
}
