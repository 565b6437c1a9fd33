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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CacheTransform is the manager's cache transform (cache.Options.DefaultTransform). It drops
// managedFields from every cached object, which nothing here reads, and the annotations of
// metadata-only objects: those are the Secrets, and a Secret applied with `kubectl apply` carries
// its whole data, the API key included, in kubectl.kubernetes.io/last-applied-configuration. The
// cache then holds no key; keys are read from the API server only when a call needs one.
//
// From the operator's own objects it drops kubectl's last-applied-configuration, a second copy of
// the spec (a storyboard can be a megabyte): at 10,000 objects it would double the cache. The
// controllers read only their own annotations, and status patches never carry metadata.
func CacheTransform(in any) (any, error) {
	if pom, ok := in.(*metav1.PartialObjectMetadata); ok {
		pom.Annotations = nil
		pom.ManagedFields = nil
		return pom, nil
	}
	if obj, err := meta.Accessor(in); err == nil {
		obj.SetManagedFields(nil)
		if a := obj.GetAnnotations(); a[lastApplied] != "" {
			delete(a, lastApplied)
			obj.SetAnnotations(a)
		}
	}
	return in, nil
}

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
