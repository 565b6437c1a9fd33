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
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/videoops/video-operator/internal/callback"
)

// callbackHandler is what the callback server serves: callback.Handler.
type callbackHandler interface {
	http.Handler
	// Drain records the callbacks being answered on their objects, before the controllers stop.
	Drain(ctx context.Context)
}

// callbackServer serves the job-result callbacks on every replica: the service may reach any of
// them behind a Service and does not retry. A replica that does not lead records the callback on
// its object, which wakes the leader (see callback.Handler).
//
// Its port is bound when the manager is set up, not when the manager starts it (after the caches
// sync): a callback that arrives in between waits in the listen backlog instead of being refused,
// and the readiness check keeps a replica out of the callback Service until it serves.
type callbackServer struct {
	ln      net.Listener
	srv     *http.Server
	h       callbackHandler
	serving atomic.Bool
}

func newCallbackServer(ctx context.Context, addr string, h callbackHandler) (*callbackServer, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("binding the callback server to --callback-bind-address=%s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle(callback.Path, h)
	return &callbackServer{ln: ln, h: h, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, MaxHeaderBytes: 16 << 10}}, nil
}

// Start implements manager.Runnable.
func (s *callbackServer) Start(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	s.serving.Store(true)
	select {
	case err := <-errc:
		s.serving.Store(false)
		return fmt.Errorf("callback server: %w", err)
	case <-ctx.Done():
		s.serving.Store(false)
		// Callbacks still being answered are recorded on their objects: the controllers of
		// this replica stop after this server, and could drop a wake-up queued now.
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.h.Drain(shutdown)
		return s.srv.Shutdown(shutdown)
	}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every replica serves callbacks.
func (*callbackServer) NeedLeaderElection() bool { return false }

// ready is the manager's readiness check for callbacks.
func (s *callbackServer) ready(*http.Request) error {
	if !s.serving.Load() {
		return errors.New("the callback server is not serving")
	}
	return nil
}

// addr is the bound address, for tests that bind port 0.
func (s *callbackServer) addr() string { return s.ln.Addr().String() }
