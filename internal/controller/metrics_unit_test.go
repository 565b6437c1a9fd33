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
	reg := prometheus.NewRegistry()
	if err := reg.Register(oldestSubmission{m}); err != nil {
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
	m, err := NewMetrics(prometheus.NewRegistry())
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
	m.observeSubmission("VideoRender", young, sub(t0.Add(time.Hour)))
	m.observeSubmission("VideoRender", old, sub(t0))
	m.observeSubmission("VideoStoryboard", preview, sub(t0.Add(2*time.Hour)))
	want := map[string]float64{"VideoRender": float64(t0.Unix()), "VideoStoryboard": float64(t0.Add(2 * time.Hour).Unix())}
	if got := oldestSubmissions(t, m); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}

	m.observeSubmission("VideoRender", old, nil) // its job id was recorded
	if got := oldestSubmissions(t, m)["VideoRender"]; got != float64(t0.Add(time.Hour).Unix()) {
		t.Errorf("after the oldest got its job id: %v, want the younger one's start", got)
	}
	m.forget("VideoRender", young)
	m.observeSubmission("VideoStoryboard", preview, nil)
	if got := oldestSubmissions(t, m); len(got) != 0 {
		t.Errorf("nothing in flight any more: want no series, got %v", got)
	}
	var none *Metrics
	none.observeSubmission("VideoRender", old, sub(t0)) // a nil *Metrics records nothing
}
