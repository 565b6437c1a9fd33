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
	"math"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/bound"
	"github.com/videoops/video-operator/internal/callback"
	"github.com/videoops/video-operator/internal/credentials"
	"github.com/videoops/video-operator/internal/requestdigest"
)

// +kubebuilder:rbac:groups=video.videoops.io,resources=videorenders,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=video.videoops.io,resources=videorenders/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=video.videoops.io,resources=videostoryboards,verbs=get;list;watch;patch

// indexStoryboardRef indexes VideoRenders by the VideoStoryboard they render, so a completed
// preview wakes exactly the renders waiting for it.
const indexStoryboardRef = ".spec.storyboardRef.name"

// VideoRenderReconciler runs the paid render job of each VideoRender and records its outputs.
type VideoRenderReconciler struct {
	*lifecycle[*videov1alpha1.VideoRender]
}

// renderAdapter is the VideoRender side of the shared lifecycle.
type renderAdapter struct {
	client client.Reader
}

var _ kindAdapter[*videov1alpha1.VideoRender] = renderAdapter{}

func (renderAdapter) newObject() *videov1alpha1.VideoRender { return &videov1alpha1.VideoRender{} }

// resolve picks the render source. A storyboardRef renders the referenced VideoStoryboard only
// once its preview of its current generation completed, with that very request: the review gate.
func (a renderAdapter) resolve(ctx context.Context, o *videov1alpha1.VideoRender) (*target, error) {
	switch {
	case o.Spec.Storyboard != nil:
		return &target{render: o.Spec.Storyboard.DeepCopy(), approvedBy: o.StampedApprover()}, nil
	case o.Spec.ProjectID != nil:
		return &target{projectID: *o.Spec.ProjectID, approvedBy: o.StampedApprover()}, nil
	case o.Spec.StoryboardRef == nil:
		// Admission requires exactly one source; this only guards against a schema change.
		return &target{wait: &waiting{stalled: true, reason: videov1alpha1.ReasonInvalidRequest,
			message: "spec has no render source: set one of storyboard, storyboardRef or projectId"}}, nil
	}

	name := o.Spec.StoryboardRef.Name
	var sb videov1alpha1.VideoStoryboard
	if err := a.client.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: name}, &sb); err != nil {
		if apierrors.IsNotFound(err) {
			// A render already made stays made: deleting the reviewed storyboard afterwards
			// takes nothing away from it.
			return &target{wait: &waiting{reason: videov1alpha1.ReasonStoryboardNotFound,
				keepCompleted: completedFor(&o.Status.JobStatus, o.Generation),
				message:       fmt.Sprintf("Waiting for VideoStoryboard %q to exist in namespace %q", name, o.Namespace)}}, nil
		}
		return nil, fmt.Errorf("getting VideoStoryboard %s/%s: %w", o.Namespace, name, err)
	}
	var w *waiting
	if sb.Status.PreviewedGeneration == sb.Generation && sb.Status.Phase == videov1alpha1.PhaseCompleted {
		// Only an approved preview is paid for (approval.go).
		if w = a.approvedPreview(o, &sb); w == nil {
			return approvedTarget(o, &sb), nil
		}
	} else {
		w = &waiting{reason: videov1alpha1.ReasonWaitingForPreview,
			message: fmt.Sprintf("Waiting for VideoStoryboard %q to complete its preview of generation %d", name, sb.Generation)}
		if c := condition(&sb.Status.JobStatus, videov1alpha1.ConditionStalled); c != nil && c.Status == metav1.ConditionTrue {
			// Only a fix of the storyboard can unblock this render.
			w.stalled = true
			w.message = fmt.Sprintf("VideoStoryboard %q is stalled (%s: %s); fix it to render", name, c.Reason, c.Message)
		}
	}
	if finishedRender(o, &sb) {
		// The video it made is what its approval names: a storyboard that moved on is reported,
		// not turned into a pending render.
		w.keepCompleted, w.note = true, finishedNote(o, &sb, w)
	}
	return &target{wait: w}, nil
}

// approvedTarget is the render of the storyboard's approved preview, with that very request (in
// brief mode narrating the approved narration word for word), or why it stalls before paying.
func approvedTarget(o *videov1alpha1.VideoRender, sb *videov1alpha1.VideoStoryboard) *target {
	name := sb.Name
	t := &target{render: sb.Spec.StoryboardRequest.DeepCopy(), sourceGeneration: sb.Generation, sourceUID: sb.UID,
		sourceCreated: sb.CreationTimestamp.Time, sourceDigest: sb.Status.Preview.Digest, sourceDigestV1: sb.Status.Preview.DigestOfVersion1(),
		approvedBy: o.StampedApprover()}
	if pin := o.Spec.StoryboardRef.ApprovedDigest; pin != "" && pin != t.sourceDigest {
		// A version 1 pin (Git written before the upgrade) of a preview whose status is of a
		// later version: the job is recorded under the name its approval used, so that the pin
		// still names what was rendered once the storyboard moves on (renderedPreview).
		t.approvedAs = pin
	}
	if !isBrief(t.render) || o.Spec.StoryboardRef.Narration == videov1alpha1.NarrationRegenerate {
		return t
	}
	if extra := briefSceneSettings(t.render.Scenes[0]); len(extra) > 0 {
		return &target{wait: &waiting{stalled: true, reason: videov1alpha1.ReasonBriefSettingsNotCarried,
			message: fmt.Sprintf("Not submitted: the approved preview %s of VideoStoryboard %q is a brief whose scene also sets %s. "+
				"Narrated word for word, the approved narration becomes one story scene per previewed scene, which would not carry those settings "+
				"as the preview had them (an AI visual would be paid once per scene). Move them to the request level of the VideoStoryboard "+
				"(and approve its new preview), or set spec.storyboardRef.narration to Regenerate to render the brief as previewed, its narration written anew",
				digestOrNone(t.sourceDigest), name, strings.Join(extra, ", "))}}
	}
	req, why := pinNarration(t.render, sb.Status.Preview)
	if req == nil {
		return &target{wait: &waiting{stalled: true, reason: videov1alpha1.ReasonNarrationIncomplete,
			message: fmt.Sprintf("Not submitted: the approved preview %s of VideoStoryboard %q is a brief whose narration cannot be narrated word for word: %s. "+
				"Make the preview fit (fewer or shorter scenes), or set spec.storyboardRef.narration to Regenerate to let the service write the narration anew",
				digestOrNone(t.sourceDigest), name, why)}}
	}
	t.render, t.narrationPinned = req, true
	return t
}

// finishedRender reports whether the render's last completed job still answers its spec although
// the storyboard's current preview is not one its approval lets it render: nothing newer is
// approved (no pin, or the pin it rendered; approval Latest renders every new preview), and the
// job rendered this very storyboard. So a finished video stays Ready whatever the storyboard does
// next, and so does a render finished by an older version that recorded no digest.
func finishedRender(o *videov1alpha1.VideoRender, sb *videov1alpha1.VideoStoryboard) bool {
	st := &o.Status.JobStatus
	ref := o.Spec.StoryboardRef
	switch {
	case st.JobID == "" || st.CompletedAt == nil || st.Failure != nil || st.Submission != nil:
		return false
	case ref.Approval == videov1alpha1.ApprovalLatest:
		// Latest's video is finished while it is the storyboard's current preview's: a Latest
		// render that waits (a restore in a four-eyes namespace, approve again) keeps it.
		// A storyboard making a newer preview is progress, not a wait: not finished then.
		p := sb.Status.Preview
		return p != nil && p.Digest != "" && sb.Status.PreviewedGeneration == sb.Generation && renderedPreview(o, p.Digest)
	case ref.ApprovedDigest != "" && !renderedPreview(o, ref.ApprovedDigest):
		return false
	case o.Status.StoryboardUID != "":
		// A job of another storyboard (storyboardRef.name changed) is not this one's video.
		return o.Status.StoryboardUID == string(sb.UID)
	}
	if ref.ApprovedDigest != "" {
		// Adopted from a record (a restore, in which the render may come back before its
		// storyboard, with another spec): the pin it rendered is the record, not the time the
		// storyboard was created.
		return true
	}
	// Recorded before uids were: the storyboard existed when the job was taken as this render's.
	at := st.SubmittedAt
	if at == nil {
		at = st.CompletedAt
	}
	return !sb.CreationTimestamp.After(at.Time)
}

// renderedPreview reports whether the render's current job rendered the preview with digest pin:
// as recorded in status, or as the request's digest says (a job adopted from the annotations'
// record, which carries the request digest only, or a pin naming the preview in another
// version than the one recorded).
func renderedPreview(o *videov1alpha1.VideoRender, pin string) bool {
	if o.Status.StoryboardDigest == pin {
		return true
	}
	// The request digest is of the preview's digest of the version its status had: a pin of
	// the same preview in the other form (version 1 or 2) is recognised through it.
	for _, pinned := range []bool{true, false} {
		for _, of := range []func(string, bool) (string, error){requestdigest.OfApproved, requestdigest.OfApprovedV1} {
			if d, err := of(pin, pinned); err == nil && d == o.Status.RequestDigest {
				return true
			}
		}
	}
	return false
}

// recordJob records outputs, durations, credits and the clearance code of a completed render.
// URLs and the clearance code are never cut: one that does not fit is left out and named.
func (a renderAdapter) recordJob(o *videov1alpha1.VideoRender, job *apiclient.Job) (omitted []string) {
	if !job.Status().IsCompleted() {
		return nil
	}
	d := job.Data
	o.Status.Outputs = &videov1alpha1.RenderOutputs{
		VideoURL:      fitWhole("videoURL", d.VideoURL, maxURL, &omitted),
		VideoShareURL: fitWhole("videoShareURL", d.VideoShareURL, maxURL, &omitted),
		VideoEmbedURL: fitWhole("videoEmbedURL", d.VideoEmbedURL, maxURL, &omitted),
		AudioURL:      fitWhole("audioURL", d.AudioURL, maxURL, &omitted),
		Thumbnail:     fitWhole("thumbnail", d.Thumbnail, maxURL, &omitted),
		SRTFile:       fitWhole("srtFile", d.SRTFile, maxURL, &omitted),
		TXTFile:       fitWhole("txtFile", d.TXTFile, maxURL, &omitted),
		VTTFile:       fitWhole("vttFile", d.VTTFile, maxURL, &omitted),
	}
	o.Status.VideoDuration = seconds(d.VideoDuration)
	o.Status.EncodingDuration = seconds(d.EncodingDuration)
	o.Status.AICreditsUsed = fitWhole("aiCreditsUsed", decimal(d.AICreditsUsed), maxCredits, &omitted)
	o.Status.Clearance = nil
	if code := fitWhole("platformClearanceCode", d.PlatformClearanceCode, maxClearanceCode, &omitted); code != "" {
		c := &videov1alpha1.Clearance{Code: code}
		if t, err := time.Parse(time.RFC3339, d.PlatformClearanceExpiresAt); err == nil {
			c.ExpiresAt = &metav1.Time{Time: t}
		}
		o.Status.Clearance = c
	}
	return omitted
}

// replaceOutputs keeps a completed render's outputs in status.previous before a newer job
// replaces them.
func (renderAdapter) replaceOutputs(o *videov1alpha1.VideoRender, keep bool) {
	if keep {
		o.Status.Previous = &videov1alpha1.PreviousRender{
			JobID:         o.Status.JobID,
			JobGeneration: o.Status.JobGeneration,
			CompletedAt:   o.Status.CompletedAt.DeepCopy(),
			Outputs:       o.Status.Outputs.DeepCopy(),
			Clearance:     o.Status.Clearance.DeepCopy(),
		}
	}
	o.Status.Outputs = nil
	o.Status.VideoDuration = nil
	o.Status.EncodingDuration = nil
	o.Status.AICreditsUsed = ""
	o.Status.Clearance = nil
}

// carryOutputs: a render's outputs name no generation.
func (renderAdapter) carryOutputs(*videov1alpha1.VideoRender, int64, int64) {}

// termsOf: a render is paid per job, reserved at its estimate (bound.Render).
func (renderAdapter) termsOf(o *videov1alpha1.VideoRender) terms {
	return terms{perJob: true, estimate: func() bound.Estimate { return bound.Render(o) },
		unreviewed: unreviewed(o)}
}

// unreviewed reports whether obj is a render that pays for every new preview without a review
// (storyboardRef.approval Latest, no approvedDigest).
func unreviewed(vr *videov1alpha1.VideoRender) bool {
	return vr.Spec.StoryboardRef != nil && vr.Spec.StoryboardRef.ApprovedDigest == "" &&
		vr.Spec.StoryboardRef.Approval == videov1alpha1.ApprovalLatest
}

// seconds converts the service's seconds into a Duration (status carries no floats).
func seconds(n apiclient.Number) *metav1.Duration {
	f, ok := n.Float64()
	if !ok || f < 0 || f > maxSeconds {
		return nil
	}
	// Up to the millisecond: the budget charges whole seconds rounded up from it, as from the
	// job's answer (42.0004 s is 43 s either way).
	return &metav1.Duration{Duration: time.Duration(math.Ceil(f*1000)) * time.Millisecond}
}

// maxSeconds is the longest duration recorded; a longer one would overflow time.Duration.
const maxSeconds = 1e9

// decimal renders a number as the plain decimal the status schema accepts ("12.5", never "1e3").
func decimal(n apiclient.Number) string {
	f, ok := n.Float64()
	if !ok || f < 0 {
		return ""
	}
	if f == 0 {
		return "0" // not "-0", which the status schema's pattern refuses
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// SetupWithManager registers the controller; see VideoStoryboardReconciler.SetupWithManager.
// A VideoStoryboard's status changes (its preview completing) wake the renders that refer to it.
func (r *VideoRenderReconciler) SetupWithManager(mgr ctrl.Manager, concurrency int, secrets *credentials.Watches) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&videov1alpha1.VideoRender{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, annotationsChanged(), callback.Recorded(), restoredStatus()))).
		Watches(&videov1alpha1.VideoStoryboard{}, handler.EnqueueRequestsFromMapFunc(r.rendersOfStoryboard)).
		Watches(&videov1alpha1.VideoBudget{}, handler.EnqueueRequestsFromMapFunc(r.waitingForBudget(&videov1alpha1.VideoRenderList{}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency})
	if r.wake != nil {
		b = b.WatchesRawSource(r.wakeSource())
	}
	ctl, err := b.Named("videorender").Build(r)
	if err != nil {
		return err
	}
	return r.watchSecrets(ctl, secrets, &videov1alpha1.VideoRenderList{})
}

func (r *VideoRenderReconciler) rendersOfStoryboard(ctx context.Context, sb client.Object) []ctrl.Request {
	return listRequests(ctx, r.client, &videov1alpha1.VideoRenderList{},
		client.InNamespace(sb.GetNamespace()), client.MatchingFields{indexStoryboardRef: sb.GetName()})
}
