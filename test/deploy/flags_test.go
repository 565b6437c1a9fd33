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
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

// managerFlags builds cmd/manager of this tree and returns the flags its -help lists.
func managerFlags(t *testing.T) map[string]bool {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "manager")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/manager: %v\n%s", err, out)
	}
	// The flag package prints the usage on standard error and exits 0 for -help.
	out, err := exec.CommandContext(t.Context(), bin, "-help").CombinedOutput()
	if err != nil {
		t.Fatalf("manager -help: %v\n%s", err, out)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9][a-z0-9-]*)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	// A sanity floor: flags this tree's chart has passed since 0.1.0 and flags added since.
	for _, f := range []string{"leader-elect", "service-base-url", "poll-share", "release-finalizers"} {
		if !flags[f] {
			t.Fatalf("manager -help does not list -%s; the parsing of its output is wrong:\n%s", f, out)
		}
	}
	return flags
}

// managerArgs returns, for each container of the objects that runs the manager image (the
// Deployment, the uninstall hook Job), its name and the flags its command and args pass.
func managerArgs(t *testing.T, objs []*unstructured.Unstructured) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, o := range objs {
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			c := c.(map[string]any)
			image, _ := c["image"].(string)
			if !strings.Contains(image, "video-operator") {
				continue
			}
			var words []string
			for _, field := range []string{"command", "args"} {
				list, _, _ := unstructured.NestedStringSlice(c, field)
				words = append(words, list...)
			}
			name := o.GetKind() + "/" + o.GetName()
			for _, w := range words {
				if !strings.HasPrefix(w, "-") {
					continue // the binary's path, or a value given as a separate word
				}
				flag, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
				out[name] = append(out[name], flag)
			}
		}
	}
	return out
}

// TestDeployedFlagsAreTheManagers: the 0.1.0 manager stopped with "flag provided but not
// defined: -poll-share" under the chart of the tree. Every flag the chart (defaults, the full
// values, each ci/*-values.yaml, the uninstall hook) and the kustomize installs pass to the
// manager is a flag of the manager this tree builds.
func TestDeployedFlagsAreTheManagers(t *testing.T) {
	defined := managerFlags(t)
	renderings := map[string][]byte{
		"chart defaults":    helmTemplate(t),
		"chart full values": helmTemplate(t, "--values", fullValuesFile),
		"config/default":    kustomizeBuild(t, filepath.Join(root, "config", "default")),
		"config/callbacks":  kustomizeBuild(t, filepath.Join(root, "config", "callbacks")),
	}
	ciValues, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil || len(ciValues) == 0 {
		t.Fatalf("no ci/*-values.yaml in the chart (%v)", err)
	}
	for _, f := range ciValues {
		renderings["chart "+filepath.Base(f)] = helmTemplate(t, "--values", f)
	}
	hooks := 0
	for what, rendered := range renderings {
		args := managerArgs(t, decode(t, rendered))
		if len(args) == 0 {
			t.Errorf("%s: no container runs the manager image", what)
		}
		for obj, flags := range args {
			if strings.HasPrefix(obj, "Job/") {
				hooks++
			}
			for _, f := range flags {
				if !defined[f] {
					t.Errorf("%s: %s passes --%s, which cmd/manager does not define", what, obj, f)
				}
			}
		}
	}
	// The uninstall hook runs the manager with flags of its own: it must be among those checked.
	if hooks == 0 {
		t.Error("no rendering has the uninstall hook Job: its flags went unchecked")
	}
}

// released returns the versions of CHANGELOG.md's dated sections and whether its Unreleased
// section has entries.
func released(t *testing.T) ([]*version.Version, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	var versions []*version.Version
	pending := false
	section := ""
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "## [") {
			section, _, _ = strings.Cut(strings.TrimPrefix(line, "## ["), "]")
			if section != "Unreleased" {
				v, err := version.ParseSemantic(section)
				if err != nil {
					t.Fatalf("CHANGELOG.md section %q: %v", line, err)
				}
				versions = append(versions, v)
			}
			continue
		}
		if section == "Unreleased" && strings.HasPrefix(strings.TrimSpace(line), "- ") {
			pending = true
		}
	}
	if len(versions) == 0 {
		t.Fatal("CHANGELOG.md has no released version")
	}
	return versions, pending
}

// TestChartImageIsNotOlderThanTheChart: the chart at main said 0.1.0 and ran the 0.1.0 image
// while passing flags added since. The chart's version is not older than any release, and is
// past the latest one while CHANGELOG.md has unreleased entries (between releases it is the next
// pre-release, x.y.z-dev); its appVersion is v<version>; and the image the chart and
// config/default run by default is that version, not an older release.
func TestChartImageIsNotOlderThanTheChart(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct{ Version, AppVersion string }
	if err := yaml.Unmarshal(b, &chart); err != nil {
		t.Fatal(err)
	}
	chartVersion, err := version.ParseSemantic(chart.Version)
	if err != nil {
		t.Fatalf("Chart.yaml version %q: %v", chart.Version, err)
	}
	if chart.AppVersion != "v"+chart.Version {
		t.Errorf("Chart.yaml appVersion %q, want v%s: the default image is the chart's own version", chart.AppVersion, chart.Version)
	}
	versions, pending := released(t)
	for _, v := range versions {
		if chartVersion.LessThan(v) {
			t.Errorf("the chart's version %s is older than release %s", chartVersion, v)
		}
		if pending && !v.LessThan(chartVersion) {
			t.Errorf("CHANGELOG.md has unreleased entries, and the chart's version %s is not past release %s: "+
				"set the next pre-release (x.y.z-dev) in Chart.yaml", chartVersion, v)
		}
	}

	for what, rendered := range map[string][]byte{
		"the chart":      helmTemplate(t),
		"config/default": kustomizeBuild(t, filepath.Join(root, "config", "default")),
		// The GitOps example pinned v0.1.0 while the chart beside it was 0.2.0-dev.
		"config/gitops/operator-overlay": kustomizeBuild(t, filepath.Join(root, "config", "gitops", "operator-overlay")),
	} {
		for _, o := range decode(t, rendered) {
			if o.GetKind() != "Deployment" {
				continue
			}
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			image, _ := containers[0].(map[string]any)["image"].(string)
			_, tag, ok := strings.Cut(image[strings.LastIndex(image, "/")+1:], ":")
			if !ok {
				t.Errorf("%s runs %s, without a tag", what, image)
				continue
			}
			tagVersion, err := version.ParseSemantic(strings.TrimPrefix(tag, "v"))
			if err != nil {
				t.Errorf("%s runs %s, whose tag is not a version: %v", what, image, err)
				continue
			}
			if tagVersion.LessThan(chartVersion) {
				t.Errorf("%s runs %s, a release older than the chart's %s", what, image, chartVersion)
			}
		}
	}
}

// TestGitOpsRefsAreNotOlderThanTheChart: a remote base or chart version the GitOps examples name
// (`?ref=vX.Y.Z`, `targetRevision: X.Y.Z`) is not a release older than the chart beside them.
func TestGitOpsRefsAreNotOlderThanTheChart(t *testing.T) {
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
	ref := regexp.MustCompile(`(?:\?ref=v|targetRevision: *v?|newTag: *v)([0-9]+\.[0-9]+\.[0-9]+[-.0-9A-Za-z]*)`)
	seen := 0
	err = filepath.WalkDir(filepath.Join(root, "config", "gitops"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range ref.FindAllStringSubmatch(string(data), -1) {
			seen++
			v, err := version.ParseSemantic(m[1])
			if err != nil {
				t.Errorf("%s: %q is not a version: %v", path, m[0], err)
				continue
			}
			if v.LessThan(chartVersion) {
				t.Errorf("%s names %q, older than the chart's %s", path, m[0], chartVersion)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Error("config/gitops names no version: the overlay's newTag is gone, and the check with it")
	}
}

// TestChartImageDigest: a released chart pins image.digest; the manager and the uninstall hook
// then run repository@digest, whatever the tag says, and a value that is not a digest is refused.
func TestChartImageDigest(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	images := map[string]string{}
	for _, o := range decode(t, helmTemplate(t, "--set", "image.digest="+digest, "--set", "image.tag=v9.9.9")) {
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			images[o.GetKind()+"/"+o.GetName()], _ = c.(map[string]any)["image"].(string)
		}
	}
	var kinds []string
	for obj, image := range images {
		kinds = append(kinds, strings.Split(obj, "/")[0])
		if image != "ghcr.io/videoops/video-operator@"+digest {
			t.Errorf("%s runs %s, want ghcr.io/videoops/video-operator@%s", obj, image, digest)
		}
	}
	if !slices.Contains(kinds, "Deployment") || !slices.Contains(kinds, "Job") {
		t.Errorf("want the manager's Deployment and the uninstall hook Job among %v", images)
	}
	if out := helmTemplateFails(t, append(withBaseURL, "--set", "image.digest=v0.2.0")...); !strings.Contains(out, "at '/image/digest'") {
		t.Errorf("an image.digest that is not sha256:<hex> must be refused naming it:\n%.600s", out)
	}
}
