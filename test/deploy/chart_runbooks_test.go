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

	"sigs.k8s.io/yaml"
)

// runbookURLs renders the chart's PrometheusRule with args and returns each alert's runbook_url.
func runbookURLs(t *testing.T, args ...string) map[string]string {
	t.Helper()
	return runbookURLsOf(t, chartDir, args...)
}

// packageChart packages dist/chart as make release does (version x.y.z, appVersion vx.y.z) and
// returns the package's path.
func packageChart(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	runHelm(t, "package", chartDir, "--version", version, "--app-version", "v"+version, "--destination", dir)
	return filepath.Join(dir, "video-operator-"+version+".tgz")
}

// runbookURLsOf renders the PrometheusRule of chart (a directory or a package) with args and
// returns each alert's runbook_url.
func runbookURLsOf(t *testing.T, chart string, args ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	render := append([]string{"template", release, chart, "--namespace", namespace, "--set", "monitoring.prometheusRule.enabled=true"}, withBaseURL...)
	for _, o := range decode(t, runHelm(t, append(render, args...)...)) {
		if o.GetKind() != "PrometheusRule" {
			continue
		}
		groups := unstructuredSlice(o.Object, "spec", "groups")
		for _, g := range groups {
			rules := unstructuredSlice(g.(map[string]any), "rules")
			for _, r := range rules {
				rule := r.(map[string]any)
				ann, _ := rule["annotations"].(map[string]any)
				out[rule["alert"].(string)], _ = ann["runbook_url"].(string)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("the chart rendered no PrometheusRule alerts")
	}
	return out
}

// unstructuredSlice is the list at fields below obj, nil where there is none.
func unstructuredSlice(obj map[string]any, fields ...string) []any {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[f]
	}
	s, _ := cur.([]any)
	return s
}

// "Every alert has a runbook section and a `runbook_url`" (docs/architecture.md "Release and
// install"): an installed chart links the runbooks of the version it runs, the tag of its
// appVersion, not main (which may describe a later version), unless monitoring.runbookBaseURL
// names another place.
func TestChartRunbookURLsPointAtTheInstalledVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(b, &chart); err != nil || chart.AppVersion == "" {
		t.Fatalf("Chart.yaml has no appVersion: %v", err)
	}
	// Between releases the chart's appVersion (x.y.z-dev) has no tag: it links main.
	ref := chart.AppVersion
	if strings.HasSuffix(ref, "-dev") {
		ref = "main"
	}
	want := "https://github.com/videoops/video-operator/blob/" + ref + "/docs/runbooks.md#"
	for alert, url := range runbookURLs(t) {
		if url != want+strings.ToLower(alert) {
			t.Errorf("alert %s: runbook_url %q, want %q", alert, url, want+strings.ToLower(alert))
		}
	}
	// A released chart (helm package --app-version, as make release runs it) links its tag.
	packaged := packageChart(t, "9.8.7")
	released := "https://github.com/videoops/video-operator/blob/v9.8.7/docs/runbooks.md#"
	for alert, url := range runbookURLsOf(t, packaged) {
		if url != released+strings.ToLower(alert) {
			t.Errorf("alert %s of the chart packaged as 9.8.7: runbook_url %q, want %q", alert, url, released+strings.ToLower(alert))
		}
	}
	const wiki = "https://wiki.example.com/ops/video-operator"
	for alert, url := range runbookURLs(t, "--set", "monitoring.runbookBaseURL="+wiki) {
		if url != wiki+"#"+strings.ToLower(alert) {
			t.Errorf("alert %s with monitoring.runbookBaseURL: runbook_url %q, want %s#%s", alert, url, wiki, strings.ToLower(alert))
		}
	}
	if out := helmTemplateFails(t, append(withBaseURL, "--set", "monitoring.runbookBaseURL=not a url")...); !strings.Contains(out, "runbookBaseURL") {
		t.Errorf("a runbookBaseURL that is not a URL must fail naming the value, got:\n%.500s", out)
	}
}
