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

package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/videoops/video-operator/internal/callback"
)

// recordingHandler answers every callback 202 and records that Drain ran.
type recordingHandler struct{ drained atomic.Bool }

func (*recordingHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusAccepted)
}
func (h *recordingHandler) Drain(context.Context) { h.drained.Store(true) }

// The service does not retry a callback it could not deliver, and the manager's readiness is what
// puts a replica behind the callback Service. Before this test the server bound its port only once
// the controllers started (after the caches synced) while /readyz already answered ok: a callback
// sent in that window was refused and its job waited for the fallback poll.
func TestCallbackServerTakesCallbacksFromSetUpAndIsReadyOnlyWhileServing(t *testing.T) {
	h := &recordingHandler{}
	s, err := newCallbackServer(t.Context(), "127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ready(nil); err == nil {
		t.Fatal("ready before the server serves: a Service would send callbacks to it")
	}

	// A callback that arrives before the manager starts the server waits for it, not refused.
	answered := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost,
			"http://"+s.addr()+callback.Path+"token", strings.NewReader("{}"))
		if err != nil {
			answered <- err
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				err = &unexpectedStatus{resp.Status}
			}
		}
		answered <- err
	}()
	select {
	case err := <-answered:
		t.Fatalf("a callback was answered before the server started: %v", err)
	case <-time.After(200 * time.Millisecond):
	}

	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan error, 1)
	go func() { stopped <- s.Start(ctx) }()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("the callback sent before the start: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the callback sent before the start was not answered once the server started")
	}
	if err := s.ready(nil); err != nil {
		t.Fatalf("not ready while serving: %v", err)
	}

	cancel()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("stopping: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the callback server did not stop")
	}
	if !h.drained.Load() {
		t.Error("the handler was not drained on shutdown")
	}
	if err := s.ready(nil); err == nil {
		t.Error("still ready after shutdown")
	}
	dialer := net.Dialer{Timeout: time.Second}
	if conn, err := dialer.DialContext(t.Context(), "tcp", s.addr()); err == nil {
		_ = conn.Close()
		t.Error("the port still takes connections after shutdown")
	}
}

// A port that is taken fails the manager at set-up, naming the flag, instead of after the caches
// synced with the controllers already running.
func TestCallbackServerRefusesATakenPortAtSetUp(t *testing.T) {
	var lc net.ListenConfig
	taken, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	_, err = newCallbackServer(t.Context(), taken.Addr().String(), &recordingHandler{})
	if err == nil || !strings.Contains(err.Error(), "--callback-bind-address") {
		t.Fatalf("binding a taken port: got %v, want an error naming --callback-bind-address", err)
	}
}

type unexpectedStatus struct{ status string }

func (e *unexpectedStatus) Error() string { return "answered " + e.status }
