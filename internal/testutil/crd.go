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
// Package testutil holds what the tests of several packages share: the generated CRDs as Go
// objects, the bounds of the API server they are checked against, and the packages a binary
// links. Only tests import it.
package testutil

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// EtcdObjectLimit is etcd's default --max-request-bytes (1.5 MiB), the one bound on a storyboard
// the interface document does not set.
const EtcdObjectLimit = 1536 * 1024

// RepoRoot is the repository's root directory, wherever the test runs from.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// CRDDir is where make manifests writes the installed CRDs.
func CRDDir() string { return filepath.Join(RepoRoot(), "config", "crd", "bases") }

// ReadCRD reads a CRD file strictly: a field the Go types do not know fails the test.
func ReadCRD(t testing.TB, path string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	raw, err := os.ReadFile(path) //nolint:gosec // a test reads the repository's own CRD files
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &crd
}

// StatusSchema is the status schema of the first version of the installed CRD in file (a name
// under CRDDir).
func StatusSchema(t testing.TB, file string) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	return ReadCRD(t, filepath.Join(CRDDir(), file)).Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
}

// GoListDeps lists the packages pkg (a path below the repository root, such as
// "cmd/kubectl-video") links, itself included, with go list -deps.
func GoListDeps(t testing.TB, pkg string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "./"+pkg) //nolint:gosec // tests name the package
	cmd.Dir = RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./%s: %v", pkg, err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/videoops/video-operator/"+pkg) {
		t.Fatalf("go list did not list %s itself: %q", pkg, out)
	}
	return deps
}
