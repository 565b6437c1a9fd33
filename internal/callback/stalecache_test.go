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

package callback

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// A replica that does not lead answers a callback for a running job from a cache one write behind
// the API server (the leader wrote the job's record into the annotations right after its job
// id): the receipt it writes down for the leader must still land, or no reconcile ever hears of
// the callback (the service does not call again) and the job waits for its fallback poll.
func TestCallbackOnAStandbyWithACacheBehindIsWrittenDown(t *testing.T) {
	running := &videov1alpha1.VideoRender{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "running"},
		Status:     videov1alpha1.VideoRenderStatus{JobStatus: videov1alpha1.JobStatus{JobID: "job-running"}},
	}
	h, _ := newTestCallbackHandler(t, rate.Inf, running.DeepCopy())
	h.elected = make(chan struct{}) // a standby: never elected
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	server := fake.NewClientBuilder().WithScheme(s).WithObjects(running.DeepCopy()).WithStatusSubresource(&videov1alpha1.VideoRender{}).Build()
	h.writer, h.reader = server, server
	// The leader's record write, which this replica's cache has not seen yet.
	var latest videov1alpha1.VideoRender
	if err := server.Get(t.Context(), client.ObjectKeyFromObject(running), &latest); err != nil {
		t.Fatal(err)
	}
	latest.Annotations = map[string]string{videov1alpha1.AnnotationJobID: "job-running"}
	if err := server.Update(t.Context(), &latest); err != nil {
		t.Fatal(err)
	}

	signer := NewSigner("", []byte(strings.Repeat("s", 32)))
	body := `{"job_id":"job-running","success":true,"data":{"status":"completed"},"webhookInput":{"videoOperatorAttemptId":"attempt-r","videoOperatorProof":"` + signer.Proof("attempt-r") + `"}}`
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodPost, Path+signer.Token("attempt-r"), strings.NewReader(body)))
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status = %d", rec.Code)
	}
	if err := server.Get(t.Context(), client.ObjectKeyFromObject(running), &latest); err != nil {
		t.Fatal(err)
	}
	if rc := latest.Status.Callback; rc == nil || rc.JobID != "job-running" {
		t.Errorf("the callback was answered 202 but written down nowhere (status.callback %+v): the leader is never woken", rc)
	}
}
