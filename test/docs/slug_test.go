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

package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The anchors GitHub gives these headings, as seen on github.com.
func TestSlug(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"Try it: two commands", "try-it-two-commands"},
		{"More on `make test`", "more-on-make-test"},
		{"Spend guard: a VideoBudget per namespace", "spend-guard-a-videobudget-per-namespace"},
		{"Failures, restarts and the two annotations", "failures-restarts-and-the-two-annotations"},
		{"video.videoops.io/v1alpha1", "videovideoopsiov1alpha1"},
		{"Webhook callbacks (optional)", "webhook-callbacks-optional"},
		{"A [linked](x.md) **bold** heading", "a-linked-bold-heading"},
		{"snake_case and --flags", "snake_case-and---flags"},
	} {
		if got := slug(tc.heading); got != tc.want {
			t.Errorf("slug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
	seen := map[string]int{}
	for i, want := range []string{"x", "x-1", "x-2"} {
		if got := uniqueSlug("x", seen); got != want {
			t.Errorf("repeat %d: got %q, want %q", i, got, want)
		}
	}
}

// The checker must find what it is for: a missing file, a missing anchor, a malformed external
// link; and must not complain about links that are fine or about code.
func TestCheckerFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	page := "# Title\n\n## A section\n\n" +
		"[ok](#a-section) [ok file](other.md) [ok anchor](other.md#there) [ok web](https://example.com/x)\n" +
		"`[not a link](nowhere.md)`\n" +
		"```\n[also code](nowhere.md)\n```\n" +
		"[missing file](nowhere.md)\n" +
		"[missing anchor](other.md#not-there)\n" +
		"[missing local anchor](#nope)\n" +
		"[no host](https:///path)\n" +
		"![image](missing.png)\n"
	if err := os.WriteFile(filepath.Join(dir, "page.md"), []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other.md"), []byte("# Other\n\n### There\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc, err := parseFile(filepath.Join(dir, "page.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchorsOf := func(file string) (map[string]bool, error) {
		d, err := parseFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		return d.anchors, nil
	}
	var broken []string
	for _, l := range doc.links {
		// checkLink resolves against the repository root; point it at the temporary directory.
		if msg := checkLinkIn(dir, "page.md", l.target, anchorsOf); msg != "" {
			broken = append(broken, l.target)
		}
	}
	want := []string{"nowhere.md", "other.md#not-there", "#nope", "https:///path", "missing.png"}
	if strings.Join(broken, " ") != strings.Join(want, " ") {
		t.Errorf("broken links found: %q, want %q", broken, want)
	}
}
