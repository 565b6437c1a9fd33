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

package deploy

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
)

// TestChartUninstallHookOutlastsTheManagersShutdown: the pre-delete hook scales the manager to 0
// and waits until its pods are gone, "a pod in its graceful shutdown still counts: it may be
// finishing a paid call". The pod's grace period follows service.timeout (the schema accepts
// any number of minutes); the hook's activeDeadlineSeconds is uninstall.timeoutSeconds, 300 s
// whatever service.timeout is. With service.timeout=5m the manager may take 345 s and more to
// stop with a paid call in flight: the Job is killed at 300 s, and docs/uninstall.md's plain
// `helm uninstall` stops with a failed hook. The chart refuses the pair, or the hook's deadline
// follows the grace period as the grace period follows the timeout.
func TestChartUninstallHookOutlastsTheManagersShutdown(t *testing.T) {
	for _, timeout := range []string{"30s", "5m", "10m"} {
		objs := decode(t, helmTemplate(t, "--set", "service.timeout="+timeout))
		var d appsv1.Deployment
		typed(t, objs, "Deployment", "", &d)
		var hook batchv1.Job
		typed(t, objs, "Job", "", &hook)
		grace := time.Duration(*d.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
		if hook.Spec.ActiveDeadlineSeconds == nil {
			continue
		}
		deadline := time.Duration(*hook.Spec.ActiveDeadlineSeconds) * time.Second
		if deadline <= grace {
			t.Errorf("service.timeout=%s: the uninstall hook's activeDeadlineSeconds is %s, no longer than the manager's grace period %s "+
				"it waits out: a manager finishing a paid call makes helm uninstall fail", timeout, deadline, grace)
		}
	}
}
