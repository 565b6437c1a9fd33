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

package statustxn

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The status transaction: a failed write changes nothing, leaves obj as the server has it, and
// drops the effects of the decisions it carried (issue 9, cases 1 and 13).
func TestStatusTxnFailedWriteIsDiscarded(t *testing.T) {
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	vr := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(vr).WithStatusSubresource(vr).Build()
	stale := &videov1alpha1.VideoRender{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(vr), stale); err != nil {
		t.Fatal(err)
	}
	// Someone else writes first: stale is now stale.
	fresh := stale.DeepCopy()
	fresh.Status.Phase = videov1alpha1.PhaseInProgress
	if err := c.Status().Update(context.Background(), fresh); err != nil {
		t.Fatal(err)
	}

	tx := New(c, c, stale, func() *videov1alpha1.VideoRender { return &videov1alpha1.VideoRender{} },
		func(o *videov1alpha1.VideoRender) any { return o.Status })
	ran := 0
	tx.Obj.Status.Submission = &videov1alpha1.Submission{Generation: 1, AttemptID: "never-sent"}
	tx.After(func() { ran++ })
	err := tx.Commit(context.Background())
	if !apierrors.IsConflict(err) {
		t.Fatalf("commit on a stale object: %v, want a conflict", err)
	}
	if ran != 0 || !tx.Aborted() || tx.Obj.Status.Submission != nil {
		t.Fatalf("after a failed write: effects ran %d, aborted %v, submission %+v", ran, tx.Aborted(), tx.Obj.Status.Submission)
	}
	if err := tx.Commit(context.Background()); !errors.Is(err, ErrAborted) {
		t.Fatalf("a second commit of an aborted transaction: %v", err)
	}
	var server videov1alpha1.VideoRender
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(vr), &server); err != nil {
		t.Fatal(err)
	}
	if server.Status.Submission != nil || server.Status.Phase != videov1alpha1.PhaseInProgress {
		t.Fatalf("the server's status changed: %+v", server.Status)
	}

	tx.Rebase(&server)
	tx.Obj.Status.Phase = videov1alpha1.PhaseCompleted
	tx.After(func() { ran++ })
	if err := tx.Commit(context.Background()); err != nil || ran != 1 {
		t.Fatalf("commit after rebase: %v, effects ran %d", err, ran)
	}
}

// Superseded lists the versions each successful write replaced, so the caller can tell a cache
// that still shows one of them (behind its own writes) from a current one; an unchanged status
// and a refused write replace nothing.
func TestStatusTxnRecordsTheVersionsItReplaced(t *testing.T) {
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	vr := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(vr).WithStatusSubresource(vr).Build()
	read := &videov1alpha1.VideoRender{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(vr), read); err != nil {
		t.Fatal(err)
	}
	v0 := read.ResourceVersion
	tx := New(c, c, read, func() *videov1alpha1.VideoRender { return &videov1alpha1.VideoRender{} },
		func(o *videov1alpha1.VideoRender) any { return o.Status })
	if err := tx.Commit(context.Background()); err != nil || len(tx.Superseded) != 0 {
		t.Fatalf("an unchanged status: err %v, superseded %v", err, tx.Superseded)
	}
	tx.Obj.Status.Phase = videov1alpha1.PhaseSubmitting
	if err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	v1 := tx.Obj.ResourceVersion
	tx.Obj.Status.Phase = videov1alpha1.PhaseInProgress
	if err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{v0, v1}; !reflect.DeepEqual(tx.Superseded, want) || tx.Obj.ResourceVersion == v1 {
		t.Fatalf("superseded %v, want %v (then %s)", tx.Superseded, want, tx.Obj.ResourceVersion)
	}

	stale := New(c, c, read, func() *videov1alpha1.VideoRender { return &videov1alpha1.VideoRender{} },
		func(o *videov1alpha1.VideoRender) any { return o.Status })
	stale.Obj.ResourceVersion = v0
	stale.Base.ResourceVersion = v0
	stale.Obj.Status.Phase = videov1alpha1.PhaseFailed
	if err := stale.Commit(context.Background()); !apierrors.IsConflict(err) || len(stale.Superseded) != 0 {
		t.Fatalf("a refused write: err %v, superseded %v", err, stale.Superseded)
	}
}

// The status patch sends what client.MergeFromWithOptimisticLock sends for a status write, without
// encoding the spec: the same status changes (fields set, changed and removed, nested), the same
// resourceVersion precondition.
func TestStatusPatchIsTheObjectsMergePatchOfItsStatus(t *testing.T) {
	base := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "41"},
		Spec: videov1alpha1.VideoRenderSpec{Storyboard: &videov1alpha1.StoryboardRequest{VideoName: "a large spec"}}}
	base.Status.Phase = videov1alpha1.PhaseSubmitting
	base.Status.JobID = "job-1"
	base.Status.Progress = ptr.To(int32(10))
	obj := base.DeepCopy()
	obj.Status.Phase = videov1alpha1.PhaseInProgress
	obj.Status.JobID = ""
	obj.Status.Progress = ptr.To(int32(55))
	obj.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "InProgress", Message: "rendering"}}

	want, err := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}).Data(obj)
	if err != nil {
		t.Fatal(err)
	}
	p := &statusPatch{from: &base.Status, to: &obj.Status, resourceVersion: base.ResourceVersion}
	got, err := p.Data(obj)
	if err != nil {
		t.Fatal(err)
	}
	var w, g map[string]any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(w, g) {
		t.Errorf("status patch\n%s\nwant the object's merge patch\n%s", got, want)
	}
	if _, err := (&statusPatch{from: &base.Status, to: &obj.Status}).Data(obj); err == nil {
		t.Error("a status patch without a resourceVersion: want an error, not an unconditional write")
	}
}
