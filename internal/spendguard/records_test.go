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
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apitypes "k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

func TestUnboundedRendersRunOneAtATimeUnderMaxRenderSeconds(t *testing.T) {
	b := &videov1alpha1.VideoBudget{Spec: videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](600)}}
	b.Status.Reservations = []videov1alpha1.BudgetReservation{{Kind: "VideoRender", UID: "a", AttemptID: "1", EstimatedSeconds: 30, Unbounded: true}}
	recountReserved(b)
	if b.Status.Reserved.UnboundedRenders != 1 {
		t.Fatalf("reserved %+v", b.Status.Reserved)
	}
	l, msg, wait := exhausted(b, "VideoRender", bound.Estimate{Seconds: 30, Unbounded: true})
	if !wait || l != videov1alpha1.BudgetLimitRenderSeconds || !strings.Contains(msg, "one at a time") {
		t.Fatalf("a second unbounded render: %v %s %q", wait, l, msg)
	}
	if _, msg, wait := exhausted(b, "VideoRender", bound.Estimate{Seconds: 30}); wait {
		t.Fatalf("a bounded render waits beside an unbounded one: %q", msg)
	}
	b.Spec.MaxRenderSeconds = nil
	b.Spec.MaxRenders = ptr.To[int64](100)
	if _, msg, wait := exhausted(b, "VideoRender", bound.Estimate{Seconds: 30, Unbounded: true}); wait {
		t.Fatalf("without maxRenderSeconds an unbounded render waits: %q", msg)
	}
}

func recordsScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func ledgerConfigMap(t *testing.T, ns, name string, l ledger) *corev1.ConfigMap {
	t.Helper()
	raw, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{ledgerKey: string(raw)}}
}

// docs/architecture.md "The record travels with the object": "The period's usage survives the
// budget being deleted and created again", and nothing is released in between.
func TestReserveWaitsWhileTheLedgerKeepsADeletedBudgetsLimits(t *testing.T) {
	now := time.Now()
	start, end := PeriodBounds(videov1alpha1.BudgetPeriodDaily, now)
	vr := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "r", UID: "uid-1"}}
	for _, tt := range []struct {
		name   string
		ledger *ledger
		wait   bool
	}{
		{"no ledger: never limited", nil, false},
		{"a ledger of this period", &ledger{BudgetUID: "b1", PeriodStart: &metav1.Time{Time: start}, PeriodEnd: &metav1.Time{Time: end}}, true},
		{"a ledger of an ended period", &ledger{BudgetUID: "b1", PeriodStart: &metav1.Time{Time: start.AddDate(0, 0, -1)}, PeriodEnd: &metav1.Time{Time: start}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(recordsScheme(t))
			if tt.ledger != nil {
				b = b.WithObjects(ledgerConfigMap(t, "ops", videov1alpha1.LedgerConfigMapPrefix+"team-a", *tt.ledger))
			}
			c := b.Build()
			g := New(c, c, clocktesting.NewFakeClock(now), 10*time.Second, NewLedgers("ops"))
			d, err := g.reserve(t.Context(), "VideoRender", vr, "a1", "", bound.Estimate{Seconds: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d.Wait != tt.wait {
				t.Fatalf("wait = %v (%s), want %v", d.Wait, d.Message, tt.wait)
			}
			if d.Wait && (!d.ResetAt.Equal(end) || !strings.Contains(d.Message, "ops/"+videov1alpha1.LedgerConfigMapPrefix+"team-a")) {
				t.Errorf("decision %+v: names the period's end and the ledger that removes the limits", d)
			}
		})
	}
}

// A budget that takes over rebuilds the reservations of running renders from what their
// submissions recorded: a storyboardRef render's request lives in another object.
func TestARebuiltReservationKeepsTheRecordedEstimateAndFlags(t *testing.T) {
	now := time.Now()
	vr := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "ref", UID: "uid-1"},
		Spec: videov1alpha1.VideoRenderSpec{StoryboardRef: &videov1alpha1.StoryboardReference{Name: "sb"}}}
	vr.Status.JobID, vr.Status.SubmittedAt = "job-1", &metav1.Time{Time: now}
	vr.Status.BudgetEstimate = &videov1alpha1.BudgetEstimate{Seconds: 42, AICredits: true}
	credits := resource.MustParse("100")
	b := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName, UID: "new"},
		Spec: videov1alpha1.VideoBudgetSpec{MaxAICredits: &credits}}
	c := fake.NewClientBuilder().WithScheme(recordsScheme(t)).WithObjects(vr).WithStatusSubresource(vr).Build()
	if err := adoptLedger(t.Context(), c, c, NewLedgers("ops"), b, now); err != nil {
		t.Fatal(err)
	}
	if len(b.Status.Reservations) != 1 {
		t.Fatalf("reservations %+v", b.Status.Reservations)
	}
	if r := b.Status.Reservations[0]; r.JobID != "job-1" || r.EstimatedSeconds != 42 || !r.AICredits || r.Unbounded {
		t.Errorf("rebuilt %+v, want the recorded 42 s and AI-credit flag", r)
	}
	recountReserved(b)
	if _, _, wait := exhausted(b, "VideoRender", bound.Estimate{Seconds: 1, Credits: true}); !wait {
		t.Error("another credit render runs beside the rebuilt one")
	}
}

// docs/architecture.md "Records that outlive a version": "the budget's ledger lives where tenants
// cannot write". The old ledger in the tenant's namespace is merged only while the manager's
// namespace has none of the namespace, and never lowers a count.
func TestTheOldLedgerIsMigratedOnceAndNeverCountsLess(t *testing.T) {
	now := time.Now()
	start, end := PeriodBounds(videov1alpha1.BudgetPeriodDaily, now)
	period := ledger{BudgetUID: "old", PeriodStart: &metav1.Time{Time: start}, PeriodEnd: &metav1.Time{Time: end}}
	old, current := period, period
	old.Used.Renders, current.Used.Renders = 7, 3
	newBudget := func(uid string) *videov1alpha1.VideoBudget {
		return &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName, UID: apitypes.UID("b-" + uid)}}
	}
	legacy := ledgerConfigMap(t, "team-a", videov1alpha1.LedgerConfigMapName, old)

	c := fake.NewClientBuilder().WithScheme(recordsScheme(t)).WithObjects(legacy).Build()
	s := NewLedgers("ops")
	b := newBudget("1")
	if err := adoptLedger(t.Context(), c, c, s, b, now); err != nil {
		t.Fatal(err)
	}
	if b.Status.Used.Renders != 7 {
		t.Fatalf("migrated %d renders, want the old ledger's 7", b.Status.Used.Renders)
	}

	// Once the manager's namespace has the ledger, the old one is never read again.
	c = fake.NewClientBuilder().WithScheme(recordsScheme(t)).
		WithObjects(legacy, ledgerConfigMap(t, "ops", s.Name("team-a"), current)).Build()
	b = newBudget("2")
	if err := adoptLedger(t.Context(), c, c, s, b, now); err != nil {
		t.Fatal(err)
	}
	if b.Status.Used.Renders != 3 {
		t.Fatalf("took %d renders, want the manager's ledger's 3 (the tenant's ConfigMap says 7)", b.Status.Used.Renders)
	}
	var written corev1.ConfigMap
	if err := s.write(t.Context(), c, b); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "ops", Name: s.Name("team-a")}, &written); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(written.Data[ledgerKey], `"budgetUID":"b-2"`) {
		t.Errorf("the ledger copies the budget that took over: %s", written.Data[ledgerKey])
	}
}
