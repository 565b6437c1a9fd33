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

package admissionpolicy_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/videoops/video-operator/internal/admissionpolicy"
	"github.com/videoops/video-operator/internal/testutil"
)

// beforePolicies is the last commit whose installed CRDs carried the scenes' rules.
const beforePolicies = "ef297600c5c284cc7bebe1f7ee347ceae55f8219"

// oldCRDs are the CRDs of beforePolicies, read with git.
func oldCRDs(t *testing.T) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range []string{"video.videoops.io_videorenders.yaml", "video.videoops.io_videostoryboards.yaml", "video.videoops.io_videobudgets.yaml"} {
		out, err := exec.CommandContext(t.Context(), "git", "-C", testutil.RepoRoot(), "show", beforePolicies+":config/crd/bases/"+f).Output()
		if err != nil {
			t.Skipf("the CRDs of %s are not readable with git (a copy without history?): %v", beforePolicies, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(out, crd); err != nil {
			t.Fatalf("%s of %s: %v", f, beforePolicies, err)
		}
		crds = append(crds, crd)
	}
	return crds
}

// TestUpgradeNeverAdmitsABrokenScene upgrades an install as docs/deploy.md says, "Upgrading to
// the admission policies": the CRDs that carry the scenes' rules, then the policies (waiting
// until they are in force), then the CRDs without the rules. A spec broken only in a scene is
// refused at every step, and while the CRDs are replaced; without the policies the new CRDs would
// accept it.
func TestUpgradeNeverAdmitsABrokenScene(t *testing.T) {
	_, cfg, c := startAPIServer(t, "")
	ctx := context.Background()
	old := oldCRDs(t)
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: old}); err != nil {
		t.Fatal(err)
	}
	broken := func() *unstructured.Unstructured {
		return object(t, "VideoRender", "broken", request(sceneCases[3].scene))
	}
	const field = "spec.storyboard.scenes[2].audioLanguage"
	refused := func(step string) string {
		t.Helper()
		err := c.Create(ctx, broken(), client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Fatalf("%s: the broken scene was not refused naming %s: %v", step, field, err)
		}
		return err.Error()
	}

	// 1. The release before: the CRD refuses.
	if msg := refused("old CRDs"); strings.Contains(msg, "ValidatingAdmissionPolicy") {
		t.Errorf("old CRDs: refused by a policy before any was installed: %s", msg)
	}
	// 2. The policies, in force: both refuse (the CRD first).
	if err := testutil.InstallPolicies(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	refused("old CRDs and the policies")
	// 3. The new CRDs: refused throughout their replacement, and in the end by the policy.
	newCRDs, err := filepath.Glob(filepath.Join(testutil.CRDDir(), "*.yaml"))
	if err != nil || len(newCRDs) != len(old) {
		t.Fatalf("new CRDs %v: %v", newCRDs, err)
	}
	for _, f := range newCRDs {
		crd := testutil.ReadCRD(t, f)
		current := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, current); err != nil {
			t.Fatal(err)
		}
		current.Spec = crd.Spec
		if err := c.Update(ctx, current); err != nil {
			t.Fatalf("updating %s: %v", crd.Name, err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for msg := refused("replacing the CRDs"); !strings.Contains(msg, "ValidatingAdmissionPolicy"); msg = refused("replacing the CRDs") {
		if time.Now().After(deadline) {
			t.Fatalf("the new CRDs are not in effect after a minute: %s", msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
	refused("new CRDs and the policies")

	// The policies are what refuses now: without their bindings the broken scene is accepted.
	for _, p := range admissionpolicy.Expected {
		b := &unstructured.Unstructured{}
		b.SetAPIVersion("admissionregistration.k8s.io/v1")
		b.SetKind("ValidatingAdmissionPolicyBinding")
		b.SetName(p.ID)
		if err := c.Delete(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	deadline = time.Now().Add(time.Minute)
	for c.Create(ctx, broken(), client.DryRunAll) != nil {
		if time.Now().After(deadline) {
			t.Fatal("without the policies' bindings the new CRDs still refuse the broken scene: the test proves nothing")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
