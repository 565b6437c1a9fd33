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

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// Folding what objects record (fold.go): a render records its job and its job's end in its own
// status, and a budget write (any guard write, or the VideoBudget controller's once the fact is
// foldAge old) folds them: the reservation becomes usage, then is posted for what the job cost.
// The reservation is the proof that a fact is not folded yet, so a fact is folded once, whoever
// folds it and however often.

// foldT0 is the tests' time: a whole second (status times are kept to the second), a Wednesday in
// the middle of a month.
var foldT0 = time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)

// foldReader is a fake API server holding objs: what a fold reads the objects' facts from.
func foldReader(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

// foldRender is render 0 of team-a whose status recorded job jobID, submitted at, with the
// estimate its submission recorded.
func foldRender(jobID string, at time.Time, estimate int64) *videov1alpha1.VideoRender {
	vr := batchRender(0)
	vr.Status.JobID, vr.Status.SubmittedAt = jobID, &metav1.Time{Time: at}
	vr.Status.BudgetEstimate = &videov1alpha1.BudgetEstimate{Seconds: estimate}
	return vr
}

// withEndAt records the end of vr's job at at, its video secs long.
func withEndAt(vr *videov1alpha1.VideoRender, at time.Time, secs float64) *videov1alpha1.VideoRender {
	vr.Status.CompletedAt = &metav1.Time{Time: at}
	vr.Status.VideoDuration = &metav1.Duration{Duration: time.Duration(secs * float64(time.Second))}
	return vr
}

// heldFor is the reservation of attempt of render 0, reserved at for an estimate of secs; jobID
// is set once its job's record was folded (its running job's).
func heldFor(attempt string, at time.Time, secs int64, jobID string) videov1alpha1.BudgetReservation {
	vr := batchRender(0)
	return videov1alpha1.BudgetReservation{Kind: "VideoRender", Name: vr.Name, UID: string(vr.UID), AttemptID: attempt,
		ReservedAt: metav1.Time{Time: at}, EstimatedSeconds: secs, JobID: jobID}
}

// foldBudget is a budget of team-a in the period of at, holding res; usedRenders are the
// renders its period used (those whose job's record was folded).
func foldBudget(at time.Time, usedRenders int64, res ...videov1alpha1.BudgetReservation) *videov1alpha1.VideoBudget {
	b := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}
	RollPeriod(b, at)
	addUsageAt(b, videov1alpha1.BudgetUsage{Renders: usedRenders}, time.Time{})
	b.Status.Reservations = res
	return b
}

// foldAsGuard folds into b what r shows, now, as a guard write does (minAge 0), and fails the test on an
// error or a fact left for later.
func foldAsGuard(t *testing.T, r client.Reader, b *videov1alpha1.VideoBudget, now time.Time) int {
	t.Helper()
	n, due, err := foldRecorded(t.Context(), r, b, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !due.IsZero() {
		t.Fatalf("a guard write left a fact for later (due %v)", due)
	}
	return n
}

// windowUsed is what b's window of period p used.
func windowUsed(b *videov1alpha1.VideoBudget, p videov1alpha1.BudgetPeriod) videov1alpha1.BudgetUsage {
	for _, w := range b.Status.Windows {
		if w.Period == p {
			return w.Used
		}
	}
	return videov1alpha1.BudgetUsage{}
}

// timesCharged is how many times b's chargedJobs list jobID.
func timesCharged(b *videov1alpha1.VideoBudget, jobID string) int {
	n := 0
	for _, id := range b.Status.ChargedJobs {
		if id == jobID {
			n++
		}
	}
	return n
}

// freshGuardAt gives the harness a new guard (nothing in memory: no grants, no queued writes, no
// copy of the budget, as after a restart) whose clock stands at at, over the same API server and
// ledgers, and returns that clock.
func freshGuardAt(h *batchHarness, at time.Time) *clocktesting.FakeClock {
	clk := clocktesting.NewFakeClock(at)
	h.g = New(h.g.client, h.g.reader, clk, 10*time.Second, h.g.ledgers)
	return clk
}

// writeRenderStatus writes vr's status to the harness's API server, as the render's own status write.
func (h *batchHarness) writeRenderStatus(t *testing.T, vr *videov1alpha1.VideoRender) {
	t.Helper()
	var cur videov1alpha1.VideoRender
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), &cur); err != nil {
		t.Fatal(err)
	}
	vr.ResourceVersion = cur.ResourceVersion
	if err := writeObjectStatus(t.Context(), h.server, vr); err != nil {
		t.Fatal(err)
	}
}

// readRender reads render i from the harness's API server.
func (h *batchHarness) readRender(t *testing.T, i int) *videov1alpha1.VideoRender {
	t.Helper()
	vr := batchRender(i)
	if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), vr); err != nil {
		t.Fatal(err)
	}
	return vr
}

// reviewReconcile runs a VideoBudget controller of its own (nothing in memory, as after a
// restart) over the harness's budget times times, its clock stepped past foldAge after each look.
func reviewReconcile(t *testing.T, h *batchHarness, clk *clocktesting.FakeClock, times int) {
	t.Helper()
	r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clk,
		Grace: time.Minute, Recheck: time.Hour, Retry: time.Second, Ledgers: NewLedgers("ops"), Guard: h.g})
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}
	for range times {
		if _, err := r.Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		clk.Step(foldAge + time.Second)
	}
}

// A render's recorded job settles its reservation: one render used, counted in the period of
// its record, and the reservation stays with the job id (its running job's, until its end is
// posted). A fold that lands after a roll-over counts it in the period that ended, not in the
// new one.
func TestFoldSettlesARecordedJobInThePeriodOfItsRecord(t *testing.T) {
	t.Run("in the same period", func(t *testing.T) {
		r := foldReader(t, foldRender("job-0", foldT0.Add(-5*time.Second), 60))
		b := foldBudget(foldT0, 0, heldFor("a", foldT0.Add(-10*time.Second), 60, ""))
		if n := foldAsGuard(t, r, b, foldT0); n != 1 {
			t.Fatalf("folded %d facts, want the job's record", n)
		}
		if b.Status.Used.Renders != 1 || len(b.Status.Reservations) != 1 || b.Status.Reservations[0].JobID != "job-0" ||
			b.Status.Reservations[0].EstimatedSeconds != 60 {
			t.Fatalf("used %d renders, reservations %+v; want 1, and the reservation kept for job-0 with its estimate",
				b.Status.Used.Renders, b.Status.Reservations)
		}
		if n := foldAsGuard(t, r, b, foldT0); n != 0 || b.Status.Used.Renders != 1 {
			t.Fatalf("folded again: %d facts, used %d renders", n, b.Status.Used.Renders)
		}
	})
	t.Run("after a roll-over", func(t *testing.T) {
		// Monday 30 November, just before midnight: the month and the day end, the week goes on.
		reserved := time.Date(2026, 11, 30, 23, 59, 50, 0, time.UTC)
		r := foldReader(t, foldRender("job-0", reserved.Add(5*time.Second), 60))
		b := foldBudget(reserved, 0, heldFor("a", reserved, 60, ""))
		now := reserved.Add(20 * time.Second)
		RollPeriod(b, now) // December
		if n := foldAsGuard(t, r, b, now); n != 1 {
			t.Fatalf("folded %d facts, want the job's record", n)
		}
		if b.Status.Used.Renders != 0 || windowUsed(b, videov1alpha1.BudgetPeriodDaily).Renders != 0 ||
			windowUsed(b, videov1alpha1.BudgetPeriodMonthly).Renders != 0 {
			t.Errorf("December counts %d renders (day %d, month window %d) of a job recorded in November",
				b.Status.Used.Renders, windowUsed(b, videov1alpha1.BudgetPeriodDaily).Renders, windowUsed(b, videov1alpha1.BudgetPeriodMonthly).Renders)
		}
		if got := windowUsed(b, videov1alpha1.BudgetPeriodWeekly).Renders; got != 1 {
			t.Errorf("the week of its record counts %d renders, want 1", got)
		}
		if len(b.Status.Reservations) != 1 || b.Status.Reservations[0].JobID != "job-0" {
			t.Errorf("reservations %+v; want the one of job-0, running", b.Status.Reservations)
		}
	})
}

// An ended job is posted once: its video's seconds, rounded up, and its credits; its reservation
// goes. Folding the same facts again, or applying the fold again to the budget read afresh after
// a conflict, changes nothing more.
func TestFoldPostsAnEndedJobOnce(t *testing.T) {
	ended := func() *videov1alpha1.VideoRender {
		vr := withEndAt(foldRender("job-0", foldT0.Add(-time.Minute), 60), foldT0.Add(-3*time.Second), 12.3)
		vr.Status.AICreditsUsed = "2.5"
		return vr
	}
	t.Run("folded again", func(t *testing.T) {
		r := foldReader(t, ended())
		b := foldBudget(foldT0, 1, heldFor("a", foldT0.Add(-time.Minute), 60, "job-0"))
		if n := foldAsGuard(t, r, b, foldT0); n != 1 {
			t.Fatalf("folded %d facts, want the job's end", n)
		}
		want := func(what string) {
			t.Helper()
			u := b.Status.Used
			if u.RenderSeconds != 13 || u.Renders != 1 || u.AICredits == nil || u.AICredits.Cmp(resource.MustParse("2.5")) != 0 ||
				len(b.Status.Reservations) != 0 || !charged(b, "job-0") {
				t.Fatalf("%s: used %d s, %d renders, credits %v, reservations %+v; want 13 s (12.3 rounded up), 1 render, 2.5 credits, none left",
					what, u.RenderSeconds, u.Renders, u.AICredits, b.Status.Reservations)
			}
		}
		want("folded")
		if n := foldAsGuard(t, r, b, foldT0.Add(time.Minute)); n != 0 {
			t.Fatalf("folded %d facts again", n)
		}
		want("folded again")
	})
	t.Run("a conflict's re-apply", func(t *testing.T) {
		h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](10)}, ended())
		close(h.hold)
		freshGuardAt(h, foldT0)
		b := h.budget(t)
		RollPeriod(b, foldT0)
		addUsageAt(b, videov1alpha1.BudgetUsage{Renders: 1}, time.Time{})
		b.Status.Reservations = []videov1alpha1.BudgetReservation{heldFor("a", foldT0.Add(-time.Minute), 60, "job-0")}
		if err := h.setState(t, b); err != nil {
			t.Fatal(err)
		}
		h.onWrite = func(n int32) error {
			if n == 1 {
				return apierrors.NewConflict(schema.GroupResource{Resource: "videobudgets"}, b.Name, nil)
			}
			return nil
		}
		if err := h.g.foldNow(t.Context(), "team-a"); err != nil {
			t.Fatal(err)
		}
		if err := h.g.foldNow(t.Context(), "team-a"); err != nil {
			t.Fatal(err)
		}
		b = h.budget(t)
		if u := b.Status.Used; u.RenderSeconds != 13 || u.Renders != 1 || len(b.Status.Reservations) != 0 {
			t.Fatalf("used %d s, %d renders, reservations %+v; want 13 s, 1 render, none left", u.RenderSeconds, u.Renders, b.Status.Reservations)
		}
		if w := h.writes.Load(); w != 2 {
			t.Errorf("%d write attempts; want 2 (the conflict and its re-apply), and none for a second fold with nothing left", w)
		}
	})
}

// A failed job is charged nothing: its fold only removes its reservation. A job given up (its end
// never read: the job deadline, or the service forgot it) is charged its reservation's estimate.
func TestFoldChargesAFailedJobNothingAndAGivenUpJobItsEstimate(t *testing.T) {
	for _, tc := range []struct {
		code string
		want int64
	}{
		{"TEXT_TO_VIDEO_FAILED", 0},
		{"JOB_DEADLINE_EXCEEDED", 60},
		{"JOB_NOT_FOUND", 60},
	} {
		t.Run(tc.code, func(t *testing.T) {
			// The render's recorded estimate differs from the reservation's: the reservation's counts.
			vr := foldRender("job-0", foldT0.Add(-time.Minute), 45)
			vr.Status.CompletedAt = &metav1.Time{Time: foldT0.Add(-time.Second)}
			vr.Status.Failure = &videov1alpha1.JobFailure{Code: tc.code}
			r := foldReader(t, vr)
			b := foldBudget(foldT0, 1, heldFor("a", foldT0.Add(-time.Minute), 60, "job-0"))
			if n := foldAsGuard(t, r, b, foldT0); n != 1 {
				t.Fatalf("folded %d facts, want the job's end", n)
			}
			if b.Status.Used.RenderSeconds != tc.want || b.Status.Used.Renders != 1 || len(b.Status.Reservations) != 0 {
				t.Fatalf("used %d s, %d renders, reservations %+v; want %d s, 1 render, none left",
					b.Status.Used.RenderSeconds, b.Status.Used.Renders, b.Status.Reservations, tc.want)
			}
			if n := foldAsGuard(t, r, b, foldT0); n != 0 || b.Status.Used.RenderSeconds != tc.want {
				t.Fatalf("folded again: %d facts, %d s", n, b.Status.Used.RenderSeconds)
			}
		})
	}
}

// A render whose job ended before any write folded its record (a short job, a burst without
// writes): one fold settles its reservation and posts it, the render counted and its seconds.
func TestFoldSettlesAndPostsARenderThatEndedBeforeItsRecordWasFolded(t *testing.T) {
	r := foldReader(t, withEndAt(foldRender("job-0", foldT0.Add(-15*time.Second), 60), foldT0.Add(-5*time.Second), 30))
	b := foldBudget(foldT0, 0, heldFor("a", foldT0.Add(-20*time.Second), 60, ""))
	if n := foldAsGuard(t, r, b, foldT0); n != 2 {
		t.Fatalf("folded %d facts, want the job's record and its end", n)
	}
	if u := b.Status.Used; u.Renders != 1 || u.RenderSeconds != 30 || len(b.Status.Reservations) != 0 {
		t.Fatalf("used %d renders, %d s, reservations %+v; want 1 render, 30 s, none left", u.Renders, u.RenderSeconds, b.Status.Reservations)
	}
	if n := foldAsGuard(t, r, b, foldT0.Add(time.Minute)); n != 0 || b.Status.Used.Renders != 1 || b.Status.Used.RenderSeconds != 30 {
		t.Fatalf("folded again: %d facts, used %+v", n, b.Status.Used)
	}
}

// The VideoBudget controller folds a fact only once it is foldAge old (a guard write that comes
// sooner carries it), and says when the youngest fact left is due: it looks again then, and
// folds it.
func TestTheControllersFoldWaitsUntilAFactIsFoldAgeOld(t *testing.T) {
	t.Run("foldRecorded", func(t *testing.T) {
		submitted := foldT0.Add(-2 * time.Second)
		vr := foldRender("job-0", submitted, 60)
		r := foldReader(t, vr)
		b := foldBudget(foldT0, 0, heldFor("a", foldT0.Add(-10*time.Second), 60, ""))
		base := b.DeepCopy()
		for _, now := range []time.Time{foldT0, submitted.Add(foldAge - time.Second)} {
			n, due, err := foldRecorded(t.Context(), r, b, now, foldAge)
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 || !equality.Semantic.DeepEqual(base.Status, b.Status) {
				t.Fatalf("at %v: folded %d facts of a record %v old: %+v", now, n, now.Sub(submitted), b.Status)
			}
			if want := submitted.Add(foldAge); !due.Equal(want) {
				t.Fatalf("at %v: due %v, want %v (the record foldAge old)", now, due, want)
			}
		}
		n, due, err := foldRecorded(t.Context(), r, b, submitted.Add(foldAge), foldAge)
		if err != nil || n != 1 || !due.IsZero() || b.Status.Used.Renders != 1 || b.Status.Reservations[0].JobID != "job-0" {
			t.Fatalf("once due: folded %d (due %v, %v), used %d renders, reservations %+v", n, due, err, b.Status.Used.Renders, b.Status.Reservations)
		}
		// The job's end, likewise.
		endedAt := submitted.Add(time.Minute)
		r = foldReader(t, withEndAt(vr.DeepCopy(), endedAt, 30))
		n, due, err = foldRecorded(t.Context(), r, b, endedAt.Add(3*time.Second), foldAge)
		if err != nil || n != 0 || !due.Equal(endedAt.Add(foldAge)) || len(b.Status.Reservations) != 1 {
			t.Fatalf("an end 3 s old: folded %d (due %v, want %v; %v), reservations %+v", n, due, endedAt.Add(foldAge), err, b.Status.Reservations)
		}
		n, due, err = foldRecorded(t.Context(), r, b, endedAt.Add(foldAge), foldAge)
		if err != nil || n != 1 || !due.IsZero() || b.Status.Used.RenderSeconds != 30 || len(b.Status.Reservations) != 0 {
			t.Fatalf("an end foldAge old: folded %d (due %v, %v), used %d s, reservations %+v", n, due, err, b.Status.Used.RenderSeconds, b.Status.Reservations)
		}
	})
	t.Run("the controller", func(t *testing.T) {
		submitted := foldT0.Add(-2 * time.Second)
		h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](10)}, foldRender("job-0", submitted, 60))
		close(h.hold)
		b := h.budget(t)
		b.Status.Reservations = []videov1alpha1.BudgetReservation{heldFor("a", foldT0.Add(-10*time.Second), 60, "")}
		if err := h.setState(t, b); err != nil {
			t.Fatal(err)
		}
		clk := clocktesting.NewFakeClock(foldT0)
		r := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clk,
			Grace: time.Minute, Recheck: time.Hour, Retry: time.Second, Ledgers: NewLedgers("ops")})
		req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}}
		res, err := r.Reconcile(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if want := submitted.Add(foldAge).Sub(foldT0); res.RequeueAfter != want {
			t.Errorf("looks again in %v, want %v (when the record is foldAge old)", res.RequeueAfter, want)
		}
		if b := h.budget(t); b.Status.Used.Renders != 0 || len(b.Status.Reservations) != 1 || b.Status.Reservations[0].JobID != "" {
			t.Fatalf("a record 2 s old was folded by the controller: used %d, reservations %+v", b.Status.Used.Renders, b.Status.Reservations)
		}
		clk.SetTime(submitted.Add(foldAge))
		if _, err := r.Reconcile(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		if b := h.budget(t); b.Status.Used.Renders != 1 || len(b.Status.Reservations) != 1 || b.Status.Reservations[0].JobID != "job-0" {
			t.Fatalf("once due: used %d, reservations %+v; want 1 render, the reservation job-0's", b.Status.Used.Renders, b.Status.Reservations)
		}
	})
}

// The manager crashed after a render's end was written to its status, before any budget write
// folded it: nothing of it is in memory anywhere. A fresh guard and VideoBudget controller over
// the same API state fold it exactly once, however many times they look and write.
func TestAnEndWrittenBeforeACrashIsFoldedOnceByAFreshManager(t *testing.T) {
	for _, recordFolded := range []bool{true, false} {
		name := "its job's record folded"
		if !recordFolded {
			name = "its job's record not folded either"
		}
		t.Run(name, func(t *testing.T) {
			h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](10)}, batchRender(0), batchRender(1))
			close(h.hold)
			freshGuardAt(h, foldT0)
			if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{Seconds: 60}, nil); err != nil || d.Wait {
				t.Fatalf("%+v %v", d, err)
			}
			vr := h.readRender(t, 0)
			if recordFolded {
				if err := h.g.settle(t.Context(), "team-a", vr.UID, "a", "job-0"); err != nil {
					t.Fatal(err)
				}
				vr = h.readRender(t, 0)
			} else {
				vr.Status.JobID, vr.Status.SubmittedAt = "job-0", &metav1.Time{Time: foldT0}
			}
			h.writeRenderStatus(t, withEndAt(vr, foldT0, 19.2))
			// The crash: the guard, its grants and queues, and the controller's memory are gone.
			clk := freshGuardAt(h, foldT0.Add(time.Minute))
			want := func(what string) {
				t.Helper()
				b := h.budget(t)
				if u := b.Status.Used; u.Renders != 1 || u.RenderSeconds != 20 || len(b.Status.Reservations) != 0 ||
					timesCharged(b, "job-0") != 1 {
					t.Fatalf("%s: used %d renders, %d s, reservations %+v, charged %v; want 1 render, 20 s, none left, job-0 charged once",
						what, u.Renders, u.RenderSeconds, b.Status.Reservations, b.Status.ChargedJobs)
				}
			}
			reviewReconcile(t, h, clk, 1)
			want("after the fresh controller's look")
			reviewReconcile(t, h, clk, 2)
			if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "b", "", bound.Estimate{Seconds: 60}, nil); err != nil || d.Wait {
				t.Fatalf("%+v %v", d, err)
			}
			freshGuardAt(h, foldT0.Add(2*time.Minute))
			if err := h.g.foldNow(t.Context(), "team-a"); err != nil {
				t.Fatal(err)
			}
			b := h.budget(t)
			if len(b.Status.Reservations) != 1 || b.Status.Reservations[0].UID != string(batchRender(1).UID) {
				t.Fatalf("reservations %+v; want render 1's only", b.Status.Reservations)
			}
			if u := b.Status.Used; u.Renders != 1 || u.RenderSeconds != 20 || timesCharged(b, "job-0") != 1 {
				t.Fatalf("after more looks and writes: used %d renders, %d s, charged %v; want job-0's 1 render and 20 s, once",
					u.Renders, u.RenderSeconds, b.Status.ChargedJobs)
			}
		})
	}
}

// A render that comes to reserve its next submission while its previous job's end is in its
// status, not yet folded: the reservation's write posts that end before it decides, so a seconds
// limit sees what the job was (30 s), not its estimate (600 s).
func TestAReservationWriteFoldsTheRendersEndedJobBeforeDeciding(t *testing.T) {
	setup := func(t *testing.T) (*batchHarness, *videov1alpha1.VideoRender) {
		h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](700)}, batchRender(0))
		close(h.hold)
		clk := freshGuardAt(h, foldT0)
		// 100 s used by another job; render 0's job runs, its reservation holds 600 s: 700 of 700.
		if err := h.g.Charge(t.Context(), "team-a", JobCharge{JobID: "job-other", Seconds: 100}); err != nil {
			t.Fatal(err)
		}
		if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a1", "", bound.Estimate{Seconds: 600}, nil); err != nil || d.Wait {
			t.Fatalf("%+v %v", d, err)
		}
		if err := h.g.settle(t.Context(), "team-a", batchRender(0).UID, "a1", "job-0"); err != nil {
			t.Fatal(err)
		}
		clk.Step(time.Minute)
		return h, h.readRender(t, 0)
	}
	next := Submission{Kind: "VideoRender", Attempt: "a2", Est: bound.Estimate{Seconds: 100}}
	t.Run("its job still running", func(t *testing.T) {
		h, vr := setup(t)
		next.Obj = vr
		d, err := h.g.Reserve(t.Context(), next)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Wait || d.Limit != videov1alpha1.BudgetLimitRenderSeconds {
			t.Fatalf("%+v; want a wait on maxRenderSeconds (100 s used and 600 s reserved of 700)", d)
		}
	})
	t.Run("its job ended", func(t *testing.T) {
		h, vr := setup(t)
		h.writeRenderStatus(t, withEndAt(vr, foldT0.Add(time.Minute), 30))
		next.Obj = vr
		before := h.writes.Load()
		d, err := h.g.Reserve(t.Context(), next)
		if err != nil {
			t.Fatal(err)
		}
		if d.Wait {
			t.Fatalf("%+v; want the render admitted: its previous job was 30 s, not 600", d)
		}
		b := h.budget(t)
		if b.Status.Used.RenderSeconds != 130 || b.Status.Used.Renders != 1 || len(b.Status.Reservations) != 1 ||
			b.Status.Reservations[0].AttemptID != "a2" || b.Status.Reservations[0].JobID != "" {
			t.Fatalf("used %d s, %d renders, reservations %+v; want 130 s, 1 render, a2 in flight only",
				b.Status.Used.RenderSeconds, b.Status.Used.Renders, b.Status.Reservations)
		}
		if w := h.writes.Load() - before; w != 1 {
			t.Errorf("%d budget writes for the reservation; want 1, which folds the end too", w)
		}
	})
}

// A render whose ended job the budget has not folded does not pay on the reservation written
// ahead for its next attempt: it reserves the ordinary way, whose write folds the end first (the
// new job's record would take that end from its status).
func TestAGrantIsRefusedWhileTheRendersEndedJobIsUnfolded(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)}, batchRender(1))
	close(h.hold)
	clk := freshGuardAt(h, foldT0)
	h.pump(t)
	counted := &grantCounter{got: map[string]int{}}
	h.g.observeWrites(counted)
	vr := batchRender(1)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a0", "", bound.Estimate{Seconds: 60}, nil); err != nil || d.Wait {
		t.Fatalf("%+v %v", d, err)
	}
	if err := h.g.settle(t.Context(), "team-a", vr.UID, "a0", "job-1"); err != nil {
		t.Fatal(err)
	}
	clk.Step(2 * time.Second)
	// Its next attempt gathers while job-1 runs: the reservation of a1 is written ahead.
	vr = h.readRender(t, 1)
	gatherWritten(t, h, vr)
	// job-1 ends; the render comes back to pay.
	h.writeRenderStatus(t, withEndAt(vr, clk.Now(), 30))
	if !h.g.Standing(t.Context(), vr).Unfolded {
		t.Fatal("the budget holds job-1's reservation, yet Standing says its end is folded")
	}
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}})
	if err != nil || d.Wait {
		t.Fatalf("%+v %v", d, err)
	}
	if counted.got[GrantUsed] != 0 || counted.got[GrantChanged] != 1 {
		t.Errorf("grant outcomes %v; want it refused as changed", counted.got)
	}
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 30 || b.Status.Used.Renders != 1 || len(b.Status.Reservations) != 1 ||
		b.Status.Reservations[0].AttemptID != "a1" || b.Status.Reservations[0].JobID != "" {
		t.Fatalf("used %d s, %d renders, reservations %+v; want job-1's 30 s posted, then a1 in flight",
			b.Status.Used.RenderSeconds, b.Status.Used.Renders, b.Status.Reservations)
	}
	if h.g.Standing(t.Context(), vr).Unfolded {
		t.Error("job-1's end is folded, yet Standing says it is not")
	}
}

// A ledger write of the VideoBudget controller over the guard's last one no longer costs the
// guard's next write its lock: both write through one Ledgers, which keeps the latest copy. A
// write this process only learns of through its watch (another manager's, not sent here) costs one.
func TestTheGuardWritesOverTheControllersWriteWithoutLosingItsLock(t *testing.T) {
	for _, told := range []bool{false, true} {
		h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))})
		close(h.hold)
		if _, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{}, nil); err != nil {
			t.Fatal(err)
		}
		// The controller's write, over the guard's.
		from := h.g.ledgers.copyOf("team-a")
		if from == nil {
			t.Fatal("the guard keeps no copy of the ledger it wrote")
		}
		l := from.l
		l.ChargeCount++
		writer := NewLedgers("ops") // another process's
		if told {
			writer = h.g.ledgers
		}
		if err := writer.store(t.Context(), h.server, "team-a", l, from.rv); err != nil {
			t.Fatal(err)
		}
		conflicts := &writeTally{}
		h.g.observeWrites(conflicts)
		if _, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{}, nil); err != nil {
			t.Fatal(err)
		}
		want := 1 // a conflict, then the write on the ledger read again
		if told {
			want = 0
		}
		if got := conflicts.writes[WriterGuard+"/"+WriteConflict]; got != want {
			t.Errorf("told %v: %d ledger writes lost their lock, want %d (%v)", told, got, want, conflicts.writes)
		}
		if b := h.budget(t); len(b.Status.Reservations) != 2 || b.Status.ChargeCount != 1 {
			t.Errorf("told %v: %d reservations and charge count %d, want 2 and 1 (the controller's write kept)", told,
				len(b.Status.Reservations), b.Status.ChargeCount)
		}
	}
}

type grantCounter struct {
	noMetrics
	got map[string]int
}

func (c *grantCounter) ObserveGrant(result string) { c.got[result]++ }

// The grant outcomes count the renders of guarded namespaces only: elsewhere nothing is reserved.
func TestGrantOutcomesAreCountedOnlyInGuardedNamespaces(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))})
	close(h.hold)
	c := &grantCounter{got: map[string]int{}}
	h.g.observeWrites(c)
	unguarded := batchRender(1)
	unguarded.Namespace = "team-b"
	if _, ok := h.g.takeGrant(t.Context(), "VideoRender", unguarded, "a", "", bound.Estimate{}); ok {
		t.Fatal("a grant in a namespace without a budget")
	}
	if _, ok := h.g.takeGrant(t.Context(), "VideoRender", batchRender(2), "a", "", bound.Estimate{}); ok {
		t.Fatal("a grant nobody asked for")
	}
	if len(c.got) != 1 || c.got[GrantNone] != 1 {
		t.Fatalf("counted %v, want one %q (the guarded namespace's)", c.got, GrantNone)
	}
}
