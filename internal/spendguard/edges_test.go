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
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

func TestReservedSecondsBoundABurst(t *testing.T) {
	b := &videov1alpha1.VideoBudget{Spec: videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](10)}}
	b.Status.Reservations = []videov1alpha1.BudgetReservation{{Kind: "VideoRender", UID: "a", AttemptID: "1", EstimatedSeconds: 6}}
	recountReserved(b)
	if _, _, ok := exhausted(b, "VideoRender", bound.Estimate{Seconds: 6}); ok {
		t.Fatal("6 of 10 seconds reserved: room for one more")
	}
	b.Status.Reservations = append(b.Status.Reservations, videov1alpha1.BudgetReservation{Kind: "VideoRender", UID: "b", AttemptID: "1", EstimatedSeconds: 6})
	recountReserved(b)
	if l, _, ok := exhausted(b, "VideoRender", bound.Estimate{Seconds: 6}); !ok || l != videov1alpha1.BudgetLimitRenderSeconds {
		t.Fatalf("12 of 10 seconds reserved: got %v %v", l, ok)
	}

	// The render records its job: the fold counts it as used and keeps its estimate counted for
	// its running job; the render records its end: the fold replaces the estimate with what the
	// job cost.
	now := time.Now()
	vr := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "a", UID: "a"}}
	vr.Status.JobID, vr.Status.SubmittedAt = "job-a", &metav1.Time{Time: now}
	objects := fake.NewClientBuilder().WithScheme(edgesScheme(t)).WithObjects(vr).Build()
	b.Namespace = "team-a"
	if n, _, err := foldRecorded(t.Context(), objects, b, now, 0); err != nil || n != 1 {
		t.Fatalf("folded %d facts (%v), want the recorded job", n, err)
	}
	recountReserved(b)
	if b.Status.Used.Renders != 1 || b.Status.Reserved.Renders != 1 || b.Status.Reserved.RenderSeconds != 12 {
		t.Fatalf("after the fold: used %+v reserved %+v", b.Status.Used, b.Status.Reserved)
	}
	if i := (JobCharge{JobID: "job-a"}).pending(b); i < 0 || b.Status.Reservations[i].EstimatedSeconds != 6 {
		t.Fatalf("the running job's reservation: %+v", b.Status.Reservations)
	}
	// Without a seconds or credits limit too, the running job keeps its reservation until its end
	// is charged: a limit added later counts it, and a render gone without its finalizer is
	// charged what its job was (issue 37, case 5).
	c := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a"}, Spec: videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](3)}}
	c.Status.Reservations = []videov1alpha1.BudgetReservation{{Kind: "VideoRender", UID: "a", AttemptID: "1", EstimatedSeconds: 6}}
	if n, _, err := foldRecorded(t.Context(), objects, c, now, 0); err != nil || n != 1 {
		t.Fatalf("folded %d facts (%v) without a length limit, want the recorded job", n, err)
	}
	if len(c.Status.Reservations) != 1 || c.Status.Reservations[0].JobID != "job-a" || c.Status.Used.Renders != 1 {
		t.Fatalf("folded without a length limit: %+v", c.Status)
	}

	vr.Status.CompletedAt = &metav1.Time{Time: now}
	vr.Status.VideoDuration = &metav1.Duration{Duration: 3500 * time.Millisecond}
	if err := objects.Update(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	if n, _, err := foldRecorded(t.Context(), objects, b, now, 0); err != nil || n != 1 {
		t.Fatalf("folded %d facts (%v), want job-a's end", n, err)
	}
	recountReserved(b)
	if b.Status.Used.RenderSeconds != 4 || b.Status.Reserved.RenderSeconds != 6 || !charged(b, "job-a") {
		t.Fatalf("after the end's fold: used %+v reserved %+v", b.Status.Used, b.Status.Reserved)
	}
	// Folded once: the reservation is the proof, and it is gone.
	if n, _, err := foldRecorded(t.Context(), objects, b, now, 0); err != nil || n != 0 || b.Status.Used.RenderSeconds != 4 {
		t.Fatalf("folded again: %d facts (%v), used %+v", n, err, b.Status.Used)
	}
}

// edgesScheme is the scheme of the objects a fold reads.
func edgesScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCreditRendersRunOneAtATime(t *testing.T) {
	b := &videov1alpha1.VideoBudget{Spec: videov1alpha1.VideoBudgetSpec{MaxAICredits: ptr.To(resource.MustParse("100"))}}
	if _, _, ok := exhausted(b, "VideoRender", bound.Estimate{Seconds: 5, Credits: true}); ok {
		t.Fatal("nothing in flight: room")
	}
	b.Status.Reservations = []videov1alpha1.BudgetReservation{{Kind: "VideoRender", UID: "a", AttemptID: "1", JobID: "j", AICredits: true}}
	recountReserved(b)
	if l, _, ok := exhausted(b, "VideoRender", bound.Estimate{Seconds: 5, Credits: true}); !ok || l != videov1alpha1.BudgetLimitAICredits {
		t.Fatal("a credit render runs: another waits")
	}
	if _, _, ok := exhausted(b, "VideoRender", bound.Estimate{Seconds: 5}); ok {
		t.Fatal("a render without credits does not wait for it")
	}
}

func TestMergeLedger(t *testing.T) {
	now := time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC)
	start, end := PeriodBounds(videov1alpha1.BudgetPeriodDaily, now)
	l := &ledger{PeriodStart: &metav1.Time{Time: start}, PeriodEnd: &metav1.Time{Time: end},
		Used: videov1alpha1.BudgetUsage{Renders: 3, RenderSeconds: 40, AICredits: ptr.To(resource.MustParse("7.5"))}, ChargedJobs: []string{"j1", "j2"}}

	fresh := &videov1alpha1.VideoBudget{Spec: videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily}}
	RollPeriod(fresh, now)
	if !MergeLedger(fresh, l, now) {
		t.Fatal("a fresh budget takes the ledger's usage")
	}
	if u := fresh.Status.Used; u.Renders != 3 || u.RenderSeconds != 40 || u.AICredits.String() != "7500m" || len(fresh.Status.ChargedJobs) != 2 {
		t.Fatalf("merged: %+v %v", u, fresh.Status.ChargedJobs)
	}

	// A status restored from an older backup keeps the larger of each count.
	restored := &videov1alpha1.VideoBudget{Spec: videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily}}
	RollPeriod(restored, now)
	restored.Status.Used = videov1alpha1.BudgetUsage{Renders: 5, RenderSeconds: 10}
	restored.Status.ChargedJobs = []string{"j2", "j3"}
	MergeLedger(restored, l, now)
	if u := restored.Status.Used; u.Renders != 5 || u.RenderSeconds != 40 || len(restored.Status.ChargedJobs) != 3 {
		t.Fatalf("merged into a restored status: %+v %v", u, restored.Status.ChargedJobs)
	}

	// A ledger of an ended period gives no usage, only which jobs are charged (whatever the
	// period, a job is charged once).
	later := end.Add(time.Hour)
	next := &videov1alpha1.VideoBudget{}
	RollPeriod(next, later)
	MergeLedger(next, l, later)
	if next.Status.Used.Renders != 0 || next.Status.Used.RenderSeconds != 0 || !charged(next, "j1") {
		t.Fatalf("an ended period's ledger: used %+v, charged ids %v", next.Status.Used, next.Status.ChargedJobs)
	}
}
