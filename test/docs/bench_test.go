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

// maxBenchmarkLines bounds docs/benchmarks.md: a page of how to run the benchmark and of today's
// figures, not a notebook of dated runs (it once grew to 1,078 lines): under 300 lines.
const maxBenchmarkLines = 299

// TestBenchmarkPageIsCurrentFiguresOnly: docs/benchmarks.md stays short, each of its "Today's
// figures" tables says how to reproduce its rows (a make target or the go test command, and N),
// and no raw report of a run is kept under docs/: make bench writes them to bin/.
func TestBenchmarkPageIsCurrentFiguresOnly(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	if n := strings.Count(page, "\n"); n > maxBenchmarkLines {
		t.Errorf("docs/benchmarks.md has %d lines, over %d: keep today's figures, drop the history", n, maxBenchmarkLines)
	}
	_, figures, ok := strings.Cut(page, "\n## Today's figures\n")
	if !ok {
		t.Fatal(`docs/benchmarks.md has no "Today's figures" section`)
	}
	figures, _, _ = strings.Cut(figures, "\n## ")
	sections := regexp.MustCompile(`(?m)^### `).Split(figures, -1)[1:]
	if len(sections) < 6 {
		t.Errorf("Today's figures has %d questions, want at least 6 (CPU, writes, submissions, completion to status, memory, large objects)", len(sections))
	}
	for _, sec := range sections {
		title, _, _ := strings.Cut(sec, "\n")
		if !strings.Contains(sec, "make bench") && !strings.Contains(sec, "go test ./test/bench") && !strings.Contains(sec, "the command above") {
			t.Errorf("%q does not say how to reproduce its figures", title)
		}
	}

	err = filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".json") || strings.HasSuffix(path, ".jsonl")) {
			t.Errorf("%s: a raw report under docs/; make bench writes them to bin/bench, outside Git", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
