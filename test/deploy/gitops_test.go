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

package deploy

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// crdAnnotations returns the annotations of every CustomResourceDefinition among objs, by name.
func crdAnnotations(t *testing.T, objs []*unstructured.Unstructured) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			out[o.GetName()] = o.GetAnnotations()
		}
	}
	if len(out) != 3 {
		t.Fatalf("want the 3 CRDs (VideoRender, VideoStoryboard, VideoBudget), got %d", len(out))
	}
	return out
}

// argoKeeps says whether an argocd.argoproj.io/sync-options value keeps the object both when Argo
// CD syncs (Prune=false) and when the Application is deleted (Delete=false).
func argoKeeps(options string) bool {
	var prune, del bool
	for opt := range strings.SplitSeq(options, ",") {
		switch strings.TrimSpace(opt) {
		case "Prune=false":
			prune = true
		case "Delete=false":
			del = true
		}
	}
	return prune && del
}

// TestGitOpsNeverPrunesTheCRDs: the Flux example pruned a path that holds the CRDs, so removing
// the path (or the Kustomization) deleted the CRDs and every video of the cluster with them. The
// overlay the Flux Kustomization and the Argo CD Application apply marks each CRD so that Flux's
// garbage collection skips it and Argo CD neither prunes nor deletes it; the chart's CRDs carry
// helm.sh/resource-policy: keep and the Argo CD option while crds.keep is on (the default), and
// neither when it is off, as asked.
func TestGitOpsNeverPrunesTheCRDs(t *testing.T) {
	for name, ann := range crdAnnotations(t, decode(t, kustomizeBuild(t, filepath.Join(root, "config", "gitops", "operator-overlay")))) {
		if ann["kustomize.toolkit.fluxcd.io/prune"] != "disabled" {
			t.Errorf("operator-overlay: CRD %s has kustomize.toolkit.fluxcd.io/prune %q, want disabled: Flux would delete it with the path",
				name, ann["kustomize.toolkit.fluxcd.io/prune"])
		}
		if !argoKeeps(ann["argocd.argoproj.io/sync-options"]) {
			t.Errorf("operator-overlay: CRD %s has argocd.argoproj.io/sync-options %q, want Prune=false and Delete=false",
				name, ann["argocd.argoproj.io/sync-options"])
		}
	}
	for name, ann := range crdAnnotations(t, decode(t, helmTemplate(t))) {
		if ann["helm.sh/resource-policy"] != "keep" || !argoKeeps(ann["argocd.argoproj.io/sync-options"]) {
			t.Errorf("chart: CRD %s has annotations %v, want helm.sh/resource-policy keep and Argo CD's Prune=false,Delete=false", name, ann)
		}
	}
	for name, ann := range crdAnnotations(t, decode(t, helmTemplate(t, "--set", "crds.keep=false"))) {
		if _, ok := ann["helm.sh/resource-policy"]; ok || argoKeeps(ann["argocd.argoproj.io/sync-options"]) {
			t.Errorf("chart with crds.keep=false: CRD %s is still kept: %v", name, ann)
		}
	}
}
