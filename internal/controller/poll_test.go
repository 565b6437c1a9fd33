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
	"context"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// runningRender is a render whose job-1 was submitted and has not ended.
func runningRender(name string) *videov1alpha1.VideoRender {
	vr := inlineRender(name)
	now := metav1.NewTime(time.Now().Add(-time.Minute))
	vr.Status.JobID, vr.Status.JobGeneration, vr.Status.SubmittedAt = "job-1", 1, &now
	vr.Status.Phase = videov1alpha1.PhaseInProgress
	return vr
}

// poll reads the running job ("GET /v1/jobs/{id}") and decides in memory: it writes nothing of
// its own (the reconcile's one status write follows), and it never calls a paid endpoint.
func TestPollDecidesInMemoryAndPaysNothing(t *testing.T) {
	cases := []struct {
		name      string
		job       *apiclient.Job
		err       error
		stop      bool
		wantPhase videov1alpha1.Phase
		ended     bool
	}{
		{name: "in progress: progress recorded, the reconcile stops here", stop: true, wantPhase: videov1alpha1.PhaseInProgress,
			job: &apiclient.Job{JobID: "job-1", Success: true, Data: apiclient.JobData{Status: apiclient.JobStatusInProgress, Progress: "40"}}},
		{name: "completed: outputs recorded, the reconcile goes on to decide the spec", stop: false, wantPhase: videov1alpha1.PhaseCompleted, ended: true,
			job: &apiclient.Job{JobID: "job-1", Success: true, Data: apiclient.JobData{Status: apiclient.JobStatusCompleted, Progress: "100",
				VideoURL: "https://cdn.example.com/v.mp4"}}},
		{name: "failed because of its spec: recorded as the failure", stop: false, wantPhase: videov1alpha1.PhaseFailed, ended: true,
			job: &apiclient.Job{JobID: "job-1", Data: apiclient.JobData{Status: apiclient.JobStatusFailed, ErrorCode: "TEXT_TO_VIDEO_FAILED",
				ErrorMessage: `Invalid voice speaker "Nobody"`}}},
		{name: "a 429: backs off, records nothing", stop: true, wantPhase: videov1alpha1.PhaseInProgress,
			err: &apiclient.APIError{StatusCode: http.StatusTooManyRequests, Message: "slow down"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newStepFixture(t, runningRender("a"))
			f.api.GetJobFunc = func(context.Context, string) (*apiclient.Job, error) { return c.job, c.err }
			s := f.scopeOf("a")
			tx := s.tx
			// A callback asked for the read: it is made now, not spread over the poll window.
			f.l.memo.Wake("job-1")
			end := f.l.poll(context.Background(), s)
			if end != nil && end.err != nil && c.err == nil {
				t.Fatalf("poll: %v", end.err)
			}
			if stopped := end != nil; stopped != c.stop {
				t.Errorf("stopped = %v, want %v", stopped, c.stop)
			}
			if n := f.api.CallCount("GetJob"); n != 1 {
				t.Errorf("GetJob called %d times, want 1", n)
			}
			if w := f.Writes(); len(w) != 0 {
				t.Errorf("poll wrote %q itself; its decision is the reconcile's one status write", w)
			}
			st := tx.Obj.Status
			if st.Phase != c.wantPhase || (st.CompletedAt != nil) != c.ended {
				t.Errorf("in memory: phase %s, completedAt %v; want %s, ended %v", st.Phase, st.CompletedAt, c.wantPhase, c.ended)
			}
			if c.wantPhase == videov1alpha1.PhaseCompleted && (st.Outputs == nil || st.Outputs.VideoURL != c.job.Data.VideoURL) {
				t.Errorf("outputs %+v, want the video URL", st.Outputs)
			}
			if n := f.api.CallCount("RenderStoryboard") + f.api.CallCount("CreateStoryboardPreview") + f.api.CallCount("RenderProject"); n != 0 {
				t.Errorf("%d paid calls from a poll", n)
			}
		})
	}
}
