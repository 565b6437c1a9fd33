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

// Command ociimage writes the manager image of a release as an OCI image layout in a tar archive,
// without a container engine: one image per platform, FROM scratch, holding the static manager
// binary, a CA bundle, a passwd/group naming the non-root user 65532 and the binary's SBOM, gathered
// in one image index. `make release` runs it (hack/release.sh); docs/release.md says how to push
// the archive and load it into kind.
//
// The output is reproducible: the same binaries, CA bundle, SBOMs and epoch give the same bytes,
// hence the same digest. Every timestamp is the epoch (SOURCE_DATE_EPOCH, or -epoch), every file
// is owned by a fixed uid/gid with a fixed mode, and tar entries are written in a fixed order.
//
// Usage:
//
//	ociimage -out image.tar -ref ghcr.io/videoops/video-operator:v0.2.0 -epoch 1764000000 \
//	  -binary linux/amd64=bin/manager-linux-amd64 -sbom linux/amd64=bin/manager-linux-amd64.cdx.json ...
//
// It prints the image index's digest (sha256:...) on standard output.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// nonRoot is distroless' "nonroot" user and group, which the chart's and config/manager's
	// securityContext (runAsNonRoot) expect; the image declares it so that it runs as non-root
	// even where nothing sets runAsUser.
	nonRoot = 65532
	// The paths of the files in the image. Go's crypto/x509 reads the CA bundle at this path on
	// Linux, so the manager trusts the same authorities as on a Debian host.
	managerPath  = "manager"
	caBundlePath = "etc/ssl/certs/ca-certificates.crt"
	sbomPath     = "sbom/manager.cdx.json"
)

// spec is what an image index is built from.
type spec struct {
	// binaries and sboms by platform ("linux/amd64"); each binary needs its SBOM.
	binaries map[string]string
	sboms    map[string]string
	caBundle string
	// ref is the image's reference with its tag (repository:tag), recorded in the layout's
	// index.json, which is what `kind load image-archive` and skopeo name the image after.
	ref string
	// epoch is the time of every timestamp in the image (file times, config "created").
	epoch    time.Time
	version  string
	revision string
	source   string
}

type platformFlag map[string]string

func (p platformFlag) String() string { return fmt.Sprint(map[string]string(p)) }

func (p platformFlag) Set(v string) error {
	plat, path, ok := strings.Cut(v, "=")
	if !ok || plat == "" || path == "" {
		return fmt.Errorf("%q is not <os>/<arch>=<path>", v)
	}
	if _, err := v1.ParsePlatform(plat); err != nil {
		return fmt.Errorf("platform %q: %w", plat, err)
	}
	if _, dup := p[plat]; dup {
		return fmt.Errorf("platform %s given twice", plat)
	}
	p[plat] = path
	return nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	s := spec{binaries: platformFlag{}, sboms: platformFlag{}}
	out := fl.String("out", "", "the OCI layout archive (tar) to write")
	fl.Var(platformFlag(s.binaries), "binary", "<os>/<arch>=<path> of the manager for that platform (repeated)")
	fl.Var(platformFlag(s.sboms), "sbom", "<os>/<arch>=<path> of that manager's SBOM (repeated)")
	fl.StringVar(&s.caBundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle to copy into the image (the build machine's)")
	fl.StringVar(&s.ref, "ref", "", "the image's repository:tag, recorded in the layout's index.json")
	epoch := fl.String("epoch", os.Getenv("SOURCE_DATE_EPOCH"), "Unix seconds of every timestamp in the image (default $SOURCE_DATE_EPOCH)")
	fl.StringVar(&s.version, "version", "", "the version, as an OCI annotation and label")
	fl.StringVar(&s.revision, "revision", "", "the source commit, as an OCI annotation and label")
	fl.StringVar(&s.source, "source", "https://github.com/videoops/video-operator", "the source repository, as an OCI annotation and label")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *out == "" || s.ref == "" || len(s.binaries) == 0 {
		return errors.New("-out, -ref and at least one -binary are required")
	}
	// The tag names the image where the archive is loaded (kind, skopeo): a reference without
	// one would load an image nobody can refer to.
	if _, tag, ok := strings.Cut(s.ref[strings.LastIndex(s.ref, "/")+1:], ":"); !ok || tag == "" {
		return fmt.Errorf("-ref %q has no tag: give repository:tag", s.ref)
	}
	// The current time would make every build differ: the epoch must be given.
	secs, err := strconv.ParseInt(*epoch, 10, 64)
	if err != nil {
		return fmt.Errorf("-epoch (or SOURCE_DATE_EPOCH) %q must be Unix seconds, for example the commit time: %w", *epoch, err)
	}
	s.epoch = time.Unix(secs, 0).UTC()
	digest, err := write(s, *out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, digest)
	return err
}

// write builds the image index of s, writes it to out as an OCI layout archive and returns the
// index's digest.
func write(s spec, out string) (v1.Hash, error) {
	idx, err := index(s)
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := idx.Digest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("digest of the image index: %w", err)
	}
	dir, err := os.MkdirTemp("", "ociimage-")
	if err != nil {
		return v1.Hash{}, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("OCI layout in %s: %w", dir, err)
	}
	_, tag, _ := strings.Cut(s.ref[strings.LastIndex(s.ref, "/")+1:], ":")
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		// containerd (kind load image-archive, ctr import) names the image after this one...
		"io.containerd.image.name": s.ref,
		// ...and skopeo's oci-archive:<file>:<ref> selects by this one, the tag as the OCI
		// image layout specification has it.
		"org.opencontainers.image.ref.name": tag,
	})); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the image index into the OCI layout: %w", err)
	}
	if err := archive(dir, out, s.epoch); err != nil {
		return v1.Hash{}, err
	}
	return digest, nil
}

// index is the image index of one image per platform of s, in the order of the platforms' names.
func index(s spec) (v1.ImageIndex, error) {
	ca, err := os.ReadFile(s.caBundle)
	if err != nil {
		return nil, fmt.Errorf("the CA bundle the image carries: %w", err)
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	plats := make([]string, 0, len(s.binaries))
	for p := range s.binaries {
		plats = append(plats, p)
	}
	slices.Sort(plats)
	for _, name := range plats {
		plat, err := v1.ParsePlatform(name)
		if err != nil {
			return nil, err
		}
		img, err := image(s, *plat, ca)
		if err != nil {
			return nil, fmt.Errorf("image for %s: %w", name, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: plat},
		})
	}
	return mutate.Annotations(idx, s.annotations()).(v1.ImageIndex), nil
}

func (s spec) annotations() map[string]string {
	a := map[string]string{
		"org.opencontainers.image.created": s.epoch.Format(time.RFC3339),
		"org.opencontainers.image.source":  s.source,
		"org.opencontainers.image.title":   "video-operator",
	}
	if s.version != "" {
		a["org.opencontainers.image.version"] = s.version
	}
	if s.revision != "" {
		a["org.opencontainers.image.revision"] = s.revision
	}
	return a
}

func image(s spec, plat v1.Platform, ca []byte) (v1.Image, error) {
	name := plat.OS + "/" + plat.Architecture
	bin, err := os.ReadFile(s.binaries[name])
	if err != nil {
		return nil, fmt.Errorf("the manager binary: %w", err)
	}
	sbomFile, ok := s.sboms[name]
	if !ok {
		return nil, fmt.Errorf("no -sbom for %s: every image carries its binary's SBOM", name)
	}
	sbom, err := os.ReadFile(sbomFile) //nolint:gosec // the SBOM make release wrote beside the binary
	if err != nil {
		return nil, fmt.Errorf("the manager's SBOM: %w", err)
	}
	layerTar, err := rootfs(bin, ca, sbom, s.epoch)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("the image's layer: %w", err)
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	created := v1.Time{Time: s.epoch}
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: plat.Architecture,
		OS:           plat.OS,
		Variant:      plat.Variant,
		Created:      created,
		Config: v1.Config{
			Entrypoint: []string{"/" + managerPath},
			User:       fmt.Sprintf("%d:%d", nonRoot, nonRoot),
			WorkingDir: "/",
			Env:        []string{"SSL_CERT_FILE=/" + caBundlePath},
			Labels:     s.annotations(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("the image's config: %w", err)
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   created,
			CreatedBy: "hack/ociimage",
			Comment:   "the manager, a CA bundle, passwd/group of user 65532 and the manager's SBOM",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("adding the layer: %w", err)
	}
	return mutate.Annotations(img, s.annotations()).(v1.Image), nil
}

// entry is a file or directory of the image's only layer.
type entry struct {
	name     string
	mode     int64
	uid, gid int
	data     []byte
	dir      bool
}

// rootfs is the image's only layer, an uncompressed tar: a scratch image has no base layer, so
// everything the manager needs at run time is here.
func rootfs(bin, ca, sbom []byte, epoch time.Time) ([]byte, error) {
	entries := []entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: fmt.Appendf(nil, "root:x:0:\nnonroot:x:%d:\n", nonRoot)},
		{name: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{name: "etc/passwd", mode: 0o644, data: fmt.Appendf(nil,
			"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonRoot, nonRoot)},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: caBundlePath, mode: 0o644, data: ca},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, uid: nonRoot, gid: nonRoot, dir: true},
		{name: managerPath, mode: 0o755, data: bin},
		{name: "sbom/", mode: 0o755, dir: true},
		{name: sbomPath, mode: 0o644, data: sbom},
		// Some libraries write temporary files; a scratch image has no /tmp otherwise.
		{name: "tmp/", mode: 0o1777, dir: true},
	}
	// Sorted by name, as the layer's bytes must not depend on the order written above.
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.name,
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.gid,
			ModTime: epoch,
			Format:  tar.FormatPAX,
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing the layer: %w", err)
	}
	return buf.Bytes(), nil
}

// archive writes the OCI layout in dir as a tar to out: entries in lexical order, owned by root,
// with fixed modes and the epoch as their time, so that the archive's bytes depend on the layout's
// content only.
func archive(dir, out string, epoch time.Time) error {
	tmp := out + ".tmp"
	f, err := os.Create(tmp) //nolint:gosec // the archive make release names in its release directory
	if err != nil {
		return fmt.Errorf("the archive: %w", err)
	}
	defer func() { _ = os.Remove(tmp) }()
	tw := tar.NewWriter(f)
	// WalkDir visits the entries in lexical order.
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: epoch, Format: tar.FormatPAX}
		if d.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
			return tw.WriteHeader(h)
		}
		data, err := os.ReadFile(path) //nolint:gosec // a file of the layout this program just wrote
		if err != nil {
			return err
		}
		h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(data))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("archiving the OCI layout: %w", err)
	}
	if err := tw.Close(); err != nil {
		_ = f.Close()
		return fmt.Errorf("closing the archive: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing the archive: %w", err)
	}
	return os.Rename(tmp, out)
}
