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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/callback"
	"github.com/videoops/video-operator/internal/credentials"
	"github.com/videoops/video-operator/internal/previewdigest"
)

// +kubebuilder:rbac:groups=video.videoops.io,resources=videostoryboards,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=video.videoops.io,resources=videostoryboards/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// VideoStoryboardReconciler runs the preview job of each VideoStoryboard
// (POST /v2/video/storyboard) and records the preview in its status.
type VideoStoryboardReconciler struct {
	*lifecycle[*videov1alpha1.VideoStoryboard]
}

// storyboardAdapter is the VideoStoryboard side of the shared lifecycle.
type storyboardAdapter struct{}

var _ kindAdapter[*videov1alpha1.VideoStoryboard] = storyboardAdapter{}

func (storyboardAdapter) newObject() *videov1alpha1.VideoStoryboard {
	return &videov1alpha1.VideoStoryboard{}
}

// resolve: a preview of the spec's request, exactly as written (apiKeySecretRef is not part of it).
func (storyboardAdapter) resolve(_ context.Context, o *videov1alpha1.VideoStoryboard) (*target, error) {
	return &target{preview: o.Spec.StoryboardRequest.DeepCopy()}, nil
}

// recordJob records the preview. previewedGeneration moves only when the preview of that
// generation completed: it is what a storyboardRef render waits for. The document does not give
// the preview's shape, so it is read best-effort (see apiclient.Storyboard) and, when it is not
// the shape scenes were read from, kept raw for the user. The whole preview stays inside a size
// budget that leaves room for the spec in etcd; what does not fit is named in outputsOmitted.
func (storyboardAdapter) recordJob(o *videov1alpha1.VideoStoryboard, job *apiclient.Job) (omitted []string) {
	if !job.Status().IsCompleted() {
		return nil
	}
	o.Status.PreviewedGeneration = o.Status.JobGeneration
	// Recorded with the end, which the namespace's budget folds (spendguard EndOf).
	o.Status.AICreditsUsed = fitWhole("aiCreditsUsed", decimal(job.Data.AICreditsUsed), maxCredits, &omitted)
	sb := job.Data.Storyboard
	if sb == nil {
		sb = &apiclient.Storyboard{}
	}
	preview := &videov1alpha1.StoryboardPreview{Generation: o.Status.JobGeneration}
	switch {
	case o.Generation != o.Status.JobGeneration:
		// A preview whose spec was edited before it completed is never rendered
		// (previewedGeneration is behind) and gets no digest: nobody could approve it for what
		// its request was.
	case !previewOfSpec(o):
		// Shown, never approvable: the reviewer would pin this spec's request with another
		// request's script.
		preview.Unverified = fmt.Sprintf("job %s was adopted from annotation %s without annotation %s naming this spec's request, "+
			"so this preview may be of another request", o.Status.JobID, videov1alpha1.AnnotationJobID, videov1alpha1.AnnotationRequestDigest)
	default:
		// Also in version 1: an approvedDigest written before the upgrade names this preview
		// by it (docs/architecture.md "Records that outlive a version").
		d := digestOf(sb, &o.Spec.StoryboardRequest)
		preview.Digest, preview.DigestV1 = d.Current, d.V1
		if d.Current != "" {
			preview.DigestVersion = previewdigest.Version
		}
	}
	o.Status.Preview = preview
	var incomplete []string
	budget := previewBudget(o)
	for i, s := range sb.Scenes {
		thumb := fitWhole(fmt.Sprintf("scenes[%d].thumbnail", i), s.Thumbnail, maxURL, &omitted)
		story := truncate(s.Story, maxPreviewStory)
		cost := len(thumb) + len(story) + 32
		if i == maxPreviewScenes || cost > budget {
			omitted = append(omitted, fmt.Sprintf("scenes[%d:] (%d scenes over the status bounds)", i, len(sb.Scenes)-i))
			incomplete = append(incomplete, fmt.Sprintf("%d of the %d scenes the service returned were omitted from status for size", len(sb.Scenes)-i, len(sb.Scenes)))
			break
		}
		if story != s.Story {
			incomplete = append(incomplete, fmt.Sprintf("the narration of scene %d is %d characters, over the %d a story scene holds", i+1, utf8.RuneCountInString(s.Story), maxPreviewStory))
		}
		budget -= cost
		preview.Scenes = append(preview.Scenes, videov1alpha1.PreviewScene{Thumbnail: thumb, Story: story})
	}
	preview.RenderParameters = keepJSON("renderParameters", sb.RenderParams, &budget, &omitted)
	if !documentedPreviewShape(sb) {
		preview.Raw = keepJSON("preview.raw", sb.Raw, &budget, &omitted)
		incomplete = append(incomplete, "the storyboard the service returned is not in the documented shape (scenes with thumbnails); only preview.raw has it")
	}
	preview.Incomplete = truncate(strings.Join(incomplete, "; "), maxPreviewIncomplete)
	if len(omitted) > maxOmitted {
		omitted = omitted[:maxOmitted]
	}
	return omitted
}

// previewOfSpec reports whether the current job is known to be a preview of the spec's request:
// submitted by the operator, or adopted from a record whose request digest is this spec's (in
// the version it was recorded in). A job recorded before request digests were (an older version)
// is its generation's, as it was then.
func previewOfSpec(o *videov1alpha1.VideoStoryboard) bool {
	st := &o.Status.JobStatus
	if ptr.Deref(st.RequestUnverified, false) {
		return false
	}
	if st.RequestDigest == "" {
		return true
	}
	t := &target{preview: &o.Spec.StoryboardRequest}
	return t.setDigests() == nil && t.recognises(st.RequestDigest, st.DigestVersion)
}

// digestOf is the preview's digest, in the current version and in version 1: what a reviewer
// sees, from the service's answer (every scene, also those that do not fit in status), and the
// previewed request req, which a render of it sends. Empty only if the answer's JSON could not be
// read again, which encoding/json checked already, or holds a number RFC 8785 cannot represent.
func digestOf(sb *apiclient.Storyboard, req *videov1alpha1.StoryboardRequest) previewdigest.Digests {
	request, err := json.Marshal(req)
	if err != nil {
		return previewdigest.Digests{}
	}
	p := previewdigest.Preview{RenderParameters: sb.RenderParams, Request: request}
	for _, s := range sb.Scenes {
		p.Scenes = append(p.Scenes, previewdigest.Scene{Story: s.Story, Thumbnail: s.Thumbnail})
	}
	if !documentedPreviewShape(sb) {
		p.Raw = sb.Raw
	}
	d, err := previewdigest.OfAll(p)
	if err != nil {
		return previewdigest.Digests{}
	}
	return d
}

// maxPreviewIncomplete bounds status.preview.incomplete.
const maxPreviewIncomplete = 1024

// documentedPreviewShape reports whether the storyboard was an object whose scenes all gave a
// thumbnail: the shape the status fields were read from.
func documentedPreviewShape(sb *apiclient.Storyboard) bool {
	raw := bytes.TrimSpace(sb.Raw)
	if len(raw) == 0 || raw[0] != '{' || len(sb.Scenes) == 0 {
		return false
	}
	for _, s := range sb.Scenes {
		if s.Thumbnail == "" {
			return false
		}
	}
	return true
}

// keepJSON returns raw as a status value when it is present, at most maxRawJSON bytes and within
// the budget (which it then uses up); otherwise it names it in omitted.
func keepJSON(name string, raw json.RawMessage, budget *int, omitted *[]string) *apiextensionsv1.JSON {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if len(raw) > maxRawJSON || len(raw) > *budget {
		*omitted = append(*omitted, fmt.Sprintf("%s (%d bytes, over the status size budget)", name, len(raw)))
		return nil
	}
	*budget -= len(raw)
	return &apiextensionsv1.JSON{Raw: append([]byte(nil), raw...)}
}

// previewBudget is how many bytes the preview may take in status: what etcd leaves after the
// spec, at most maxPreviewBytes.
func previewBudget(o *videov1alpha1.VideoStoryboard) int {
	spec, err := json.Marshal(o.Spec)
	if err != nil {
		return 0
	}
	return min(max(objectBudget-len(spec), 0), maxPreviewBytes)
}

// Bounds that keep a preview inside the CRD's status schema and the object inside etcd's limit
// of about 1.5 MiB.
const (
	// maxPreviewScenes is how many scenes maxPreviewBytes holds at the least cost recordJob
	// counts per scene (32 bytes): the byte budget, not a count of our own, is the bound.
	maxPreviewScenes = maxPreviewBytes / 32
	maxRawJSON       = 64 << 10
	maxPreviewBytes  = 512 << 10
	// objectBudget is what spec and preview may take together, leaving room for metadata and
	// the rest of the status below etcd's request limit.
	objectBudget = 1_300_000
)

// replaceOutputs: a preview is replaced, not kept (the preview approved is pinned by digest).
func (storyboardAdapter) replaceOutputs(o *videov1alpha1.VideoStoryboard, _ bool) {
	o.Status.Preview = nil
	o.Status.AICreditsUsed = ""
}

// carryOutputs: the preview of generation from is the preview of generation to, so renders
// waiting for a preview of the current spec need not wait.
func (storyboardAdapter) carryOutputs(o *videov1alpha1.VideoStoryboard, from, to int64) {
	if o.Status.Preview != nil && o.Status.PreviewedGeneration == from {
		o.Status.PreviewedGeneration = to
		o.Status.Preview.Generation = to
	}
}

// termsOf: a preview is counted when it is submitted, its end charges only the credits it
// reports, and a person reviews it.
func (storyboardAdapter) termsOf(*videov1alpha1.VideoStoryboard) terms {
	return terms{forReview: true}
}

// SetupWithManager registers the controller. Status-only updates do not trigger a reconcile
// (the controller writes them itself); spec, annotation and Secret changes do.
func (r *VideoStoryboardReconciler) SetupWithManager(mgr ctrl.Manager, concurrency int, secrets *credentials.Watches) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&videov1alpha1.VideoStoryboard{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, annotationsChanged(), callback.Recorded(), restoredStatus()))).
		Watches(&videov1alpha1.VideoBudget{}, handler.EnqueueRequestsFromMapFunc(r.waitingForBudget(&videov1alpha1.VideoStoryboardList{}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency})
	if r.wake != nil {
		b = b.WatchesRawSource(r.wakeSource())
	}
	ctl, err := b.Named("videostoryboard").Build(r)
	if err != nil {
		return err
	}
	return r.watchSecrets(ctl, secrets, &videov1alpha1.VideoStoryboardList{})
}

// watchSecrets has ctl hear of every change to a Secret of a watch of secrets, the watches
// started later included: a Secret created, fixed or rotated wakes the objects that name it.
func (l *lifecycle[T]) watchSecrets(ctl controller.Controller, secrets *credentials.Watches, list client.ObjectList) error {
	mapper := handler.EnqueueRequestsFromMapFunc(l.objectsUsingSecret(list))
	if err := secrets.OnWatch(func(c cache.Cache) error {
		return ctl.Watch(source.Kind[client.Object](c, secretObject(), mapper))
	}); err != nil {
		return fmt.Errorf("watching the Secrets of %T: %w", list, err)
	}
	return nil
}

// objectsUsingSecret maps a Secret event to the objects of its namespace that read their API
// key from it, through the index on apiKeySecretRef.name.
func (l *lifecycle[T]) objectsUsingSecret(list client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, secret client.Object) []ctrl.Request {
		l.keys.Forget(objectKey(secret))
		return listRequests(ctx, l.client, list.DeepCopyObject().(client.ObjectList),
			client.InNamespace(secret.GetNamespace()), client.MatchingFields{credentials.IndexSecretName: secret.GetName()})
	}
}
