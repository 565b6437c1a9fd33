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

package controller

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/credentials"
)

// "Errors": which answers to a submit call prove that no job was created. The document does not
// say that a 500 created nothing, so it is unknown unless the operator opted in (issue 9, case 4:
// "A documented 500 on submit").
func TestRefused(t *testing.T) {
	tests := []struct {
		name        string
		err         error
		want, optIn bool
	}{
		{"400 INVALID_REQUEST_BODY", &apiclient.APIError{StatusCode: http.StatusBadRequest, Code: apiclient.CodeInvalidRequestBody}, true, true},
		{"401", &apiclient.APIError{StatusCode: http.StatusUnauthorized}, true, true},
		{"404 project not found", &apiclient.APIError{StatusCode: http.StatusNotFound}, true, true},
		{"409 project busy", &apiclient.APIError{StatusCode: http.StatusConflict}, true, true},
		{"429", &apiclient.APIError{StatusCode: http.StatusTooManyRequests}, true, true},
		{"the service's own 500 body", &apiclient.APIError{StatusCode: http.StatusInternalServerError, Code: apiclient.CodeInternalError}, false, true},
		{"wrapped 500", fmt.Errorf("submitting: %w", &apiclient.APIError{StatusCode: 500, Code: apiclient.CodeInternalError}), false, true},
		{"never sent", &apiclient.NotSentError{Err: fmt.Errorf("rate limiter")}, true, true},
		{"a proxy's 502 page", &apiclient.APIError{StatusCode: http.StatusBadGateway}, false, false},
		{"500 without the documented body", &apiclient.APIError{StatusCode: http.StatusInternalServerError}, false, false},
		{"408", &apiclient.APIError{StatusCode: http.StatusRequestTimeout}, false, false},
		{"transport error", &apiclient.TransportError{Err: fmt.Errorf("connection reset")}, false, false},
		{"unreadable 2xx", &apiclient.DecodeError{StatusCode: 200, Err: apiclient.ErrMalformedJSON}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			byDefault := &lifecycle[*videov1alpha1.VideoRender]{}
			optedIn := &lifecycle[*videov1alpha1.VideoRender]{opts: Options{InternalErrorIsRefusal: true}}
			if got := byDefault.refused(tt.err); got != tt.want {
				t.Errorf("refused(%v) = %v by default, want %v", tt.err, got, tt.want)
			}
			if got := optedIn.refused(tt.err); got != tt.optIn {
				t.Errorf("refused(%v) = %v with InternalErrorIsRefusal, want %v", tt.err, got, tt.optIn)
			}
		})
	}
}

func TestFailureReason(t *testing.T) {
	tests := map[string]videov1alpha1.ConditionReason{
		"TEXT_TO_VIDEO_FAILED": videov1alpha1.ReasonJobFailed,
		"SOMETHING_NEW":        videov1alpha1.ReasonJobFailed,
		"JOB_NOT_FOUND":        videov1alpha1.ReasonJobNotFound,
		"INVALID_REQUEST_BODY": videov1alpha1.ReasonInvalidRequest,
		"HTTP_403":             videov1alpha1.ReasonInvalidRequest,
		"ProjectNotFound":      videov1alpha1.ReasonProjectNotFound,
		"":                     videov1alpha1.ReasonJobFailed,
	}
	for code, want := range tests {
		if got := failureReason(&videov1alpha1.JobFailure{Code: code}); got != want {
			t.Errorf("failureReason(%q) = %s, want %s", code, got, want)
		}
	}
}

func TestConversions(t *testing.T) {
	if got := decimal("12.5"); got != "12.5" {
		t.Errorf("decimal(12.5) = %q", got)
	}
	if got := decimal("1e3"); got != "1000" {
		t.Errorf("decimal(1e3) = %q, want a plain decimal the status schema accepts", got)
	}
	for _, zero := range []apiclient.Number{"0", "-0", "-0.0", "0.000"} {
		if got := decimal(zero); got != "0" {
			t.Errorf("decimal(%s) = %q, want 0 (the status pattern refuses a sign)", zero, got)
		}
	}
	if got := decimal(""); got != "" {
		t.Errorf("decimal(absent) = %q", got)
	}
	if got := seconds("61.5"); got == nil || got.Duration != 61500*time.Millisecond {
		t.Errorf("seconds(61.5) = %v", got)
	}
	if got := seconds("-1"); got != nil {
		t.Errorf("seconds(-1) = %v, want nil", got)
	}
	s := strings.Repeat("é", 10)
	if got := truncate(s, 5); !utf8.ValidString(got) {
		t.Errorf("truncate cut a rune: %q", got)
	}
	ref := credentials.RefOrDefault(nil)
	if ref.Name != videov1alpha1.DefaultAPIKeySecretName || ref.Key != videov1alpha1.DefaultAPIKeySecretKey {
		t.Errorf("default secret ref = %+v", ref)
	}
	if got := clampPercent(140); got != 100 {
		t.Errorf("clampPercent(140) = %d", got)
	}
}
