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

// Package docs checks the project's Markdown: every relative link must reach a file that exists
// and, when it names an #anchor, a heading that GitHub would give that anchor. External links
// are only checked for being well-formed: the test needs no network.
package docs

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is two levels up from test/docs.
const repoRoot = "../.."

// docFiles lists the Markdown a reader follows links in: the README, every page under docs/
// and the Helm chart's README when there is one.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(repoRoot, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing docs/: %v", err)
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "dist/chart/README.md")); err == nil {
		files = append(files, "dist/chart/README.md")
	}
	slices.Sort(files)
	return files
}

func TestDocLinks(t *testing.T) {
	files := docFiles(t)
	if len(files) < 2 {
		t.Fatalf("found only %v: the docs are not where this test looks", files)
	}
	anchors := map[string]map[string]bool{} // file (slash path from the root) -> its anchors
	anchorsOf := func(file string) (map[string]bool, error) {
		if a, ok := anchors[file]; ok {
			return a, nil
		}
		doc, err := parseFile(filepath.Join(repoRoot, file))
		if err != nil {
			return nil, err
		}
		anchors[file] = doc.anchors
		return doc.anchors, nil
	}

	checked := 0
	for _, file := range files {
		doc, err := parseFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range doc.links {
			checked++
			if msg := checkLink(file, l.target, anchorsOf); msg != "" {
				t.Errorf("%s:%d: link %q: %s", file, l.line, l.target, msg)
			}
		}
	}
	t.Logf("checked %d links in %d files", checked, len(files))
}

// checkLink returns what is wrong with target, a link found in file, or "" when nothing is.
func checkLink(file, target string, anchorsOf func(string) (map[string]bool, error)) string {
	return checkLinkIn(repoRoot, file, target, anchorsOf)
}

// checkLinkIn is checkLink for a tree rooted at root.
func checkLinkIn(root, file, target string, anchorsOf func(string) (map[string]bool, error)) string {
	if target == "" {
		return "empty link"
	}
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		switch u.Scheme {
		case "http", "https":
			if u.Host == "" {
				return "an external link without a host"
			}
			if strings.ContainsAny(target, " \t") {
				return "an external link with a space in it"
			}
			return ""
		case "mailto":
			if u.Opaque == "" {
				return "a mailto link without an address"
			}
			return ""
		default:
			return fmt.Sprintf("scheme %q is neither http(s) nor a relative path", u.Scheme)
		}
	} else if err != nil {
		return fmt.Sprintf("does not parse: %v", err)
	}

	pathPart, anchor, _ := strings.Cut(target, "#")
	dest := file
	if pathPart != "" {
		if strings.HasPrefix(pathPart, "/") {
			return "an absolute path: GitHub resolves it against the host, not the repository; use a relative one"
		}
		unescaped, err := url.PathUnescape(pathPart)
		if err != nil {
			return fmt.Sprintf("bad escape: %v", err)
		}
		dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), unescaped)))
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "points outside the repository"
		}
		if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
			return fmt.Sprintf("%s does not exist", dest)
		}
	}
	if anchor == "" {
		return ""
	}
	if !strings.HasSuffix(dest, ".md") {
		return fmt.Sprintf("an anchor into %s, which is not Markdown: it cannot be checked", dest)
	}
	a, err := anchorsOf(dest)
	if err != nil {
		return err.Error()
	}
	if !a[strings.ToLower(anchor)] {
		return fmt.Sprintf("%s has no heading with anchor #%s", dest, anchor)
	}
	return ""
}

type link struct {
	line   int
	target string
}

type document struct {
	links   []link
	anchors map[string]bool
}

var (
	fenceRE    = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	headingRE  = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$`)
	codeSpanRE = regexp.MustCompile("(`+)(.+?)(`+)")
	// An inline link or image: [text](target) or [text](target "title"); target may be <...>.
	inlineLinkRE = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	// A link reference definition: [label]: target.
	refDefRE = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	// HTML anchors: <a name="x"> or id="x".
	htmlAnchorRE = regexp.MustCompile(`<[a-zA-Z][^>]*\s(?:name|id)="([^"]+)"`)
	// HTML links and images inside Markdown: href="..." and src="...".
	htmlLinkRE = regexp.MustCompile(`<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"`)
)

func parseFile(path string) (*document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	doc := &document{anchors: map[string]bool{}}
	slugs := map[string]int{}
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1024*1024), 1024*1024)
	fence := ""
	for n := 1; scanner.Scan(); n++ {
		line := scanner.Text()
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
				continue
			case m[1][0] == fence[0] && len(m[1]) >= len(fence):
				fence = ""
				continue
			}
		}
		if fence != "" {
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			doc.anchors[uniqueSlug(slug(m[2]), slugs)] = true
		}
		for _, m := range htmlAnchorRE.FindAllStringSubmatch(line, -1) {
			doc.anchors[strings.ToLower(m[1])] = true
		}
		text := codeSpanRE.ReplaceAllString(line, "")
		for _, m := range inlineLinkRE.FindAllStringSubmatch(text, -1) {
			doc.links = append(doc.links, link{line: n, target: strings.Trim(m[2], "<>")})
		}
		if m := refDefRE.FindStringSubmatch(text); m != nil {
			doc.links = append(doc.links, link{line: n, target: strings.Trim(m[1], "<>")})
		}
		for _, m := range htmlLinkRE.FindAllStringSubmatch(text, -1) {
			doc.links = append(doc.links, link{line: n, target: m[1]})
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if fence != "" {
		return nil, fmt.Errorf("%s: a code fence (%s) is never closed", path, fence)
	}
	return doc, nil
}

var markupLinkRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// slug is GitHub's anchor for a heading: the heading's text as rendered, lower-cased, with every
// character other than a letter, a digit, a space, a hyphen or an underscore dropped, and spaces
// turned into hyphens.
func slug(heading string) string {
	text := markupLinkRE.ReplaceAllString(heading, "$1")
	text = strings.NewReplacer("`", "", "**", "", "__", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// uniqueSlug numbers repeated anchors as GitHub does: x, x-1, x-2.
func uniqueSlug(s string, seen map[string]int) string {
	n, ok := seen[s]
	seen[s] = n + 1
	if !ok {
		return s
	}
	return fmt.Sprintf("%s-%d", s, n)
}
