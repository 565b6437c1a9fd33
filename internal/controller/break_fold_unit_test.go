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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/spendguard"
)

// The fold charges a render's end from the seconds its status records (spendguard.EndOf), and
// the status records the job's videoDuration rounded to the millisecond (seconds()). A job whose
// answer says 42.0004 s cost 43 s when its end was charged from the answer (jobCost, b82c5a5's
// charge, and still the finalizer's and heldForEnd's), and costs 42 s when folded: the rounding
// to the millisecond happens before the rounding up to the second, and a second is lost.
func TestBreakFoldAnEndIsChargedTheSecondsTheJobAnswerReported(t *testing.T) {
	for _, d := range []apiclient.Number{"42.0004", "7.0001", "42"} {
		job := &apiclient.Job{JobID: "job-1", Success: true, Data: apiclient.JobData{Status: apiclient.JobStatusCompleted,
			VideoURL: "https://cdn.example.com/v.mp4", VideoDuration: d}}
		vr := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "uid-a"}}
		vr.Status.JobID, vr.Status.SubmittedAt = "job-1", &metav1.Time{Time: time.Unix(1_700_000_000, 0)}
		renderAdapter{}.recordJob(vr, job)
		vr.Status.CompletedAt = &metav1.Time{Time: time.Unix(1_700_000_100, 0)}
		folded, ok := spendguard.EndOf(vr)
		answered, _ := jobCost(job)
		if !ok || folded.Seconds != answered {
			t.Errorf("videoDuration %s: the fold charges %d s (status %v), the job's answer costs %d s", d, folded.Seconds, vr.Status.VideoDuration, answered)
		}
	}
}
