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

package apiclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/videoops/video-operator/internal/simulator"
)

const (
	testKey  = "vk_live_5f3a9c0e7b1d4a26b8e3" // shaped like a real key, not one
	otherKey = "vk_live_other_0000000000000"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type simEnv struct {
	sim   *simulator.Server
	clock *simulator.FakeClock
	ts    *httptest.Server
	base  string
}

// newSim starts a simulator on a fake clock, accepting testKey and otherKey unless opts says.
func newSim(t *testing.T, opts simulator.Options) *simEnv {
	t.Helper()
	if opts.APIKeys == nil {
		opts.APIKeys = []string{testKey, otherKey}
	}
	clock := simulator.NewFakeClock(t0)
	if opts.Clock == nil {
		opts.Clock = clock
	}
	if opts.Seed == 0 {
		opts.Seed = 42
	}
	if opts.TickInterval == 0 {
		opts.TickInterval = time.Millisecond
	}
	sim := simulator.New(opts)
	ts := httptest.NewServer(sim)
	t.Cleanup(sim.Close)
	t.Cleanup(ts.Close)
	return &simEnv{sim: sim, clock: clock, ts: ts, base: ts.URL + simulator.BasePath}
}

func newClient(t *testing.T, base, key string, mods ...func(*Options)) *Client {
	t.Helper()
	o := Options{BaseURL: base, Timeout: 5 * time.Second}
	for _, m := range mods {
		m(&o)
	}
	c, err := New(key, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// storyRequest is a minimal valid StoryboardRequest.
func storyRequest() map[string]any {
	return map[string]any{
		"videoName": "Quarterly update",
		"scenes":    []any{map[string]any{"story": "Revenue grew this quarter. Costs fell."}},
		"voiceOver": map[string]any{"enabled": true, "aiVoices": []any{map[string]any{"speaker": "Matthew"}}},
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// handlerServer serves h and returns its base URL.
func handlerServer(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/serviceapis"
}
