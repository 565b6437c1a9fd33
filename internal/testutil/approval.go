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

package testutil

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// ApprovalTestLabel marks the namespaces a test's copy of the approval policies applies to: the
// policies are cluster-wide, and the other tests of a suite run on the API server they were
// written for.
const ApprovalTestLabel = "video.videoops.io/approval-policies-test"

// ApprovalManifests are the approver role and the admission policies of config/approval, and the
// user roles of config/rbac, named as config/default names them (the video-operator- prefix), for
// a test to create. Each binding matches only the namespaces labelled ApprovalTestLabel=value;
// with a suffix, the policies and bindings are named apart (one set per namespace). Nothing else
// in them differs from what is shipped.
func ApprovalManifests(value, suffix string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(RepoRoot(), "config", "approval", "*.yaml"))
	if err != nil {
		return nil, err
	}
	for _, role := range []string{"videorender_editor_role", "videostoryboard_editor_role"} {
		files = append(files, filepath.Join(RepoRoot(), "config", "rbac", role+".yaml"))
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "kustomiz") {
			continue
		}
		raw, err := os.ReadFile(f) //nolint:gosec // a file of the repository, found by the glob above
		if err != nil {
			return nil, err
		}
		for doc := range bytes.SplitSeq(raw, []byte("\n---\n")) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(obj.Object) == 0 {
				continue
			}
			const prefix = "video-operator-"
			obj.SetName(prefix + obj.GetName())
			if p, ok, _ := unstructured.NestedString(obj.Object, "spec", "policyName"); ok {
				if err := unstructured.SetNestedField(obj.Object, prefix+p+suffix, "spec", "policyName"); err != nil {
					return nil, err
				}
				if err := unstructured.SetNestedStringMap(obj.Object, map[string]string{ApprovalTestLabel: value},
					"spec", "matchResources", "namespaceSelector", "matchLabels"); err != nil {
					return nil, err
				}
			}
			if strings.Contains(obj.GetKind(), "AdmissionPolicy") {
				obj.SetName(obj.GetName() + suffix)
			}
			out = append(out, obj)
		}
	}
	return out, nil
}
