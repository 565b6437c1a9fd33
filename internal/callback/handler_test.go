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
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// newTestCallbackHandler serves callbacks over a fake cache holding objs.
func newTestCallbackHandler(t *testing.T, limit rate.Limit, objs ...client.Object) (*Handler, chan event.GenericEvent) {
	t.Helper()
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&videov1alpha1.VideoRender{}).
		WithIndex(&videov1alpha1.VideoRender{}, IndexJobID, func(o client.Object) []string {
			return []string{o.(*videov1alpha1.VideoRender).Status.JobID}
		}).
		WithIndex(&videov1alpha1.VideoRender{}, IndexAttemptID, func(o client.Object) []string {
			if sub := o.(*videov1alpha1.VideoRender).Status.Submission; sub != nil {
				return []string{sub.AttemptID}
			}
			return nil
		}).Build()
	ch := make(chan event.GenericEvent, 10)
	h := NewHandler(HandlerOptions{
		Signer:    NewSigner("https://operator.example", []byte(strings.Repeat("s", 32))),
		Cache:     c,
		Memo:      newFakeMemo(),
		RateLimit: float64(limit),
		Burst:     1,
		Targets:   []Target{{List: func() client.ObjectList { return &videov1alpha1.VideoRenderList{} }, Ch: ch}},
	})
	return h, ch
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
	signer := NewSigner("", []byte(strings.Repeat("s", 32)))
	valid := Path + signer.Token("attempt-1")
	other := Path + signer.Token("attempt-unknown")

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
			method: http.MethodPost, path: valid, body: `{"job_id":"job-new","success":true,"data":{"status":"completed"},"webhookInput":{"videoOperatorAttemptId":"attempt-1","videoOperatorProof":"` + signer.Proof("attempt-1") + `"}}`,
			wantStatus: http.StatusAccepted, wantWoken: []string{"interrupted"}, wantAdopt: "job-new"},
		{name: "a replayed URL with a body that lacks the proof is refused",
			method: http.MethodPost, path: valid, body: `{"job_id":"job-forged","data":{"status":"completed"},"webhookInput":{"videoOperatorAttemptId":"attempt-1"}}`,
			wantStatus: http.StatusBadRequest},
		{name: "a proof of another attempt is refused",
			method: http.MethodPost, path: valid, body: `{"job_id":"job-forged","data":{"status":"completed"},"webhookInput":{"videoOperatorAttemptId":"attempt-1","videoOperatorProof":"` + signer.Proof("attempt-2") + `"}}`,
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
			method: http.MethodPost, path: Path + "attempt-1.AAAA", body: `{"job_id":"job-x"}`,
			wantStatus: http.StatusNotFound},
		{name: "a token without a signature is refused",
			method: http.MethodPost, path: Path + "attempt-1", body: `{"job_id":"job-x"}`,
			wantStatus: http.StatusNotFound},
		{name: "GET is not allowed",
			method: http.MethodGet, path: valid, wantStatus: http.StatusMethodNotAllowed},
		{name: "a body that is not a job result is refused",
			method: http.MethodPost, path: valid, body: `<html>nope</html>`, wantStatus: http.StatusBadRequest},
		{name: "an echoed attempt id that contradicts the URL is refused",
			method: http.MethodPost, path: valid, body: `{"job_id":"job-y","webhookInput":{"videoOperatorAttemptId":"attempt-2"}}`,
			wantStatus: http.StatusBadRequest},
		{name: "a body over the size limit is refused",
			method: http.MethodPost, path: valid, body: `{"job_id":"` + strings.Repeat("x", maxBody) + `"}`,
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
			jobID, ok := h.memo.(*fakeMemo).adopted["attempt-1"]
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
	counts := map[string]int{}
	h.observe = func(result string) { counts[result]++ }
	path := Path + h.signer.Token("a")
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
	if got := counts["rate_limited"]; got != 2 {
		t.Errorf("rate_limited callbacks = %v, want 2", got)
	}
	if got := counts["accepted"]; got != 1 {
		t.Errorf("accepted callbacks = %v, want 1", got)
	}
}

func TestWithCallback(t *testing.T) {
	c := NewSigner("https://operator.example/", []byte(strings.Repeat("s", 32)))
	own := "https://hooks.example/mine"
	req := &videov1alpha1.StoryboardRequest{VideoName: "A", Webhook: &own}
	if got, injected := c.WithCallback(req, "a1"); injected || got != req {
		t.Fatalf("a spec with its own webhook must be sent as written")
	}
	req = &videov1alpha1.StoryboardRequest{VideoName: "A"}
	got, injected := c.WithCallback(req, "a1")
	if !injected || got.Webhook == nil || !strings.HasPrefix(*got.Webhook, "https://operator.example"+Path) {
		t.Fatalf("webhook = %v, injected %v", got.Webhook, injected)
	}
	if req.Webhook != nil || req.WebhookInput != nil {
		t.Fatalf("the spec itself was modified")
	}
	if attempt, ok := c.Verify(strings.TrimPrefix(*got.Webhook, "https://operator.example"+Path)); !ok || attempt != "a1" {
		t.Fatalf("the callback URL does not verify: %q %v", attempt, ok)
	}
	if attempt, proof := echoedAttempt(got.WebhookInput.Raw); attempt != "a1" || proof != c.Proof("a1") || strings.Contains(*got.Webhook, proof) {
		t.Fatalf("webhookInput = %s: want the attempt and its proof, the proof not in the URL %s", got.WebhookInput.Raw, *got.Webhook)
	}
	var nilCallbacks *Signer
	if got, injected := nilCallbacks.WithCallback(req, "a1"); injected || got != req {
		t.Fatalf("without callbacks the request is sent as written")
	}
}

// Issue 10, "Callback authentication": requests whose signature does not verify spend a budget
// of their own, so they cannot make the service's genuine callback get 429.
func TestCallbackJunkDoesNotStarveGenuineCallbacks(t *testing.T) {
	h, _ := newTestCallbackHandler(t, rate.Every(time.Hour))
	for range 20 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodPost, Path+"attempt-1.AAAA", strings.NewReader(`{}`)))
		if rec.Code != http.StatusNotFound && rec.Code != http.StatusTooManyRequests {
			t.Fatalf("junk answered %d", rec.Code)
		}
	}
	rec := httptest.NewRecorder()
	path := Path + h.signer.Token("a")
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, strings.NewReader(`{"job_id":"j"}`)))
	if rec.Code != http.StatusAccepted {
		t.Fatalf("the genuine callback after a flood of junk got %d, want 202", rec.Code)
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
	h.memo.WakeFor("job-running", "attempt-r", running.DeepCopy())
	h.memo.WakeFor("job-taken", "attempt-t", taken.DeepCopy())
	if !h.memo.(*fakeMemo).take("job-taken") {
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

// fakeMemo is the handler's view of the process's memory of attempts; internal/controller's
// memo has its own tests (contested attempts, expiry).
type fakeMemo struct {
	adopted map[string]string
	wakes   map[string]Wake
}

func newFakeMemo() *fakeMemo {
	return &fakeMemo{adopted: map[string]string{}, wakes: map[string]Wake{}}
}

func (m *fakeMemo) RememberFromCallback(attemptID, jobID string) { m.adopted[attemptID] = jobID }

func (m *fakeMemo) WakeFor(jobID, attemptID string, obj client.Object) {
	m.wakes[jobID] = Wake{JobID: jobID, AttemptID: attemptID, Object: obj}
}

func (m *fakeMemo) UntakenWakes() []Wake {
	out := make([]Wake, 0, len(m.wakes))
	for _, w := range m.wakes {
		out = append(out, w)
	}
	return out
}

// take is a reconcile taking the wake-up of jobID.
func (m *fakeMemo) take(jobID string) bool {
	_, ok := m.wakes[jobID]
	delete(m.wakes, jobID)
	return ok
}
