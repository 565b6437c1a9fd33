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

package spendguard

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The view keeps running jobs' reservations as lines of status.runningJobs (v1alpha1.RunningJobLine):
// a list of objects costs the API server several times the CPU on every write (docs/benchmarks.md
// "API server CPU per render, guarded and unguarded"). The guard itself works on objects.

// readBudget reads the namespace's budget with r, its running jobs expanded.
func readBudget(ctx context.Context, r client.Reader, ns string, b *videov1alpha1.VideoBudget) error {
	if err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: videov1alpha1.VideoBudgetName}, b); err != nil {
		return err
	}
	b.Status.ExpandRunningJobs()
	return nil
}

// patchBudgetStatus writes b's status, the view, over base's (both expanded, base as read) with an
// optimistic lock, and leaves the answer, expanded, in b. Reservations and lines are sent together
// when either changed: a merge patch replaces a list whole, and the two lists are one.
func patchBudgetStatus(ctx context.Context, c client.Client, b, base *videov1alpha1.VideoBudget) error {
	wb, wbase := b.DeepCopy(), base.DeepCopy()
	wb.Status.CompactRunningJobs()
	wbase.Status.CompactRunningJobs()
	patch, err := client.MergeFromWithOptions(wbase, client.MergeFromWithOptimisticLock{}).Data(wb)
	if err != nil {
		return fmt.Errorf("computing the patch of VideoBudget %s/%s: %w", b.Namespace, b.Name, err)
	}
	if !equality.Semantic.DeepEqual(wbase.Status.Reservations, wb.Status.Reservations) ||
		!equality.Semantic.DeepEqual(wbase.Status.RunningJobs, wb.Status.RunningJobs) {
		var p map[string]any
		if err := json.Unmarshal(patch, &p); err != nil {
			return fmt.Errorf("reading the patch of VideoBudget %s/%s: %w", b.Namespace, b.Name, err)
		}
		st, _ := p["status"].(map[string]any)
		if st == nil {
			st = map[string]any{}
			p["status"] = st
		}
		st["reservations"], st["runningJobs"] = wb.Status.Reservations, wb.Status.RunningJobs
		if patch, err = json.Marshal(p); err != nil {
			return fmt.Errorf("writing the patch of VideoBudget %s/%s: %w", b.Namespace, b.Name, err)
		}
	}
	// A fresh object, as a client decodes without zeroing (wb's unsent lists would stay). The UID
	// names the budget the view is for: the simulation's API server refuses a deleted budget's view.
	out := &videov1alpha1.VideoBudget{}
	out.Namespace, out.Name, out.UID = b.Namespace, b.Name, b.UID
	if err := c.Status().Patch(ctx, out, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return err
	}
	out.Status.ExpandRunningJobs()
	*b = *out
	return nil
}
