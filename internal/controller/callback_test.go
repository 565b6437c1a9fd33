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
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// newTestCallbackHandler serves callbacks over a fake cache holding objs.
func newTestCallbackHandler(t *testing.T, limit rate.Limit, objs ...client.Object) (*CallbackHandler, chan event.GenericEvent) {
	t.Helper()
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&videov1alpha1.VideoRender{}).
		WithIndex(&videov1alpha1.VideoRender{}, indexJobID, func(o client.Object) []string {
			return []string{o.(*videov1alpha1.VideoRender).Status.JobID}
		}).
		WithIndex(&videov1alpha1.VideoRender{}, indexAttemptID, func(o client.Object) []string {
			if sub := o.(*videov1alpha1.VideoRender).Status.Submission; sub != nil {
				return []string{sub.AttemptID}
			}
			return nil
		}).Build()
	ch := make(chan event.GenericEvent, 10)
	return &CallbackHandler{
		callbacks: &callbacks{baseURL: "https://operator.example", key: []byte(strings.Repeat("s", 32))},
		cache:     c,
		memo:      newAttemptMemo(clocktesting.NewFakeClock(time.Now())),
		limiter:   rate.NewLimiter(limit, 1),
		refusals:  rate.NewLimiter(limit, 1),
		wake:      []wakeTarget{{list: func() client.ObjectList { return &videov1alpha1.VideoRenderList{} }, ch: ch}},
	}, ch
}

func TestCallbackHandler(t *testing.T) {
	inFlight := &videov1alpha1.VideoRender{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "interrupted"},
		Status: videov1alpha1.VideoRenderStatus{JobStatus: videov1alpha1.JobStatus{
			Submission: &videov1alpha1.Submission{Generation: 1, AttemptID: "attempt-1"}}},
	}
	running := &videov1alpha1.VideoRender{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "running"},
		Status:     videov1alpha1.VideoRenderStatus{JobStatus: videov1alpha1.JobStatus{JobID: "job-running"}},
	}
	signer := &callbacks{key: []byte(strings.Repeat("s", 32))}
	valid := CallbackPath + signer.token("attempt-1")
	other := CallbackPath + signer.token("attempt-unknown")

	tests := []struct {
		name       string
		method     string
		path       string
		body       string
		wantStatus int
		wantWoken  []string
		wantAdopt  string // job id remembered for attempt-1
	}{
		{name: "a result for an interrupted submission wakes it and supplies the job id to adopt",
			method: http.MethodPost, path: valid, body: `{"job_id":"job-new","success":true,"data":{"status":"completed"},"webhookInput":{"videoOperatorAttemptId":"attempt-1","videoOperatorProof":"` + signer.proof("attempt-1") + `"}}`,
			wantStatus: http.StatusAccepted, wantWoken: []string{"interrupted"}, wantAdopt: "job-new"},
		{name: "a replayed URL with a body that lacks the proof is refused",
			method: http.MethodPost, path: valid, body: `{"job_id":"job-forged","data":{"status":"completed"},"webhookInput":{"videoOperatorAttemptId":"attempt-1"}}`,
			wantStatus: http.StatusBadRequest},
		{name: "a proof of another attempt is refused",
			method: http.MethodPost, path: valid, body: `{"job_id":"job-forged","data":{"status":"completed"},"webhookInput":{"videoOperatorAttemptId":"attempt-1","videoOperatorProof":"` + signer.proof("attempt-2") + `"}}`,
			wantStatus: http.StatusBadRequest},
		{name: "a body without the operator's webhookInput wakes the attempt's object but names no job to adopt",
			method: http.MethodPost, path: valid, body: `{"job_id":"job-unproven","data":{"status":"completed"},"webhookInput":{"mine":1}}`,
			wantStatus: http.StatusAccepted, wantWoken: []string{"interrupted"}},
		{name: "a result for a recorded job wakes its object",
			method: http.MethodPost, path: other, body: `{"job_id":"job-running","data":{"status":"completed"}}`,
			wantStatus: http.StatusAccepted, wantWoken: []string{"running"}},
		{name: "a valid token about no object gets the same answer and wakes nothing",
			method: http.MethodPost, path: other, body: `{"job_id":"job-nobody","data":{"status":"completed"}}`,
			wantStatus: http.StatusAccepted},
		{name: "a forged signature is refused",
			method: http.MethodPost, path: CallbackPath + "attempt-1.AAAA", body: `{"job_id":"job-x"}`,
			wantStatus: http.StatusNotFound},
		{name: "a token without a signature is refused",
			method: http.MethodPost, path: CallbackPath + "attempt-1", body: `{"job_id":"job-x"}`,
			wantStatus: http.StatusNotFound},
		{name: "GET is not allowed",
			method: http.MethodGet, path: valid, wantStatus: http.StatusMethodNotAllowed},
		{name: "a body that is not a job result is refused",
			method: http.MethodPost, path: valid, body: `<html>nope</html>`, wantStatus: http.StatusBadRequest},
		{name: "an echoed attempt id that contradicts the URL is refused",
			method: http.MethodPost, path: valid, body: `{"job_id":"job-y","webhookInput":{"videoOperatorAttemptId":"attempt-2"}}`,
			wantStatus: http.StatusBadRequest},
		{name: "a body over the size limit is refused",
			method: http.MethodPost, path: valid, body: `{"job_id":"` + strings.Repeat("x", maxCallbackBody) + `"}`,
			wantStatus: http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, woken := newTestCallbackHandler(t, rate.Inf, inFlight.DeepCopy(), running.DeepCopy())
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), tt.method, tt.path, strings.NewReader(tt.body)))
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d (body %q)", rec.Code, tt.wantStatus, rec.Body.String())
			}
			var got []string
			for len(woken) > 0 {
				got = append(got, (<-woken).Object.GetName())
			}
			if strings.Join(got, ",") != strings.Join(tt.wantWoken, ",") {
				t.Errorf("woken = %v, want %v", got, tt.wantWoken)
			}
			jobID, ok := h.memo.lookup("attempt-1")
			if tt.wantAdopt != "" && (!ok || jobID != tt.wantAdopt) {
				t.Errorf("memo for attempt-1 = %q, %v; want %q", jobID, ok, tt.wantAdopt)
			}
			if tt.wantAdopt == "" && ok {
				t.Errorf("memo for attempt-1 = %q; want nothing", jobID)
			}
		})
	}
}

func TestCallbackHandlerRateLimit(t *testing.T) {
	h, _ := newTestCallbackHandler(t, rate.Every(time.Hour))
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	h.metrics = m
	path := CallbackPath + h.callbacks.token("a")
	codes := []int{}
	for range 3 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, strings.NewReader(`{"job_id":"j"}`)))
		codes = append(codes, rec.Code)
	}
	if codes[0] != http.StatusAccepted || codes[1] != http.StatusTooManyRequests || codes[2] != http.StatusTooManyRequests {
		t.Fatalf("codes = %v, want one 202 then 429s", codes)
	}
	// A refused signed callback is lost (the service does not retry): it must show in the metrics.
	if got := testutil.ToFloat64(m.callbacks.WithLabelValues("rate_limited")); got != 2 {
		t.Errorf("rate_limited callbacks = %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.callbacks.WithLabelValues("accepted")); got != 1 {
		t.Errorf("accepted callbacks = %v, want 1", got)
	}
}

func TestWithCallback(t *testing.T) {
	c := &callbacks{baseURL: "https://operator.example/", key: []byte(strings.Repeat("s", 32))}
	own := "https://hooks.example/mine"
	req := &videov1alpha1.StoryboardRequest{VideoName: "A", Webhook: &own}
	if got, injected := c.withCallback(req, "a1"); injected || got != req {
		t.Fatalf("a spec with its own webhook must be sent as written")
	}
	req = &videov1alpha1.StoryboardRequest{VideoName: "A"}
	got, injected := c.withCallback(req, "a1")
	if !injected || got.Webhook == nil || !strings.HasPrefix(*got.Webhook, "https://operator.example"+CallbackPath) {
		t.Fatalf("webhook = %v, injected %v", got.Webhook, injected)
	}
	if req.Webhook != nil || req.WebhookInput != nil {
		t.Fatalf("the spec itself was modified")
	}
	if attempt, ok := c.verify(strings.TrimPrefix(*got.Webhook, "https://operator.example"+CallbackPath)); !ok || attempt != "a1" {
		t.Fatalf("the callback URL does not verify: %q %v", attempt, ok)
	}
	if attempt, proof := echoedAttempt(got.WebhookInput.Raw); attempt != "a1" || proof != c.proof("a1") || strings.Contains(*got.Webhook, proof) {
		t.Fatalf("webhookInput = %s: want the attempt and its proof, the proof not in the URL %s", got.WebhookInput.Raw, *got.Webhook)
	}
	var nilCallbacks *callbacks
	if got, injected := nilCallbacks.withCallback(req, "a1"); injected || got != req {
		t.Fatalf("without callbacks the request is sent as written")
	}
}

// Issue 10, "Callback authentication": requests whose signature does not verify spend a budget
// of their own, so they cannot make the service's genuine callback get 429.
func TestCallbackJunkDoesNotStarveGenuineCallbacks(t *testing.T) {
	h, _ := newTestCallbackHandler(t, rate.Every(time.Hour))
	for range 20 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodPost, CallbackPath+"attempt-1.AAAA", strings.NewReader(`{}`)))
		if rec.Code != http.StatusNotFound && rec.Code != http.StatusTooManyRequests {
			t.Fatalf("junk answered %d", rec.Code)
		}
	}
	rec := httptest.NewRecorder()
	path := CallbackPath + h.callbacks.token("a")
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, strings.NewReader(`{"job_id":"j"}`)))
	if rec.Code != http.StatusAccepted {
		t.Fatalf("the genuine callback after a flood of junk got %d, want 202", rec.Code)
	}
}

// Issue 10, "Callback authentication": two callbacks naming different jobs for one attempt (a
// replayed URL with another body) contest it; neither is adopted.
func TestCallbackContestedAttemptIsNotAdopted(t *testing.T) {
	h, _ := newTestCallbackHandler(t, rate.Inf)
	path := CallbackPath + h.callbacks.token("attempt-1")
	proof := h.callbacks.proof("attempt-1")
	for _, job := range []string{"job-genuine", "job-forged"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodPost, path,
			strings.NewReader(`{"job_id":"`+job+`","data":{"status":"completed"},"webhookInput":{"videoOperatorAttemptId":"attempt-1","videoOperatorProof":"`+proof+`"}}`)))
		if rec.Code != http.StatusAccepted {
			t.Fatalf("callback answered %d", rec.Code)
		}
	}
	if job, ok := h.memo.lookup("attempt-1"); ok {
		t.Fatalf("a contested attempt was adopted as %q", job)
	}
	h.memo.remember("attempt-2", "job-own", true)
	h.memo.rememberFromCallback("attempt-2", "job-other")
	if job, ok := h.memo.lookup("attempt-2"); !ok || job != "job-own" {
		t.Fatalf("the job this process got from its own call must win: %q %v", job, ok)
	}
}

// Issue 10, "Callbacks reach a reconcile on any replica": a callback this replica answered while
// it led, whose wake-up no reconcile took before the replica began to stop, is written down on
// its object for the next leader; the service does not call again.
func TestCallbackDrainWritesDownUntakenWakeUps(t *testing.T) {
	running := &videov1alpha1.VideoRender{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "running"},
		Status:     videov1alpha1.VideoRenderStatus{JobStatus: videov1alpha1.JobStatus{JobID: "job-running"}},
	}
	taken := &videov1alpha1.VideoRender{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "taken"},
		Status:     videov1alpha1.VideoRenderStatus{JobStatus: videov1alpha1.JobStatus{JobID: "job-taken"}},
	}
	h, _ := newTestCallbackHandler(t, rate.Inf, running, taken)
	h.writer = h.cache.(client.Client)
	h.memo.wakeFor("job-running", "attempt-r", running.DeepCopy())
	h.memo.wakeFor("job-taken", "attempt-t", taken.DeepCopy())
	if !h.memo.takeWake("job-taken") {
		t.Fatal("the second wake-up was not recorded")
	}
	h.Drain(t.Context())
	if h.leads() {
		t.Error("a draining replica still takes itself for the leader")
	}
	var got videov1alpha1.VideoRender
	if err := h.cache.Get(t.Context(), client.ObjectKeyFromObject(running), &got); err != nil {
		t.Fatal(err)
	}
	if rc := got.Status.Callback; rc == nil || rc.JobID != "job-running" || rc.AttemptID != "attempt-r" {
		t.Errorf("untaken wake-up not written down: %+v", got.Status.Callback)
	}
	if err := h.cache.Get(t.Context(), client.ObjectKeyFromObject(taken), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Callback != nil {
		t.Errorf("a wake-up already taken was written down: %+v", got.Status.Callback)
	}
}
