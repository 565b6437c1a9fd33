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
	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/failurecause"
)

// failsAgain says whether the recorded failure is one the same spec causes again, and why: a
// retry would submit the same request, and for a job that failed, pay for it again. The
// controller's own messages use the same classification (internal/failurecause).
func failsAgain(st *videov1alpha1.JobStatus) (string, bool) { return failurecause.FailsAgain(st) }
