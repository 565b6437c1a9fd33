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

// outsideRE finds a citation of a file that is not part of the repository: the design and style
// notes of the machine the project was first written on, and anything under its shared folder
// beside the checkout. The names are spelt as patterns so that this file does not cite them.
var outsideRE = regexp.MustCompile(`\b(?:DESIGN|STYLE)\.md\b|\.\./shared\b|\bshared/` + `design\b`)

// scannedExt are the files a reader of the code and the docs reads: sources, docs, manifests,
// scripts and the chart's templates.
var scannedExt = map[string]bool{
	".go": true, ".md": true, ".yaml": true, ".yml": true, ".sh": true, ".tpl": true,
	".gotmpl": true, ".txt": true, ".lua": true,
}

// scannedName are files without one of those extensions that carry comments.
var scannedName = map[string]bool{"Makefile": true, "Dockerfile": true, "PROJECT": true}

// TestNothingCitesAFileOutsideTheRepository: 56 Go comments once cited a design note that was
// never in the repository, so a reader following them found nothing; the project's account of
// its design is docs/architecture.md, which cites by section. Every source, doc, manifest and
// script of the tree is read (bin/ and .git/ are not the tree).
func TestNothingCitesAFileOutsideTheRepository(t *testing.T) {
	scanned := 0
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !scannedExt[filepath.Ext(d.Name())] && !scannedName[d.Name()] {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		scanned++
		rel, _ := filepath.Rel(repoRoot, path)
		for i, line := range strings.Split(string(data), "\n") {
			if m := outsideRE.FindString(line); m != "" {
				t.Errorf("%s:%d cites %s, which is not part of the repository (cite a section of docs/architecture.md instead): %s",
					filepath.ToSlash(rel), i+1, m, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The walk must have reached the tree: the Go sources alone are a few hundred files.
	if scanned < 200 {
		t.Fatalf("scanned only %d files: the repository is not where this test looks", scanned)
	}
}

// The pattern finds each way the outside files were cited, and leaves alone the files of the
// repository with similar names.
func TestOutsideCitationPattern(t *testing.T) {
	for _, line := range []string{
		`// call could be one more job nobody can identify (` + "DESIGN" + `.md "Never pay twice").`,
		`// Package bench is the scale benchmark of ` + "DESIGN" + `.md's "Scale targets"`,
		`    # (` + "STYLE" + `.md). gci also refuses a fourth group`,
		`see [the notes](../` + "shared" + `/design/notes.md)`,
		`go run ../` + "shared",
		`read /srv/` + "shared" + "/" + "design" + `/notes.md`,
	} {
		if !outsideRE.MatchString(line) {
			t.Errorf("not found in %q", line)
		}
	}
	for _, line := range []string{
		`// docs/architecture.md "Never pay twice"`,
		`see docs/design-review.md and STYLEGUIDE.md`,
		`a shared informer cache (../sharedinformers is not the folder)`,
		`// MY` + "DESIGN" + `.md`,
	} {
		if outsideRE.MatchString(line) {
			t.Errorf("found in %q, which cites nothing outside", line)
		}
	}
}

// architectureCiteRE finds a citation of a section of docs/architecture.md in a comment, once the
// comment's lines are joined: the file's name and the quoted heading.
var architectureCiteRE = regexp.MustCompile(`docs/architecture\.md\s+"([^"]+)"`)

// TestCitedArchitectureSectionsExist: a comment that cites a section of docs/architecture.md
// by its heading sends the reader to a heading that is there.
func TestCitedArchitectureSectionsExist(t *testing.T) {
	doc, err := parseFile(filepath.Join(repoRoot, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	joinRE := regexp.MustCompile(`\n\s*(?://|#)\s*`)
	cites := 0
	err = filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) != ".go" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		for _, m := range architectureCiteRE.FindAllStringSubmatch(joinRE.ReplaceAllString(string(data), " "), -1) {
			cites++
			if !doc.anchors[slug(m[1])] {
				t.Errorf("%s cites docs/architecture.md %q, which has no such heading", filepath.ToSlash(rel), m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cites == 0 {
		t.Fatal("found no citation of docs/architecture.md: the pattern no longer matches how comments cite it")
	}
	t.Logf("%d citations of docs/architecture.md sections", cites)
}
