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

package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// inputs writes a stand-in manager and SBOM per platform and a CA bundle into a directory, and
// returns the arguments naming them. The "binaries" differ per platform, as real ones do.
func inputs(t *testing.T, manager string) []string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	args := []string{"-ca-bundle", write("ca.crt", "-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n"),
		"-ref", "ghcr.io/videoops/video-operator:v0.0.1-test", "-epoch", "1764000000", "-version", "v0.0.1-test", "-revision", "abc123"}
	for _, arch := range []string{"arm64", "amd64"} {
		args = append(args,
			"-binary", "linux/"+arch+"="+write("manager-"+arch, manager+" for "+arch),
			"-sbom", "linux/"+arch+"="+write("sbom-"+arch, `{"bomFormat":"CycloneDX"}`))
	}
	return args
}

// build runs the command as make release does and returns the digest it prints and the archive.
func build(t *testing.T, args []string) (string, []byte) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "image.tar")
	var stdout bytes.Buffer
	if err := run(append([]string{"-out", out}, args...), &stdout); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(stdout.String()), b
}

// TestReproducible: the same inputs give the same archive byte for byte, hence the same digest,
// and another binary gives another digest (so that equality is not that of a constant).
func TestReproducible(t *testing.T) {
	args := inputs(t, "manager")
	d1, a1 := build(t, args)
	// The inputs again, in other files written at another time: only their content counts.
	d2, a2 := build(t, inputs(t, "manager"))
	if !strings.HasPrefix(d1, "sha256:") || len(d1) != len("sha256:")+64 {
		t.Fatalf("printed digest %q is not sha256:<64 hex>", d1)
	}
	if d1 != d2 {
		t.Errorf("two builds of the same inputs: digests %s and %s", d1, d2)
	}
	if !bytes.Equal(a1, a2) {
		t.Errorf("two builds of the same inputs wrote different archives (%d and %d bytes)", len(a1), len(a2))
	}
	if d3, _ := build(t, inputs(t, "another manager")); d3 == d1 {
		t.Errorf("another binary gave the same digest %s", d3)
	}
}

// untar extracts the archive into a directory, checking each entry's owner, time and mode.
func untar(t *testing.T, archive []byte) string {
	t.Helper()
	dir := t.TempDir()
	tr := tar.NewReader(bytes.NewReader(archive))
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.ModTime.Unix() != 1764000000 {
			t.Errorf("archive entry %s: uid %d gid %d time %v, want 0, 0 and the epoch", h.Name, h.Uid, h.Gid, h.ModTime)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("archive entries are not sorted: %v", names)
	}
	return dir
}

// TestIndex: the archive is an OCI layout whose index.json names the image, holding one index
// with an image per platform, each running the manager as user 65532 from a layer with the
// manager, the CA bundle and the SBOM.
func TestIndex(t *testing.T) {
	digest, archive := build(t, inputs(t, "manager"))
	dir := untar(t, archive)
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	topManifest, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(topManifest.Manifests) != 1 {
		t.Fatalf("index.json lists %d descriptors, want 1 (the image index)", len(topManifest.Manifests))
	}
	desc := topManifest.Manifests[0]
	if desc.Digest.String() != digest || desc.MediaType != types.OCIImageIndex {
		t.Errorf("index.json names %s (%s), want the printed digest %s, an OCI image index", desc.Digest, desc.MediaType, digest)
	}
	if desc.Annotations["io.containerd.image.name"] != "ghcr.io/videoops/video-operator:v0.0.1-test" ||
		desc.Annotations["org.opencontainers.image.ref.name"] != "v0.0.1-test" {
		t.Errorf("index.json annotations %v do not name the image", desc.Annotations)
	}
	idx, err := top.ImageIndex(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var plats []string
	for _, m := range im.Manifests {
		if m.Platform == nil {
			t.Fatalf("manifest %s has no platform", m.Digest)
		}
		plats = append(plats, m.Platform.String())
		img, err := idx.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkImage(t, img, m.Platform.Architecture)
	}
	if !slices.Equal(plats, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %v, want linux/amd64 and linux/arm64", plats)
	}
}

func checkImage(t *testing.T, img v1.Image, arch string) {
	t.Helper()
	if mt, err := img.MediaType(); err != nil || mt != types.OCIManifestSchema1 {
		t.Errorf("%s: media type %s (%v), want an OCI manifest", arch, mt, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Architecture != arch || cfg.OS != "linux" || cfg.Config.User != "65532:65532" ||
		!slices.Equal(cfg.Config.Entrypoint, []string{"/manager"}) || cfg.Created.Unix() != 1764000000 {
		t.Errorf("%s: config %s/%s user %q entrypoint %v created %v", arch, cfg.OS, cfg.Architecture,
			cfg.Config.User, cfg.Config.Entrypoint, cfg.Created)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%s: %d layers (%v), want 1 (FROM scratch)", arch, len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	files := map[string]*tar.Header{}
	contents := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = h
		b, _ := io.ReadAll(tr)
		contents[h.Name] = string(b)
	}
	if h := files["manager"]; h == nil || h.Mode != 0o755 || contents["manager"] != "manager for "+arch {
		t.Errorf("%s: /manager is %+v with %q, want the platform's binary, mode 0755", arch, h, contents["manager"])
	}
	if !strings.Contains(contents["etc/ssl/certs/ca-certificates.crt"], "stand-in") {
		t.Errorf("%s: the CA bundle is not the one given", arch)
	}
	if !strings.Contains(contents["sbom/manager.cdx.json"], "CycloneDX") {
		t.Errorf("%s: no SBOM at /sbom/manager.cdx.json", arch)
	}
	if !strings.Contains(contents["etc/passwd"], "nonroot:x:65532:65532:") {
		t.Errorf("%s: /etc/passwd does not name user 65532: %q", arch, contents["etc/passwd"])
	}
}

// TestRefusesWithoutEpochOrSBOM: the current time, or an image without its SBOM, would make a
// release that cannot be rebuilt or audited; an image without a tag could not be named once
// loaded.
func TestRefusesWithoutEpochOrSBOM(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	args := inputs(t, "manager")
	noEpoch := slices.Clone(args)
	i := slices.Index(noEpoch, "-epoch")
	noEpoch = slices.Delete(noEpoch, i, i+2)
	out := filepath.Join(t.TempDir(), "image.tar")
	if err := run(append([]string{"-out", out}, noEpoch...), io.Discard); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Errorf("without an epoch: %v, want a refusal naming SOURCE_DATE_EPOCH", err)
	}
	noSBOM := slices.Clone(args)
	i = slices.IndexFunc(noSBOM, func(a string) bool { return strings.HasPrefix(a, "linux/amd64=") && strings.Contains(a, "sbom-") })
	noSBOM = slices.Delete(noSBOM, i-1, i+1)
	if err := run(append([]string{"-out", out}, noSBOM...), io.Discard); err == nil || !strings.Contains(err.Error(), "no -sbom for linux/amd64") {
		t.Errorf("without an SBOM: %v, want a refusal naming the platform", err)
	}
	noTag := slices.Clone(args)
	noTag[slices.Index(noTag, "-ref")+1] = "registry.example.com:5000/video-operator"
	if err := run(append([]string{"-out", out}, noTag...), io.Discard); err == nil || !strings.Contains(err.Error(), "has no tag") {
		t.Errorf("a -ref without a tag (a registry with a port): %v, want a refusal", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused build left %s (%v)", out, err)
	}
}
