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

package kubectlvideo

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// ApproveOptions are the flags of approve.
type ApproveOptions struct {
	// Digest is the digest of the preview the person reviewed (printed by kubectl video
	// preview); approve refuses when the storyboard's current preview has another one.
	Digest string
	// Yes skips the confirmation, for scripts.
	Yes bool
}

func newApproveCommand(env *Env) *cobra.Command {
	var o ApproveOptions
	cmd := &cobra.Command{
		Use:   "approve vr/NAME [--digest sha256:...] [--yes]",
		Short: "Approve the current preview of a render's storyboard: pin its digest, so the render pays for that preview only",
		Long: "Writes spec.storyboardRef.approvedDigest of the VideoRender: the digest of its VideoStoryboard's\n" +
			"current, completed preview. The render then pays for that preview, once, and for no later one\n" +
			"until it is approved in turn. --digest is the digest you reviewed, as kubectl video preview\n" +
			"prints it: when the storyboard's preview changed since, nothing is written. The write carries\n" +
			"the render's resourceVersion, so an edit of the render meanwhile is not overwritten.",
		Example: "  kubectl video preview vsb/meet-video-operator\n" +
			"  kubectl video approve vr/meet-video-operator --digest sha256:0f3a...\n" +
			"  kubectl video approve vr/meet-video-operator --yes",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := parseTargetOf(args, KindRender, "approve")
			if err != nil {
				return err
			}
			return Approve(cmd.Context(), env, t.Name, o)
		},
	}
	cmd.Flags().StringVar(&o.Digest, "digest", "", "the digest of the preview you reviewed (kubectl video preview prints it); refused if the preview changed")
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "approve without asking")
	return cmd
}

// Approve pins the render's approval to its storyboard's current preview.
func Approve(ctx context.Context, env *Env, renderName string, o ApproveOptions) error {
	vr, err := getRender(ctx, env.Client, env.Namespace, renderName)
	if err != nil {
		return err
	}
	if vr.Spec.StoryboardRef == nil {
		return fmt.Errorf("vr/%s renders no VideoStoryboard (spec.storyboardRef is not set): there is no preview to approve", vr.Name)
	}
	// Ask first: approving is a permission of its own (docs/approval.md), which the API server's
	// approval policy checks; a refusal from here says what to do instead, before any question.
	if err := mayApprove(ctx, env, vr); err != nil {
		return err
	}
	sbName := vr.Spec.StoryboardRef.Name
	vsb, err := approvableStoryboard(ctx, env, sbName)
	if err != nil {
		return err
	}
	current := vsb.Status.Preview.Digest
	// A digest shown before an upgrade (version 1) still names the same preview.
	if o.Digest != "" && !vsb.Status.Preview.NamedBy(o.Digest) {
		return changedSinceShown(vsb, o.Digest, current)
	}
	author := vsb.GetAnnotations()[videov1alpha1.AnnotationSpecChangedBy]
	claim, claimed := vr.GetAnnotations()[videov1alpha1.AnnotationApprovedStoryboardAuthor]
	// An approval that names another author than the storyboard's (four eyes: a storyboard
	// restored, so stamped anew) waits; approving again names the author it is given against.
	if vsb.Status.Preview.NamedBy(vr.Spec.StoryboardRef.ApprovedDigest) && (!claimed || claim == author) {
		_, _ = fmt.Fprintf(env.Out, "vr/%s already approves preview %s of vsb/%s: nothing to write\n", vr.Name, current, sbName)
		return nil
	}
	if o.Digest == "" && !o.Yes {
		p := &printer{w: env.Out}
		p.line("This approves, for the paid render vr/%s/%s, preview %s of vsb/%s:", vr.Namespace, vr.Name, current, sbName)
		p.field("  Video name", orDash(vsb.Spec.VideoName))
		p.field("  Generation", fmt.Sprintf("%d (preview job %s)", vsb.Generation, orDash(vsb.Status.JobID)))
		p.field("  Scenes", fmt.Sprintf("%d", len(vsb.Status.Preview.Scenes)))
		if old := vr.Spec.StoryboardRef.ApprovedDigest; old != "" {
			p.field("  Replaces", old)
		}
		p.line("Review it first with: kubectl video preview vsb/%s -n %s", sbName, vsb.Namespace)
		ok, err := confirm(ctx, env, fmt.Sprintf("Approve preview %s and pay for its render?", current))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("not confirmed: nothing was written")
		}
		// The question may have been open for a while: what is approved is what was shown.
		again, err := reviewedStoryboard(ctx, env, sbName)
		if err != nil {
			return err
		}
		if again.Status.Preview.Digest != current {
			return changedSinceShown(again, current, again.Status.Preview.Digest)
		}
	}
	// The update carries vr's resourceVersion: an edit of the render since it was read is a
	// conflict, not overwritten.
	vr.Spec.StoryboardRef.ApprovedDigest = current
	// The storyboard's last author, as the cluster stamped it, goes with the approval: with four
	// eyes on, the policy refuses an approver who is that author, and the controller pays only
	// while it is the storyboard's author (docs/approval.md).
	if author != "" {
		vr.SetAnnotations(withAnnotation(vr.GetAnnotations(), videov1alpha1.AnnotationApprovedStoryboardAuthor, author))
	} else {
		delete(vr.Annotations, videov1alpha1.AnnotationApprovedStoryboardAuthor)
	}
	if vr.Spec.StoryboardRef.Approval == videov1alpha1.ApprovalLatest {
		// A pin and Latest are exclusive (the API refuses both): the pin is what was asked for.
		vr.Spec.StoryboardRef.Approval = ""
	}
	if err := env.Client.Update(ctx, vr); err != nil {
		if apierrors.IsConflict(err) {
			return fmt.Errorf("vr/%s changed since it was read: nothing was written; run the command again", vr.Name)
		}
		return fmt.Errorf("writing the approval of vr/%s: %w", vr.Name, err)
	}
	by := "the approver is not recorded: this cluster has no approval policies (docs/approval.md)"
	if ann := vr.GetAnnotations(); ann[videov1alpha1.AnnotationApprovedDigest] == current && ann[videov1alpha1.AnnotationApprovedBy] != "" {
		by = "approved by " + ann[videov1alpha1.AnnotationApprovedBy]
	}
	_, _ = fmt.Fprintf(env.Out, "Approved preview %s of vsb/%s for vr/%s (%s). Follow it with: kubectl video status vr/%s -n %s\n",
		current, sbName, vr.Name, by, vr.Name, vr.Namespace)
	return nil
}

// ApproverRole is the ClusterRole that grants approving, as the chart and config/default name it.
const ApproverRole = "video-operator-videorender-approver"

// mayApprove asks the API server, with a SelfSubjectAccessReview, whether the user may approve
// the render's spend: the verb approve on videorenders/approval in its namespace, which the
// admission policy videorender-approval requires. It fails, saying what to do, when they may not.
func mayApprove(ctx context.Context, env *Env, vr *videov1alpha1.VideoRender) error {
	can := func(verb, sub string) (bool, error) {
		r := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: vr.Namespace, Verb: verb,
				Group: videov1alpha1.GroupVersion.Group, Resource: "videorenders", Subresource: sub}}}
		if err := env.Client.Create(ctx, r); err != nil {
			return false, fmt.Errorf("asking the API server whether you may approve vr/%s: %w", vr.Name, err)
		}
		return r.Status.Allowed, nil
	}
	approve, err := can("approve", "approval")
	if err != nil || approve {
		return err
	}
	edit, err := can("update", "")
	if err != nil {
		return err
	}
	what := "you may edit this render but not approve it"
	if !edit {
		what = "you may neither edit nor approve this render"
	}
	return fmt.Errorf("%s; ask someone bound to %s (the permission approve on videorenders/approval in namespace %s) to approve vr/%s: "+
		"nothing was written", what, ApproverRole, vr.Namespace, vr.Name)
}

// withAnnotation is m with key set to value (m may be nil).
func withAnnotation(m map[string]string, key, value string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[key] = value
	return m
}

// changedSinceShown is the refusal when the preview is not the one the person reviewed.
func changedSinceShown(vsb *videov1alpha1.VideoStoryboard, shown, current string) error {
	return fmt.Errorf("the preview of vsb/%s changed since it was shown: you reviewed %s, its current preview (generation %d) is %s; "+
		"nothing was written. Review it with: kubectl video preview vsb/%s -n %s", vsb.Name, shown, vsb.Generation, current, vsb.Name, vsb.Namespace)
}

// printApprovals gives, for each render of the storyboard that does not approve this preview
// yet, the exact command that approves it.
func printApprovals(p *printer, vsb *videov1alpha1.VideoStoryboard, refs []videov1alpha1.VideoRender) {
	d := vsb.Status.Preview.Digest
	if d == "" {
		return
	}
	for _, vr := range refs {
		if vsb.Status.Preview.NamedBy(vr.Spec.StoryboardRef.ApprovedDigest) {
			p.line("vr/%s approves this preview.", vr.Name)
			continue
		}
		p.line("To approve this preview for vr/%s: %s", vr.Name, approveCommand(vr.Name, vsb.Namespace, d))
	}
}

// printApproval says which preview a storyboardRef render approves, which one it rendered, and,
// while it waits for an approval, which preview it waits for and the command that approves it.
func printApproval(p *printer, vr *videov1alpha1.VideoRender, vsb *videov1alpha1.VideoStoryboard) {
	ref := vr.Spec.StoryboardRef
	switch {
	case ref.ApprovedDigest != "":
		p.field("Approved", ref.ApprovedDigest+", "+approvedByOf(vr))
	case ref.Approval == videov1alpha1.ApprovalLatest:
		p.field("Approved", "every new preview, unreviewed (approval Latest), "+approvedByOf(vr))
	case ref.Approval == videov1alpha1.ApprovalPreviewAtApproval:
		p.field("Approved", "nothing: no digest pinned (approval PreviewAtApproval is retired and behaves as Pinned)")
	default:
		p.field("Approved", "nothing: no digest pinned")
	}
	if d := vr.Status.StoryboardDigest; d != "" {
		pinned := "narration written by the service"
		if vr.Status.NarrationPinned != nil && *vr.Status.NarrationPinned {
			pinned = "narration pinned to the approved preview"
		}
		by := "approver not recorded (approved before the approval policies were installed)"
		if a := vr.Status.Approval; a != nil && a.ApprovedBy != "" {
			by = "approved by " + a.ApprovedBy
		}
		p.field("Rendered", d+" ("+pinned+"; "+by+")")
	}
	current := ""
	if vsb.Status.Preview != nil && vsb.Status.PreviewedGeneration == vsb.Generation {
		current = vsb.Status.Preview.Digest
	}
	c := meta.FindStatusCondition(vr.Status.Conditions, string(videov1alpha1.ConditionReconciling))
	if c == nil || c.Reason != string(videov1alpha1.ReasonAwaitingApproval) || current == "" {
		return
	}
	p.field("Waiting for", fmt.Sprintf("approval of preview %s of vsb/%s (generation %d); review it with kubectl video preview vsb/%s -n %s",
		current, vsb.Name, vsb.Generation, vsb.Name, vsb.Namespace))
	p.field("To approve", approveCommand(vr.Name, vr.Namespace, current))
}

// approvedByOf says who wrote the render's current approval, as the admission policy stamped it
// (docs/approval.md).
func approvedByOf(vr *videov1alpha1.VideoRender) string {
	if by := vr.StampedApprover(); by != "" {
		return "approved by " + by
	}
	return "approver not recorded (written without the approval policies)"
}

// approveCommand is the exact command that approves the preview for a render.
func approveCommand(vr, ns, digest string) string {
	return fmt.Sprintf("kubectl video approve vr/%s -n %s --digest %s", vr, ns, digest)
}
