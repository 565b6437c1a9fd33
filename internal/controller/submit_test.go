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
	"errors"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// An idle key's first submission reads the brand list (free) and comes back: no write, no paid
// call ("Never pay twice": an outage costs what was in flight).
func TestSubmitChecksAnIdleKeyFirst(t *testing.T) {
	f := newStepFixture(t, inlineRender("a"))
	f.api.RenderStoryboardFunc = func(context.Context, any) (*apiclient.JobCreated, error) {
		return &apiclient.JobCreated{JobID: "job-1"}, nil
	}
	end := f.l.submit(context.Background(), f.scopeOf("a"))
	if end == nil || end.err != nil {
		t.Fatalf("submit ended with %+v; an idle key's check must end the reconcile", end)
	}
	res := end.result
	if w := f.Writes(); len(w) != 0 {
		t.Errorf("writes %q, want none", w)
	}
	if f.api.CallCount("ListVideoBrands") != 1 || f.api.CallCount("RenderStoryboard") != 0 {
		t.Errorf("calls %+v, want the brand list only", f.api.Calls())
	}
	if res.RequeueAfter <= 0 {
		t.Errorf("result %+v: the submission must come back", res)
	}
}

// submit's writes, in order, for each outcome of the paid call (docs/architecture.md "Never pay
// twice"): the in-flight record is written with an optimistic lock before the call, the job id
// right after it; a conflict on the in-flight record sends nothing.
func TestSubmitWritesTheInFlightRecordBeforeTheCall(t *testing.T) {
	const status = "patch VideoRender/status tenant/a"
	cases := []struct {
		name string
		// answer is the service's answer to the paid call; nil accepts it as job-1.
		answer error
		// conflict refuses the first status write as a conflict (a stale read).
		conflict   bool
		wantWrites []string
		wantCalls  int
		wantJob    string
		wantStall  videov1alpha1.ConditionReason
	}{
		{name: "accepted: in-flight record, call, job id", wantWrites: []string{status, status}, wantCalls: 1, wantJob: "job-1"},
		{name: "a stale read: the in-flight write conflicts and nothing is sent", conflict: true,
			wantWrites: []string{status + " (refused)"}, wantCalls: 0},
		{name: "refused (400): in-flight record and call; the refusal is the reconcile's write",
			answer:     &apiclient.APIError{StatusCode: http.StatusBadRequest, Code: "INVALID_REQUEST_BODY", Message: "scenes[0].story: required"},
			wantWrites: []string{status}, wantCalls: 1, wantStall: videov1alpha1.ReasonInvalidRequest},
		{name: "unknown outcome (a 500): in-flight record and call; stalls, never resent",
			answer:     &apiclient.APIError{StatusCode: http.StatusInternalServerError, Code: "INTERNAL_ERROR", Message: "boom"},
			wantWrites: []string{status}, wantCalls: 1, wantStall: videov1alpha1.ReasonSubmissionUnknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newStepFixture(t, inlineRender("a"))
			f.api.RenderStoryboardFunc = func(context.Context, any) (*apiclient.JobCreated, error) {
				if c.answer != nil {
					return nil, c.answer
				}
				return &apiclient.JobCreated{JobID: "job-1"}, nil
			}
			if c.conflict {
				first := true
				f.failWrite = func(verb, what string) error {
					if first && what == "VideoRender/status tenant/a" {
						first = false
						return apierrors.NewConflict(schema.GroupResource{Group: videov1alpha1.GroupVersion.Group, Resource: "videorenders"}, "a", errors.New("stale"))
					}
					return nil
				}
			}
			s := f.scopeOf("a")
			tx, tgt := s.tx, s.target
			f.answered(tx.Obj)
			if end := f.l.submit(context.Background(), s); end == nil || end.err != nil {
				t.Fatalf("submit ended with %+v; the paid section always ends the reconcile", end)
			}
			if err := sameWrites(f.Writes(), c.wantWrites); err != nil {
				t.Error(err)
			}
			if got := f.api.CallCount("RenderStoryboard"); got != c.wantCalls {
				t.Errorf("paid calls = %d, want %d", got, c.wantCalls)
			}
			server := f.get("a").Status
			if server.JobID != c.wantJob {
				t.Errorf("status.jobId on the server = %q, want %q", server.JobID, c.wantJob)
			}
			if c.wantJob != "" && (server.Submission != nil || server.RequestDigest != tgt.digest) {
				t.Errorf("after the job-id write: submission %+v, requestDigest %q (want none, %q)", server.Submission, server.RequestDigest, tgt.digest)
			}
			if c.wantCalls == 1 && c.wantJob == "" && server.Submission == nil {
				t.Error("the in-flight record is not on the server although the call was made")
			}
			if c.wantStall != "" && !stalledWith(&tx.Obj.Status.JobStatus, c.wantStall) {
				t.Errorf("in memory: conditions %+v, want Stalled %s", tx.Obj.Status.Conditions, c.wantStall)
			}
		})
	}
}
