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
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// helpFlagRE finds a flag in the output of Go's flag package: "  -name type" or "  -name".
var helpFlagRE = regexp.MustCompile(`(?m)^  -([a-z0-9][a-z0-9-]*)(?:\s|$)`)

// docFlagRE finds a flag named in docs/operating.md's table.
var docFlagRE = regexp.MustCompile("`--([a-z0-9][a-z0-9-]*)`")

// managerFlags returns the flags of the manager this tree builds, as its --help lists them: its
// own, controller-runtime's logging flags and any a library registers.
func managerFlags(t *testing.T) []string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "manager")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./cmd/manager")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}
	// -help exits as the flag package decides; what counts is the list it prints.
	out, _ := exec.CommandContext(t.Context(), bin, "--help").CombinedOutput()
	var flags []string
	for _, m := range helpFlagRE.FindAllStringSubmatch(string(out), -1) {
		flags = append(flags, m[1])
	}
	if len(flags) < 20 {
		t.Fatalf("the manager's --help listed %d flags: not the output of the flag package?\n%s", len(flags), out)
	}
	return flags
}

// operatingFlagTable returns the flags named in the first column of docs/operating.md's table of
// the manager's flags, and the text of that section.
func operatingFlagTable(t *testing.T) ([]string, string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operating.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Configuration: the manager's flags\n")
	if !ok {
		t.Fatal(`docs/operating.md has no section "Configuration: the manager's flags"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var flags []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(line, "| `--") {
			continue
		}
		for _, m := range docFlagRE.FindAllStringSubmatch(cells[1], -1) {
			flags = append(flags, m[1])
		}
	}
	return flags, section
}

// TestOperatingDocumentsEveryManagerFlag: docs/operating.md's table is how a platform team learns
// the manager's flags; every flag --help lists is in it (the --zap-* logging flags by the sentence
// that names them), and every flag it names is one the manager has.
func TestOperatingDocumentsEveryManagerFlag(t *testing.T) {
	have := managerFlags(t)
	documented, section := operatingFlagTable(t)
	for _, f := range have {
		if strings.HasPrefix(f, "zap-") && strings.Contains(section, "`--zap-*`") {
			continue
		}
		if !slices.Contains(documented, f) {
			t.Errorf("--%s is a flag of the manager that docs/operating.md's table does not document", f)
		}
	}
	for _, f := range documented {
		if !slices.Contains(have, f) {
			t.Errorf("docs/operating.md documents --%s, which the manager does not have", f)
		}
	}
	t.Logf("%d flags of the manager, %d in the table", len(have), len(documented))
}
