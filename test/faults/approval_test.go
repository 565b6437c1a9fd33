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

package faults

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/videoops/video-operator/internal/testutil"
)

// approvalTestLabel marks the namespaces the approval policies apply to in this suite: they are
// cluster-wide, and the other cases run on the API server they were written for.
const approvalTestLabel = testutil.ApprovalTestLabel

// installApprovalPolicies installs the admission policies and the approver role of config/approval
// (named as config/default names them), bound to namespace ns only, as an upgrade to this tree
// installs them (docs/approval.md), and waits until the API server stamps an approval in ns.
func installApprovalPolicies(t *testing.T, ns string) {
	t.Helper()
	objs, err := testutil.ApprovalManifests(ns, "-"+ns)
	must(t, err)
	for _, obj := range objs {
		if err := k8s.Create(t.Context(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("installing %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		if strings.Contains(obj.GetKind(), "AdmissionPolicy") {
			t.Cleanup(func() { _ = k8s.Delete(t.Context(), obj) })
		}
	}
	n := &corev1.Namespace{}
	must(t, k8s.Get(t.Context(), client.ObjectKey{Name: ns}, n))
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[approvalTestLabel] = ns
	must(t, k8s.Update(t.Context(), n))
	// The API server loads new policies within a second or two: a storyboard created in ns gets
	// its author stamped once they are in force.
	waitFor(t, 30*time.Second, "the approval policies in force", func() bool {
		u := &unstructured.Unstructured{}
		must(t, yaml.Unmarshal([]byte(storyboard("policy-probe", "Probe.")), &u.Object))
		u.SetNamespace(ns)
		u.SetName("")
		u.SetGenerateName("policy-probe-")
		if err := k8s.Create(t.Context(), u); err != nil {
			// A MutatingAdmissionPolicy needs the CRD's schema, which the API server publishes
			// a moment after the CRD: until then it refuses the write, and this waits.
			t.Logf("the probe: %v", err)
			return false
		}
		defer func() { _ = k8s.Delete(t.Context(), u) }()
		return u.GetAnnotations()["video.videoops.io/spec-changed-by"] != ""
	})
}
