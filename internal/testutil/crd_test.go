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
package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadsEveryInstalledCRD(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(CRDDir(), "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under %s: %v", CRDDir(), err)
	}
	for _, f := range files {
		crd := ReadCRD(t, f)
		if crd.Spec.Group != "video.videoops.io" {
			t.Errorf("%s: group %q", f, crd.Spec.Group)
		}
		if _, ok := StatusSchema(t, filepath.Base(f)).Properties["conditions"]; !ok {
			t.Errorf("%s: the status schema has no conditions", f)
		}
	}
}

func TestReadCRDIsStrict(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  colour: red\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ft := &fakeT{TB: t}
	func() {
		defer func() { _ = recover() }()
		ReadCRD(ft, bad)
	}()
	if !ft.failed {
		t.Error("an unknown field in a CRD file was accepted")
	}
}

// fakeT records a fatal failure instead of ending the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}

func (f *fakeT) Fatal(...any) {
	f.failed = true
	panic("fatal")
}
