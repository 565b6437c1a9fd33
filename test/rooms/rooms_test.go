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
// Package rooms checks the house rule of docs/development.md "Layout": each mechanism lives in a
// package of its own that never imports the reconcilers, and the pure ones link no controller
// machinery at all, so that a change in a mechanism cannot reach into the lifecycle by accident.
package rooms

import (
	"strings"
	"testing"

	"github.com/videoops/video-operator/internal/testutil"
)

const module = "github.com/videoops/video-operator/"

func TestMechanismsDoNotImportTheReconcilers(t *testing.T) {
	// pure: no reconcile, controller or manager machinery; the spend guard holds the VideoBudget
	// reconciler, so it may link controller-runtime's controller, but not the job lifecycle.
	mechanisms := map[string]bool{
		"internal/callgate":        true,
		"internal/callback":        true,
		"internal/statustxn":       true,
		"internal/credentials":     true,
		"internal/jobmemo":         true,
		"internal/boundedset":      true,
		"internal/previewdigest":   true,
		"internal/metrics":         true,
		"internal/requestdigest":   true,
		"internal/failurecause":    true,
		"internal/admissionpolicy": true,
		"internal/spendguard":      false,
	}
	for pkg, pure := range mechanisms {
		for _, dep := range testutil.GoListDeps(t, pkg) {
			if dep == module+"internal/controller" || strings.HasPrefix(dep, module+"internal/controller/") {
				t.Errorf("%s imports the reconcilers (%s)", pkg, dep)
			}
			if !pure {
				continue
			}
			for _, f := range []string{"sigs.k8s.io/controller-runtime/pkg/reconcile", "sigs.k8s.io/controller-runtime/pkg/manager",
				"sigs.k8s.io/controller-runtime/pkg/builder"} {
				if dep == f {
					t.Errorf("%s links %s, which a mechanism without a reconciler does not need", pkg, dep)
				}
			}
		}
	}
}
