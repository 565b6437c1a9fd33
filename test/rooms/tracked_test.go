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

package rooms

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedBytes is the largest file the repository may track: every clone and every GitOps
// checkout carries each tracked file forever. The largest legitimate ones are the generated
// CRDs (about 200 KB).
const maxTrackedBytes = 1 << 20

// executableMagic are the first bytes of built binaries (ELF, Mach-O, PE).
var executableMagic = [][]byte{{0x7f, 'E', 'L', 'F'}, {0xcf, 0xfa, 0xed, 0xfe}, {0xfe, 0xed, 0xfa, 0xcf}, {'M', 'Z'}}

// unwanted names the tracked files that are built binaries or over maxTrackedBytes, below root.
func unwanted(root string, files []string) ([]string, error) {
	var bad []string
	for _, f := range files {
		path := filepath.Join(root, f)
		info, err := os.Lstat(path)
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not committed yet
			}
			return nil, err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		if info.Size() > maxTrackedBytes {
			bad = append(bad, fmt.Sprintf("%s (%d bytes, over %d)", f, info.Size(), maxTrackedBytes))
			continue
		}
		head := make([]byte, 4)
		fh, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		n, _ := fh.Read(head)
		_ = fh.Close()
		for _, magic := range executableMagic {
			if n >= len(magic) && bytes.Equal(head[:len(magic)], magic) {
				bad = append(bad, f+" (a built binary)")
				break
			}
		}
	}
	return bad, nil
}

func TestNoBinaryOrLargeFileIsTracked(t *testing.T) {
	root, err := exec.CommandContext(t.Context(), "git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("finding the repository: %v", err)
	}
	top := strings.TrimSpace(string(root))
	out, err := exec.CommandContext(t.Context(), "git", "-C", top, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("listing tracked files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files: not this repository", len(files))
	}
	bad, err := unwanted(top, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("tracked: %s; remove it (git rm --cached) and ignore its path in .gitignore", b)
	}
}

// The check itself, on a planted binary and a planted large file.
func TestUnwantedFindsPlantedFiles(t *testing.T) {
	dir := t.TempDir()
	self, err := os.Executable() // this test binary: a built binary
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"video-demo": exe[:4096],
		"big.bin":    bytes.Repeat([]byte("a"), maxTrackedBytes+1),
		"README.md":  []byte("# fine\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bad, err := unwanted(dir, []string{"video-demo", "big.bin", "README.md", "gone.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 2 || !strings.HasPrefix(bad[0], "video-demo") || !strings.HasPrefix(bad[1], "big.bin") {
		t.Errorf("unwanted = %q, want the planted binary and the large file", bad)
	}
}
