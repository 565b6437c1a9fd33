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

package controller

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// The record of a job whose id was written is copied into the annotations by the next reconcile
// when the reconcile that wrote the id could not write its last status: here the spec was edited
// during the paid call, so the job id was written on a fresh read (writeJobID's rebase), and the
// reconcile's closing status write was refused. Until the record is written, a restore without
// status would not find the paid job, and would pay for the same request again.
func TestRecordOfAWrittenJobIDSurvivesAFailedClosingWrite(t *testing.T) {
	f := newStepFixture(t, inlineRender("a"))
	key := client.ObjectKey{Namespace: fixtureNS, Name: "a"}
	f.answered(f.get("a"))
	calls := 0
	f.api.RenderStoryboardFunc = func(ctx context.Context, _ any) (*apiclient.JobCreated, error) {
		calls++
		if calls > 1 {
			return &apiclient.JobCreated{JobID: "job-2"}, nil
		}
		// A person edits the spec while the paid call is under way, without changing the
		// request: the key is named instead of defaulted (generation 2, the same request).
		vr := f.get("a")
		vr.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: videov1alpha1.DefaultAPIKeySecretName, Key: videov1alpha1.DefaultAPIKeySecretKey}
		vr.Generation = 2
		if err := f.c.Update(ctx, vr); err != nil {
			t.Errorf("editing the spec: %v", err)
		}
		return &apiclient.JobCreated{JobID: "job-1"}, nil
	}
	f.api.GetJobFunc = func(context.Context, string) (*apiclient.Job, error) {
		return &apiclient.Job{JobID: "job-1", Success: true, Data: apiclient.JobData{Status: apiclient.JobStatusInProgress, Progress: "10"}}, nil
	}
	statusWrites := 0
	f.failWrite = func(verb, what string) error {
		if verb != "patch" || !strings.HasPrefix(what, "VideoRender/status") {
			return nil
		}
		statusWrites++
		// 1: the in-flight record; 2: the job id, conflicting on the edit (refused by the fake
		// server itself); 3: the job id again on the fresh read; 4: the reconcile's closing
		// write (observedGeneration of the edited spec), refused here.
		if statusWrites == 4 {
			return apierrors.NewConflict(schema.GroupResource{Group: "video.videoops.io", Resource: "videorenders"}, "a", nil)
		}
		return nil
	}
	if _, err := f.l.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
		t.Logf("first reconcile: %v", err)
	}
	if got := f.get("a"); got.Status.JobID != "job-1" {
		t.Fatalf("the job id was not written: status %+v; writes %q", got.Status.JobStatus, f.Writes())
	}
	t.Logf("first reconcile's writes: %q (status writes %d)", f.Writes(), statusWrites)
	if statusWrites < 4 {
		t.Fatalf("the scenario did not happen: %d status writes", statusWrites)
	}
	// The job still runs; the next reconcile reads it.
	for i := 0; i < 2; i++ {
		if _, err := f.l.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
			t.Logf("reconcile %d: %v", i+2, err)
		}
	}
	t.Logf("later writes: %q", f.Writes())
	if got := f.get("a").GetAnnotations()[videov1alpha1.AnnotationJobID]; got != "job-1" {
		t.Errorf("annotation %s = %q after two more reconciles of the running job, want job-1: a restore without status would not find the paid job",
			videov1alpha1.AnnotationJobID, got)
	}

	// A restore without status (Velero, a GitOps re-create) while the job runs: the object comes
	// back with its spec and annotations only.
	old := f.get("a")
	if err := f.c.Delete(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	restored := inlineRender("a")
	restored.UID = "uid-a-restored"
	restored.Spec = old.Spec
	restored.Annotations = old.Annotations
	if err := f.c.Create(context.Background(), restored); err != nil {
		t.Fatal(err)
	}
	f.failWrite = nil
	for i := 0; i < 2; i++ {
		if _, err := f.l.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
			t.Logf("restored reconcile %d: %v", i+1, err)
		}
	}
	if calls != 1 {
		t.Errorf("the same request was paid for %d times (job %s); want once: the restored object adopts job-1", calls, f.get("a").Status.JobID)
	}
}
