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
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The alert on stuck submissions needs the age of the oldest one: a count of objects in phase
// Submitting stays above zero on a busy cluster where every submission takes a second.
func TestOldestSubmissionAge(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	m.now = func() time.Time { return now }
	submitting := func(started time.Time) *videov1alpha1.JobStatus {
		return &videov1alpha1.JobStatus{Phase: videov1alpha1.PhaseSubmitting,
			Submission: &videov1alpha1.Submission{AttemptID: "a", StartedAt: metav1.NewTime(started)}}
	}
	expect := func(want string) {
		t.Helper()
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "video_operator_oldest_submission_age_seconds"); err != nil {
			t.Error(err)
		}
	}
	header := "# HELP video_operator_oldest_submission_age_seconds Age of the oldest submission recorded in flight (status.submission.startedAt), by kind; 0 when none is. " +
		"A healthy submission lasts seconds; one that stays has an unknown outcome or a manager that cannot record it.\n" +
		"# TYPE video_operator_oldest_submission_age_seconds gauge\n"

	expect(header + "video_operator_oldest_submission_age_seconds{kind=\"VideoRender\"} 0\nvideo_operator_oldest_submission_age_seconds{kind=\"VideoStoryboard\"} 0\n")

	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	m.observe("VideoRender", a, submitting(now.Add(-20*time.Minute)))
	m.observe("VideoRender", b, submitting(now.Add(-2*time.Second)))
	now = now.Add(time.Minute) // the age grows between reconciles
	expect(header + "video_operator_oldest_submission_age_seconds{kind=\"VideoRender\"} 1260\nvideo_operator_oldest_submission_age_seconds{kind=\"VideoStoryboard\"} 0\n")

	// a's job is recorded; b's object is deleted.
	m.observe("VideoRender", a, &videov1alpha1.JobStatus{Phase: videov1alpha1.PhaseInProgress, JobID: "j"})
	m.forget("VideoRender", b)
	expect(header + "video_operator_oldest_submission_age_seconds{kind=\"VideoRender\"} 0\nvideo_operator_oldest_submission_age_seconds{kind=\"VideoStoryboard\"} 0\n")
}
