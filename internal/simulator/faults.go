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
	"math"
	"net/http"
	"strconv"
	"time"
)

// Faults are failures injected into the API endpoints, each a share of calls between 0 and 1,
// drawn from the seeded random source for every call. Latency applies before authentication; the
// other faults only to authenticated calls. 429, 500 and HTML answers replace the endpoint's work
// (no job is created),
// while malformed and truncated bodies corrupt the answer of work that was done (a submission
// did create its job: the outcome the client sees is ambiguous, as after a real network failure).
type Faults struct {
	// RateLimitShare of calls get 429 with a Retry-After header.
	RateLimitShare float64
	// RetryAfter is the Retry-After sent with a 429, rounded up to whole seconds. Zero means 1 s.
	RetryAfter time.Duration
	// ServerErrorShare of calls get 500 {"error": {"code": "INTERNAL_ERROR", "message": ...}}.
	ServerErrorShare float64
	// HTMLShare of calls get 502 with an HTML page, as from a proxy in front of the service.
	HTMLShare float64
	// MalformedShare of calls get their real status with a body that is not valid JSON.
	MalformedShare float64
	// TruncatedShare of calls get their real status and only half of the body, after which the
	// connection is closed.
	TruncatedShare float64
	// Latency is added to LatencyShare of calls (all of them when LatencyShare is 0).
	Latency      time.Duration
	LatencyShare float64
	// DropWebhookShare of webhooks are never sent.
	DropWebhookShare float64
	// Endpoints limits the faults to these endpoint names (the Endpoint constants); empty means
	// every API endpoint. Dropped webhooks are not affected.
	Endpoints []string
}

// SetFaults replaces the faults for the following calls.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

type statusFault int

const (
	statusIntact statusFault = iota
	statusRateLimited
	statusServerError
	statusHTML
)

type bodyFault int

const (
	bodyIntact bodyFault = iota
	bodyMalformed
	bodyTruncated
)

// faultPlan is what happens to one call.
type faultPlan struct {
	latency    time.Duration
	status     statusFault
	body       bodyFault
	retryAfter time.Duration
}

// rollFaults counts the call and draws its faults.
func (s *Server) rollFaults(endpoint string) faultPlan {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[endpoint]++
	f := s.faults
	if len(f.Endpoints) > 0 && !contains(f.Endpoints, endpoint) {
		return faultPlan{}
	}
	var p faultPlan
	if f.Latency > 0 && (f.LatencyShare <= 0 || s.rng.Float64() < f.LatencyShare) {
		p.latency = f.Latency
		s.faultCounts["latency"]++
	}
	roll := func(share float64, name string) bool {
		if share > 0 && s.rng.Float64() < share {
			s.faultCounts[name]++
			return true
		}
		return false
	}
	switch {
	case roll(f.RateLimitShare, "rate_limit"):
		p.status, p.retryAfter = statusRateLimited, f.RetryAfter
	case roll(f.ServerErrorShare, "server_error"):
		p.status = statusServerError
	case roll(f.HTMLShare, "html"):
		p.status = statusHTML
	case roll(f.MalformedShare, "malformed"):
		p.body = bodyMalformed
	case roll(f.TruncatedShare, "truncated"):
		p.body = bodyTruncated
	}
	return p
}

// respond writes a status fault and reports whether it did.
func (p faultPlan) respond(w http.ResponseWriter) bool {
	switch p.status {
	case statusRateLimited:
		secs := int(math.Ceil(p.retryAfter.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		// "Errors": the 429 body is not given; this one mirrors the 404/409 shape.
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"success": false, "message": "Too many requests"})
	case statusServerError:
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": map[string]any{
			"code": "INTERNAL_ERROR", "message": "Internal server error (injected by the simulator)"}})
	case statusHTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>" +
			"<body><h1>502 Bad Gateway</h1><p>upstream unavailable (injected by the simulator)</p></body></html>\n"))
	default:
		return false
	}
	return true
}

// writeCorrupted writes a recorded answer with its body corrupted.
func (p faultPlan) writeCorrupted(w http.ResponseWriter, rec *recorder) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	half := rec.body[:len(rec.body)/2]
	if p.body == bodyMalformed {
		body := append(append([]byte{}, half...), []byte(`#<not json>`)...)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.status)
		_, _ = w.Write(body)
		return
	}
	// Truncated: promise the whole body, send half, flush so it reaches the client, then abort
	// the connection (net/http closes it quietly on ErrAbortHandler).
	w.Header().Set("Content-Length", strconv.Itoa(len(rec.body)))
	w.WriteHeader(rec.status)
	_, _ = w.Write(half)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	panic(http.ErrAbortHandler)
}
