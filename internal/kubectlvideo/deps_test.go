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

package kubectlvideo

import (
	"slices"
	"strings"
	"testing"

	"github.com/videoops/video-operator/internal/testutil"
)

// The plugin is a client: what it needs of the operator is in the API package (kinds, status,
// annotations). Importing the controller, the manager or the service's client would put the
// whole operator into a binary users download; cli-runtime would add kustomize.
func TestPluginDoesNotLinkTheOperator(t *testing.T) {
	deps := testutil.GoListDeps(t, "cmd/kubectl-video")
	if !slices.Contains(deps, "github.com/videoops/video-operator/internal/kubectlvideo") {
		t.Fatalf("go list printed %d packages, not the plugin's dependencies", len(deps))
	}
	forbidden := []string{
		"github.com/videoops/video-operator/internal/controller",
		"github.com/videoops/video-operator/internal/apiclient",
		"github.com/videoops/video-operator/internal/simulator",
		"sigs.k8s.io/controller-runtime/pkg/manager",
		"sigs.k8s.io/controller-runtime/pkg/controller",
		// cli-runtime's ConfigFlags and the kustomize it links: clientcmd binds the same flags.
		"k8s.io/cli-runtime",
		"sigs.k8s.io/kustomize",
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("the plugin links %s", dep)
			}
		}
	}
}
