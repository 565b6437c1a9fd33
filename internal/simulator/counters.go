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

package simulator

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"
)

// Counters is a snapshot of what the simulator has seen, for tests: for example "exactly one
// render was submitted for this webhookInput" proves that the operator never paid twice.
type Counters struct {
	// Calls counts every call per endpoint name (the Endpoint constants), including calls refused
	// with 401 or 400 and calls that got an injected fault.
	Calls map[string]int
	// SubmissionsByKey counts jobs created (200 answers of the three submit endpoints) per
	// KeyID of the API key.
	SubmissionsByKey map[string]int
	// SubmissionsByWebhookInput counts jobs created per webhookInput value, keyed by its canonical
	// JSON (keys sorted, no spaces). Requests without webhookInput are not counted here.
	SubmissionsByWebhookInput map[string]int
	// Faults counts injected faults per kind: latency, rate_limit, server_error, html, malformed,
	// truncated.
	Faults map[string]int
	// WebhooksDelivered, WebhooksFailed and WebhooksDropped count webhook outcomes: a 2xx answer;
	// an error or non-2xx answer; not sent by DropWebhookShare.
	WebhooksDelivered int
	WebhooksFailed    int
	WebhooksDropped   int
}

// Counters returns a snapshot.
func (s *Server) Counters() Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Counters{
		Calls:                     maps.Clone(s.calls),
		SubmissionsByKey:          maps.Clone(s.byKey),
		SubmissionsByWebhookInput: maps.Clone(s.byInput),
		Faults:                    maps.Clone(s.faultCounts),
		WebhooksDelivered:         s.webhookCounts["delivered"],
		WebhooksFailed:            s.webhookCounts["failed"],
		WebhooksDropped:           s.webhookCounts["dropped"],
	}
}

// Calls returns the number of calls to an endpoint (an Endpoint constant).
func (s *Server) Calls(endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[endpoint]
}

// Submissions returns the number of jobs created with apiKey.
func (s *Server) Submissions(apiKey string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byKey[KeyID(apiKey)]
}

// SubmissionsWithWebhookInput returns the number of jobs created whose webhookInput equals v
// (compared as JSON, so a map, a struct or raw JSON bytes all work).
func (s *Server) SubmissionsWithWebhookInput(v any) int {
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return 0
		}
	}
	key := canonicalJSON(raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byInput[key]
}

// SubmissionsWithWebhookInputField returns the number of jobs created whose webhookInput object
// has field set to value (compared as JSON): for example the operator's attempt id.
func (s *Server) SubmissionsWithWebhookInputField(field string, value any) int {
	want, err := json.Marshal(value)
	if err != nil {
		return 0
	}
	wantKey := canonicalJSON(want)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, j := range s.jobs {
		var obj map[string]json.RawMessage
		if json.Unmarshal(j.webhookInput, &obj) == nil {
			if got, ok := obj[field]; ok && canonicalJSON(got) == wantKey {
				n++
			}
		}
	}
	return n
}

// canonicalJSON re-encodes JSON with sorted keys and no spaces; invalid JSON is kept as is.
func canonicalJSON(raw []byte) string {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// JobInfo describes a job for tests.
type JobInfo struct {
	ID string
	// Kind is "preview", "render" or "project_render".
	Kind string
	// Endpoint is the endpoint that created it.
	Endpoint  string
	KeyID     string
	ProjectID string
	CreatedAt time.Time
	EndsAt    time.Time
	// Status is the job's data.status now.
	Status    string
	ErrorCode string
	// Request is the submitted body, nil for a project render.
	Request      json.RawMessage
	Webhook      string
	WebhookInput json.RawMessage
	WebhookSent  bool
	// ClearanceCode is the latest code issued, and ClearanceCodesIssued how many were.
	ClearanceCode        string
	ClearanceCodesIssued int
}

func (s *Server) infoLocked(j *job, now time.Time) JobInfo {
	info := JobInfo{
		ID: j.id, Kind: j.kind.String(), Endpoint: j.endpoint, KeyID: j.keyID, ProjectID: j.projectID,
		CreatedAt: j.created, EndsAt: j.ends, Status: j.status(now), Request: j.request,
		Webhook: j.webhook, WebhookInput: j.webhookInput, WebhookSent: j.webhookSent,
		ClearanceCode: j.clearanceCode, ClearanceCodesIssued: j.clearanceIssued,
	}
	if j.failure != nil {
		info.ErrorCode = j.failure.code
	}
	return info
}

// Jobs lists every job in creation order.
func (s *Server) Jobs() []JobInfo {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]JobInfo, 0, len(s.jobOrder))
	for _, id := range s.jobOrder {
		out = append(out, s.infoLocked(s.jobs[id], now))
	}
	return out
}

// RenderRequests returns the body of every accepted POST /v2/video/storyboard/render, in the
// order the jobs were created: what each paid render asked for, as the service received it.
func (s *Server) RenderRequests() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []json.RawMessage
	for _, id := range s.jobOrder {
		if j := s.jobs[id]; j.kind == kindRender {
			out = append(out, append(json.RawMessage(nil), j.request...))
		}
	}
	return out
}

// Job describes one job.
func (s *Server) Job(id string) (JobInfo, bool) {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return JobInfo{}, false
	}
	return s.infoLocked(j, now), true
}

// AddedVoices lists the premium-provider voice ids added to the voice library on first use.
func (s *Server) AddedVoices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.addedVoices))
}
