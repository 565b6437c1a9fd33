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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// Indexes the callback handler uses to find the object a job result is about.
const (
	indexJobID     = ".status.jobId"
	indexAttemptID = ".status.submission.attemptId"
)

// CallbackPath is where the callback server receives job results: CallbackPath + token.
const CallbackPath = "/callbacks/"

// callbackAttemptKey is the key of webhookInput under which the operator sends the attempt id,
// when the spec sets no webhookInput of its own; the service echoes it in the callback.
const callbackAttemptKey = "videoOperatorAttemptId"

// callbackProofKey is the key of webhookInput under which the operator sends a second HMAC of
// the attempt id. It travels only in the request and the callback bodies, never in the URL, so
// whoever learned a callback URL (from a proxy's log, say) still cannot forge a callback body
// that names a job.
const callbackProofKey = "videoOperatorProof"

// maxCallbackBody bounds a callback's body: a job result is a few kilobytes.
const maxCallbackBody = 1 << 20

// callbacks signs and checks callback URLs. A URL carries the submission's attempt id and an
// HMAC of it, so only the service, which received the URL, can call it, no object name appears
// in it, and it stays valid across restarts as long as the key does.
type callbacks struct {
	baseURL string // public URL of the callback server, without CallbackPath
	key     []byte
}

// url returns the callback URL for one submission.
func (c *callbacks) url(attemptID string) string {
	return strings.TrimRight(c.baseURL, "/") + CallbackPath + c.token(attemptID)
}

func (c *callbacks) token(attemptID string) string {
	return attemptID + "." + base64.RawURLEncoding.EncodeToString(c.mac(attemptID))
}

func (c *callbacks) mac(attemptID string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("video-operator callback\x00" + attemptID))
	return m.Sum(nil)
}

// proof is the body-only secret of an attempt (see callbackProofKey).
func (c *callbacks) proof(attemptID string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("video-operator callback proof\x00" + attemptID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// keyID fingerprints the signing key for status.callbackKeyId: an HMAC of a fixed label, so that
// the key itself cannot be recovered from it. Empty when callbacks are off.
func (c *callbacks) keyID() string {
	if c == nil {
		return ""
	}
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("video-operator callback key id"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// recognises reports whether a job whose request was signed with the key of id will have its
// callback recognised by this process: callbacks are on and the key is the same.
func (c *callbacks) recognises(id string) bool {
	return c != nil && id != "" && id == c.keyID()
}

// verify returns the attempt id of a valid token.
func (c *callbacks) verify(token string) (string, bool) {
	attempt, sig, ok := strings.Cut(token, ".")
	if !ok || attempt == "" || len(attempt) > 64 {
		return "", false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return "", false
	}
	return attempt, hmac.Equal(got, c.mac(attempt))
}

// withCallback returns the request to send: the spec's own when it names a webhook, and otherwise
// a copy carrying the operator's callback URL and, when the spec has no webhookInput, the
// attempt id. Nothing else is added to what the user wrote.
func (c *callbacks) withCallback(req *videov1alpha1.StoryboardRequest, attemptID string) (*videov1alpha1.StoryboardRequest, bool) {
	if c == nil || req == nil || req.Webhook != nil {
		return req, false
	}
	out := req.DeepCopy()
	u := c.url(attemptID)
	out.Webhook = &u
	if out.WebhookInput == nil {
		raw, _ := json.Marshal(map[string]string{callbackAttemptKey: attemptID, callbackProofKey: c.proof(attemptID)})
		out.WebhookInput = &apiextensionsv1.JSON{Raw: raw}
	}
	return out, true
}

// CallbackHandler receives job results from the service. A result is never trusted for data: it
// only wakes the reconciler of the object it is about, which then reads the job from the
// service with the object's own key. For a submission whose job id was never recorded, the
// callback supplies the job id to adopt (the token proves which attempt it belongs to).
type CallbackHandler struct {
	callbacks *callbacks
	cache     client.Reader
	// writer records a callback on its object when this replica does not lead (elected is not
	// closed): the status change wakes the leader's reconcile, whichever replica the service
	// reached.
	writer  client.Client
	elected <-chan struct{}
	memo    *attemptMemo
	// limiter bounds the signed callbacks accepted; refusals bounds the answers to requests
	// whose signature does not verify.
	limiter  *rate.Limiter
	refusals *rate.Limiter
	metrics  *Metrics
	// draining is set when this replica's callback server shuts down: its controllers stop next,
	// and a wake-up queued now could be dropped with their queue, so callbacks answered from now
	// on are written down as for a replica that does not lead.
	draining atomic.Bool
	wake     []wakeTarget
}

// wakeTarget is one kind whose objects a callback can wake.
type wakeTarget struct {
	list func() client.ObjectList
	ch   chan event.GenericEvent
}

var _ http.Handler = (*CallbackHandler)(nil)

func (h *CallbackHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// The signature is checked before any rate limit is spent, and refused requests have a budget
	// of their own: junk cannot make the service's genuine callback wait, and the service does not
	// retry a callback it could not deliver.
	attempt, ok := h.callbacks.verify(strings.TrimPrefix(r.URL.Path, CallbackPath))
	if !ok || !strings.HasPrefix(r.URL.Path, CallbackPath) {
		h.metrics.callback("unsigned")
		if !h.refusals.Allow() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "too many requests", http.StatusTooManyRequests)
			return
		}
		http.NotFound(w, r)
		return
	}
	if !h.limiter.Allow() {
		h.metrics.callback("rate_limited")
		logf.FromContext(r.Context()).V(1).Info("Refused a signed callback over --callback-rate-limit; the job's fallback poll will read it",
			"attempt", attempt)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many requests", http.StatusTooManyRequests)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxCallbackBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.metrics.callback("invalid")
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		h.metrics.callback("invalid")
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	job, err := apiclient.DecodeJob(body)
	if err != nil {
		h.metrics.callback("invalid")
		http.Error(w, "body is not a job result", http.StatusBadRequest)
		return
	}
	jobID := job.JobID
	if jobID == "" {
		jobID = job.ID
	}
	echoed, proof := echoedAttempt(job.WebhookInput)
	if echoed != "" && (echoed != attempt || !hmac.Equal([]byte(proof), []byte(h.callbacks.proof(attempt)))) {
		h.metrics.callback("invalid")
		http.Error(w, "webhookInput does not match the URL", http.StatusBadRequest)
		return
	}
	adopt := jobID
	if echoed == "" {
		// The spec has a webhookInput of its own, sent as written: without the proof, the body
		// may wake objects, but not name a job to adopt.
		adopt = ""
	}
	h.metrics.callback("accepted")
	h.notify(r.Context(), attempt, jobID, adopt)
	// The same answer whether or not an object matches: a caller learns nothing about objects.
	w.WriteHeader(http.StatusAccepted)
}

// notify remembers the attempt's job id and wakes the objects the result is about.
// adopt is the job id the callback proved to be the attempt's, or "".
func (h *CallbackHandler) notify(ctx context.Context, attempt, jobID, adopt string) {
	log := logf.FromContext(ctx)
	if adopt != "" && len(adopt) <= 100 {
		h.memo.rememberFromCallback(attempt, adopt)
	}
	for _, t := range h.wake {
		// An object can match both indexes while the cache catches up: wake it once.
		seen := map[client.ObjectKey]bool{}
		for _, sel := range []client.MatchingFields{{indexAttemptID: attempt}, {indexJobID: jobID}} {
			if jobID == "" && sel[indexJobID] == "" {
				continue
			}
			list := t.list()
			if err := h.cache.List(ctx, list, sel); err != nil {
				log.Error(err, "Listing objects for a callback")
				continue
			}
			for _, obj := range itemsOf(list) {
				if seen[client.ObjectKeyFromObject(obj)] {
					continue
				}
				seen[client.ObjectKeyFromObject(obj)] = true
				// Only a callback that proved its job (the proof in webhookInput) is written
				// down, once: on every replica, the leader included, for the attempt in flight,
				// so that its adoption survives a hand-over; by a replica that does not lead, for
				// the object running that job, to wake the leader.
				leads := h.leads()
				inFlight := adopt != "" && attemptInFlight(obj) == attempt
				running := adopt != "" && jobStatusOf(obj).JobID == adopt
				if inFlight || (running && !leads) {
					h.record(ctx, obj, attempt, adopt)
				}
				if !leads {
					continue
				}
				if jobID != "" && jobStatusOf(obj).JobID == jobID {
					// The job ended: its read goes before routine polls.
					h.memo.wakeFor(jobID, attempt, obj)
				}
				if !t.send(ctx, obj) {
					log.Info("Callback queue full; the job's fallback poll will read it", "object", client.ObjectKeyFromObject(obj))
				}
			}
		}
	}
}

// send hands obj to the controller, waiting a little when its queue is full (a burst of
// callbacks): a callback that is dropped is only seen at the job's fallback poll, minutes later.
func (t wakeTarget) send(ctx context.Context, obj client.Object) bool {
	select {
	case t.ch <- event.GenericEvent{Object: obj}:
		return true
	default:
	}
	timer := time.NewTimer(callbackQueueWait)
	defer timer.Stop()
	select {
	case t.ch <- event.GenericEvent{Object: obj}:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// callbackQueueWait bounds how long a callback's answer waits for room in a full queue.
const callbackQueueWait = 5 * time.Second

// Drain is called when the callback server stops accepting callbacks, before the controllers
// stop: the callbacks still being answered are recorded on their objects, for the next leader,
// and so are those answered already whose wake-up no reconcile has taken yet (the controllers'
// queue is dropped when they stop; the service does not call again).
func (h *CallbackHandler) Drain(ctx context.Context) {
	h.draining.Store(true)
	for jobID, e := range h.memo.untakenWakes() {
		obj := e.obj.DeepCopyObject().(client.Object)
		if err := h.cache.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			continue
		}
		if jobStatusOf(obj).JobID == jobID && jobStatusOf(obj).CompletedAt == nil {
			h.record(ctx, obj, e.attempt, jobID)
		}
	}
}

// leads reports whether this replica's controllers run (it holds the lease, or there is none)
// and will still act on a wake-up.
func (h *CallbackHandler) leads() bool {
	if h.draining.Load() {
		return false
	}
	if h.elected == nil {
		return true
	}
	select {
	case <-h.elected:
		return true
	default:
		return false
	}
}

// record writes the callback into the object's status.callback, for the leader to act on.
func (h *CallbackHandler) record(ctx context.Context, obj client.Object, attempt, jobID string) {
	st := jobStatusOf(obj)
	if st == nil || h.writer == nil || len(jobID) > 100 {
		return
	}
	if rc := st.Callback; rc != nil && rc.AttemptID == attempt && rc.JobID == jobID {
		return // already written down: a replay costs no write
	}
	base := obj.DeepCopyObject().(client.Object)
	st.Callback = &videov1alpha1.CallbackReceipt{AttemptID: attempt, JobID: jobID, ReceivedAt: metav1.Now()}
	// Conditional on what was read: a receipt never replaces one written meanwhile.
	if err := h.writer.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		logf.FromContext(ctx).Error(err, "Recording a callback for the leader", "object", client.ObjectKeyFromObject(obj))
	}
}

// attemptInFlight is the attempt id of the object's submission in flight, or "".
func attemptInFlight(obj client.Object) string {
	if st := jobStatusOf(obj); st != nil && st.Submission != nil {
		return st.Submission.AttemptID
	}
	return ""
}

// jobStatusOf returns the shared status of either kind.
func jobStatusOf(obj client.Object) *videov1alpha1.JobStatus {
	switch v := obj.(type) {
	case *videov1alpha1.VideoStoryboard:
		return &v.Status.JobStatus
	case *videov1alpha1.VideoRender:
		return &v.Status.JobStatus
	}
	return nil
}

// echoedAttempt returns the attempt id and proof the operator put in webhookInput, as echoed.
func echoedAttempt(raw json.RawMessage) (attempt, proof string) {
	var in map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &in) != nil {
		return "", ""
	}
	attempt, _ = in[callbackAttemptKey].(string)
	proof, _ = in[callbackProofKey].(string)
	return attempt, proof
}

// CallbackOptions configure the callback server.
type CallbackOptions struct {
	// PublicURL is the URL at which the service reaches the callback server, without the path.
	PublicURL string
	// Key signs callback URLs. Keep it stable across restarts (a Secret), so that a callback for
	// a submission interrupted by a restart is still recognised.
	Key []byte
	// RateLimit and Burst bound the callbacks accepted per second.
	RateLimit float64
	Burst     int
	// PollInterval replaces the 10-30 s polling of jobs that will call back: polling remains
	// only as the fallback for lost callbacks.
	PollInterval time.Duration
	// Elected is closed once this replica leads (the manager's Elected()). The callback server
	// runs on every replica; one that does not lead records each callback on its object, which
	// wakes the leader. Nil means this replica always leads.
	Elected <-chan struct{}
}

// DefaultCallbackPollInterval is the fallback polling interval of jobs that will call back.
const DefaultCallbackPollInterval = 5 * time.Minute

func (o *CallbackOptions) validate() error {
	if o.PublicURL == "" {
		return errors.New("callback options: PublicURL is required")
	}
	if len(o.Key) < 32 {
		return fmt.Errorf("callback options: the signing key must be at least 32 bytes, got %d", len(o.Key))
	}
	if o.RateLimit <= 0 {
		o.RateLimit = 100
	}
	if o.Burst <= 0 {
		o.Burst = 200
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultCallbackPollInterval
	}
	return nil
}

// callbackRecorded passes the updates that record a callback in status.callback: a replica that
// does not lead received it, and the leader must act on it now.
func callbackRecorded() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, after := jobStatusOf(e.ObjectOld), jobStatusOf(e.ObjectNew)
			return before != nil && after != nil && after.Callback != nil &&
				!equality.Semantic.DeepEqual(before.Callback, after.Callback)
		},
	}
}
