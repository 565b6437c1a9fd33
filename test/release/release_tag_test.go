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

package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReleaseRefusesATagWhoseManifestsNameAnotherImage: docs/release.md's first step sets the
// release's version in dist/chart/Chart.yaml, config/manager/kustomization.yaml (newTag) and
// config/gitops/operator-overlay (newTag) before the tag. Nothing checks it. A tag made on main
// as it is between releases (every one of them says vX.Y.Z-dev) passes make release's checks:
// the packaged chart and install.yaml are fine (they are rewritten from VERSION and pinned by
// digest), but the tag's config/default, the remote base the GitOps overlay tells platform teams
// to use (`config/default?ref=vX.Y.Z`), and the overlay itself run `:vX.Y.Z-dev`, an image no
// registry has (the release pushes vX.Y.Z only): ImagePullBackOff for every kustomize and Flux
// or Argo CD install of that release. The checks refuse it, as they refuse a missing CHANGELOG
// section.
func TestReleaseRefusesATagWhoseManifestsNameAnotherImage(t *testing.T) {
	dir := releaseTree(t, "## [0.1.0] - 2026-11-25")
	for _, f := range []string{
		filepath.Join("dist", "chart", "Chart.yaml"),
		filepath.Join("config", "manager", "kustomization.yaml"),
		filepath.Join("config", "gitops", "operator-overlay", "kustomization.yaml"),
	} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "-dev") {
			t.Fatalf("%s names no -dev version: the check below tests nothing", f)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "main between releases")
	git(t, dir, "tag", "-a", "v0.1.0", "-m", "v0.1.0")
	if out, passed := runRelease(t, dir); passed {
		t.Errorf("make release VERSION=0.1.0 went past its checks on a tag whose config/manager, GitOps overlay and chart "+
			"still name the next pre-release (an image no registry has):\n%s", out)
	}
}
