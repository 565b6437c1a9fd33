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
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

func TestPeriodBounds(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tt := range []struct {
		name       string
		period     videov1alpha1.BudgetPeriod
		now        string
		start, end string
	}{
		{"daily", videov1alpha1.BudgetPeriodDaily, "2026-11-22T07:13:00Z", "2026-11-22T00:00:00Z", "2026-11-23T00:00:00Z"},
		{"daily at the boundary", videov1alpha1.BudgetPeriodDaily, "2026-11-23T00:00:00Z", "2026-11-23T00:00:00Z", "2026-11-24T00:00:00Z"},
		{"daily from another zone is UTC", videov1alpha1.BudgetPeriodDaily, "2026-11-22T23:30:00-05:00", "2026-11-23T00:00:00Z", "2026-11-24T00:00:00Z"},
		{"weekly on a Sunday", videov1alpha1.BudgetPeriodWeekly, "2026-11-22T07:13:00Z", "2026-11-16T00:00:00Z", "2026-11-23T00:00:00Z"},
		{"weekly on a Monday", videov1alpha1.BudgetPeriodWeekly, "2026-11-23T00:00:00Z", "2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z"},
		{"monthly", videov1alpha1.BudgetPeriodMonthly, "2026-11-22T07:13:00Z", "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z"},
		{"monthly in December", videov1alpha1.BudgetPeriodMonthly, "2026-12-31T23:59:59Z", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start, end := PeriodBounds(tt.period, at(tt.now))
			if !start.Equal(at(tt.start)) || !end.Equal(at(tt.end)) {
				t.Errorf("PeriodBounds(%s, %s) = %s, %s; want %s, %s", tt.period, tt.now, start, end, tt.start, tt.end)
			}
		})
	}
}

func TestRollPeriod(t *testing.T) {
	now := time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC)
	b := &videov1alpha1.VideoBudget{Spec: videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily}}
	RollPeriod(b, now)
	if b.Status.PeriodEnd == nil || !b.Status.PeriodEnd.Equal(ptr.To(metav1.NewTime(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)))) {
		t.Fatalf("periodEnd %v", b.Status.PeriodEnd)
	}
	addUsageAt(b, videov1alpha1.BudgetUsage{Renders: 3, RenderSeconds: 90}, time.Time{})
	b.Status.ChargedJobs = []string{"j1"}
	b.Status.Reservations = []videov1alpha1.BudgetReservation{{Kind: "VideoRender", Name: "a", UID: "u", AttemptID: "x"}}

	// Within the period nothing changes.
	RollPeriod(b, now.Add(time.Hour))
	if b.Status.Used.Renders != 3 {
		t.Fatalf("usage reset within the period: %+v", b.Status.Used)
	}
	// A change of period takes the new period's usage from what was charged within it: these
	// charges were made this week.
	b.Spec.Period = videov1alpha1.BudgetPeriodWeekly
	RollPeriod(b, now.Add(time.Hour))
	if b.Status.Used.Renders != 3 || b.Status.Period != videov1alpha1.BudgetPeriodWeekly {
		t.Fatalf("changing the period: %+v", b.Status)
	}
	// At the boundary usage starts from zero; reservations in flight stay, and so do the charged
	// job ids: a job is charged once, whatever the period (a charge written after its render's
	// end may come after the boundary).
	RollPeriod(b, b.Status.PeriodEnd.Time)
	if b.Status.Used != (videov1alpha1.BudgetUsage{}) || len(b.Status.ChargedJobs) != 1 || len(b.Status.Reservations) != 1 {
		t.Fatalf("after the boundary: %+v", b.Status)
	}
}

// Issue 37, case 3: "changing the period twice resets it". Monthly, then Weekly, the week rolls
// over, then Monthly again: the month's usage is what was charged in the month, not 0.
func TestAPeriodChangedTwiceKeepsWhatItsChargesSay(t *testing.T) {
	thursday := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	b := &videov1alpha1.VideoBudget{Spec: videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodMonthly}}
	RollPeriod(b, thursday)
	addUsageAt(b, videov1alpha1.BudgetUsage{Renders: 4, RenderSeconds: 600}, time.Time{})
	b.Spec.Period = videov1alpha1.BudgetPeriodWeekly
	RollPeriod(b, thursday.Add(time.Hour))
	monday := thursday.AddDate(0, 0, 4)
	RollPeriod(b, monday)
	addUsageAt(b, videov1alpha1.BudgetUsage{Renders: 1, RenderSeconds: 60}, time.Time{})
	if b.Status.Used.Renders != 1 {
		t.Fatalf("the new week used %d renders, want 1", b.Status.Used.Renders)
	}
	b.Spec.Period = videov1alpha1.BudgetPeriodMonthly
	RollPeriod(b, monday.Add(time.Hour))
	if b.Status.Used.Renders != 5 || b.Status.Used.RenderSeconds != 660 {
		t.Fatalf("back to Monthly on %s: used %+v, want the month's 5 renders and 660 s", monday.Format("Jan 2"), b.Status.Used)
	}
	// The month rolls over: December starts from zero, whatever the period did in November.
	RollPeriod(b, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if b.Status.Used != (videov1alpha1.BudgetUsage{}) {
		t.Fatalf("December used %+v", b.Status.Used)
	}
}

func TestReachedLimits(t *testing.T) {
	q := resource.MustParse
	b := &videov1alpha1.VideoBudget{Spec: videov1alpha1.VideoBudgetSpec{
		MaxRenders: ptr.To[int64](2), MaxRenderSeconds: ptr.To[int64](100), MaxAICredits: ptr.To(q("10")), MaxPreviews: ptr.To[int64](1),
	}}
	b.Status.Used = videov1alpha1.BudgetUsage{Renders: 1, RenderSeconds: 99, AICredits: ptr.To(q("9.5"))}
	if l, _, ok := exhausted(b, "VideoRender", bound.Estimate{}); ok {
		t.Fatalf("render refused below every limit: %s", l)
	}
	b.Status.Reservations = []videov1alpha1.BudgetReservation{{Kind: "VideoRender"}, {Kind: kindStoryboard}}
	recountReserved(b)
	if l, msg, ok := exhausted(b, "VideoRender", bound.Estimate{}); !ok || l != videov1alpha1.BudgetLimitRenders || msg != "maxRenders reached: 2 of 2 renders used (1 of them in flight)" {
		t.Fatalf("with a render in flight: %s %q %v", l, msg, ok)
	}
	if l, _, ok := exhausted(b, kindStoryboard, bound.Estimate{}); !ok || l != videov1alpha1.BudgetLimitPreviews {
		t.Fatalf("with a preview in flight: %s %v", l, ok)
	}
	b.Status.Reservations = nil
	recountReserved(b)
	b.Status.Used.AICredits = ptr.To(q("10.0"))
	if l, msg, ok := exhausted(b, "VideoRender", bound.Estimate{}); !ok || l != videov1alpha1.BudgetLimitAICredits || msg != "maxAICredits reached: 10 of 10 AI credits used" {
		t.Fatalf("credits: %s %q %v", l, msg, ok)
	}
	if _, _, ok := exhausted(b, kindStoryboard, bound.Estimate{}); ok {
		t.Fatal("a render limit stopped a preview")
	}
}

func TestReleaseTakesOnlyThatAttemptsReservation(t *testing.T) {
	b := &videov1alpha1.VideoBudget{}
	b.Status.Reservations = []videov1alpha1.BudgetReservation{
		{Kind: "VideoRender", UID: "a", AttemptID: "1"}, {Kind: kindStoryboard, UID: "b", AttemptID: "2"}, {Kind: "VideoRender", UID: "c", AttemptID: "3"},
	}
	if release(b, "a", "other") || len(b.Status.Reservations) != 3 {
		t.Fatal("released the reservation of another attempt")
	}
	if !release(b, "b", "2") || b.Status.Used.Previews != 0 || len(b.Status.Reservations) != 2 {
		t.Fatalf("releasing a preview counted it, or kept it: %+v", b.Status)
	}
	if !release(b, "a", "1") || b.Status.Used.Renders != 0 || len(b.Status.Reservations) != 1 || b.Status.Reservations[0].UID != "c" {
		t.Fatalf("releasing a render: %+v", b.Status)
	}
	b.Status.Reservations[0].JobID = "job-c"
	if release(b, "c", "3") || len(b.Status.Reservations) != 1 {
		t.Fatalf("released the reservation of a recorded job, whose end is then never charged: %+v", b.Status)
	}
}

// Issue 15, "never counts less than was paid": a new attempt replaces the object's earlier
// reservation only when that attempt never reached the service; one that did (its outcome unknown
// and a resubmission confirmed, or its job recorded since) is counted as used.
func TestReserveCountsAReplacedAttemptThatWasSent(t *testing.T) {
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	// The namespace's ledger is a ConfigMap: a guard that cannot write it admits nothing.
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	budget := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName},
		Spec: videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(10))}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(budget).WithStatusSubresource(budget).Build()
	g := New(c, c, clocktesting.NewFakeClock(time.Now()), 10*time.Second, nil)
	vr := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "r", UID: "uid-1"}}
	for _, step := range []struct {
		attempt  string
		sent     bool
		wantUsed int64
	}{{"a1", false, 0}, {"a2", false, 0}, {"a3", true, 1}, {"a4", true, 2}} {
		sent := func(videov1alpha1.BudgetReservation) bool { return step.sent }
		if _, err := g.reserve(t.Context(), "VideoRender", vr, step.attempt, "", bound.Estimate{}, sent); err != nil {
			t.Fatal(err)
		}
		var got videov1alpha1.VideoBudget
		if err := g.client.Get(t.Context(), client.ObjectKeyFromObject(budget), &got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Used.Renders != step.wantUsed || len(got.Status.Reservations) != 1 || got.Status.Reservations[0].AttemptID != step.attempt {
			t.Errorf("after reserving %s (the previous one sent: %v): used %d, reservations %+v; want used %d and only %s reserved",
				step.attempt, step.sent, got.Status.Used.Renders, got.Status.Reservations, step.wantUsed, step.attempt)
		}
	}
}

// staleCacheGuard is a guard whose cache shows the budget as it was when the guard was built
// (an informer far behind, as under load), over a fake API server that counts conflicts.
func staleCacheGuard(t *testing.T, spec videov1alpha1.VideoBudgetSpec) (g *Guard, server client.Client, conflicts *atomic.Int32) {
	t.Helper()
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	// The namespace's ledger is a ConfigMap: a guard that cannot write it admits nothing.
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	budget := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}, Spec: spec}
	server = fake.NewClientBuilder().WithScheme(s).WithObjects(budget).WithStatusSubresource(budget).Build()
	stale := &videov1alpha1.VideoBudget{}
	if err := server.Get(t.Context(), client.ObjectKeyFromObject(budget), stale); err != nil {
		t.Fatal(err)
	}
	conflicts = &atomic.Int32{}
	cached := interceptor.NewClient(server.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if b, ok := obj.(*videov1alpha1.VideoBudget); ok {
				stale.DeepCopyInto(b)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			if apierrors.IsConflict(err) {
				conflicts.Add(1)
			}
			return err
		},
	})
	return New(cached, server, clocktesting.NewFakeClock(time.Now()), 10*time.Second, nil), server, conflicts
}

// The 10,000-render benchmark with budgets lost a quarter of its budget writes to conflicts, each
// followed by a read from the API server: the cache had not yet seen this process's own previous
// write. A process's writes of one budget do not conflict with each other, and the jobs the
// renders record meanwhile ride with them (fold.go).
func TestBudgetWritesOfOneProcessDoNotConflictOverAStaleCache(t *testing.T) {
	g, server, conflicts := staleCacheGuard(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(100))})
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vr := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: fmt.Sprintf("r%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))}}
			d, err := g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{}, nil)
			if err == nil && d.Wait {
				err = fmt.Errorf("%s waits: %s", vr.Name, d.Message)
			}
			if err == nil {
				// The render records its job in its own status (created with it here).
				vr.Status.JobID, vr.Status.SubmittedAt = fmt.Sprintf("job-%d", i), &metav1.Time{Time: g.clock.Now()}
				err = server.Create(t.Context(), vr)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	// The jobs recorded after the last reservation ride with the namespace's next write.
	foldByGuardWrite(t, g)
	var got videov1alpha1.VideoBudget
	if err := server.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}, &got); err != nil {
		t.Fatal(err)
	}
	got.Status.ExpandRunningJobs()
	for i := range n {
		if (JobCharge{JobID: fmt.Sprintf("job-%d", i)}).pending(&got) < 0 {
			t.Errorf("no reservation holds job-%d, render %d's running job", i, i)
		}
	}
	if got.Status.Used.Renders != n || len(got.Status.Reservations) != n || got.Status.Reserved.Renders != 0 {
		t.Errorf("used %d with %d reservations (%d in flight), want %d, each its running job's", got.Status.Used.Renders,
			len(got.Status.Reservations), got.Status.Reserved.Renders, n)
	}
	if c := conflicts.Load(); c != 0 {
		t.Errorf("%d of this process's budget writes conflicted with its own earlier writes", c)
	}
}

// What this process last wrote can be behind a change made elsewhere: a raised limit must not be
// missed by a decision that writes nothing.
func TestBudgetWaitIsNotDecidedOnThisProcessesOwnOutdatedWrite(t *testing.T) {
	g, server, _ := staleCacheGuard(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(int64(1))})
	render := func(name string) *videov1alpha1.VideoRender {
		return &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: types.UID("uid-" + name)}}
	}
	if d, err := g.reserve(t.Context(), "VideoRender", render("a"), "a", "", bound.Estimate{}, nil); err != nil || d.Wait {
		t.Fatalf("the first render: wait %v, %v", d.Wait, err)
	}
	var b videov1alpha1.VideoBudget
	if err := server.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}, &b); err != nil {
		t.Fatal(err)
	}
	b.Spec.MaxRenders = ptr.To(int64(2))
	if err := server.Update(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	d, err := g.reserve(t.Context(), "VideoRender", render("b"), "b", "", bound.Estimate{}, nil)
	if err != nil || d.Wait {
		t.Fatalf("after maxRenders was raised to 2, the second render: wait %v (%s), %v; want room", d.Wait, d.Message, err)
	}
}

func TestBudgetWritersTakeTurnsAndStayBounded(t *testing.T) {
	w := budgetWriters{timeout: 10 * time.Second}
	held, err := w.join(t.Context(), "held", nil)
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := w.join(cancelled, "held", nil); err == nil {
		t.Fatal("a second write of the same budget got the turn while the first held it")
	}
	for i := range 2 * maxBudgetSlots {
		s, err := w.join(t.Context(), fmt.Sprintf("ns-%d", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		w.release(s)
	}
	if n := len(w.slots); n > maxBudgetSlots {
		t.Errorf("%d slots kept, want at most %d", n, maxBudgetSlots)
	}
	if w.slots["held"] != held || held.users != 1 {
		t.Fatalf("the slot in use was dropped or miscounted: %+v", w.slots["held"])
	}
	w.release(held)
	again, err := w.join(t.Context(), "held", nil)
	if err != nil {
		t.Fatalf("the turn was not given back: %v", err)
	}
	w.release(again)
}

// The spend guard is a handful of verbs (verbs.go): a reconciler cannot reach around them into
// its grants, folds and queues.
func TestTheGuardExportsAHandfulOfVerbs(t *testing.T) {
	typ := reflect.TypeFor[*Guard]()
	var names []string
	for m := range typ.Methods() {
		names = append(names, m.Name)
	}
	want := []string{"Adopt", "Charge", "Release", "Reserve", "SettleAll", "Standing"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("Guard exports %v, want the verbs %v", names, want)
	}
}
