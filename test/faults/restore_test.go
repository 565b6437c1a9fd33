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

package faults

import (
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

// Issue 22 cases 1 and 2 with the manager as its own process, running throughout
// (docs/architecture.md "The record travels with the object"): every object is deleted and created
// again from its JSON, as `kubectl get -o json | kubectl create` into a new cluster or a Velero
// restore does. Half of them were edited once and come back with their status written after the
// create (Velero's order; generation 1 against status.jobGeneration 2), half come back without
// status. No restore pays for a video again, and every object gets back the outputs of its last
// job.
func TestRestoreWithoutStatusPaysNothing(t *testing.T) {
	w := newWorld(t, simulator.Options{})
	n := size(8, 40)
	w.startManager()
	w.createRenders("restore", 0, n)
	w.waitTerminal(60 * time.Second)

	// The odd ones are edited once: a second paid job each, generation 2.
	for i := 1; i < n; i += 2 {
		name := fmt.Sprintf("restore-%d", i)
		waitFor(t, 10*time.Second, "editing "+name, func() bool {
			vr := &videov1alpha1.VideoRender{}
			if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: name}, vr); err != nil {
				return false
			}
			vr.Spec.Storyboard.Scenes[0].Story = ptr("The edited version of this video. It was paid for once more.")
			return k8s.Update(t.Context(), vr) == nil
		})
	}
	var backup []videov1alpha1.VideoRender
	waitFor(t, 60*time.Second, "every object Ready for its generation with its record in its annotations", func() bool {
		items, err := w.renders(t.Context())
		must(t, err)
		for i := range items {
			vr := &items[i]
			if vr.Status.Phase != videov1alpha1.PhaseCompleted || !terminal(vr) ||
				vr.Annotations[videov1alpha1.AnnotationJobID] != vr.Status.JobID {
				return false
			}
		}
		backup = items
		return true
	})
	paidBefore := w.sim.Calls(apiclient.EndpointRenderStoryboard)
	if want := n + n/2; paidBefore != want {
		t.Fatalf("before the restore: %d paid calls, want %d (one per object, one more per edit)", paidBefore, want)
	}

	// The restore, while the manager runs.
	for i := range backup {
		must(t, k8s.Delete(t.Context(), &backup[i]))
	}
	waitFor(t, 30*time.Second, "the objects to be gone", func() bool {
		items, err := w.renders(t.Context())
		return err == nil && len(items) == 0
	})
	withStatus := 0
	for i := range backup {
		vr := &backup[i]
		created := createFromJSON(t, vr)
		if vr.Status.JobGeneration > 1 {
			// Velero writes the status after the create, the manager already watching.
			withStatus++
			restored := &videov1alpha1.VideoRender{}
			waitFor(t, 10*time.Second, "writing the status of "+vr.Name, func() bool {
				if err := k8s.Get(t.Context(), client.ObjectKeyFromObject(created), restored); err != nil {
					return false
				}
				restored.Status = *vr.Status.DeepCopy()
				return k8s.Status().Update(t.Context(), restored) == nil
			})
		}
	}

	waitFor(t, 60*time.Second, "every restored object Ready with its original job", func() bool {
		items, err := w.renders(t.Context())
		if err != nil || len(items) != n {
			return false
		}
		for i := range items {
			if !terminal(&items[i]) || items[i].Status.Phase != videov1alpha1.PhaseCompleted {
				return false
			}
		}
		return true
	})
	idle()
	items, err := w.renders(t.Context())
	must(t, err)
	byName := map[string]*videov1alpha1.VideoRender{}
	for i := range backup {
		byName[backup[i].Name] = &backup[i]
	}
	for i := range items {
		got, was := &items[i], byName[items[i].Name]
		if got.Status.JobID != was.Status.JobID || got.Status.Outputs == nil || was.Status.Outputs == nil ||
			got.Status.Outputs.VideoURL != was.Status.Outputs.VideoURL {
			t.Errorf("%s: job %s with outputs %+v after the restore, want its original job %s with %+v",
				got.Name, got.Status.JobID, got.Status.Outputs, was.Status.JobID, was.Status.Outputs)
		}
	}
	paidAfter := w.sim.Calls(apiclient.EndpointRenderStoryboard)
	w.note = fmt.Sprintf("restored %d objects (%d without status, %d with status of an edited object): paid calls %d before, %d after the restore",
		n, n-withStatus, withStatus, paidBefore, paidAfter)
	r := w.measure("Restore from JSON while the manager runs (issue 22 cases 1 and 2)")
	if paidAfter != paidBefore {
		t.Errorf("the restore paid %d more calls: %s", paidAfter-paidBefore, r)
	}
	w.expectNoKeyLeak()
}

// createFromJSON creates the object again from its JSON minus status, uid, resourceVersion and
// the other fields the API server sets.
func createFromJSON(t *testing.T, obj client.Object) client.Object {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	must(t, err)
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(videov1alpha1.GroupVersion.WithKind("VideoRender"))
	delete(u.Object, "status")
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	if err := k8s.Create(t.Context(), u); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return u
}

func ptr[V any](v V) *V { return &v }
