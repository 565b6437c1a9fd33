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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCRDsMovedApartThenUpgraded: an installation whose CRDs a Helm release installed (the
// default, and the 0.1.0 chart's only way) moves them apart as docs/scale-out.md advises ("To
// give the CRDs a life of their own, install them apart from every release"): the release stops
// rendering them (crds.install=false; crds.keep leaves them). Then the next version comes, and
// the page's upgrade says "apply the new release's crds.yaml first" with its own command,
// `kubectl apply --server-side -f crds.yaml`. The CRDs' fields are owned by the field manager
// "helm", whose values the new crds.yaml changes: the server-side apply is refused with
// conflicts, and the upgrade stops before it started.
func TestCRDsMovedApartThenUpgraded(t *testing.T) {
	_, kubeconfig := startAdminEnvtest(t, "platform-admin")
	sh := newDocsShell(t, kubeconfig)
	previous := releaseChart(t)
	crds := filepath.Join(t.TempDir(), "crds.yaml")
	if err := os.WriteFile(crds, kustomizeBuild(t, filepath.Join(root, "config", "crd")), 0o600); err != nil {
		t.Fatal(err)
	}
	sh.must("helm install video-operator " + previous + " -n video-operator-system --create-namespace --set service.baseURL=" + serviceBaseURL)
	// The CRDs leave the release, which keeps them (crds.keep).
	sh.must("helm upgrade video-operator " + previous + " -n video-operator-system --reset-then-reuse-values --set crds.install=false")
	if owner := sh.must("kubectl get crd videorenders.video.videoops.io -o name"); !strings.Contains(owner, "videorenders") {
		t.Fatal("the CRDs did not stay: the check below tests nothing")
	}

	commands := docBlock(t, "scale-out.md", "## CRDs apart from every release")
	var apply string
	for line := range strings.SplitSeq(commands, "\n") {
		if strings.HasPrefix(line, "kubectl apply") && strings.Contains(line, "crds.yaml") {
			apply = line
		}
	}
	if apply == "" {
		t.Fatalf("docs/scale-out.md applies no crds.yaml:\n%s", commands)
	}
	// The next version's crds.yaml: this tree's, over the 0.1.0 CRDs.
	apply = strings.Replace(apply, "-f crds.yaml", "-f "+crds, 1)
	if out, err := sh.run(apply); err != nil {
		t.Errorf("docs/scale-out.md's %q over CRDs a release installed before: %v\n%.2000s", apply, err, out)
	}
}
