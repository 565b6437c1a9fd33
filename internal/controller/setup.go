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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Reconcilers are the two controllers, sharing one key store, brand cache and submission memo.
type Reconcilers struct {
	Storyboard *VideoStoryboardReconciler
	Render     *VideoRenderReconciler
}

// NewReconcilers builds both reconcilers over one shared job lifecycle.
func NewReconcilers(c client.Client, opts Options) (*Reconcilers, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	shared := &sharedState{
		keys:   newKeyStore(c, opts.APIReader),
		brands: newBrandCache(opts.Clock, opts.BrandCacheTTL),
		memo:   newAttemptMemo(opts.Clock),
	}
	return &Reconcilers{
		Storyboard: &VideoStoryboardReconciler{newLifecycle(c, storyboardAdapter{}, opts, shared)},
		Render:     &VideoRenderReconciler{newLifecycle(c, renderAdapter{client: c}, opts, shared)},
	}, nil
}

// SetupWithManager registers the field indexes and both controllers.
func (r *Reconcilers) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &videov1alpha1.VideoStoryboard{}, indexSecretName, func(o client.Object) []string {
		return []string{secretRefOrDefault(o.(*videov1alpha1.VideoStoryboard).Spec.APIKeySecretRef).Name}
	}); err != nil {
		return fmt.Errorf("indexing VideoStoryboards by Secret: %w", err)
	}
	if err := idx.IndexField(ctx, &videov1alpha1.VideoRender{}, indexSecretName, func(o client.Object) []string {
		return []string{secretRefOrDefault(o.(*videov1alpha1.VideoRender).Spec.APIKeySecretRef).Name}
	}); err != nil {
		return fmt.Errorf("indexing VideoRenders by Secret: %w", err)
	}
	if err := idx.IndexField(ctx, &videov1alpha1.VideoRender{}, indexStoryboardRef, func(o client.Object) []string {
		if ref := o.(*videov1alpha1.VideoRender).Spec.StoryboardRef; ref != nil {
			return []string{ref.Name}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing VideoRenders by VideoStoryboard: %w", err)
	}
	if err := r.Storyboard.SetupWithManager(mgr, concurrency); err != nil {
		return fmt.Errorf("setting up the VideoStoryboard controller: %w", err)
	}
	if err := r.Render.SetupWithManager(mgr, concurrency); err != nil {
		return fmt.Errorf("setting up the VideoRender controller: %w", err)
	}
	return nil
}

// secretObject is the Secret type for a metadata-only watch: the manager caches Secret metadata,
// never Secret data.
func secretObject() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// listRequests lists objects with opts and returns a request for each.
func listRequests(ctx context.Context, c client.Client, list client.ObjectList, opts ...client.ListOption) []ctrl.Request {
	if err := c.List(ctx, list, opts...); err != nil {
		logf.FromContext(ctx).Error(err, "Listing objects to wake")
		return nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		logf.FromContext(ctx).Error(err, "Reading listed objects")
		return nil
	}
	reqs := make([]ctrl.Request, 0, len(items))
	for _, it := range items {
		if o, ok := it.(client.Object); ok {
			reqs = append(reqs, ctrl.Request{NamespacedName: objectKey(o)})
		}
	}
	return reqs
}
