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
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Issue 10, "Client and credential hardening": a redirect is never followed, so the key is
// never sent elsewhere and a paid POST never becomes a GET.
func TestRedirectsAreNotFollowed(t *testing.T) {
	var elsewhere atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		if r.Header.Get("Authorization") != "" {
			t.Errorf("the key reached the redirect target")
		}
	}))
	defer target.Close()
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusFound)
	}))
	defer svc.Close()

	c, err := New("sk-video-redirect-test-0001", Options{BaseURL: svc.URL + "/serviceapis"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.RenderStoryboard(context.Background(), map[string]any{"videoName": "x"})
	if err == nil {
		t.Fatal("a 302 answer to a render was taken for a job")
	}
	if IsNotSubmitted(err) {
		t.Errorf("a 302 says nothing about whether a job was created, got %v", err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}

// Issue 10, "An outage costs at most what was in flight": a refused connection means the request
// never left, so a submission is certainly not created and a read is retried.
func TestRefusedConnectionIsNotSent(t *testing.T) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now
	c, err := New("sk-video-refused-test-0001", Options{BaseURL: "http://" + addr + "/serviceapis"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.RenderStoryboard(context.Background(), map[string]any{"videoName": "x"})
	if !IsNotSubmitted(err) {
		t.Errorf("a refused connection on a submission: %v, want not submitted", err)
	}
	if !IsRetryable(err) {
		t.Errorf("a refused connection is worth retrying: %v", err)
	}
	_, err = c.GetJob(context.Background(), "job-1")
	if !IsRetryable(err) {
		t.Errorf("a refused connection on a read: %v, want retryable", err)
	}
}

// Issue 10, "Client and credential hardening": the key never crosses the network in clear text
// unless the operator says so.
func TestPlainHTTPOnlyOnLoopback(t *testing.T) {
	tests := []struct {
		url   string
		allow bool
		ok    bool
	}{
		{"https://video.example.com/serviceapis", false, true},
		{"http://127.0.0.1:8080/serviceapis", false, true},
		{"http://localhost:8080/serviceapis", false, true},
		{"http://[::1]:8080/serviceapis", false, true},
		{"http://video.example.com/serviceapis", false, false},
		{"http://10.0.0.7/serviceapis", false, false},
		{"http://video-sim.video.svc:8080/serviceapis", true, true},
	}
	for _, tt := range tests {
		_, err := New("sk-video-plain-http-0001", Options{BaseURL: tt.url, AllowInsecureHTTP: tt.allow})
		if (err == nil) != tt.ok {
			t.Errorf("New(%s, insecure %v): err %v, want ok %v", tt.url, tt.allow, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "clear text") {
			t.Errorf("the error should say why: %v", err)
		}
	}
}
