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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/videoops/video-operator/internal/simulator"
)

// Statuses the document does not list ("States and transitions"; the live service also answers
// pending and cleaned) are reported as unknown, never as completed.
func TestUnknownJobStatuses(t *testing.T) {
	for _, status := range []string{"pending", "cleaned", "", "COMPLETED", "completed "} {
		t.Run(fmt.Sprintf("%q", status), func(t *testing.T) {
			base := handlerServer(t, func(w http.ResponseWriter, _ *http.Request) {
				_, _ = fmt.Fprintf(w, `{"job_id":"j-1","success":true,"data":{"status":%q,"videoURL":"https://x/v.mp4"}}`, status)
			})
			j, err := newClient(t, base, testKey).GetJob(ctxT(t), "j-1")
			if err != nil {
				t.Fatal(err)
			}
			s := j.Status()
			if string(s) != status || s.IsKnown() || s.IsTerminal() || s.IsCompleted() || s.IsFailed() || j.Failure() != nil {
				t.Errorf("status %q: known %v terminal %v completed %v", s, s.IsKnown(), s.IsTerminal(), s.IsCompleted())
			}
		})
	}
}

// Bodies the client cannot use: each gives a clear, typed error that never holds the key.
func TestUnusableBodies(t *testing.T) {
	big := `{"job_id":"j","success":true,"data":{"status":"completed","x":"` + strings.Repeat("a", 2048) + `"}}`
	tests := []struct {
		name    string
		handler http.HandlerFunc
		check   func(t *testing.T, err error)
	}{
		{
			name: "HTML page with 200 from a proxy, echoing the key",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				_, _ = io.WriteString(w, "<html><body>Login required for "+r.Header.Get("Authorization")+"</body></html>")
			},
			check: func(t *testing.T, err error) {
				var de *DecodeError
				if !errors.As(err, &de) || !errors.Is(err, ErrNotJSON) || de.StatusCode != 200 || !strings.HasPrefix(de.ContentType, "text/html") {
					t.Fatalf("want a not-JSON DecodeError, got %T %v", err, err)
				}
				if !strings.Contains(err.Error(), "text/html") || !strings.Contains(err.Error(), "<html>") || !strings.Contains(err.Error(), redacted) {
					t.Errorf("message lacks content type, snippet or redaction: %v", err)
				}
				if !IsRetryable(err) || IsNotSubmitted(err) {
					t.Errorf("classification")
				}
			},
		},
		{
			name: "HTML page with 502",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusBadGateway)
				_, _ = io.WriteString(w, "<html><h1>502 Bad Gateway</h1></html>")
			},
			check: func(t *testing.T, err error) {
				e, ok := asAPIError(err)
				if !ok || e.StatusCode != 502 || !strings.Contains(e.Message, "not JSON") || !strings.Contains(e.Message, "text/html") || !IsRetryable(err) {
					t.Fatalf("want a 502 APIError describing the page, got %v", err)
				}
			},
		},
		{
			name: "malformed JSON",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, `{"job_id":"j","success":true,"data":{"status":"comp`)
			},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, ErrMalformedJSON) || !IsRetryable(err) {
					t.Fatalf("want malformed JSON, got %v", err)
				}
			},
		},
		{
			name: "JSON without data",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, `{"ok":true}`)
			},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, ErrUnexpectedShape) {
					t.Fatalf("want unexpected shape, got %v", err)
				}
			},
		},
		{
			name: "truncated body, connection closed",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Length", "500")
				_, _ = io.WriteString(w, `{"job_id":"j","success":true,"data":{"sta`)
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			},
			check: func(t *testing.T, err error) {
				var te *TransportError
				if !errors.As(err, &te) || !errors.Is(err, io.ErrUnexpectedEOF) || !IsRetryable(err) {
					t.Fatalf("want a transport error, got %T %v", err, err)
				}
			},
		},
		{
			name:    "body over the size limit",
			handler: func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, big) },
			check: func(t *testing.T, err error) {
				var de *DecodeError
				if !errors.As(err, &de) || !errors.Is(err, ErrBodyTooLarge) || len(de.Snippet) > snippetBytes+3 {
					t.Fatalf("want body too large, got %v", err)
				}
			},
		},
		{
			name: "empty 200 body",
			handler: func(_ http.ResponseWriter, _ *http.Request) {
			},
			check: func(t *testing.T, err error) {
				var de *DecodeError
				if !errors.As(err, &de) || !errors.Is(err, ErrNotJSON) {
					t.Fatalf("an empty 200 is not JSON: %v", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, handlerServer(t, tt.handler), testKey, func(o *Options) { o.MaxResponseBytes = 1024 })
			_, err := c.GetJob(ctxT(t), "j")
			if err == nil {
				t.Fatal("want an error")
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(fmt.Sprintf("%+v", err), testKey) {
				t.Fatalf("error leaks the key: %v", err)
			}
			tt.check(t, err)
		})
	}
}

// JOB_NOT_FOUND is recognised by its code wherever the service puts it and whatever the status.
func TestJobNotFoundByCode(t *testing.T) {
	for name, resp := range map[string]struct {
		status int
		body   string
	}{
		"200 top-level code": {200, `{"success":false,"code":"JOB_NOT_FOUND","message":"Job not found","id":"x"}`},
		"404 top-level code": {404, `{"success":false,"code":"JOB_NOT_FOUND","id":"x"}`},
		"400 nested error":   {400, `{"error":{"code":"JOB_NOT_FOUND","message":"nope"},"id":"x"}`},
		"200 data.error":     {200, `{"id":"x","success":false,"data":{"status":"failed","error_code":"JOB_NOT_FOUND"}}`},
	} {
		t.Run(name, func(t *testing.T) {
			base := handlerServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(resp.status)
				_, _ = io.WriteString(w, resp.body)
			})
			_, err := newClient(t, base, testKey).GetJob(ctxT(t), "x")
			e, ok := asAPIError(err)
			if !IsJobNotFound(err) || !ok || e.ID != "x" || IsNotFound(err) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// The simulator's body faults reach the client as the errors above.
func TestSimulatorBodyFaults(t *testing.T) {
	for name, tt := range map[string]struct {
		faults simulator.Faults
		is     error
	}{
		"malformed": {simulator.Faults{MalformedShare: 1}, ErrMalformedJSON},
		"truncated": {simulator.Faults{TruncatedShare: 1}, io.ErrUnexpectedEOF},
		"html":      {simulator.Faults{HTMLShare: 1}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			env := newSim(t, simulator.Options{Faults: tt.faults})
			c := newClient(t, env.base, testKey)
			_, err := c.RenderStoryboard(ctxT(t), storyRequest())
			if err == nil || !IsRetryable(err) || IsNotSubmitted(err) {
				t.Fatalf("got %v", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("want %v, got %v", tt.is, err)
			}
			if tt.is != nil && env.sim.Submissions(testKey) != 1 {
				t.Errorf("a corrupted answer still created the job: the outcome is unknown to the client")
			}
		})
	}
}

func TestPerRequestTimeout(t *testing.T) {
	base := handlerServer(t, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c := newClient(t, base, testKey, func(o *Options) { o.Timeout = 50 * time.Millisecond })
	_, err := c.GetJob(ctxT(t), "j")
	var te *TransportError
	if !errors.As(err, &te) || !te.Timeout() || !IsRetryable(err) {
		t.Fatalf("want a timeout, got %T %v", err, err)
	}
	// A caller that gave up is not retried.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.GetJob(ctx, "j"); IsRetryable(err) {
		t.Errorf("cancelled call reported retryable: %v", err)
	}
}

// countingLimiter counts Wait calls and can refuse them.
type countingLimiter struct {
	mu     sync.Mutex
	waits  int
	refuse error
}

func (l *countingLimiter) Wait(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waits++
	return l.refuse
}

func TestLimiterIsConsultedBeforeEverySend(t *testing.T) {
	env := newSim(t, simulator.Options{})
	l := &countingLimiter{}
	c := newClient(t, env.base, testKey, func(o *Options) { o.Limiter = l })
	ctx := ctxT(t)
	_, _ = c.ListVideoBrands(ctx)
	_, _ = c.GetJob(ctx, "x")
	if l.waits != 2 || env.sim.Calls(simulator.EndpointListBrands) != 1 {
		t.Fatalf("waits %d", l.waits)
	}
	l.refuse = errors.New("bucket empty")
	_, err := c.RenderStoryboard(ctx, storyRequest())
	if !IsNotSubmitted(err) || env.sim.Calls(simulator.EndpointRenderStoryboard) != 0 {
		t.Fatalf("a refused wait must not send: %v", err)
	}
}

// One token bucket per key, shared by every client the factory makes for that key.
func TestRateLimitSharedPerKey(t *testing.T) {
	env := newSim(t, simulator.Options{})
	reg := NewLimiterRegistry(rate.Limit(0.001), 1) // one token, then one per ~17 minutes
	f, err := NewFactory(Options{BaseURL: env.base}, reg)
	if err != nil {
		t.Fatal(err)
	}
	if reg.ForKey(testKey) != reg.ForKey(testKey) || reg.ForKey(testKey) == reg.ForKey(otherKey) {
		t.Fatal("registry must give one limiter per key")
	}
	previewCtl, _ := f.ForKey(testKey)
	renderCtl, _ := f.ForKey(testKey)
	other, _ := f.ForKey(otherKey)
	if _, err := previewCtl.ListVideoBrands(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = renderCtl.ListVideoBrands(short)
	var ns *NotSentError
	if !errors.As(err, &ns) || !strings.Contains(err.Error(), "rate limit") {
		t.Fatalf("second client of the same key must share the empty bucket: %v", err)
	}
	if _, err := other.ListVideoBrands(ctxT(t)); err != nil {
		t.Fatalf("another key has its own bucket: %v", err)
	}
	if reg.Len() != 2 || env.sim.Calls(simulator.EndpointListBrands) != 2 {
		t.Errorf("keys %d, calls %d", reg.Len(), env.sim.Calls(simulator.EndpointListBrands))
	}
}

func TestObserverSeesEveryExchange(t *testing.T) {
	env := newSim(t, simulator.Options{})
	type obs struct {
		ep     string
		status int
	}
	var mu sync.Mutex
	var got []obs
	o := ObserverFunc(func(ep string, status int, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if d < 0 {
			t.Errorf("negative duration")
		}
		got = append(got, obs{ep, status})
	})
	ctx := ctxT(t)
	c := newClient(t, env.base, testKey, func(op *Options) { op.Observer = o })
	_, _ = c.CreateStoryboardPreview(ctx, storyRequest())
	_, _ = c.RenderStoryboard(ctx, map[string]any{})
	_, _ = c.RenderProject(ctx, "nope")
	_, _ = c.GetJob(ctx, "nope")
	_, _ = c.ListVideoBrands(ctx)
	down := newClient(t, "http://127.0.0.1:1/serviceapis", testKey, func(op *Options) { op.Observer = o })
	_, _ = down.GetJob(ctx, "x")
	want := []obs{{EndpointCreateStoryboard, 200}, {EndpointRenderStoryboard, 400}, {EndpointRenderProject, 404},
		{EndpointGetJob, 404}, {EndpointListBrands, 200}, {EndpointGetJob, 0}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("observed %v, want %v", got, want)
	}
}

// "Authentication": the key never appears in any printed form of a client value.
func TestKeyIsRedactedEverywhere(t *testing.T) {
	c := newClient(t, "https://video.example.com/serviceapis", testKey)
	f, err := NewFactory(Options{BaseURL: "https://video.example.com/serviceapis"}, NewLimiterRegistry(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	viaFactory, _ := f.ForKey(testKey)
	values := map[string]any{
		"*Client":         c,
		"Client":          *c,
		"nested value":    struct{ c Client }{*c},
		"nested pointer":  struct{ C *Client }{c},
		"interface":       []Interface{viaFactory},
		"Options":         Options{BaseURL: "https://user:secretpw@x/serviceapis"},
		"factory":         f,
		"secretKey":       c.key,
		"nested key":      struct{ k secretKey }{c.key},
		"New error":       func() error { _, err := New(testKey+" ", Options{BaseURL: "x"}); return err }(),
		"base URL error":  func() error { _, err := New(testKey, Options{BaseURL: "ftp://h"}); return err }(),
		"job failed":      (&Job{Data: JobData{Status: JobStatusFailed}}).Err(),
		"not sent error":  &NotSentError{Endpoint: "e", Err: errors.New("x")},
		"decode error":    &DecodeError{Snippet: snippet([]byte("k="+testKey), c.key.redactFunc())},
		"api error":       parseErrorBody("e", 401, http.Header{}, []byte(`{"message":"bad key `+testKey+`"}`), time.Now(), c.key.redactFunc()),
		"api error field": parseErrorBody("e", 400, http.Header{}, []byte(`{"fields":[{"name":"`+testKey+`","errors":"`+testKey+`"}]}`), time.Now(), c.key.redactFunc()),
	}
	for name, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			out := fmt.Sprintf(verb, v)
			if strings.Contains(out, testKey) || strings.Contains(out, fmt.Sprintf("%x", testKey)) || strings.Contains(out, "secretpw") {
				t.Errorf("%s with %s leaks: %s", name, verb, out)
			}
		}
		if b, err := json.Marshal(v); err == nil && strings.Contains(string(b), testKey) {
			t.Errorf("%s as JSON leaks: %s", name, b)
		}
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	for name, tt := range map[string]struct{ key, base string }{
		"empty key":        {"", "http://h/serviceapis"},
		"key with space":   {"Bearer abcdef", "http://h/serviceapis"},
		"key with newline": {"abcdef\nX-Evil: 1", "http://h/serviceapis"},
		"no base URL":      {testKey, ""},
		"relative":         {testKey, "/serviceapis"},
		"user info":        {testKey, "https://u:p@h/serviceapis"},
		"query":            {testKey, "http://h/serviceapis?x=1"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := New(tt.key, Options{BaseURL: tt.base}); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"5":                             5 * time.Second,
		"0":                             0,
		"-3":                            0,
		"soon":                          0,
		"999999999":                     maxRetryAfter,
		"Thu, 01 Jan 2026 00:00:30 GMT": 30 * time.Second,
		"Wed, 31 Dec 2025 23:00:00 GMT": 0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestNumberKeepsPrecision(t *testing.T) {
	var d JobData
	in := `{"status":"completed","aiCreditsUsed":12.5,"videoDuration":"42.40","progress":100,"renderProgress":"n/a","encodingDuration":null,
		"aiCreditsUsedBig":1e400}`
	if err := json.Unmarshal([]byte(in), &d); err != nil {
		t.Fatal(err)
	}
	if d.AICreditsUsed != "12.5" || d.VideoDuration != "42.40" || d.Progress != "100" || d.RenderProgress.IsSet() || d.EncodingDuration.IsSet() {
		t.Errorf("decoded %+v", d)
	}
	if f, ok := d.AICreditsUsed.Float64(); !ok || f != 12.5 {
		t.Errorf("float %v", f)
	}
	if i, ok := Number("99.9").Int64(); !ok || i != 99 {
		t.Errorf("int %d", i)
	}
	if b, err := json.Marshal(struct {
		N Number `json:"n,omitempty"`
		M Number `json:"m"`
	}{N: "12.5"}); err != nil || string(b) != `{"n":12.5,"m":null}` {
		t.Errorf("marshal %s %v", b, err)
	}
}
