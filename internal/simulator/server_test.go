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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const key = "sim-test-key-0001"

type env struct {
	sim   *Server
	clock *FakeClock
	url   string
}

func start(t *testing.T, o Options) *env {
	t.Helper()
	o.APIKeys = []string{key}
	clock := NewFakeClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	if o.Clock == nil {
		o.Clock = clock
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	o.TickInterval = time.Millisecond
	s := New(o)
	ts := httptest.NewServer(s)
	t.Cleanup(s.Close)
	t.Cleanup(ts.Close)
	return &env{sim: s, clock: clock, url: ts.URL}
}

// call sends a request and returns the status and decoded body.
func (e *env) call(t *testing.T, method, path, auth, body string) (int, map[string]any, http.Header) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("body %s: %v", raw, err)
		}
	}
	return resp.StatusCode, m, resp.Header
}

const minimal = `{"videoName":"v","scenes":[{"story":"Hello there. General Kenobi."}]}`

var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// "Errors" and "Authentication": the exact body shapes.
func TestResponseShapes(t *testing.T) {
	e := start(t, Options{})
	tests := []struct {
		name, method, path, auth, body string
		status                         int
		want                           func(m map[string]any) bool
	}{
		{"401 no key", "GET", "/serviceapis/v1/brands/video", "", "", 401,
			func(m map[string]any) bool { return len(m) == 1 && m["message"] == "Unauthorized" }},
		{"401 Bearer key", "GET", "/serviceapis/v1/jobs/x", "Bearer " + key, "", 401,
			func(m map[string]any) bool { return m["message"] == "Unauthorized" }},
		{"400 shape", "POST", "/serviceapis/v2/video/storyboard", key, `{"scenes":[{"story":"a"}]}`, 400,
			func(m map[string]any) bool {
				f, _ := m["fields"].([]any)
				first, _ := f[0].(map[string]any)
				_, isStr := first["errors"].(string)
				return m["code"] == "INVALID_REQUEST_BODY" && m["message"] != "" && first["name"] == "videoName" && isStr
			}},
		{"400 not JSON", "POST", "/serviceapis/v2/video/storyboard/render", key, `videoName=v`, 400,
			func(m map[string]any) bool { return m["code"] == "INVALID_REQUEST_BODY" }},
		{"400 unknown brand", "POST", "/serviceapis/v2/video/storyboard/render", key, `{"videoName":"v","brandName":"Nope","scenes":[{"story":"a"}]}`, 400,
			func(m map[string]any) bool { f, _ := m["fields"].([]any); return len(f) == 1 }},
		{"200 job created", "POST", "/serviceapis/v2/video/storyboard", key, minimal, 200,
			func(m map[string]any) bool {
				d, _ := m["data"].(map[string]any)
				id, _ := d["jobId"].(string)
				return m["success"] == true && uuidRe.MatchString(id)
			}},
		{"JOB_NOT_FOUND", "GET", "/serviceapis/v1/jobs/abc", key, "", 404,
			func(m map[string]any) bool {
				return m["code"] == "JOB_NOT_FOUND" && m["id"] == "abc" && m["success"] == false
			}},
		{"404 project", "POST", "/serviceapis/v2/projects/nope/render", key, "", 404,
			func(m map[string]any) bool { return m["success"] == false && m["message"] == "Project not found" }},
		{"projects list", "GET", "/serviceapis/v2/projects", key, "", 200,
			func(m map[string]any) bool { d, _ := m["data"].([]any); return len(d) == 2 }},
		{"unknown path", "GET", "/serviceapis/v9/nothing", key, "", 404,
			func(m map[string]any) bool { return m["success"] == false }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, m, _ := e.call(t, tt.method, tt.path, tt.auth, tt.body)
			if status != tt.status || !tt.want(m) {
				t.Errorf("HTTP %d %v", status, m)
			}
		})
	}
	if got := e.sim.Counters().Calls; got[EndpointGetJob] != 2 || got[EndpointCreateStoryboard] != 2 {
		t.Errorf("calls %v", got)
	}
}

func TestBrandsListIsABareArray(t *testing.T) {
	e := start(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/serviceapis/v1/brands/video", nil)
	req.Header.Set("Authorization", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var brands []Brand
	if err := json.NewDecoder(resp.Body).Decode(&brands); err != nil || len(brands) != 2 || brands[0].Name != "Acme Corporate" {
		t.Fatalf("brands %+v %v", brands, err)
	}
}

func jobID(t *testing.T, m map[string]any) string {
	t.Helper()
	d, _ := m["data"].(map[string]any)
	id, _ := d["jobId"].(string)
	if id == "" {
		t.Fatalf("no job id in %v", m)
	}
	return id
}

// A saved project appears in the list, renders as "rendering", and answers 409 meanwhile.
func TestSaveProjectThenRender(t *testing.T) {
	e := start(t, Options{})
	_, m, _ := e.call(t, "POST", "/serviceapis/v2/video/storyboard/render", key,
		`{"videoName":"Saved one","saveProject":true,"scenes":[{"story":"a"}]}`)
	jobID(t, m)
	_, list, _ := e.call(t, "GET", "/serviceapis/v2/projects", key, "")
	data, _ := list["data"].([]any)
	saved, _ := data[len(data)-1].(map[string]any)
	if saved["name"] != "Saved one" || saved["status"] != "rendering" {
		t.Fatalf("projects %v", data)
	}
	id, _ := saved["id"].(string)
	if status, _, _ := e.call(t, "POST", "/serviceapis/v2/projects/"+id+"/render", key, ""); status != 409 {
		t.Errorf("render while rendering: HTTP %d", status)
	}
	e.clock.Advance(DefaultRenderDuration)
	if status, _, _ := e.call(t, "POST", "/serviceapis/v2/projects/"+id+"/render", key, ""); status != 200 {
		t.Errorf("render after: HTTP %d", status)
	}
}

// Output files exist only once the job completed; previews serve scene thumbnails.
func TestOutputFiles(t *testing.T) {
	e := start(t, Options{})
	_, m, _ := e.call(t, "POST", "/serviceapis/v2/video/storyboard", key, `{"videoName":"v","scenes":[{"story":"One. Two.","createSceneOnEndOfSentence":true}]}`)
	id := jobID(t, m)
	get := func(path string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.url+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		return resp.StatusCode, resp.Header.Get("Content-Type")
	}
	if status, _ := get("/files/" + id + "/scene-1.jpg"); status != 404 {
		t.Errorf("thumbnail before completion: %d", status)
	}
	e.clock.Advance(DefaultPreviewDuration)
	_, job, _ := e.call(t, "GET", "/serviceapis/v1/jobs/"+id, key, "")
	data, _ := job["data"].(map[string]any)
	sb, _ := data["storyboard"].(map[string]any)
	scenes, _ := sb["scenes"].([]any)
	if data["status"] != "completed" || len(scenes) != 2 || sb["renderParams"] == nil {
		t.Fatalf("preview %v", job)
	}
	for path, ctype := range map[string]string{"/files/" + id + "/scene-2.jpg": "image/jpeg", "/files/" + id + "/scene-3.jpg": "", "/files/" + id + "/video.mp4": ""} {
		status, got := get(path)
		if (ctype == "" && status != 404) || (ctype != "" && (status != 200 || got != ctype)) {
			t.Errorf("%s: %d %s", path, status, got)
		}
	}
}

// The time scale makes a two-minute render take a fraction of a second on the wall clock, and
// the webhook follows.
func TestTimeScaleWithWallClock(t *testing.T) {
	var hits atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(receiver.Close)
	e := start(t, Options{Clock: realClock{}, TimeScale: 0.001})
	_, m, _ := e.call(t, "POST", "/serviceapis/v2/video/storyboard/render", key,
		`{"videoName":"v","webhook":"`+receiver.URL+`/cb","scenes":[{"story":"a"}]}`)
	id := jobID(t, m)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, job, _ := e.call(t, "GET", "/serviceapis/v1/jobs/"+id, key, "")
		if d, _ := job["data"].(map[string]any); d["status"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("render did not complete")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for hits.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no webhook")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFaultsLimitedToEndpoints(t *testing.T) {
	e := start(t, Options{Faults: Faults{ServerErrorShare: 1, Endpoints: []string{EndpointGetJob}}})
	status, m, _ := e.call(t, "POST", "/serviceapis/v2/video/storyboard", key, minimal)
	if status != 200 {
		t.Fatalf("create: %d", status)
	}
	if status, body, _ := e.call(t, "GET", "/serviceapis/v1/jobs/"+jobID(t, m), key, ""); status != 500 {
		t.Fatalf("get: %d %v", status, body)
	}
	e.sim.SetFaults(Faults{RateLimitShare: 1, RetryAfter: 1500 * time.Millisecond, Latency: time.Millisecond})
	status, _, h := e.call(t, "GET", "/serviceapis/v1/brands/video", key, "")
	if status != 429 || h.Get("Retry-After") != "2" {
		t.Errorf("429: %d Retry-After %q", status, h.Get("Retry-After"))
	}
	if f := e.sim.Counters().Faults; f["server_error"] != 1 || f["rate_limit"] != 1 || f["latency"] != 1 {
		t.Errorf("fault counts %v", f)
	}
}

// Faults are drawn from the seed: the same seed gives the same sequence.
func TestFaultsAreReproducible(t *testing.T) {
	seq := func() string {
		e := start(t, Options{Seed: 99, Faults: Faults{ServerErrorShare: 0.5}})
		var b strings.Builder
		for i := 0; i < 20; i++ {
			status, _, _ := e.call(t, "GET", "/serviceapis/v1/brands/video", key, "")
			b.WriteString(map[bool]string{true: "x", false: "."}[status == 500])
		}
		return b.String()
	}
	a, b := seq(), seq()
	if a != b || !strings.Contains(a, "x") || !strings.Contains(a, ".") {
		t.Errorf("sequences %s %s", a, b)
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	s := New(Options{})
	s.Close()
	s.Close()
}

func TestCaptions(t *testing.T) {
	p := &jobPlan{scenes: []plannedScene{{story: "One.", seconds: 3}, {story: "Two.", seconds: 61.5}}}
	srt := captions(p, false)
	if !strings.Contains(srt, "1\n00:00:00,000 --> 00:00:03,000\nOne.") || !strings.Contains(srt, "00:00:03,000 --> 00:01:04,500") {
		t.Errorf("srt %q", srt)
	}
	if vtt := captions(p, true); !strings.HasPrefix(vtt, "WEBVTT\n\n00:00:00.000 --> 00:00:03.000\nOne.") {
		t.Errorf("vtt %q", vtt)
	}
}

// RenderDurationMax spreads render durations over the range, drawn from the seed: the same seed
// gives the same durations, and previews keep PreviewDuration.
func TestRenderDurationRange(t *testing.T) {
	durations := func() []time.Duration {
		e := start(t, Options{Seed: 7, RenderDuration: 2 * time.Minute, RenderDurationMax: 6 * time.Minute})
		var out []time.Duration
		for range 20 {
			_, m, _ := e.call(t, "POST", "/serviceapis/v2/video/storyboard/render", key, minimal)
			info, _ := e.sim.Job(jobID(t, m))
			out = append(out, info.EndsAt.Sub(info.CreatedAt))
		}
		_, m, _ := e.call(t, "POST", "/serviceapis/v2/video/storyboard", key, minimal)
		if info, _ := e.sim.Job(jobID(t, m)); info.EndsAt.Sub(info.CreatedAt) != DefaultPreviewDuration {
			t.Errorf("a preview took %s, want %s", info.EndsAt.Sub(info.CreatedAt), DefaultPreviewDuration)
		}
		return out
	}
	a, b := durations(), durations()
	distinct := map[time.Duration]bool{}
	for i, d := range a {
		if d < 2*time.Minute || d > 6*time.Minute {
			t.Errorf("render %d took %s, outside [2m, 6m]", i, d)
		}
		if d != b[i] {
			t.Errorf("render %d: %s then %s with the same seed", i, d, b[i])
		}
		distinct[d] = true
	}
	if len(distinct) < 10 {
		t.Errorf("only %d distinct durations in 20 renders: %v", len(distinct), a)
	}
}

// ScopeJobsByKey: a job is read only with the key that created it (keys of two accounts); off,
// any accepted key reads it (keys of one account).
func TestScopeJobsByKey(t *testing.T) {
	const other = "sim-test-key-0002"
	for _, scoped := range []bool{false, true} {
		o := Options{ScopeJobsByKey: scoped}
		e := start(t, o)
		e.sim.keys[KeyID(other)] = true
		_, m, _ := e.call(t, "POST", "/serviceapis/v2/video/storyboard/render", key, minimal)
		id := jobID(t, m)
		if status, _, _ := e.call(t, "GET", "/serviceapis/v1/jobs/"+id, key, ""); status != http.StatusOK {
			t.Fatalf("scoped=%v: the submitting key reads its job: HTTP %d", scoped, status)
		}
		status, body, _ := e.call(t, "GET", "/serviceapis/v1/jobs/"+id, other, "")
		switch {
		case scoped && (status != http.StatusNotFound || body["code"] != CodeJobNotFound):
			t.Errorf("scoped: another account's key got HTTP %d %v, want JOB_NOT_FOUND", status, body)
		case !scoped && status != http.StatusOK:
			t.Errorf("unscoped: another key of the account got HTTP %d", status)
		}
	}
}

// longDocument returns a text of lines paragraphs of words words each: narrated word for word at
// the simulator's pace (2.5 words a second), lines*words/2.5 seconds long.
func longDocument(lines, words int) string {
	var b strings.Builder
	for range lines {
		b.WriteString(strings.TrimSpace(strings.Repeat("word ", words)))
		b.WriteString("\n")
	}
	return b.String()
}

// A blog post or a deck is as long as what the service finds at its address (Options.Documents):
// script mode narrates a blog post word for word ("AI storyboard rules" 2), so no request field
// states its length.
func TestDocumentsSetTheLengthOfBlogAndDeckRenders(t *testing.T) {
	e := start(t, Options{Documents: map[string]string{
		"https://blog.example.com/long": longDocument(10, 150),
		"https://decks.example.com/six": longDocument(6, 25),
	}})
	for body, want := range map[string]string{
		`{"videoName":"b","scenes":[{"blogUrl":"https://blog.example.com/long"}]}`:  "600",
		`{"videoName":"d","scenes":[{"pptUrl":"https://decks.example.com/six"}]}`:   "60",
		`{"videoName":"s","scenes":[{"blogUrl":"https://blog.example.com/short"}]}`: "", // not listed: short
	} {
		_, m, _ := e.call(t, "POST", "/serviceapis/v2/video/storyboard/render", key, body)
		id := jobID(t, m)
		e.clock.Advance(DefaultRenderDuration)
		_, job, _ := e.call(t, "GET", "/serviceapis/v1/jobs/"+id, key, "")
		data, _ := job["data"].(map[string]any)
		got := fmt.Sprint(data["videoDuration"])
		if data["status"] != "completed" || (want != "" && got != want) || (want == "" && got == "600") {
			t.Errorf("%s: status %v, videoDuration %s, want %q", body, data["status"], got, want)
		}
	}
}
