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

// Package release tests what `make release` writes (hack/release.sh). It is a package of its own
// so that its cross-compilation runs beside test/deploy's API servers under its own timeout.
package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/videoops/video-operator/internal/testutil"
)

var root = filepath.Join("..", "..")

func tools(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, k := range []string{"KUSTOMIZE", "HELM", "CYCLONEDX_GOMOD"} {
		env = append(env, k+"="+testutil.Tool(t, k))
	}
	return env
}

// TestRelease runs hack/release.sh as `make release` does, for one platform (linux/arm64: a
// cross-compilation on the usual amd64 machine; both platforms take twice as long and are the
// same code path), and checks each file it writes.
func TestRelease(t *testing.T) {
	out := t.TempDir()
	const version = "0.1.0"
	cmd := exec.CommandContext(t.Context(), filepath.Join(root, "hack", "release.sh"), "v"+version, out)
	// The test's tree is neither tagged nor clean: a rehearsal, as RELEASE_ALLOW_DIRTY says.
	cmd.Env = append(append(os.Environ(), tools(t)...), "PLATFORMS=linux/arm64", "RELEASE_ALLOW_DIRTY=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/release.sh: %v\n%s", err, b)
	}
	dir := filepath.Join(out, version)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"IMAGE-DIGEST", "RELEASE-NOTES.md", "SHA256SUMS", "crds.yaml", "install.yaml", "kubectl-video-linux-arm64",
		"manager-linux-arm64", "manager-linux-arm64.cdx.json", "video-operator-" + version + ".tgz",
		"video-operator-image-" + version + ".oci.tar"}
	if !slices.Equal(names, want) {
		t.Fatalf("release files %v, want %v", names, want)
	}

	// The image: an OCI layout archive whose index.json names the index of IMAGE-DIGEST, holding
	// the platform built, with the manager binary of the release inside.
	b, err := os.ReadFile(filepath.Join(dir, "IMAGE-DIGEST"))
	if err != nil {
		t.Fatal(err)
	}
	digest := strings.TrimSpace(string(b))
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(digest) {
		t.Fatalf("IMAGE-DIGEST is %q, not a digest", digest)
	}
	checkImageArchive(t, filepath.Join(dir, "video-operator-image-"+version+".oci.tar"), digest, filepath.Join(dir, "manager-linux-arm64"))

	// The chart package carries the release's version, and so pins the image to it.
	chart := exec.CommandContext(t.Context(), os.Getenv("HELM"), "show", "chart", filepath.Join(dir, "video-operator-"+version+".tgz"))
	chart.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	b, err = chart.Output()
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ Version, AppVersion string }
	if err := yaml.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Version != version || meta.AppVersion != "v"+version {
		t.Errorf("chart version %s, appVersion %s; want %s and v%s", meta.Version, meta.AppVersion, version, version)
	}

	// The packaged chart and install.yaml run the image built, by its digest.
	values := exec.CommandContext(t.Context(), os.Getenv("HELM"), "show", "values", filepath.Join(dir, "video-operator-"+version+".tgz"))
	values.Env = chart.Env
	b, err = values.Output()
	if err != nil {
		t.Fatal(err)
	}
	var vals struct{ Image struct{ Digest string } }
	if err := yaml.Unmarshal(b, &vals); err != nil {
		t.Fatal(err)
	}
	if vals.Image.Digest != digest {
		t.Errorf("the packaged chart's image.digest is %q, want the image's %s", vals.Image.Digest, digest)
	}
	installer, err := os.ReadFile(filepath.Join(dir, "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(installer, []byte("image: ghcr.io/videoops/video-operator@"+digest+"\n")) {
		t.Error("install.yaml does not run ghcr.io/videoops/video-operator@" + digest)
	}

	// crds.yaml holds the CRDs alone, the very ones install.yaml and the chart install.
	checkCRDsAlone(t, filepath.Join(dir, "crds.yaml"), installer)

	for _, bin := range []string{"manager-linux-arm64", "kubectl-video-linux-arm64"} {
		f, err := elf.Open(filepath.Join(dir, bin))
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		if f.Machine != elf.EM_AARCH64 {
			t.Errorf("%s is for %s, want arm64", bin, f.Machine)
		}
		// Static: CGO off, no interpreter to load it.
		if slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP }) {
			t.Errorf("%s is dynamically linked", bin)
		}
		_ = f.Close()
	}
	// Built as released: trimmed, static, for arm64 (the -X version stamp is not recorded in the
	// build information with -trimpath, and an arm64 binary cannot be run here to print it).
	info, err := exec.CommandContext(t.Context(), "go", "version", "-m", filepath.Join(dir, "manager-linux-arm64")).Output()
	for _, setting := range []string{"-trimpath=true", "CGO_ENABLED=0", "GOARCH=arm64", "GOOS=linux"} {
		if err != nil || !bytes.Contains(info, []byte("\t"+setting+"\n")) {
			t.Errorf("the manager's build information lacks %s (%v)", setting, err)
		}
	}

	var sbom struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component struct{ Name, Version string }
		}
		Components []struct{ Name, Version string }
	}
	b, err = os.ReadFile(filepath.Join(dir, "manager-linux-arm64.cdx.json"))
	// Reproducible, as the image that carries it must be: no serial number, no time.
	if bytes.Contains(b, []byte(`"serialNumber"`)) || bytes.Contains(b, []byte(`"timestamp"`)) {
		t.Error("the SBOM has a serial number or a timestamp: the image that carries it would differ at each build")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sbom); err != nil {
		t.Fatal(err)
	}
	if sbom.BOMFormat != "CycloneDX" || sbom.Metadata.Component.Name != "github.com/videoops/video-operator" || sbom.Metadata.Component.Version != "v"+version ||
		!slices.ContainsFunc(sbom.Components, func(c struct{ Name, Version string }) bool { return c.Name == "sigs.k8s.io/controller-runtime" }) ||
		!slices.ContainsFunc(sbom.Components, func(c struct{ Name, Version string }) bool { return c.Name == "std" }) {
		t.Errorf("the SBOM does not describe the manager v%s with its modules and Go: %s %+v (%d components)",
			version, sbom.BOMFormat, sbom.Metadata.Component, len(sbom.Components))
	}

	notes, err := os.ReadFile(filepath.Join(dir, "RELEASE-NOTES.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(notes), "## [0.1.0]") || strings.Contains(string(notes), "## [Unreleased]") {
		t.Errorf("RELEASE-NOTES.md is not CHANGELOG.md's 0.1.0 section:\n%s", notes)
	}

	// SHA256SUMS covers every other file, with the right sums.
	sums, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sums.Close() }()
	var summed []string
	sc := bufio.NewScanner(sums)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", sc.Text())
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != sum {
			t.Errorf("SHA256SUMS: %s has another sum", name)
		}
		summed = append(summed, name)
	}
	if !slices.Equal(summed, slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "SHA256SUMS" })) {
		t.Errorf("SHA256SUMS covers %v", summed)
	}
}

// TestReleaseRefusesAVersionWithoutChangelog: a release's notes are its CHANGELOG.md section, so
// a version without one (or that is not semantic) is refused before anything is built.
func TestReleaseRefusesAVersionWithoutChangelog(t *testing.T) {
	for version, want := range map[string]string{
		"9.9.9": `CHANGELOG.md has no section "## [9.9.9]"`,
		"1.2":   `VERSION "1.2" is not x.y.z`,
	} {
		out := t.TempDir()
		cmd := exec.CommandContext(t.Context(), filepath.Join(root, "hack", "release.sh"), version, out)
		cmd.Env = append(os.Environ(), tools(t)...)
		b, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(b), want) {
			t.Errorf("release %s: want a failure saying %q, got %v:\n%s", version, want, err, b)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("release %s wrote %d entries before refusing", version, len(entries))
		}
	}
}

// releaseTree makes a git repository with what the release checks read (the two scripts,
// CHANGELOG.md, whose 0.1.0 heading is changelogHeading, the alerts and docs/runbooks.md, the
// chart's Chart.yaml and the image tags of config/manager and the GitOps overlay, set to 0.1.0),
// committed, and returns its root.
func releaseTree(t *testing.T, changelogHeading string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "hack"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, script := range []string{"release.sh", "release-check.sh"} {
		b, err := os.ReadFile(filepath.Join(root, "hack", script))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "hack", script), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The alerts and their runbooks, which the checks compare.
	for _, f := range []string{filepath.Join("config", "monitoring", "prometheus-rule.yaml"), filepath.Join("docs", "runbooks.md")} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The manifests the tag serves as they are (the chart's version, config/manager's and the
	// GitOps overlay's image tag), set to the release as docs/release.md's first step says.
	for _, f := range []string{
		filepath.Join("dist", "chart", "Chart.yaml"),
		filepath.Join("config", "manager", "kustomization.yaml"),
		filepath.Join("config", "gitops", "operator-overlay", "kustomization.yaml"),
	} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		released := regexp.MustCompile(`[0-9]+\.[0-9]+\.[0-9]+-dev\b`).ReplaceAll(b, []byte("0.1.0"))
		if bytes.Equal(released, b) {
			t.Fatalf("%s names no x.y.z-dev version to set to the release", f)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), released, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	changelog := "# Changelog\n\n## [Unreleased]\n\n- Something not released yet.\n\n" + changelogHeading + "\n\n- The first release.\n"
	if err := os.WriteFile(filepath.Join(dir, "CHANGELOG.md"), []byte(changelog), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "release")
	return dir
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Release Test", "GIT_AUTHOR_EMAIL=release@example.com",
		"GIT_COMMITTER_NAME=Release Test", "GIT_COMMITTER_EMAIL=release@example.com")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, b)
	}
}

// runRelease runs the tree's hack/release.sh for 0.1.0 with env, and returns its output and
// whether it got past the checks (it then starts on the binaries, which fail: the tree has no
// hack/build-manager.sh).
func runRelease(t *testing.T, dir string, env ...string) (string, bool) {
	t.Helper()
	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), filepath.Join(dir, "hack", "release.sh"), "0.1.0", out)
	// The checks come before any tool runs: stand-ins that fail prove it.
	cmd.Env = append(append(os.Environ(), "KUSTOMIZE=false", "HELM=false", "CYCLONEDX_GOMOD=false", "RELEASE_ALLOW_DIRTY="), env...)
	b, _ := cmd.CombinedOutput()
	return string(b), strings.Contains(string(b), "release 0.1.0: binaries")
}

// TestReleaseRefusesAnUntaggedOrDirtyTree: "A release is versioned artifacts ... made by one make
// target" (docs/architecture.md "Release and install"): they are those of the tagged
// commit, so make release refuses an untagged or dirty tree unless RELEASE_ALLOW_DIRTY=1 says
// this is a rehearsal, and refuses a version whose CHANGELOG section has no date.
func TestReleaseRefusesAnUntaggedOrDirtyTree(t *testing.T) {
	const dated = "## [0.1.0] - 2026-11-25"

	t.Run("untagged", func(t *testing.T) {
		dir := releaseTree(t, dated)
		if out, passed := runRelease(t, dir); passed || !strings.Contains(out, "HEAD is not tagged v0.1.0") {
			t.Errorf("an untagged tree: want a refusal naming the tag, got:\n%s", out)
		}
	})
	t.Run("dirty", func(t *testing.T) {
		dir := releaseTree(t, dated)
		git(t, dir, "tag", "v0.1.0")
		if err := os.WriteFile(filepath.Join(dir, "CHANGELOG.md"), []byte("edited\n"+dated+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, passed := runRelease(t, dir); passed || !strings.Contains(out, "uncommitted changes") || !strings.Contains(out, "CHANGELOG.md") {
			t.Errorf("a dirty tree: want a refusal listing the change, got:\n%s", out)
		}
		if out, passed := runRelease(t, dir, "RELEASE_ALLOW_DIRTY=1"); !passed {
			t.Errorf("RELEASE_ALLOW_DIRTY=1 must let a dirty tree past the checks, got:\n%s", out)
		}
	})
	t.Run("undated changelog section", func(t *testing.T) {
		dir := releaseTree(t, "## [0.1.0]")
		git(t, dir, "tag", "v0.1.0")
		if out, passed := runRelease(t, dir, "RELEASE_ALLOW_DIRTY=1"); passed || !strings.Contains(out, "has no release date") {
			t.Errorf("a section without a date: want a refusal, got:\n%s", out)
		}
	})
	t.Run("an alert without its runbook", func(t *testing.T) {
		dir := releaseTree(t, dated)
		runbooks := filepath.Join(dir, "docs", "runbooks.md")
		b, err := os.ReadFile(runbooks)
		if err != nil {
			t.Fatal(err)
		}
		const heading = "## VideoOperatorNoLeader\n"
		if !bytes.Contains(b, []byte(heading)) {
			t.Fatalf("docs/runbooks.md has no %q to remove", heading)
		}
		if err := os.WriteFile(runbooks, bytes.Replace(b, []byte(heading), []byte("## The leader\n"), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "commit", "-q", "-am", "a runbook renamed")
		git(t, dir, "tag", "-a", "v0.1.0", "-m", "v0.1.0")
		for _, env := range [][]string{nil, {"RELEASE_ALLOW_DIRTY=1"}} {
			if out, passed := runRelease(t, dir, env...); passed || !strings.Contains(out, "docs/runbooks.md lacks") || !strings.Contains(out, "videooperatornoleader") {
				t.Errorf("an alert whose runbook anchor is gone (%s): want a refusal naming it, got:\n%s", env, out)
			}
		}
	})
	t.Run("clean, tagged and dated", func(t *testing.T) {
		dir := releaseTree(t, dated)
		git(t, dir, "tag", "-a", "v0.1.0", "-m", "v0.1.0")
		if out, passed := runRelease(t, dir); !passed {
			t.Errorf("a clean tree tagged v0.1.0 with a dated section must pass the checks, got:\n%s", out)
		}
	})
}

// checkImageArchive checks that the OCI layout archive at path names the image index digest in
// its index.json, and that the index's linux/arm64 image runs, as user 65532, the manager binary
// at managerPath.
func checkImageArchive(t *testing.T, path, digest, managerPath string) {
	t.Helper()
	blobs := map[string][]byte{}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if blobs[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
	type descriptor struct {
		MediaType   string            `json:"mediaType"`
		Digest      string            `json:"digest"`
		Annotations map[string]string `json:"annotations"`
		Platform    *struct {
			OS           string `json:"os"`
			Architecture string `json:"architecture"`
		} `json:"platform"`
	}
	blob := func(d string) []byte {
		b, ok := blobs["blobs/"+strings.Replace(d, ":", "/", 1)]
		if !ok {
			t.Fatalf("the archive has no blob %s", d)
		}
		if sum := sha256.Sum256(b); "sha256:"+hex.EncodeToString(sum[:]) != d {
			t.Fatalf("blob %s has another digest", d)
		}
		return b
	}
	var top struct{ Manifests []descriptor }
	if err := json.Unmarshal(blobs["index.json"], &top); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	if len(top.Manifests) != 1 || top.Manifests[0].Digest != digest ||
		top.Manifests[0].Annotations["io.containerd.image.name"] != "ghcr.io/videoops/video-operator:v0.1.0" {
		t.Fatalf("index.json lists %+v, want the index %s named ghcr.io/videoops/video-operator:v0.1.0", top.Manifests, digest)
	}
	var idx struct{ Manifests []descriptor }
	if err := json.Unmarshal(blob(digest), &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Manifests) != 1 || idx.Manifests[0].Platform == nil || idx.Manifests[0].Platform.Architecture != "arm64" {
		t.Fatalf("the image index lists %+v, want the one platform built, linux/arm64", idx.Manifests)
	}
	var manifest struct {
		Config descriptor
		Layers []descriptor
	}
	if err := json.Unmarshal(blob(idx.Manifests[0].Digest), &manifest); err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Config struct {
			User       string
			Entrypoint []string
		} `json:"config"`
	}
	if err := json.Unmarshal(blob(manifest.Config.Digest), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" || !slices.Equal(cfg.Config.Entrypoint, []string{"/manager"}) {
		t.Errorf("the image runs %v as %q, want /manager as 65532:65532", cfg.Config.Entrypoint, cfg.Config.User)
	}
	want, err := os.ReadFile(managerPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(manifest.Layers) != 1 {
		t.Fatalf("the image has %d layers, want 1", len(manifest.Layers))
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob(manifest.Layers[0].Digest)))
	if err != nil {
		t.Fatal(err)
	}
	lr := tar.NewReader(zr)
	for {
		h, err := lr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatal("the image's layer has no /manager")
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "manager" {
			got, err := io.ReadAll(lr)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("the image's /manager is not the released manager-linux-arm64 (%v)", err)
			}
			return
		}
	}
}

// TestARehearsedPreReleaseMayPrecedeItsSection: `make release VERSION=0.2.0-rc.1
// RELEASE_ALLOW_DIRTY=1` rehearses the next release before its CHANGELOG section exists (the
// Unreleased entries are its notes); a release, or a pre-release that is not a rehearsal, still
// needs its own section.
func TestARehearsedPreReleaseMayPrecedeItsSection(t *testing.T) {
	dir := releaseTree(t, "## [0.1.0] - 2026-11-25")
	check := func(version string, env ...string) (string, error) {
		cmd := exec.CommandContext(t.Context(), filepath.Join(dir, "hack", "release-check.sh"), version)
		cmd.Env = append(append(os.Environ(), "RELEASE_ALLOW_DIRTY="), env...)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	if out, err := check("0.2.0-rc.1", "RELEASE_ALLOW_DIRTY=1"); err != nil || !strings.Contains(out, "its notes are the [Unreleased] section") {
		t.Errorf("a rehearsed pre-release without a section: want it through, with the Unreleased notes; got %v:\n%s", err, out)
	}
	for _, tc := range []struct {
		version string
		env     []string
	}{{"0.2.0", []string{"RELEASE_ALLOW_DIRTY=1"}}, {"0.2.0-rc.1", nil}} {
		if out, err := check(tc.version, tc.env...); err == nil || !strings.Contains(out, `CHANGELOG.md has no section "## [`+tc.version+`]"`) {
			t.Errorf("version %s %v without a section: want a refusal, got %v:\n%s", tc.version, tc.env, err, out)
		}
	}
}
