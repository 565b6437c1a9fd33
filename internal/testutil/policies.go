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
	"context"
	"path/filepath"

	"k8s.io/client-go/rest"

	"github.com/videoops/video-operator/internal/admissionpolicy"
)

// PolicyDir is config/policies, the admission policies every install has.
func PolicyDir() string { return filepath.Join(RepoRoot(), "config", "policies") }

// InstallPolicies installs the admission policies of config/policies on the API server of cfg and
// waits until they are in force (admissionpolicy.Install). Every envtest suite calls it right after
// starting its API server, so that its tests see the admission an install has.
func InstallPolicies(ctx context.Context, cfg *rest.Config) error {
	return admissionpolicy.Install(ctx, cfg, PolicyDir())
}
