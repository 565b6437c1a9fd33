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
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

func runningReservation(i int) videov1alpha1.BudgetReservation {
	return videov1alpha1.BudgetReservation{Kind: "VideoRender", Name: fmt.Sprintf("r%d", i), UID: fmt.Sprintf("uid-%d", i), AttemptID: "a",
		ReservedAt: metav1.NewTime(time.Date(2026, 11, 27, 10, 0, i, 0, time.UTC)), EstimatedSeconds: int64(10 * i), JobID: fmt.Sprintf("job-%d", i)}
}

// A running render's reservation kept as a line reads back as the reservation it was; those that
// cannot be lines (a pending submission, a preview, another Secret's key) stay objects.
func TestARunningJobsLineReadsBackAsItsReservation(t *testing.T) {
	credits := runningReservation(1)
	credits.AICredits, credits.Unbounded, credits.UnreportedCredits = true, true, true
	pending := runningReservation(2)
	pending.JobID = ""
	keyed := runningReservation(3)
	keyed.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "other", Key: "key"}
	plain := runningReservation(4)
	b := &videov1alpha1.VideoBudget{Status: videov1alpha1.VideoBudgetStatus{Reservations: []videov1alpha1.BudgetReservation{
		plain, pending, credits, keyed}}}
	b.Status.CompactRunningJobs()
	if len(b.Status.RunningJobs) != 2 || len(b.Status.Reservations) != 2 {
		t.Fatalf("want the two running jobs with the default key as lines, the others as objects: lines %q, objects %+v",
			b.Status.RunningJobs, b.Status.Reservations)
	}
	b.Status.ExpandRunningJobs()
	want := []videov1alpha1.BudgetReservation{plain, credits, pending, keyed}
	if !equality.Semantic.DeepEqual(b.Status.Reservations, want) || b.Status.RunningJobs != nil {
		t.Fatalf("read back:\n%+v\nwant\n%+v", b.Status.Reservations, want)
	}
}

// A line that cannot be read (written by hand) still holds its job: its end is read and
// charged once its render is found gone, never silently dropped.
func TestAnUnreadableRunningJobsLineKeepsItsJob(t *testing.T) {
	b := &videov1alpha1.VideoBudget{Status: videov1alpha1.VideoBudgetStatus{RunningJobs: []string{"r1 uid-1 a soon 10 - job-1"}}}
	b.Status.ExpandRunningJobs()
	if len(b.Status.Reservations) != 1 || b.Status.Reservations[0].JobID != "job-1" {
		t.Fatalf("want job-1 held, got %+v", b.Status.Reservations)
	}
}

// The merge patch replaces a list whole: a write that changes the pending submissions sends the
// running jobs' lines too, so a budget of an older manager (running jobs as objects) loses none
// of them at its first write, and one whose lists did not change sends neither.
func TestABudgetWriteSendsTheReservationsAndTheRunningJobsTogether(t *testing.T) {
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	older := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName},
		Status: videov1alpha1.VideoBudgetStatus{Reservations: []videov1alpha1.BudgetReservation{runningReservation(1), runningReservation(2)}}}
	server := fake.NewClientBuilder().WithScheme(s).WithObjects(older).WithStatusSubresource(older).Build()
	read := func() *videov1alpha1.VideoBudget {
		t.Helper()
		var b videov1alpha1.VideoBudget
		if err := server.Get(t.Context(), client.ObjectKeyFromObject(older), &b); err != nil {
			t.Fatal(err)
		}
		return &b
	}

	b := &videov1alpha1.VideoBudget{}
	if err := readBudget(t.Context(), server, "team-a", b); err != nil {
		t.Fatal(err)
	}
	base := b.DeepCopy()
	b.Status.Used.Renders = 2
	if err := patchBudgetStatus(t.Context(), server, b, base); err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got.Status.Reservations) != 2 || len(got.Status.RunningJobs) != 0 || got.Status.Used.Renders != 2 {
		t.Fatalf("a write that changes no reservation leaves them as they are: %+v", got.Status)
	}

	base = b.DeepCopy()
	next := runningReservation(3)
	next.JobID = ""
	b.Status.Reservations = append(b.Status.Reservations, next)
	if err := patchBudgetStatus(t.Context(), server, b, base); err != nil {
		t.Fatal(err)
	}
	got := read()
	if len(got.Status.Reservations) != 1 || got.Status.Reservations[0].UID != "uid-3" || len(got.Status.RunningJobs) != 2 {
		t.Fatalf("want the pending submission as an object and both running jobs as lines: %+v", got.Status)
	}
	if res := got.Status.AllReservations(); len(res) != 3 || res[0].JobID != "job-1" || res[1].JobID != "job-2" || res[2].UID != "uid-3" {
		t.Fatalf("read back: %+v", res)
	}
	if len(b.Status.Reservations) != 3 || b.Status.RunningJobs != nil {
		t.Fatalf("the writer's copy is the API server's answer, expanded: %+v", b.Status)
	}

	// Render 1's job is charged: its line goes, render 2's stays.
	base = b.DeepCopy()
	b.Status.Reservations = b.Status.Reservations[1:]
	if err := patchBudgetStatus(t.Context(), server, b, base); err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got.Status.RunningJobs) != 1 || len(got.Status.Reservations) != 1 {
		t.Fatalf("want job-2's line and the pending submission: %+v", got.Status)
	}
}

// The VideoBudget controller does not stall on a line it cannot read: the job it names is read
// from the service and charged once it ended.
func TestAnUnreadableRunningJobsLineIsChargedFromItsJobsEnd(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](10)})
	close(h.hold)
	b := h.budget(t)
	b.Status.RunningJobs = []string{"written by hand: job-9"}
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}
	jobs := &fakeJobs{ends: map[string]*JobEnd{"job-9": {Completed: true, Seconds: 42}}}
	_, reconcile := goneJobsController(t, h, clocktesting.NewFakeClock(time.Now().Add(10*time.Minute)), jobs, time.Hour)
	reconcile()
	if b := h.budget(t); len(b.Status.Reservations) != 0 || b.Status.Used.RenderSeconds != 42 {
		t.Fatalf("want job-9 read and charged its 42 s: reservations %+v, used %d s", b.Status.Reservations, b.Status.Used.RenderSeconds)
	}
}
