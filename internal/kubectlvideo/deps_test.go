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
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The plugin is a client: what it needs of the operator is in the API package (kinds, status,
// annotations). Importing the controller, the manager or the service's client would put the
// whole operator into a binary users download; cli-runtime would add kustomize.
func TestPluginDoesNotLinkTheOperator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "./cmd/kubectl-video")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/kubectl-video: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !slices.Contains(deps, "github.com/videoops/video-operator/internal/kubectlvideo") {
		t.Fatalf("go list printed %d packages, not the plugin's dependencies: %q", len(deps), out)
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
