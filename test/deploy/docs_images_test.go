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
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

// TestDocsNeverInstallTheTreeChartWithAnOlderImage: issue 38's first trap was `helm install …
// dist/chart` running the 0.1.0 image, which stops with `flag provided but not defined:
// -poll-share`. The chart's default is fixed, but docs/deploy.md "With Helm" still installs the
// tree's chart (version 0.2.0-dev, passing --poll-share, --progress-interval, ...) with
// `--set image.tag=v0.1.0`: a platform team that mirrored the released v0.1.0 image to its
// registry, and follows that section, gets the crash loop again, and then a `helm uninstall`
// whose hook (--release-finalizers) the 0.1.0 image does not know. No docs command may pair
// dist/chart with an image tag of a release older than the chart.
func TestDocsNeverInstallTheTreeChartWithAnOlderImage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct{ Version string }
	if err := yaml.Unmarshal(b, &chart); err != nil {
		t.Fatal(err)
	}
	chartVersion, err := version.ParseSemantic(chart.Version)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(chartDir, "README.md"))
	tag := regexp.MustCompile(`image\.tag=v?([0-9]+\.[0-9]+\.[0-9]+[-.0-9A-Za-z]*)`)
	commands := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for cmd := range strings.SplitSeq(strings.ReplaceAll(string(data), "\\\n", " "), "\n") {
			if !strings.Contains(cmd, "helm ") || !strings.Contains(cmd, "dist/chart") {
				continue
			}
			commands++
			for _, m := range tag.FindAllStringSubmatch(cmd, -1) {
				v, err := version.ParseSemantic(m[1])
				if err != nil {
					continue
				}
				if v.LessThan(chartVersion) {
					rel, _ := filepath.Rel(root, page)
					t.Errorf("%s: %q installs the tree's chart %s with the image of release %s, which lacks its flags:\n  %s",
						rel, m[0], chartVersion, v, strings.Join(strings.Fields(cmd), " "))
				}
			}
		}
	}
	if commands == 0 {
		t.Fatal("no docs command installs dist/chart: the check tests nothing")
	}
}
