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
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// withRecord is a render whose status holds job j1 of request d1 and whose annotations are ann.
func withRecord(ann map[string]string, jobID, digest string, completed bool) *videov1alpha1.VideoRender {
	vr := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Annotations: ann, Generation: 1}}
	vr.Status.JobID, vr.Status.RequestDigest = jobID, digest
	if completed {
		vr.Status.CompletedAt = &metav1.Time{}
	}
	return vr
}

// docs/architecture.md "The record travels with the object": which annotation records are adopted.
func TestAdoptable(t *testing.T) {
	rec := func(job, digest string) map[string]string {
		return map[string]string{videov1alpha1.AnnotationJobID: job, videov1alpha1.AnnotationRequestDigest: digest}
	}
	refused := withRecord(rec("j0", "d0"), "", "d1", true)
	refused.Status.Failure = &videov1alpha1.JobFailure{Code: "INVALID_REQUEST_BODY"}
	proved := withRecord(rec("j9", ""), "", "d1", true)
	proved.Status.Failure = &videov1alpha1.JobFailure{Code: codeEarlierSubmissionRendering}
	provedOld := withRecord(rec("j0", "d0"), "", "d1", true)
	provedOld.Status.Failure = &videov1alpha1.JobFailure{Code: codeEarlierSubmissionRendering}
	confirmed := withRecord(map[string]string{videov1alpha1.AnnotationJobID: "j1", videov1alpha1.AnnotationConfirmResubmit: "j1"}, "", "", false)
	inFlight := withRecord(rec("j1", "d1"), "", "", false)
	inFlight.Status.Submission = &videov1alpha1.Submission{AttemptID: "a"}
	tests := []struct {
		name    string
		obj     *videov1alpha1.VideoRender
		current string
		want    bool
	}{
		{"no record", withRecord(nil, "", "", false), "d1", false},
		{"restored without status", withRecord(rec("j1", "d1"), "", "", false), "d1", true},
		{"restored without status, a spec edited since", withRecord(rec("j1", "d0"), "", "", false), "d1", true},
		{"written by hand, job id only", withRecord(rec("j1", ""), "", "", false), "d1", true},
		{"status already has that job", withRecord(rec("j1", "d1"), "j1", "d1", true), "d1", false},
		{"status has the current job, the annotations an older one (not yet rewritten)", withRecord(rec("j0", "d0"), "j1", "d1", true), "d1", false},
		{"status from an older job, the annotations the current request's", withRecord(rec("j1", "d1"), "j0", "d0", true), "d1", true},
		{"status from an older job still running", withRecord(rec("j1", "d1"), "j0", "d0", false), "d1", false},
		{"a refusal after an older job", refused, "d1", false},
		{"a 409 proved an earlier job, a human names it", proved, "d1", true},
		{"a 409 proved an earlier job, the record is of an older request", provedOld, "d1", false},
		{"a new job confirmed instead", confirmed, "d1", false},
		{"a submission in flight", inFlight, "d1", false},
		// docs/architecture.md "Records that outlive a version": v1-d1 is the current request's digest in
		// version 1, which a record without a version holds.
		{"status from an older job, the annotations the current request's in digest version 1", withRecord(rec("j1", "v1-d1"), "j0", "d0", true), "d1", true},
		{"status has the current job recorded in digest version 1", withRecord(rec("j0", "d0"), "j1", "v1-d1", true), "d1", false},
		{"status from an older job, the annotations a version 1 value said to be of version 2",
			withRecord(with(rec("j1", "v1-d1"), videov1alpha1.AnnotationRequestDigestVersion, "2"), "j0", "d0", true), "d1", false},
	}
	l := &lifecycle[*videov1alpha1.VideoRender]{adapter: renderAdapter{}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			current := &target{digest: tt.current, digestV1: "v1-" + tt.current}
			if got := l.adoptable(tt.obj, recordOf(tt.obj), current); got != tt.want {
				t.Errorf("adoptable = %v, want %v", got, tt.want)
			}
		})
	}
}

// The controller's own write of the record does not wake the reconciler; any other change of the
// annotations does.
func TestAnnotationsChanged(t *testing.T) {
	full := map[string]string{videov1alpha1.AnnotationJobID: "j1", videov1alpha1.AnnotationRequestDigest: "d1",
		videov1alpha1.AnnotationKeyFingerprint: "k1", "team": "a"}
	status := func(vr *videov1alpha1.VideoRender) *videov1alpha1.VideoRender {
		vr.Status.JobID, vr.Status.RequestDigest, vr.Status.KeyFingerprint = "j1", "d1", "k1"
		return vr
	}
	tests := []struct {
		name          string
		before, after map[string]string
		want          bool
	}{
		{"unchanged", full, full, false},
		{"the record written from status", map[string]string{"team": "a"}, full, false},
		{"the record and another annotation", map[string]string{}, full, true},
		{"a retry", full, with(maps.Clone(full), videov1alpha1.AnnotationRetry, "r1"), true},
		{"a record that is not status's", map[string]string{"team": "a"}, with(maps.Clone(full), videov1alpha1.AnnotationJobID, "j2"), true},
	}
	p := annotationsChanged()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := status(&videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Annotations: tt.before}})
			cur := status(&videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Annotations: tt.after}})
			if got := p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: cur}); got != tt.want {
				t.Errorf("passes = %v, want %v", got, tt.want)
			}
		})
	}
}
