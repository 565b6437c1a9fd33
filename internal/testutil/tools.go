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
	"testing"
)

// ShortSkipsAPIServer is the message of a test skipped under -short because it starts a
// kube-apiserver: `go test -short ./...` is the quick run that needs no envtest binaries, and
// `make test`, which never passes -short, runs every such test.
const ShortSkipsAPIServer = "starts a kube-apiserver and etcd (envtest): skipped under -short; make test runs it"

// APIServer skips a test that starts a kube-apiserver under -short, whether the envtest
// binaries are there or not, so a quick run never waits for an API server. Otherwise the test
// goes on, and envtest finds its binaries as it always does (KUBEBUILDER_ASSETS, which make test
// sets, or its default folder).
func APIServer(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip(ShortSkipsAPIServer)
	}
}

// Tool returns the value of env, a tool `make test` installs and passes to the tests (HELM,
// KUSTOMIZE, KUBEBUILDER_ASSETS for its kubectl). Without it, a -short run skips the test and
// any other run fails it: only the quick run may lose a test to a missing tool, never make test.
func Tool(t testing.TB, env string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		if testing.Short() {
			t.Skipf("%s is not set: skipped under -short; make test provides it", env)
		}
		t.Fatalf("%s is not set: run the tests through 'make test', which provides it", env)
	}
	return v
}
