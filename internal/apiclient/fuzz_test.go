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
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzDecodeJob: any body decodes without panicking, and a job is completed only when its status
// is exactly "completed" ("States and transitions": unknown statuses are never completed).
func FuzzDecodeJob(f *testing.F) {
	for _, s := range []string{
		`{"job_id":"j","success":true,"data":{"status":"completed","progress":100,"aiCreditsUsed":12.5,"videoURL":"https://x"}}`,
		`{"job_id":"j","success":false,"data":{"status":"failed","error_code":"TEXT_TO_VIDEO_FAILED","error_message":"bad voice"}}`,
		`{"job_id":"j","success":true,"data":{"status":"in-progress","renderProgress":"42","renderState":"RUNNING"}}`,
		`{"data":{"status":"pending"}}`, `{"data":{"status":"cleaned"}}`,
		`{"data":{"storyboard":{"scenes":[{"story":"s","thumbnail":"t"}],"renderParams":{"a":1}}}}`,
		`{"data":null}`, `[]`, `{"data":{"progress":1e999}}`, `{"webhookInput":{"attemptId":"a"}}`,
		// Case 14, "Undocumented preview shape": storyboards of shapes the document does not rule out.
		`{"data":{"status":"completed","storyboard":[{"thumbnail":"t","story":"s"},1,null]}}`,
		`{"data":{"status":"completed","storyboard":"https://x/storyboard.json"}}`,
		`{"data":{"status":"completed","storyboard":42}}`, `{"data":{"status":"completed","storyboard":false}}`,
		`{"data":{"status":"completed","storyboard":{"scenes":{"0":{"thumbnail":"t"}},"renderParams":[1]}}}`,
		`{"data":{"status":"completed","storyboard":{"scenes":[{"thumbnail":{"url":"u","width":320},"story":7}]}}}`,
		`{"data":{"status":"completed","storyboard":{"scenes":[{"thumbnail":{"url":1,"src":"s"},"story":null},"x"]}}}`,
		`{"data":{"status":"failed","error_code":"E","storyboard":{"scenes":[{"story":{"text":"s"}}]}}}`,
		`[{"thumbnail":{"href":"h"},"story":"s"}]`, `{"scenes":"none","renderParams":"fast"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkStoryboardNeverFails(t, b)
		j, err := DecodeJob(b)
		if err != nil {
			return
		}
		s := j.Status()
		if s.IsCompleted() != (s == JobStatusCompleted) || (s.IsTerminal() && !s.IsKnown()) {
			t.Fatalf("status %q misclassified", s)
		}
		if (j.Failure() != nil) != (s == JobStatusFailed) {
			t.Fatalf("failure %v for status %q", j.Failure(), s)
		}
		for _, n := range []Number{j.Data.RenderProgress, j.Data.Progress, j.Data.AICreditsUsed, j.Data.VideoDuration, j.Data.EncodingDuration} {
			if n.IsSet() && !isJSONNumber(string(n)) {
				t.Fatalf("number %q kept though not a number", n)
			}
			_, _ = n.Int64()
		}
		if _, err := json.Marshal(j); err != nil {
			t.Fatalf("re-encoding a decoded job: %v", err)
		}
	})
}

// checkStoryboardNeverFails: whatever JSON value the service sends as data.storyboard, whose shape
// the document does not give (case 14, "Undocumented preview shape"), the completed job decodes
// and keeps the value as received.
func checkStoryboardNeverFails(t *testing.T, sb []byte) {
	t.Helper()
	// Values of 2*9999 bytes or more may nest deeper than encoding/json's 10000 levels once
	// wrapped in the two objects below; shorter ones cannot.
	if !json.Valid(sb) || len(sb) >= 2*9999 {
		return
	}
	body := append(append([]byte(`{"data":{"status":"completed","storyboard":`), sb...), "}}"...)
	j, err := DecodeJob(body)
	if err != nil {
		t.Fatalf("storyboard %q made the job unreadable: %v", sb, err)
	}
	if !j.Status().IsCompleted() {
		t.Fatalf("storyboard %q changed the status to %q", sb, j.Status())
	}
	v := bytes.Trim(sb, " \t\r\n")
	got := j.Data.Storyboard
	if isJSONNull(v) {
		if got != nil {
			t.Fatalf("null storyboard decoded as %+v", got)
		}
		return
	}
	if got == nil || !bytes.Equal(got.Raw, v) {
		t.Fatalf("storyboard %q kept as %+v", sb, got)
	}
	for i, sc := range got.Scenes {
		if len(sc.Raw) > 0 && !json.Valid(sc.Raw) {
			t.Fatalf("scene %d raw %q is not JSON", i, sc.Raw)
		}
	}
}

// FuzzParseErrorBody: any error answer gives an APIError with the status kept, never panics, and
// never lets the key through, whether in the body or in the message built from it.
func FuzzParseErrorBody(f *testing.F) {
	const key = "vk_fuzz_key_123456"
	for _, s := range []string{
		`{"code":"INVALID_REQUEST_BODY","message":"bad","fields":[{"name":"videoName","errors":"is required"}]}`,
		`{"message":"Unauthorized"}`, `{"success":false,"message":"Project not found"}`,
		`{"error":{"code":"INTERNAL_ERROR","message":"boom"}}`, `{"error":"plain"}`,
		`{"success":false,"code":"JOB_NOT_FOUND","id":"x"}`, `{"fields":[{"name":"a","errors":["x","y"]}]}`,
		`<html>` + key + `</html>`, ``, `{"message":"` + key + `"}`,
	} {
		f.Add(400, []byte(s), "5")
	}
	f.Fuzz(func(t *testing.T, status int, body []byte, retryAfter string) {
		redact := func(s string) string { return redactKey(s, key) }
		h := http.Header{}
		h.Set("Retry-After", retryAfter)
		e := parseErrorBody(EndpointGetJob, status, h, body, time.Unix(0, 0), redact)
		if e.StatusCode != status || e.RetryAfter < 0 || e.RetryAfter > maxRetryAfter {
			t.Fatalf("status %d retry %s", e.StatusCode, e.RetryAfter)
		}
		if msg := e.Error(); strings.Contains(msg, key) {
			t.Fatalf("key leaked: %s", msg)
		}
		if nf := jobNotFound(EndpointGetJob, status, body, redact); nf != nil && nf.Code != CodeJobNotFound {
			t.Fatalf("job not found with code %q", nf.Code)
		}
		if s := snippet(body, redact); len(s) > snippetBytes+3 || strings.Contains(s, key) {
			t.Fatalf("snippet %q", s)
		}
	})
}
