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
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/videoops/video-operator/internal/simulator"
	"github.com/videoops/video-operator/internal/version"
)

// "Authentication" 1: the raw key, no Bearer; plus the paths of "Endpoints" relative to the base
// URL, escaped path parameters, and the User-Agent.
func TestRequestsCarryRawKeyPathsAndUserAgent(t *testing.T) {
	type seen struct{ method, path, auth, ua, ctype, body string }
	var mu sync.Mutex
	var got []seen
	base := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.EscapedPath(), r.Header.Get("Authorization"), r.Header.Get("User-Agent"), r.Header.Get("Content-Type"), string(b)})
		mu.Unlock()
		switch {
		case strings.Contains(r.URL.Path, "/jobs/"):
			_, _ = io.WriteString(w, `{"job_id":"j","success":true,"data":{"status":"in-progress"}}`)
		case strings.HasSuffix(r.URL.Path, "/brands/video"):
			_, _ = io.WriteString(w, `[]`)
		default:
			_, _ = io.WriteString(w, `{"success":true,"data":{"jobId":"j"}}`)
		}
	})
	c := newClient(t, base+"/", testKey) // a trailing slash on the base URL is tolerated
	ctx := ctxT(t)
	body := map[string]any{"videoName": "x"}
	if _, err := c.CreateStoryboardPreview(ctx, body); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RenderStoryboard(ctx, json.RawMessage(`{"videoName":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RenderProject(ctx, "p/1 2"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetJob(ctx, "a/b?c"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListVideoBrands(ctx); err != nil {
		t.Fatal(err)
	}
	want := []seen{
		{"POST", "/serviceapis/v2/video/storyboard", testKey, version.UserAgent(), "application/json", `{"videoName":"x"}`},
		{"POST", "/serviceapis/v2/video/storyboard/render", testKey, version.UserAgent(), "application/json", `{"videoName":"x"}`},
		{"POST", "/serviceapis/v2/projects/p%2F1%202/render", testKey, version.UserAgent(), "", ""},
		{"GET", "/serviceapis/v1/jobs/a%2Fb%3Fc", testKey, version.UserAgent(), "", ""},
		{"GET", "/serviceapis/v1/brands/video", testKey, version.UserAgent(), "", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d requests, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestArgumentsRejectedBeforeSending(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:1/serviceapis", testKey)
	ctx := ctxT(t)
	for name, call := range map[string]func() error{
		"nil body":       func() error { _, err := c.CreateStoryboardPreview(ctx, nil); return err },
		"array body":     func() error { _, err := c.RenderStoryboard(ctx, []int{1}); return err },
		"string body":    func() error { _, err := c.RenderStoryboard(ctx, "videoName"); return err },
		"empty project":  func() error { _, err := c.RenderProject(ctx, ""); return err },
		"dot-dot job id": func() error { _, err := c.GetJob(ctx, ".."); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := call()
			var ns *NotSentError
			if !errors.As(err, &ns) || !IsNotSubmitted(err) || IsRetryable(err) {
				t.Fatalf("want a NotSentError, got %T %v", err, err)
			}
		})
	}
}

// "Errors": every status code and body shape, produced by the simulator.
func TestErrorModelAgainstSimulator(t *testing.T) {
	type check func(t *testing.T, err error)
	tests := []struct {
		name   string
		opts   simulator.Options
		key    string
		call   func(ctx context.Context, c *Client, env *simEnv) error
		checks check
	}{
		{
			name: "400 INVALID_REQUEST_BODY with field paths",
			call: func(ctx context.Context, c *Client, _ *simEnv) error {
				req := storyRequest()
				delete(req, "videoName")
				req["scenes"] = []any{map[string]any{"story": strings.Repeat("a", 15001)}}
				_, err := c.RenderStoryboard(ctx, req)
				return err
			},
			checks: func(t *testing.T, err error) {
				if !IsInvalidRequest(err) || !IsNotSubmitted(err) || IsRetryable(err) {
					t.Fatalf("classification wrong for %v", err)
				}
				e, _ := asAPIError(err)
				if e.Code != CodeInvalidRequestBody || e.Message == "" {
					t.Errorf("code %q message %q", e.Code, e.Message)
				}
				want := map[string]bool{"videoName": false, "scenes[0].story": false}
				for _, f := range FieldErrors(err) {
					if _, ok := want[f.Name]; ok && f.Errors != "" {
						want[f.Name] = true
					}
				}
				for n, ok := range want {
					if !ok {
						t.Errorf("no field error for %s in %+v", n, FieldErrors(err))
					}
				}
			},
		},
		{
			name: "401 wrong key",
			key:  "vk_live_not_accepted",
			call: func(ctx context.Context, c *Client, _ *simEnv) error { _, err := c.ListVideoBrands(ctx); return err },
			checks: func(t *testing.T, err error) {
				if !IsUnauthorized(err) || IsRetryable(err) {
					t.Fatalf("want 401, got %v", err)
				}
				if e, _ := asAPIError(err); e.Message != "Unauthorized" {
					t.Errorf("message %q", e.Message)
				}
			},
		},
		{
			// New refuses a key with a space, so a transport adds the prefix on the wire.
			name: "401 Bearer-prefixed valid key",
			call: func(ctx context.Context, _ *Client, env *simEnv) error {
				c, err := New(testKey, Options{BaseURL: env.base, HTTPClient: &http.Client{Transport: bearerTransport{}}})
				if err != nil {
					return err
				}
				_, err = c.GetJob(ctx, "x")
				return err
			},
			checks: func(t *testing.T, err error) {
				if !IsUnauthorized(err) {
					t.Fatalf("want 401, got %v", err)
				}
			},
		},
		{
			name: "404 unknown project",
			call: func(ctx context.Context, c *Client, _ *simEnv) error {
				_, err := c.RenderProject(ctx, "no-such-project")
				return err
			},
			checks: func(t *testing.T, err error) {
				if !IsNotFound(err) || IsJobNotFound(err) || !IsNotSubmitted(err) {
					t.Fatalf("want project 404, got %v", err)
				}
			},
		},
		{
			name: "409 project already rendering",
			call: func(ctx context.Context, c *Client, _ *simEnv) error {
				id := simulator.DefaultProjects()[0].ID
				if _, err := c.RenderProject(ctx, id); err != nil {
					return err
				}
				_, err := c.RenderProject(ctx, id)
				return err
			},
			checks: func(t *testing.T, err error) {
				if !IsConflict(err) || !IsNotSubmitted(err) {
					t.Fatalf("want 409, got %v", err)
				}
			},
		},
		{
			name: "429 with Retry-After",
			opts: simulator.Options{Faults: simulator.Faults{RateLimitShare: 1, RetryAfter: 3 * time.Second}},
			call: func(ctx context.Context, c *Client, _ *simEnv) error {
				_, err := c.CreateStoryboardPreview(ctx, storyRequest())
				return err
			},
			checks: func(t *testing.T, err error) {
				if !IsRateLimited(err) || !IsRetryable(err) || !IsNotSubmitted(err) || RetryAfter(err) != 3*time.Second {
					t.Fatalf("want 429 retry after 3s, got %v (retry after %s)", err, RetryAfter(err))
				}
			},
		},
		{
			name: "500 INTERNAL_ERROR",
			opts: simulator.Options{Faults: simulator.Faults{ServerErrorShare: 1}},
			call: func(ctx context.Context, c *Client, _ *simEnv) error {
				_, err := c.RenderStoryboard(ctx, storyRequest())
				return err
			},
			checks: func(t *testing.T, err error) {
				e, ok := asAPIError(err)
				if !ok || e.StatusCode != 500 || e.Code != CodeInternalError || e.Message == "" {
					t.Fatalf("want 500 INTERNAL_ERROR, got %v", err)
				}
				if !IsRetryable(err) || IsNotSubmitted(err) {
					t.Errorf("a 500 is retryable and leaves the outcome unknown")
				}
			},
		},
		{
			name: "JOB_NOT_FOUND with id",
			call: func(ctx context.Context, c *Client, _ *simEnv) error {
				_, err := c.GetJob(ctx, "8f14e45f-ceea-467f-a0e6-000000000000")
				return err
			},
			checks: func(t *testing.T, err error) {
				e, ok := asAPIError(err)
				if !ok || !IsJobNotFound(err) || IsNotFound(err) || e.ID != "8f14e45f-ceea-467f-a0e6-000000000000" {
					t.Fatalf("want JOB_NOT_FOUND with id, got %v", err)
				}
			},
		},
		{
			name: "JOB_NOT_FOUND after the service cleaned the job",
			opts: simulator.Options{JobRetention: time.Hour},
			call: func(ctx context.Context, c *Client, env *simEnv) error {
				jc, err := c.RenderStoryboard(ctx, storyRequest())
				if err != nil {
					return err
				}
				env.clock.Advance(2 * time.Hour)
				_, err = c.GetJob(ctx, jc.JobID)
				return err
			},
			checks: func(t *testing.T, err error) {
				if !IsJobNotFound(err) {
					t.Fatalf("want JOB_NOT_FOUND, got %v", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newSim(t, tt.opts)
			key := tt.key
			if key == "" {
				key = testKey
			}
			c := newClient(t, env.base, key)
			err := tt.call(ctxT(t), c, env)
			if err == nil {
				t.Fatal("want an error")
			}
			if strings.Contains(err.Error(), testKey) {
				t.Fatalf("error leaks the key: %v", err)
			}
			tt.checks(t, err)
		})
	}
}

// "States and transitions": in-progress with rising progress and RUNNING, then completed with
// the outputs, which the simulator serves.
func TestRenderLifecycle(t *testing.T) {
	env := newSim(t, simulator.Options{})
	c := newClient(t, env.base, testKey)
	ctx := ctxT(t)
	req := storyRequest()
	var scenes []any
	for i := 0; i < 5; i++ { // five AI images at 2.5 credits: 12.5, which must survive exactly
		scenes = append(scenes, map[string]any{
			"story":      "A scene with an AI image.",
			"background": map[string]any{"type": "image", "aiVisual": map[string]any{"model": "flux-schnell", "prompt": "a city"}},
		})
	}
	req["scenes"] = scenes
	jc, err := c.RenderStoryboard(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !jc.Success || jc.JobID == "" {
		t.Fatalf("job created %+v", jc)
	}
	last := int64(-1)
	for _, step := range []time.Duration{0, 30 * time.Second, 60 * time.Second} {
		env.clock.Advance(step)
		j, err := c.GetJob(ctx, jc.JobID)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := j.Data.RenderProgress.Int64()
		if j.Status() != JobStatusInProgress || j.Data.RenderState != "RUNNING" || !ok || j.Data.RenderProgressMessage == "" {
			t.Fatalf("in-progress job %+v", j.Data)
		}
		if p <= last && step > 0 {
			t.Errorf("progress did not rise: %d after %d", p, last)
		}
		last = p
	}
	env.clock.Advance(time.Minute)
	j, err := c.GetJob(ctx, jc.JobID)
	if err != nil {
		t.Fatal(err)
	}
	d := j.Data
	if j.Status() != JobStatusCompleted || !j.Success || d.Progress.String() != "100" || j.Failure() != nil || j.Err() != nil {
		t.Fatalf("completed job %+v", j)
	}
	if d.AICreditsUsed.String() != "12.5" {
		t.Errorf("aiCreditsUsed %q, want 12.5", d.AICreditsUsed)
	}
	if d.PlatformClearanceCode != "" {
		t.Errorf("no music, yet a clearance code %q", d.PlatformClearanceCode)
	}
	if v, ok := d.VideoDuration.Float64(); !ok || v <= 0 {
		t.Errorf("videoDuration %q", d.VideoDuration)
	}
	for name, u := range map[string]string{"video": d.VideoURL, "audio": d.AudioURL, "thumbnail": d.Thumbnail, "srt": d.SRTFile,
		"txt": d.TXTFile, "vtt": d.VTTFile, "share": d.VideoShareURL, "embed": d.VideoEmbedURL} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s: HTTP %d", name, u, resp.StatusCode)
		}
	}
}

// "Errors": a job failure is not an HTTP error.
func TestFailedJobIsAResultNotAnError(t *testing.T) {
	env := newSim(t, simulator.Options{})
	c := newClient(t, env.base, testKey)
	ctx := ctxT(t)
	req := storyRequest()
	req["voiceOver"] = map[string]any{"enabled": true, "aiVoices": []any{map[string]any{"speaker": "NoSuchVoice"}}}
	jc, err := c.RenderStoryboard(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	env.clock.Advance(10 * time.Minute)
	j, err := c.GetJob(ctx, jc.JobID)
	if err != nil {
		t.Fatalf("a failed job must not be an error: %v", err)
	}
	f := j.Failure()
	if j.Success || !j.Status().IsFailed() || !j.Status().IsTerminal() || f == nil || f.Code != CodeTextToVideoFailed || f.Message == "" {
		t.Fatalf("failed job %+v", j)
	}
	if !IsJobFailed(j.Err()) || IsRetryable(j.Err()) || !strings.Contains(j.Err().Error(), CodeTextToVideoFailed) {
		t.Errorf("Err() = %v", j.Err())
	}
}

// A premium-provider voice id is accepted and added to the library on first use ("VoiceOver").
func TestPremiumVoiceIDIsAccepted(t *testing.T) {
	env := newSim(t, simulator.Options{})
	c := newClient(t, env.base, testKey)
	ctx := ctxT(t)
	req := storyRequest()
	req["voiceOver"] = map[string]any{"enabled": true, "aiVoices": []any{map[string]any{"speaker": "21m00Tcm4TlvDq8ikWAM"}}}
	jc, err := c.RenderStoryboard(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	env.clock.Advance(10 * time.Minute)
	if j, err := c.GetJob(ctx, jc.JobID); err != nil || !j.Status().IsCompleted() {
		t.Fatalf("job %+v, %v", j, err)
	}
	if v := env.sim.AddedVoices(); len(v) != 1 || v[0] != "21m00Tcm4TlvDq8ikWAM" {
		t.Errorf("added voices %v", v)
	}
}

// "AI storyboard rules" 3 and 5: a brief-mode preview returns generated narration in
// storyboard.scenes[].story, and the design step adds time.
func TestBriefModePreview(t *testing.T) {
	env := newSim(t, simulator.Options{})
	c := newClient(t, env.base, testKey)
	ctx := ctxT(t)
	req := map[string]any{
		"videoName":    "Launch teaser",
		"aiStoryboard": map[string]any{"enabled": true},
		"scenes":       []any{map[string]any{"brief": map[string]any{"prompt": "our new solar kettle", "videoGoal": "Marketing", "duration": 40}}},
	}
	jc, err := c.CreateStoryboardPreview(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := env.sim.Job(jc.JobID)
	if took := info.EndsAt.Sub(info.CreatedAt); took < simulator.DefaultPreviewDuration+simulator.DefaultDesignDurationMin ||
		took > simulator.DefaultPreviewDuration+simulator.DefaultDesignDurationMax {
		t.Errorf("preview with design step takes %s", took)
	}
	env.clock.Advance(simulator.DefaultPreviewDuration + simulator.DefaultDesignDurationMax)
	j, err := c.GetJob(ctx, jc.JobID)
	if err != nil {
		t.Fatal(err)
	}
	sb := j.Data.Storyboard
	if !j.Status().IsCompleted() || sb == nil || len(sb.Scenes) != 4 {
		t.Fatalf("preview %+v", j.Data)
	}
	for i, sc := range sb.Scenes {
		if !strings.Contains(sc.Story, "solar kettle") || sc.Thumbnail == "" || len(sc.Raw) == 0 {
			t.Errorf("scene %d: %+v", i, sc)
		}
	}
	var params map[string]any
	if err := json.Unmarshal(sb.RenderParams, &params); err != nil || params["aiStoryboardMode"] != "brief" {
		t.Errorf("render params %s (%v)", sb.RenderParams, err)
	}
}

// "Resources and their fields", job status: one clearance code per video, the same on repeated
// polls until it expires, then a fresh one; none for musicUrl or no music.
func TestClearanceCodeStableThenRolledOver(t *testing.T) {
	env := newSim(t, simulator.Options{ClearanceExpiry: 24 * time.Hour})
	c := newClient(t, env.base, testKey)
	ctx := ctxT(t)
	submit := func(music map[string]any) string {
		req := storyRequest()
		if music != nil {
			req["backgroundMusic"] = music
		}
		jc, err := c.RenderStoryboard(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return jc.JobID
	}
	library := submit(map[string]any{"enabled": true, "autoMusic": true})
	own := submit(map[string]any{"enabled": true, "musicUrl": "https://example.com/m.mp3"})
	off := submit(map[string]any{"enabled": false})
	env.clock.Advance(10 * time.Minute)
	get := func(id string) JobData {
		j, err := c.GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return j.Data
	}
	first := get(library)
	if first.PlatformClearanceCode == "" || first.PlatformClearanceExpiresAt == "" {
		t.Fatalf("no clearance code: %+v", first)
	}
	exp, err := time.Parse(time.RFC3339, first.PlatformClearanceExpiresAt)
	if err != nil || !exp.Equal(env.clock.Now().Add(24*time.Hour)) {
		t.Errorf("expiry %q (%v)", first.PlatformClearanceExpiresAt, err)
	}
	env.clock.Advance(23 * time.Hour)
	if again := get(library); again.PlatformClearanceCode != first.PlatformClearanceCode || again.PlatformClearanceExpiresAt != first.PlatformClearanceExpiresAt {
		t.Errorf("code changed before expiry: %q then %q", first.PlatformClearanceCode, again.PlatformClearanceCode)
	}
	env.clock.Advance(time.Hour)
	fresh := get(library)
	if fresh.PlatformClearanceCode == "" || fresh.PlatformClearanceCode == first.PlatformClearanceCode || fresh.PlatformClearanceExpiresAt == first.PlatformClearanceExpiresAt {
		t.Errorf("code not renewed at expiry: %q then %q", first.PlatformClearanceCode, fresh.PlatformClearanceCode)
	}
	for name, id := range map[string]string{"musicUrl": own, "music disabled": off} {
		if d := get(id); d.PlatformClearanceCode != "" || d.PlatformClearanceExpiresAt != "" {
			t.Errorf("%s: unexpected clearance %+v", name, d)
		}
	}
	if info, _ := env.sim.Job(library); info.ClearanceCodesIssued != 2 {
		t.Errorf("codes issued %d, want 2", info.ClearanceCodesIssued)
	}
}

// "Endpoints", render project: 409 while rendering, accepted again once the render ended.
func TestRenderProjectConflictThenAgain(t *testing.T) {
	env := newSim(t, simulator.Options{})
	c := newClient(t, env.base, testKey)
	ctx := ctxT(t)
	p := simulator.DefaultProjects()[0]
	jc, err := c.RenderProject(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RenderProject(ctx, p.ID); !IsConflict(err) {
		t.Fatalf("second render: %v", err)
	}
	env.clock.Advance(simulator.DefaultRenderDuration)
	j, err := c.GetJob(ctx, jc.JobID)
	if err != nil || !j.Status().IsCompleted() || j.Data.PlatformClearanceCode == "" {
		t.Fatalf("project render %+v %v (the project uses library music)", j, err)
	}
	if _, err := c.RenderProject(ctx, p.ID); err != nil {
		t.Fatalf("render after the first ended: %v", err)
	}
	if got := env.sim.Submissions(testKey); got != 2 {
		t.Errorf("submissions %d, want 2", got)
	}
}

func TestListVideoBrands(t *testing.T) {
	env := newSim(t, simulator.Options{Brands: []simulator.Brand{{ID: "b-1", Name: "House style"}}})
	c := newClient(t, env.base, testKey)
	brands, err := c.ListVideoBrands(ctxT(t))
	if err != nil || len(brands) != 1 || brands[0] != (Brand{ID: "b-1", Name: "House style"}) {
		t.Fatalf("brands %+v %v", brands, err)
	}
	wrapped := handlerServer(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"success":true,"data":[{"id":"b-2","name":"Wrapped"}]}`)
	})
	brands, err = newClient(t, wrapped, testKey).ListVideoBrands(ctxT(t))
	if err != nil || len(brands) != 1 || brands[0].Name != "Wrapped" {
		t.Fatalf("wrapped brands %+v %v", brands, err)
	}
}

// "Events": the job result is POSTed to the webhook when the job ends, echoing webhookInput.
func TestWebhookDeliveryEchoesWebhookInput(t *testing.T) {
	payloads := make(chan []byte, 4)
	receiver := handlerServer(t, func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		payloads <- b
	})
	env := newSim(t, simulator.Options{})
	c := newClient(t, env.base, testKey)
	ctx := ctxT(t)
	req := storyRequest()
	req["webhook"] = strings.TrimSuffix(receiver, "/serviceapis") + "/callback/token-123"
	req["webhookInput"] = map[string]any{"attemptId": "a-1", "generation": 2}
	req["backgroundMusic"] = map[string]any{"enabled": true, "autoMusic": true}
	jc, err := c.RenderStoryboard(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-payloads:
		t.Fatal("webhook before the job ended")
	case <-time.After(20 * time.Millisecond):
	}
	env.clock.Advance(simulator.DefaultRenderDuration)
	var body []byte
	select {
	case body = <-payloads:
	case <-time.After(5 * time.Second):
		t.Fatal("no webhook")
	}
	j, err := DecodeJob(body)
	if err != nil {
		t.Fatal(err)
	}
	if j.JobID != jc.JobID || !j.Status().IsCompleted() || j.Data.PlatformClearanceCode == "" {
		t.Errorf("payload %s", body)
	}
	var input map[string]any
	if err := json.Unmarshal(j.WebhookInput, &input); err != nil || input["attemptId"] != "a-1" || input["generation"] != 2.0 {
		t.Errorf("webhookInput %s", j.WebhookInput)
	}
	// The code in the webhook is the one the next poll returns.
	polled, err := c.GetJob(ctx, jc.JobID)
	if err != nil || polled.Data.PlatformClearanceCode != j.Data.PlatformClearanceCode {
		t.Errorf("poll code %q, webhook code %q (%v)", polled.Data.PlatformClearanceCode, j.Data.PlatformClearanceCode, err)
	}
	eventually(t, "delivered counter", func() bool { return env.sim.Counters().WebhooksDelivered == 1 })
	if n := env.sim.SubmissionsWithWebhookInput(map[string]any{"generation": 2, "attemptId": "a-1"}); n != 1 {
		t.Errorf("submissions with webhookInput %d", n)
	}
	if n := env.sim.SubmissionsWithWebhookInputField("attemptId", "a-1"); n != 1 {
		t.Errorf("submissions with attemptId %d", n)
	}
}

func TestDroppedWebhook(t *testing.T) {
	delivered := make(chan struct{}, 1)
	receiver := handlerServer(t, func(http.ResponseWriter, *http.Request) { delivered <- struct{}{} })
	env := newSim(t, simulator.Options{Faults: simulator.Faults{DropWebhookShare: 1}})
	c := newClient(t, env.base, testKey)
	req := storyRequest()
	req["webhook"] = receiver + "/cb"
	if _, err := c.RenderStoryboard(ctxT(t), req); err != nil {
		t.Fatal(err)
	}
	env.clock.Advance(simulator.DefaultRenderDuration)
	eventually(t, "dropped counter", func() bool { return env.sim.Counters().WebhooksDropped == 1 })
	select {
	case <-delivered:
		t.Fatal("a dropped webhook was delivered")
	default:
	}
}

func TestSimulatorCounters(t *testing.T) {
	env := newSim(t, simulator.Options{})
	ctx := ctxT(t)
	a, b := newClient(t, env.base, testKey), newClient(t, env.base, otherKey)
	for i := 0; i < 2; i++ {
		if _, err := a.CreateStoryboardPreview(ctx, storyRequest()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.RenderStoryboard(ctx, storyRequest()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.RenderStoryboard(ctx, map[string]any{}); !IsInvalidRequest(err) {
		t.Fatalf("want 400, got %v", err)
	}
	_, _ = a.GetJob(ctx, "unknown")
	cnt := env.sim.Counters()
	if env.sim.Submissions(testKey) != 2 || env.sim.Submissions(otherKey) != 1 || cnt.SubmissionsByKey[simulator.KeyID(testKey)] != 2 {
		t.Errorf("submissions per key %v", cnt.SubmissionsByKey)
	}
	if cnt.Calls[simulator.EndpointCreateStoryboard] != 2 || cnt.Calls[simulator.EndpointRenderStoryboard] != 2 || env.sim.Calls(simulator.EndpointGetJob) != 1 {
		t.Errorf("calls %v", cnt.Calls)
	}
	if jobs := env.sim.Jobs(); len(jobs) != 3 || jobs[0].Kind != "preview" || jobs[2].Kind != "render" || jobs[0].KeyID != simulator.KeyID(testKey) {
		t.Errorf("jobs %+v", jobs)
	}
}

// The same seed gives the same job ids: tests can rely on reproducible runs.
func TestSimulatorSeedIsReproducible(t *testing.T) {
	ids := func() string {
		env := newSim(t, simulator.Options{Seed: 7})
		jc, err := newClient(t, env.base, testKey).RenderStoryboard(ctxT(t), storyRequest())
		if err != nil {
			t.Fatal(err)
		}
		return jc.JobID
	}
	if a, b := ids(), ids(); a != b {
		t.Errorf("job ids differ: %s %s", a, b)
	}
}

// bearerTransport sends the Authorization header with a Bearer prefix, as a misconfigured client
// would.
type bearerTransport struct{}

func (bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+r.Header.Get("Authorization"))
	return http.DefaultTransport.RoundTrip(r)
}
