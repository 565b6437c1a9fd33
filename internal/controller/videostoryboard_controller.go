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
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// +kubebuilder:rbac:groups=video.videoops.io,resources=videostoryboards,verbs=get;list;watch
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

func (storyboardAdapter) kind() string { return "VideoStoryboard" }

func (storyboardAdapter) newObject() *videov1alpha1.VideoStoryboard {
	return &videov1alpha1.VideoStoryboard{}
}

func (storyboardAdapter) jobStatus(o *videov1alpha1.VideoStoryboard) *videov1alpha1.JobStatus {
	return &o.Status.JobStatus
}

func (storyboardAdapter) status(o *videov1alpha1.VideoStoryboard) any { return &o.Status }

func (storyboardAdapter) secretRef(o *videov1alpha1.VideoStoryboard) videov1alpha1.SecretKeyRef {
	return secretRefOrDefault(o.Spec.APIKeySecretRef)
}

// resolve: a preview of the spec's request, exactly as written (apiKeySecretRef is not part of it).
func (storyboardAdapter) resolve(_ context.Context, o *videov1alpha1.VideoStoryboard) (*target, error) {
	return &target{preview: &o.Spec.StoryboardRequest}, nil
}

func (storyboardAdapter) recordedSource(*videov1alpha1.VideoStoryboard) int64 { return 0 }

func (storyboardAdapter) setRecordedSource(*videov1alpha1.VideoStoryboard, int64) {}

// recordJob records the preview. previewedGeneration moves only when the preview of that
// generation completed: it is what a storyboardRef render waits for.
func (storyboardAdapter) recordJob(o *videov1alpha1.VideoStoryboard, job *apiclient.Job) {
	if !job.Status().IsCompleted() {
		return
	}
	o.Status.PreviewedGeneration = o.Status.JobGeneration
	sb := job.Data.Storyboard
	if sb == nil {
		o.Status.Preview = &videov1alpha1.StoryboardPreview{}
		return
	}
	preview := &videov1alpha1.StoryboardPreview{}
	for i, s := range sb.Scenes {
		if i == maxPreviewScenes {
			break
		}
		preview.Scenes = append(preview.Scenes, videov1alpha1.PreviewScene{
			Thumbnail: truncate(s.Thumbnail, 4096),
			Story:     truncate(s.Story, 15000),
		})
	}
	if len(sb.RenderParams) > 0 && string(sb.RenderParams) != "null" && len(sb.RenderParams) <= maxRenderParamsBytes {
		preview.RenderParameters = &apiextensionsv1.JSON{Raw: append([]byte(nil), sb.RenderParams...)}
	}
	o.Status.Preview = preview
}

// Bounds that keep a preview inside the CRD's status schema and far from etcd's object limit.
const (
	maxPreviewScenes     = 1000
	maxRenderParamsBytes = 64 << 10
)

func (storyboardAdapter) resetOutputs(o *videov1alpha1.VideoStoryboard) { o.Status.Preview = nil }

func (storyboardAdapter) refreshAt(*videov1alpha1.VideoStoryboard) time.Time { return time.Time{} }

// SetupWithManager registers the controller. Status-only updates do not trigger a reconcile
// (the controller writes them itself); spec, annotation and Secret changes do.
func (r *VideoStoryboardReconciler) SetupWithManager(mgr ctrl.Manager, concurrency int) error {
	b := ctrl.NewControllerManagedBy(mgr).
		For(&videov1alpha1.VideoStoryboard{}, builder.WithPredicates(
			predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		WatchesMetadata(secretObject(), handler.EnqueueRequestsFromMapFunc(
			r.objectsUsingSecret(&videov1alpha1.VideoStoryboardList{}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency})
	if r.wake != nil {
		b = b.WatchesRawSource(r.wakeSource())
	}
	return b.
		Named("videostoryboard").
		Complete(r)
}

// objectsUsingSecret maps a Secret event to the objects of its namespace that read their API
// key from it, through the index on apiKeySecretRef.name.
func (l *lifecycle[T]) objectsUsingSecret(list client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, secret client.Object) []ctrl.Request {
		l.keys.forget(objectKey(secret))
		return listRequests(ctx, l.client, list.DeepCopyObject().(client.ObjectList),
			client.InNamespace(secret.GetNamespace()), client.MatchingFields{indexSecretName: secret.GetName()})
	}
}
