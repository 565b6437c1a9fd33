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
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// Memo is the process's memory of submission attempts that the handler feeds: the job id a
// callback proved for an attempt, and the wake-ups callbacks caused (internal/controller's memo
// implements it).
type Memo interface {
	// RememberFromCallback records the job id a callback proved for attemptID.
	RememberFromCallback(attemptID, jobID string)
	// WakeFor records that a callback of attemptID, answered by this replica, said jobID ended;
	// obj is the object it woke.
	WakeFor(jobID, attemptID string, obj client.Object)
	// UntakenWakes returns the wake-ups of WakeFor that no reconcile has taken yet.
	UntakenWakes() []Wake
}

// Wake is a wake-up a callback caused and no reconcile has taken yet.
type Wake struct {
	JobID     string
	AttemptID string
	Object    client.Object
}

// HandlerOptions configure a Handler.
type HandlerOptions struct {
	Signer *Signer
	// Cache finds the objects a callback is about, through the IndexJobID and IndexAttemptID
	// field indexes.
	Cache client.Reader
	// Writer records callbacks on their objects (status.callback); nil records nothing.
	Writer client.Client
	// Reader reads an object from the API server, uncached, when the receipt's write was refused
	// because the cache was behind: the write is tried again on that read. nil: not tried again.
	Reader client.Reader
	// Elected is closed once this replica leads; nil means it always leads.
	Elected <-chan struct{}
	Memo    Memo
	// RateLimit and Burst bound the signed callbacks accepted per second, and, separately, the
	// answers to requests whose signature does not verify.
	RateLimit float64
	Burst     int
	// Observe counts each callback by result: accepted, rate_limited, unsigned, invalid.
	Observe func(result string)
	// Targets are the kinds whose objects a callback can wake.
	Targets []Target
}

// NewHandler returns a handler of the service's callbacks.
func NewHandler(o HandlerOptions) *Handler {
	observe := o.Observe
	if observe == nil {
		observe = func(string) {}
	}
	return &Handler{
		signer:   o.Signer,
		cache:    o.Cache,
		writer:   o.Writer,
		reader:   o.Reader,
		elected:  o.Elected,
		memo:     o.Memo,
		limiter:  rate.NewLimiter(rate.Limit(o.RateLimit), o.Burst),
		refusals: rate.NewLimiter(rate.Limit(o.RateLimit), o.Burst),
		observe:  observe,
		wake:     o.Targets,
	}
}

// Handler receives job results from the service. A result is never trusted for data: it
// only wakes the reconciler of the object it is about, which then reads the job from the
// service with the object's own key. For a submission whose job id was never recorded, the
// callback supplies the job id to adopt (the token proves which attempt it belongs to).
type Handler struct {
	signer *Signer
	cache  client.Reader
	// writer records a callback on its object when this replica does not lead (elected is not
	// closed): the status change wakes the leader's reconcile, whichever replica the service
	// reached.
	writer  client.Client
	reader  client.Reader
	elected <-chan struct{}
	memo    Memo
	// limiter bounds the signed callbacks accepted; refusals bounds the answers to requests
	// whose signature does not verify.
	limiter  *rate.Limiter
	refusals *rate.Limiter
	observe  func(result string)
	// draining is set when this replica's callback server shuts down: its controllers stop next,
	// and a wake-up queued now could be dropped with their queue, so callbacks answered from now
	// on are written down as for a replica that does not lead.
	draining atomic.Bool
	wake     []Target
}

// Target is one kind whose objects a callback can wake.
type Target struct {
	// List returns an empty list of the kind.
	List func() client.ObjectList
	// Ch is the channel the kind's controller watches for wake-ups.
	Ch chan event.GenericEvent
}

var _ http.Handler = (*Handler)(nil)

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// The signature is checked before any rate limit is spent, and refused requests have a budget
	// of their own: junk cannot make the service's genuine callback wait, and the service does not
	// retry a callback it could not deliver.
	attempt, ok := h.signer.Verify(strings.TrimPrefix(r.URL.Path, Path))
	if !ok || !strings.HasPrefix(r.URL.Path, Path) {
		h.observe("unsigned")
		if !h.refusals.Allow() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "too many requests", http.StatusTooManyRequests)
			return
		}
		http.NotFound(w, r)
		return
	}
	if !h.limiter.Allow() {
		h.observe("rate_limited")
		logf.FromContext(r.Context()).V(1).Info("Refused a signed callback over --callback-rate-limit; the job's fallback poll will read it",
			"attempt", attempt)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many requests", http.StatusTooManyRequests)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.observe("invalid")
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		h.observe("invalid")
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	job, err := apiclient.DecodeJob(body)
	if err != nil {
		h.observe("invalid")
		http.Error(w, "body is not a job result", http.StatusBadRequest)
		return
	}
	jobID := job.JobID
	if jobID == "" {
		jobID = job.ID
	}
	echoed, proof := echoedAttempt(job.WebhookInput)
	if echoed != "" && (echoed != attempt || !hmac.Equal([]byte(proof), []byte(h.signer.Proof(attempt)))) {
		h.observe("invalid")
		http.Error(w, "webhookInput does not match the URL", http.StatusBadRequest)
		return
	}
	adopt := jobID
	if echoed == "" {
		// The spec has a webhookInput of its own, sent as written: without the proof, the body
		// may wake objects, but not name a job to adopt.
		adopt = ""
	}
	h.observe("accepted")
	h.notify(r.Context(), attempt, jobID, adopt)
	// The same answer whether or not an object matches: a caller learns nothing about objects.
	w.WriteHeader(http.StatusAccepted)
}

// notify remembers the attempt's job id and wakes the objects the result is about.
// adopt is the job id the callback proved to be the attempt's, or "".
func (h *Handler) notify(ctx context.Context, attempt, jobID, adopt string) {
	log := logf.FromContext(ctx)
	if adopt != "" && len(adopt) <= 100 {
		h.memo.RememberFromCallback(attempt, adopt)
	}
	for _, t := range h.wake {
		// An object can match both indexes while the cache catches up: wake it once.
		seen := map[client.ObjectKey]bool{}
		for _, sel := range []client.MatchingFields{{IndexAttemptID: attempt}, {IndexJobID: jobID}} {
			if jobID == "" && sel[IndexJobID] == "" {
				continue
			}
			list := t.List()
			if err := h.cache.List(ctx, list, sel); err != nil {
				log.Error(err, "Listing objects for a callback")
				continue
			}
			for _, obj := range items(list) {
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
				running := adopt != "" && videov1alpha1.JobStatusOf(obj).JobID == adopt
				if inFlight || (running && !leads) {
					h.record(ctx, obj, attempt, adopt)
				}
				if !leads {
					continue
				}
				if jobID != "" && videov1alpha1.JobStatusOf(obj).JobID == jobID {
					// The job ended: its read goes before routine polls.
					h.memo.WakeFor(jobID, attempt, obj)
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
func (t Target) send(ctx context.Context, obj client.Object) bool {
	select {
	case t.Ch <- event.GenericEvent{Object: obj}:
		return true
	default:
	}
	timer := time.NewTimer(queueWait)
	defer timer.Stop()
	select {
	case t.Ch <- event.GenericEvent{Object: obj}:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// queueWait bounds how long a callback's answer waits for room in a full queue.
const queueWait = 5 * time.Second

// Drain is called when the callback server stops accepting callbacks, before the controllers
// stop: the callbacks still being answered are recorded on their objects, for the next leader,
// and so are those answered already whose wake-up no reconcile has taken yet (the controllers'
// queue is dropped when they stop; the service does not call again).
func (h *Handler) Drain(ctx context.Context) {
	h.draining.Store(true)
	for _, e := range h.memo.UntakenWakes() {
		jobID := e.JobID
		obj := e.Object.DeepCopyObject().(client.Object)
		if err := h.cache.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			continue
		}
		if videov1alpha1.JobStatusOf(obj).JobID == jobID && videov1alpha1.JobStatusOf(obj).CompletedAt == nil {
			h.record(ctx, obj, e.AttemptID, jobID)
		}
	}
}

// leads reports whether this replica's controllers run (it holds the lease, or there is none)
// and will still act on a wake-up.
func (h *Handler) leads() bool {
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

// record writes the callback into the object's status.callback, for the leader to act on. The
// service does not call again: a write refused because the cache was behind the API server is
// tried again on a fresh read, as long as the object still waits for this callback.
func (h *Handler) record(ctx context.Context, obj client.Object, attempt, jobID string) {
	if h.writer == nil || len(jobID) > 100 {
		return
	}
	for try := 0; ; try++ {
		st := videov1alpha1.JobStatusOf(obj)
		if st == nil {
			return
		}
		if rc := st.Callback; rc != nil && rc.AttemptID == attempt && rc.JobID == jobID {
			return // already written down: a replay costs no write
		}
		base := obj.DeepCopyObject().(client.Object)
		st.Callback = &videov1alpha1.CallbackReceipt{AttemptID: attempt, JobID: jobID, ReceivedAt: metav1.Now()}
		// Conditional on what was read: a receipt never replaces one written meanwhile.
		err := h.writer.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || h.reader == nil || try == recordTries-1 {
			logf.FromContext(ctx).Error(err, "Recording a callback for the leader", "object", client.ObjectKeyFromObject(obj))
			return
		}
		fresh := base.DeepCopyObject().(client.Object)
		if err := h.reader.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
			logf.FromContext(ctx).Error(err, "Recording a callback for the leader", "object", client.ObjectKeyFromObject(obj))
			return
		}
		fst := videov1alpha1.JobStatusOf(fresh)
		waits := attemptInFlight(fresh) == attempt || (fst != nil && fst.JobID == jobID && fst.CompletedAt == nil)
		if fst == nil || !waits {
			return // the leader settled it meanwhile: nothing waits for this callback
		}
		if rc := fst.Callback; rc != nil && (rc.AttemptID != attempt || rc.JobID != jobID) {
			return // a receipt written meanwhile, not yet acted on: never replaced
		}
		obj = fresh
	}
}

// recordTries bounds the writes of one receipt: a cache behind by a write or two.
const recordTries = 3

// attemptInFlight is the attempt id of the object's submission in flight, or "".
func attemptInFlight(obj client.Object) string {
	if st := videov1alpha1.JobStatusOf(obj); st != nil && st.Submission != nil {
		return st.Submission.AttemptID
	}
	return ""
}

// echoedAttempt returns the attempt id and proof the operator put in webhookInput, as echoed.
func echoedAttempt(raw json.RawMessage) (attempt, proof string) {
	var in map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &in) != nil {
		return "", ""
	}
	attempt, _ = in[AttemptKey].(string)
	proof, _ = in[ProofKey].(string)
	return attempt, proof
}

// Recorded passes the updates that record a callback in status.callback: a replica that
// does not lead received it, and the leader must act on it now.
func Recorded() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, after := videov1alpha1.JobStatusOf(e.ObjectOld), videov1alpha1.JobStatusOf(e.ObjectNew)
			return before != nil && after != nil && after.Callback != nil &&
				!equality.Semantic.DeepEqual(before.Callback, after.Callback)
		},
	}
}

// items returns the objects of a list.
func items(list client.ObjectList) []client.Object {
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil
	}
	out := make([]client.Object, 0, len(objs))
	for _, it := range objs {
		if o, ok := it.(client.Object); ok {
			out = append(out, o)
		}
	}
	return out
}
