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
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"k8s.io/utils/ptr"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The approval gate of a storyboardRef render (docs/architecture.md "What is paid for is what was
// approved"): which preview a render may pay for, and the request that narrates the approved
// narration in brief mode.

// approvedPreview decides whether the storyboard's current completed preview is approved by the
// render. It returns nil when it is, or the reason to wait. Consent is a record, never an
// inference (docs/architecture.md "What is paid for is what was approved"): only a digest a person
// or a policy wrote down approves, and no time of any write (creation, managedFields, a restore)
// does.
func (a renderAdapter) approvedPreview(o *videov1alpha1.VideoRender, sb *videov1alpha1.VideoStoryboard) *waiting {
	ref := o.Spec.StoryboardRef
	var digest, unverified string
	if p := sb.Status.Preview; p != nil {
		digest, unverified = p.Digest, p.Unverified
	}
	if digest == "" {
		// Nothing a reviewer could have pinned: a preview adopted by hand (unverified), or one
		// whose spec was edited before it completed. Not even Latest renders it.
		why := fmt.Sprintf("the current preview of VideoStoryboard %q (generation %d) has no digest", sb.Name, sb.Generation)
		if unverified != "" {
			why += ": " + unverified
		}
		return awaiting(fmt.Sprintf("Nothing to approve yet: %s; a fresh preview of the storyboard's spec can be approved", why))
	}
	switch {
	case ref.ApprovedDigest != "":
		if sb.Status.Preview.NamedBy(ref.ApprovedDigest) {
			return authorOfApproval(o, sb)
		}
		return awaiting(fmt.Sprintf("Approved preview %s is not the current preview: no current preview of VideoStoryboard %q has the approved digest; %s; %s",
			ref.ApprovedDigest, sb.Name, currentPreview(sb, digest), approveCommand(o, digest)))
	case ref.Approval == videov1alpha1.ApprovalLatest:
		return authorOfApproval(o, sb)
	case ref.Approval == videov1alpha1.ApprovalPreviewAtApproval:
		return awaiting(fmt.Sprintf("No approvedDigest is set, and approval PreviewAtApproval is retired: it behaves as Pinned, so no preview is "+
			"approved by when the spec was written; %s; %s", currentPreview(sb, digest), approveCommand(o, digest)))
	}
	return awaiting(fmt.Sprintf("No approvedDigest is set (approval Pinned); %s; %s", currentPreview(sb, digest), approveCommand(o, digest)))
}

// finishedNote says why a finished render stays Ready while its storyboard's current preview is
// not the one it rendered: the newer preview is reported, not turned into a pending render.
func finishedNote(o *videov1alpha1.VideoRender, sb *videov1alpha1.VideoStoryboard, w *waiting) string {
	rendered := digestOrNone(o.Status.StoryboardDigest)
	if sb == nil {
		return fmt.Sprintf("rendered preview %s; %s", rendered, w.message)
	}
	return fmt.Sprintf("rendered preview %s of VideoStoryboard %q; the storyboard has moved on and nothing newer is approved (%s)",
		rendered, sb.Name, w.message)
}

// authorOfApproval is four eyes' second half (docs/approval.md): an approval that names the
// storyboard's author it was given against (annotation approved-storyboard-author, written with the
// approval and then kept by the admission policy; with four eyes on, the policy refused it when
// that author was the approver) pays only while that author is the one the admission policy
// stamped on the storyboard's last spec change. So an approver cannot name someone else to pass
// the policy. It returns nil when the approval names no author, or the right one.
func authorOfApproval(o *videov1alpha1.VideoRender, sb *videov1alpha1.VideoStoryboard) *waiting {
	claim := o.GetAnnotations()[videov1alpha1.AnnotationApprovedStoryboardAuthor]
	by := o.StampedApprover()
	if claim == "" || by == "" {
		return nil
	}
	author := sb.GetAnnotations()[videov1alpha1.AnnotationSpecChangedBy]
	if author == claim {
		return nil
	}
	if claim == videov1alpha1.ApprovedStoryboardAuthorRestored {
		return awaiting(fmt.Sprintf("Not approved: this render was restored in a four-eyes namespace, where a restore cannot show who wrote "+
			"VideoStoryboard %q (annotation %s): nothing new is paid until an approver other than %s approves it again; %s",
			sb.Name, videov1alpha1.AnnotationApprovedStoryboardAuthor, approverOrUnrecorded(author), approveCommand(o, digestOrNone(sb.Status.Preview.Digest))))
	}
	return awaiting(fmt.Sprintf("Not approved: the approval by %s names %s as the last author of VideoStoryboard %q's spec, but %s changed it last "+
		"(annotation %s): nothing is paid until an approver other than %s approves it again with kubectl video approve, which records the author; %s",
		by, claim, sb.Name, approverOrUnrecorded(author), videov1alpha1.AnnotationSpecChangedBy, approverOrUnrecorded(author),
		approveCommand(o, digestOrNone(sb.Status.Preview.Digest))))
}

// approverOrUnrecorded names the approver for an event or an audit line.
func approverOrUnrecorded(user string) string {
	if user == "" {
		return unrecordedApprover
	}
	return user
}

// unrecordedApprover stands for the approver of an approval written without the admission
// policies (before they were installed): it still approves, and says so.
const unrecordedApprover = "(not recorded)"

func currentPreview(sb *videov1alpha1.VideoStoryboard, digest string) string {
	return fmt.Sprintf("the current preview of VideoStoryboard %q (generation %d) has digest %s", sb.Name, sb.Generation, digestOrNone(digest))
}

func approveCommand(o *videov1alpha1.VideoRender, digest string) string {
	return fmt.Sprintf("to render it, run: kubectl video approve vr/%s -n %s --digest %s", o.Name, o.Namespace, digestOrNone(digest))
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
