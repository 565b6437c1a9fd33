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
	"testing"

	"k8s.io/utils/ptr"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// adopt takes the job a restored object's annotations name (docs/architecture.md "The record
// travels with the object"): it reads the job with the object's key, records it in memory and marks
// the record to be written after the status; it pays nothing and writes nothing itself.
func TestAdoptTakesTheRecordedJobAndPaysNothing(t *testing.T) {
	completed := &apiclient.Job{JobID: "job-7", Success: true, Data: apiclient.JobData{Status: apiclient.JobStatusCompleted,
		Progress: "100", VideoURL: "https://cdn.example.com/restored.mp4"}}
	cases := []struct {
		name string
		// withDigest writes the request digest in the record, as the operator does; without it
		// the record was written by hand.
		withDigest     bool
		wantUnverified bool
	}{
		{name: "the operator's record (job id, request digest)", withDigest: true},
		{name: "a record written by hand (job id only): taken as this spec's, marked unverified", wantUnverified: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vr := inlineRender("restored")
			f := newStepFixture(t)
			tgt := f.targetOf(vr)
			vr.Annotations = map[string]string{videov1alpha1.AnnotationJobID: "job-7"}
			if c.withDigest {
				vr.Annotations[videov1alpha1.AnnotationRequestDigest] = tgt.digest
			}
			if err := f.c.Create(context.Background(), vr); err != nil {
				t.Fatal(err)
			}
			f.Writes()
			f.api.GetJobFunc = func(_ context.Context, id string) (*apiclient.Job, error) {
				if id != "job-7" {
					t.Errorf("read job %q, want the recorded job-7", id)
				}
				return completed, nil
			}
			s := f.scopeOf("restored")
			tx := s.tx
			rec := recordOf(tx.Obj)
			if !f.l.adoptable(tx.Obj, rec, tgt) {
				t.Fatal("a restored object without status must adopt the job its annotations name")
			}
			if end := f.l.adopt(context.Background(), s, rec, tgt); end != nil {
				t.Fatalf("adopting a completed job ended the reconcile (%+v); it goes on to decide the spec", end)
			}
			if w := f.Writes(); len(w) != 0 {
				t.Errorf("adopt wrote %q itself", w)
			}
			st := tx.Obj.Status
			if st.JobID != "job-7" || st.RequestDigest != tgt.digest || st.CompletedAt == nil || st.Outputs == nil {
				t.Errorf("in memory: job %q digest %q completed %v outputs %+v", st.JobID, st.RequestDigest, st.CompletedAt, st.Outputs)
			}
			if got := ptr.Deref(st.RequestUnverified, false); got != c.wantUnverified {
				t.Errorf("requestUnverified = %v, want %v", got, c.wantUnverified)
			}
			if n := f.api.CallCount("RenderStoryboard"); n != 0 {
				t.Errorf("%d paid calls while adopting", n)
			}

			// The reconcile's one status write, then the record in the annotations.
			if err := tx.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
			if !s.recordDue {
				t.Fatal("the record is not due once the status is written")
			}
			if err := f.l.writeRecordIfDue(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			if err := sameWrites(f.Writes(), []string{"patch VideoRender/status tenant/restored", "patch VideoRender tenant/restored"}); err != nil {
				t.Error(err)
			}
			if got := f.get("restored").Annotations[videov1alpha1.AnnotationRequestDigest]; got != tgt.digest {
				t.Errorf("recorded request digest %q, want %q", got, tgt.digest)
			}
		})
	}
}
