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
	"strings"
	"testing"
)

// A successful job answer that echoes the key (a proxy reflecting the Authorization header)
// reaches the caller redacted, however the JSON spells it.
func TestGetJobRedactsTheKeyInSuccessfulAnswers(t *testing.T) {
	const key = "sk-live/abc<123>"
	for _, tt := range []struct{ name, body string }{
		{"plain", `{"job_id":"j","success":false,"data":{"status":"failed","error_code":"X","error_message":"echo sk-live/abc<123> end"}}`},
		{"escaped", `{"job_id":"j","success":true,"data":{"status":"in-progress","renderProgressMessage":"echo sk-live\/abc\u003c123\u003e end"}}`},
		// A proxy that logs the URL it was asked for, with the key in its query.
		{"percent-encoded", `{"job_id":"j","success":false,"data":{"status":"failed","error_code":"X","error_message":"echo sk-live%2Fabc%3C123%3E end"}}`},
		{"percent-encoded, lower-case hex", `{"job_id":"j","success":false,"data":{"status":"failed","error_code":"X","error_message":"echo sk-live%2fabc%3c123%3e end"}}`},
		{"percent-encoded and escaped", `{"job_id":"j","success":true,"data":{"status":"in-progress","renderProgressMessage":"echo sk-live%2Fabc%3C123%3E end \u0020"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c, err := New(key, Options{BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			j, err := c.GetJob(context.Background(), "j")
			if err != nil {
				t.Fatal(err)
			}
			text := string(j.Data.Raw) + j.Data.RenderProgressMessage
			if f := j.Failure(); f != nil {
				text += f.Message
			}
			if strings.Contains(text, "sk-live") {
				t.Fatalf("the key came through: %s", text)
			}
			if !strings.Contains(text, "echo [REDACTED] end") {
				t.Fatalf("the text around the key was lost: %s", text)
			}
		})
	}
}

// An error text that carries the key percent-encoded (a URL with the key in its query, a form
// body) is redacted as the key itself is.
func TestRedactKeyFindsPercentEncodedKeys(t *testing.T) {
	const key = "sk-live/abc<123>+x="
	for _, in := range []string{
		"GET /v1/jobs?key=sk-live%2Fabc%3C123%3E%2Bx%3D refused",
		"GET /v1/jobs?key=sk-live%2fabc%3c123%3e%2bx%3d refused",
		"GET /v1/jobs/sk-live%2Fabc%3C123%3E+x= refused",
	} {
		out := redactKey(in, key)
		if strings.Contains(out, "sk-live") || !strings.HasSuffix(out, "[REDACTED] refused") {
			t.Errorf("redactKey(%q) = %q", in, out)
		}
	}
	if got := redactKey("nothing here", key); got != "nothing here" {
		t.Errorf("a text without the key changed: %q", got)
	}
}
