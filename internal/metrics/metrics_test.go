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
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// oldestSubmissions gathers video_operator_oldest_submission_start_timestamp_seconds by kind.
func oldestSubmissions(t interface{ Fatal(...any) }, m *Metrics) map[string]float64 {
	return byFirstLabel(t, oldestSubmission{m})
}

// byFirstLabel gathers c's gauges by the value of their first label.
func byFirstLabel(t interface{ Fatal(...any) }, c prometheus.Collector) map[string]float64 {
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			out[s.GetLabel()[0].GetValue()] = s.GetGauge().GetValue()
		}
	}
	return out
}

// The oldest submission without a job id is what a stuck submission alert needs: one series per
// kind with the start of the oldest record, none when nothing is in flight, and a submission
// that got its job id (or an object that went) no longer counts.
func TestOldestSubmissionGauge(t *testing.T) {
	m, err := New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if got := oldestSubmissions(t, m); len(got) != 0 {
		t.Fatalf("nothing in flight: want no series, got %v", got)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sub := func(at time.Time) *videov1alpha1.Submission {
		return &videov1alpha1.Submission{AttemptID: "a", StartedAt: metav1.NewTime(at)}
	}
	old, young, preview := types.NamespacedName{Namespace: "a", Name: "old"},
		types.NamespacedName{Namespace: "a", Name: "young"}, types.NamespacedName{Namespace: "b", Name: "p"}
	m.ObserveSubmission("VideoRender", young, sub(t0.Add(time.Hour)))
	m.ObserveSubmission("VideoRender", old, sub(t0))
	m.ObserveSubmission("VideoStoryboard", preview, sub(t0.Add(2*time.Hour)))
	want := map[string]float64{"VideoRender": float64(t0.Unix()), "VideoStoryboard": float64(t0.Add(2 * time.Hour).Unix())}
	if got := oldestSubmissions(t, m); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}

	m.ObserveSubmission("VideoRender", old, nil) // its job id was recorded
	if got := oldestSubmissions(t, m)["VideoRender"]; got != float64(t0.Add(time.Hour).Unix()) {
		t.Errorf("after the oldest got its job id: %v, want the younger one's start", got)
	}
	m.Forget("VideoRender", young)
	m.ObserveSubmission("VideoStoryboard", preview, nil)
	if got := oldestSubmissions(t, m); len(got) != 0 {
		t.Errorf("nothing in flight any more: want no series, got %v", got)
	}
	var none *Metrics
	none.ObserveSubmission("VideoRender", old, sub(t0)) // a nil *Metrics records nothing
}

// jobSeries gathers video_operator_jobs as "kind/namespace/phase" -> value.
func jobSeries(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := reg.Register(m.jobs); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			l := map[string]string{}
			for _, lp := range s.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			out[l["kind"]+"/"+l["namespace"]+"/"+l["phase"]] = s.GetGauge().GetValue()
		}
	}
	return out
}

// The jobs gauge carries the namespace, so that a page can be routed to its tenant, and a
// namespace whose last object went leaves no series behind (its cardinality is bounded by the
// namespaces that hold objects now, not by every namespace ever seen).
func TestJobsGaugeByNamespace(t *testing.T) {
	m, err := New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	a1, a2, b1 := types.NamespacedName{Namespace: "team-a", Name: "one"},
		types.NamespacedName{Namespace: "team-a", Name: "two"}, types.NamespacedName{Namespace: "team-b", Name: "one"}
	m.ObservePhase("VideoRender", a1, videov1alpha1.PhaseFailed)
	m.ObservePhase("VideoRender", a2, "")
	m.ObservePhase("VideoRender", b1, videov1alpha1.PhaseInProgress)
	m.ObservePhase("VideoStoryboard", b1, videov1alpha1.PhaseCompleted)
	m.ObservePhase("VideoRender", a2, videov1alpha1.PhaseInProgress)
	want := map[string]float64{
		"VideoRender/team-a/Failed": 1, "VideoRender/team-a/Pending": 0, "VideoRender/team-a/InProgress": 1,
		"VideoRender/team-b/InProgress": 1, "VideoStoryboard/team-b/Completed": 1,
	}
	if got := jobSeries(t, m); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}

	m.Forget("VideoRender", a1)
	want = map[string]float64{
		"VideoRender/team-a/Failed": 0, "VideoRender/team-a/Pending": 0, "VideoRender/team-a/InProgress": 1,
		"VideoRender/team-b/InProgress": 1, "VideoStoryboard/team-b/Completed": 1,
	}
	if got := jobSeries(t, m); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after one of team-a's renders went: got %v, want %v", got, want)
	}
	m.Forget("VideoRender", a2)
	m.Forget("VideoRender", a2) // a second delete event changes nothing
	want = map[string]float64{"VideoRender/team-b/InProgress": 1, "VideoStoryboard/team-b/Completed": 1}
	if got := jobSeries(t, m); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after team-a's last render went: got %v, want %v (no series left for team-a)", got, want)
	}
}
