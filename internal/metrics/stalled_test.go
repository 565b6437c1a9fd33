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

package metrics

import (
	"maps"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// gather returns every sample of the named metric as "label=value,..." -> value.
func gather(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			key := ""
			for i, l := range s.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetName() + "=" + l.GetValue()
			}
			out[key] = s.GetGauge().GetValue()
		}
	}
	return out
}

func stalledOn(reason videov1alpha1.ConditionReason) []metav1.Condition {
	return []metav1.Condition{
		{Type: string(videov1alpha1.ConditionReady), Status: metav1.ConditionFalse, Reason: string(reason)},
		{Type: string(videov1alpha1.ConditionStalled), Status: metav1.ConditionTrue, Reason: string(reason)},
	}
}

func awaitingSince(t time.Time) []metav1.Condition {
	return []metav1.Condition{{Type: string(videov1alpha1.ConditionReconciling), Status: metav1.ConditionTrue,
		Reason: string(videov1alpha1.ReasonAwaitingApproval), LastTransitionTime: metav1.NewTime(t)}}
}

// Every stall is visible to monitoring: the stalled gauge counts objects by kind, namespace and
// the Stalled condition's reason, moves an object when its reason changes, removes a series that
// reaches 0, and keeps the reason label to a fixed set (an unknown reason is Other).
func TestStalledGaugeFollowsTheStalledCondition(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	a1 := types.NamespacedName{Namespace: "team-a", Name: "one"}
	a2 := types.NamespacedName{Namespace: "team-a", Name: "two"}
	b1 := types.NamespacedName{Namespace: "team-b", Name: "one"}
	m.ObserveConditions("VideoRender", a1, stalledOn(videov1alpha1.ReasonSecretNotFound))
	m.ObserveConditions("VideoRender", a2, stalledOn(videov1alpha1.ReasonSecretNotFound))
	m.ObserveConditions("VideoStoryboard", b1, stalledOn("SomeFutureReason"))
	want := map[string]float64{
		"kind=VideoRender,namespace=team-a,reason=SecretNotFound": 2,
		"kind=VideoStoryboard,namespace=team-b,reason=Other":      1,
	}
	if got := gather(t, reg, "video_operator_stalled_objects"); !maps.Equal(got, want) {
		t.Fatalf("stalled gauge %v, want %v", got, want)
	}
	// The Secret appears for one render: it is no longer stalled; the other's key is refused.
	m.ObserveConditions("VideoRender", a1, []metav1.Condition{{Type: string(videov1alpha1.ConditionStalled), Status: metav1.ConditionFalse, Reason: "InProgress"}})
	m.ObserveConditions("VideoRender", a2, stalledOn(videov1alpha1.ReasonUnauthorized))
	m.Forget("VideoStoryboard", b1)
	want = map[string]float64{"kind=VideoRender,namespace=team-a,reason=Unauthorized": 1}
	if got := gather(t, reg, "video_operator_stalled_objects"); !maps.Equal(got, want) {
		t.Fatalf("after the changes, stalled gauge %v, want %v", got, want)
	}
	m.Forget("VideoRender", a2)
	m.Forget("VideoRender", a2) // a second delete event changes nothing
	if got := gather(t, reg, "video_operator_stalled_objects"); len(got) != 0 {
		t.Fatalf("nothing stalled: want no series, got %v", got)
	}
}

// A review nobody does must be expressible as "older than": the gauge is the oldest time a
// render of each namespace began awaiting approval, from the condition's lastTransitionTime (so a
// restart of the manager does not reset it), and a render approved or deleted no longer counts.
func TestOldestAwaitingApprovalGauge(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	const name = "video_operator_oldest_awaiting_approval_timestamp_seconds"
	if got := gather(t, reg, name); len(got) != 0 {
		t.Fatalf("nothing awaits: want no series, got %v", got)
	}
	old := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	recent := old.Add(48 * time.Hour)
	a1 := types.NamespacedName{Namespace: "team-a", Name: "old"}
	a2 := types.NamespacedName{Namespace: "team-a", Name: "recent"}
	c1 := types.NamespacedName{Namespace: "team-c", Name: "recent"}
	m.ObserveConditions("VideoRender", a1, awaitingSince(old))
	m.ObserveConditions("VideoRender", a2, awaitingSince(recent))
	m.ObserveConditions("VideoRender", c1, awaitingSince(recent))
	want := map[string]float64{"namespace=team-a": float64(old.Unix()), "namespace=team-c": float64(recent.Unix())}
	if got := gather(t, reg, name); !maps.Equal(got, want) {
		t.Fatalf("awaiting gauge %v, want %v", got, want)
	}
	// The old one is approved (now submitting), team-c's is deleted.
	m.ObserveConditions("VideoRender", a1, []metav1.Condition{{Type: string(videov1alpha1.ConditionReconciling),
		Status: metav1.ConditionTrue, Reason: string(videov1alpha1.ReasonSubmitting), LastTransitionTime: metav1.NewTime(old)}})
	m.Forget("VideoRender", c1)
	want = map[string]float64{"namespace=team-a": float64(recent.Unix())}
	if got := gather(t, reg, name); !maps.Equal(got, want) {
		t.Fatalf("after approval and deletion, awaiting gauge %v, want %v", got, want)
	}
	if got := gather(t, reg, "video_operator_stalled_objects"); len(got) != 0 {
		t.Fatalf("awaiting approval is not a stall: got %v", got)
	}
}
