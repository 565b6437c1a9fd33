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
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// citedFileRE finds a file named in prose or in a code span: a path or a bare name ending in an
// extension of the files the docs talk about.
var citedFileRE = regexp.MustCompile(`(?:^|[\s(\x60"'])((?:[./]*[A-Za-z0-9_-]+/)*[A-Za-z0-9_.-]*[A-Za-z0-9_-]\.(?:md|go|yaml|yml|json|sh|tpl|txt))\b`)

// writtenByTools are files the docs name that exist only once a command wrote them, never in
// the repository: each is named on its page with the command that writes it.
var writtenByTools = map[string]string{
	"install.yaml":     "make build-installer and make release write dist/install.yaml",
	"RELEASE-NOTES.md": "make release writes it",
	"SHA256SUMS":       "make release writes it",
	"pairs.md":         "make bench-pairs writes it into BENCH_OUT",
	"index.json":       "the OCI layout's index, inside the image archive make release writes",
	"manager.cdx.json": "the SBOM inside the image make release builds",
	"kubeconfig.yaml":  "written by a reader's cluster tool",
	"values-prod.yaml": "a reader's own values file, in examples",
	"my-values.yaml":   "a reader's own values file, in examples",
	// release.md "Rolling back": the values a version ran with, kept by the reader or written
	// by the page's helm get values.
	"values-x.y.z.yaml":  "a reader's values file of version x.y.z, or helm get values --revision writes it",
	"values-0.1.0.yaml":  "a reader's values file of 0.1.0, or helm get values --revision writes it",
	"kustomization.yaml": "a reader's own overlay, and config/*/kustomization.yaml",
	// review-and-approve.md: kubectl video render --dry-run > videos/meet-video-operator.yaml
	"meet-video-operator.yaml": "the output of an example's redirect into a GitOps repository",
}

// TestDocsCiteOnlyFilesOfTheRepository: a reader can open every file a page names. A page that
// cites a design note kept outside the repository (as six pages once cited a design file that
// is not in it) sends the reader nowhere; the project's account of its design is
// docs/architecture.md. Each name is looked up relative to the page, from the repository root,
// and, for a bare name, anywhere in the repository.
func TestDocsCiteOnlyFilesOfTheRepository(t *testing.T) {
	if _, err := os.Stat(filepath.Join(repoRoot, "docs", "architecture.md")); err != nil {
		t.Fatal("docs/architecture.md, the project's account of its design, is missing")
	}
	base := map[string]bool{} // every name and every path (from the root) of the repository
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		base[d.Name()] = true
		if rel, err := filepath.Rel(repoRoot, path); err == nil {
			base[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files := append(docFiles(t), "CHANGELOG.md")
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			// A design note outside the repository is outside_test.go's (outsideRE).
			if strings.Contains(line, "/work/") {
				t.Errorf("%s:%d cites a path of a development machine: %s", file, i+1, strings.TrimSpace(line))
			}
			for _, at := range citedFileRE.FindAllStringSubmatchIndex(line, -1) {
				if at[3] < len(line) && line[at[3]] == '/' {
					continue // a domain, not a file: meta.helm.sh/release-name
				}
				m := []string{line[at[0]:at[1]], line[at[2]:at[3]]}
				name := strings.TrimLeft(m[1], "./")
				if strings.HasPrefix(m[1], "../") {
					name = m[1]
				}
				if cited(file, name, base) {
					continue
				}
				if _, ok := writtenByTools[filepath.Base(name)]; ok {
					continue
				}
				t.Errorf("%s:%d names %s, which is not a file of the repository", file, i+1, m[1])
			}
		}
	}
}

// cited reports whether name, found in file, is a file of the repository: relative to the page,
// from the root, or the end of a path of the repository (requestrules/scenes.go for
// internal/requestrules/scenes.go).
func cited(file, name string, base map[string]bool) bool {
	for _, p := range []string{filepath.Join(filepath.Dir(file), name), name} {
		if _, err := os.Stat(filepath.Join(repoRoot, p)); err == nil {
			return true
		}
	}
	if base[name] {
		return true
	}
	for p := range base {
		if strings.HasSuffix(p, "/"+name) {
			return true
		}
	}
	return false
}

// TestDocsAgreeOnTheJobIDAnnotation: the annotation video.videoops.io/job-id exists
// (api/v1alpha1 AnnotationJobID) and backup-restore.md documents it, so no page may say that
// there is no job-id annotation; the runbooks, which once did, say when it does not help (an
// object whose submission is unknown) and link its documentation.
func TestDocsAgreeOnTheJobIDAnnotation(t *testing.T) {
	denial := regexp.MustCompile(`(?i)(no|not a) job-id annotation|no annotation that hands the operator a job id`)
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		if m := denial.Find(data); m != nil {
			t.Errorf("%s says %q, but video.videoops.io/job-id exists (backup-restore.md#adopting-an-existing-job)", file, m)
		}
	}
	runbooks, err := os.ReadFile(filepath.Join(repoRoot, "docs", "runbooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(runbooks), "`video.videoops.io/job-id` ([Backup and restore](backup-restore.md#adopting-an-existing-job))") {
		t.Error("runbooks.md does not name video.videoops.io/job-id with a link to its documentation in backup-restore.md")
	}
}
