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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Error codes named by the interface document ("Errors"). The document says its list is not
// complete, so callers compare against these but must expect others.
const (
	CodeInvalidRequestBody = "INVALID_REQUEST_BODY"
	CodeInternalError      = "INTERNAL_ERROR"
	CodeJobNotFound        = "JOB_NOT_FOUND"
	CodeTextToVideoFailed  = "TEXT_TO_VIDEO_FAILED"
)

// maxRetryAfter bounds a server-given Retry-After so that a bogus header cannot park a caller
// for days.
const maxRetryAfter = time.Hour

// FieldError is one entry of a 400 response's "fields": the offending field's path (for example
// "scenes[0].story") and what is wrong with it.
type FieldError struct {
	Name   string `json:"name"`
	Errors string `json:"errors"`
}

// UnmarshalJSON accepts "errors" as the documented string and, tolerantly, as a list of strings.
func (f *FieldError) UnmarshalJSON(b []byte) error {
	var w struct {
		Name   string          `json:"name"`
		Errors json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	f.Name, f.Errors = w.Name, ""
	if len(w.Errors) == 0 || isJSONNull(w.Errors) {
		return nil
	}
	var s string
	if json.Unmarshal(w.Errors, &s) == nil {
		f.Errors = s
		return nil
	}
	var list []string
	if json.Unmarshal(w.Errors, &list) == nil {
		f.Errors = strings.Join(list, "; ")
		return nil
	}
	f.Errors = string(w.Errors)
	return nil
}

// APIError is an HTTP error answer of the service, or a JOB_NOT_FOUND answer whatever its HTTP
// status ("Errors"). Shapes understood:
//
//	400 {code, message, fields: [{name, errors}]}
//	401 {message}
//	404, 409 {success: false, message}
//	429 no body given; Retry-After (seconds or HTTP date) is read when present
//	500 {error: {code, message}}
//	JOB_NOT_FOUND: code JOB_NOT_FOUND (top level, in error, or as data.error_code) and id
//
// The document does not give the HTTP status of JOB_NOT_FOUND; the simulator answers 404, and
// IsJobNotFound looks only at the code.
type APIError struct {
	// Endpoint is the endpoint name, one of the Endpoint constants.
	Endpoint string
	// StatusCode is the HTTP status.
	StatusCode int
	// Code is the service's error code, when the body gave one.
	Code string
	// Message is the service's message, or a description of a body that was not JSON.
	Message string
	// Fields are the field errors of a 400.
	Fields []FieldError
	// ID is the "id" of a JOB_NOT_FOUND answer.
	ID string
	// RetryAfter is the parsed Retry-After header, 0 when absent.
	RetryAfter time.Duration
	// SuccessFalse is true when the body was JSON with "success": false, the documented shape
	// of the 404 and 409 of render project. A 404 without it (a proxy's page, a wrong base URL)
	// says nothing about the project.
	SuccessFalse bool
}

// Error implements error. It never contains the API key.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "video service %s: HTTP %d", e.Endpoint, e.StatusCode)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if len(e.Fields) > 0 {
		const shown = 5
		parts := make([]string, 0, shown+1)
		for i, f := range e.Fields {
			if i == shown {
				parts = append(parts, fmt.Sprintf("and %d more", len(e.Fields)-shown))
				break
			}
			parts = append(parts, f.Name+": "+f.Errors)
		}
		b.WriteString(" (" + strings.Join(parts, "; ") + ")")
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

// JobFailedError is a job that ended in data.status "failed" (HTTP 200, success false,
// error_code and error_message). GetJob does not return it as its error: see Job.Failure.
type JobFailedError struct {
	JobID   string
	Code    string
	Message string
}

// Error implements error.
func (e *JobFailedError) Error() string {
	code := e.Code
	if code == "" {
		code = "no error_code"
	}
	return fmt.Sprintf("video service job %s failed: %s: %s", e.JobID, code, e.Message)
}

// TransportError is a request that failed below HTTP: connection refused, reset, a timeout, or a
// body cut short. The request may or may not have reached the service.
type TransportError struct {
	Endpoint string
	Err      error
}

// Error implements error.
func (e *TransportError) Error() string {
	return fmt.Sprintf("video service %s: request failed: %v", e.Endpoint, e.Err)
}

// Unwrap returns the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// Timeout reports whether the request timed out.
func (e *TransportError) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.Is(e.Err, context.DeadlineExceeded) || (errors.As(e.Err, &t) && t.Timeout())
}

// DecodeError is a 2xx answer whose body could not be used: not JSON (for example an HTML page
// from a proxy), malformed or truncated JSON, JSON without the expected fields, or a body over the
// size limit. The request reached the service, so for a submission a job may exist.
type DecodeError struct {
	Endpoint    string
	StatusCode  int
	ContentType string
	// Snippet is the start of the body, at most a couple of hundred bytes, with the API key
	// removed and control characters replaced.
	Snippet string
	Err     error
}

// Error implements error.
func (e *DecodeError) Error() string {
	ct := e.ContentType
	if ct == "" {
		ct = "no content type"
	}
	msg := fmt.Sprintf("video service %s: HTTP %d (%s): %v", e.Endpoint, e.StatusCode, ct, e.Err)
	if e.Snippet != "" {
		msg += fmt.Sprintf("; body starts %q", e.Snippet)
	}
	return msg
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// NotSentError is a failure before anything was sent: a bad argument, a body that does not
// serialise, or a rate-limiter wait that ended because the context did. Such a call is safe to
// repeat without risk of a second job.
type NotSentError struct {
	Endpoint string
	Err      error
}

// Error implements error.
func (e *NotSentError) Error() string {
	return fmt.Sprintf("video service %s: request not sent: %v", e.Endpoint, e.Err)
}

// Unwrap returns the cause.
func (e *NotSentError) Unwrap() error { return e.Err }

// Sentinel causes wrapped by the errors above.
var (
	// ErrBodyTooLarge: the response body exceeded Options.MaxResponseBytes.
	ErrBodyTooLarge = errors.New("response body exceeds the size limit")
	// ErrNotJSON: the response body is not JSON at all (for example an HTML page).
	ErrNotJSON = errors.New("response body is not JSON")
	// ErrMalformedJSON: the body looks like JSON but does not parse (for example truncated).
	ErrMalformedJSON = errors.New("response body is malformed JSON")
	// ErrUnexpectedShape: the JSON parsed but lacks what the document promises (no data.jobId).
	ErrUnexpectedShape = errors.New("response body lacks expected fields")
)

func asAPIError(err error) (*APIError, bool) {
	var e *APIError
	ok := errors.As(err, &e)
	return e, ok
}

func hasStatus(err error, code int) bool {
	e, ok := asAPIError(err)
	return ok && e.StatusCode == code
}

// IsUnauthorized reports a 401: the key is missing, invalid, or sent with a Bearer prefix. Only a
// human can fix it.
func IsUnauthorized(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsRateLimited reports a 429. RetryAfter gives the server's wait when it sent one.
func IsRateLimited(err error) bool { return hasStatus(err, http.StatusTooManyRequests) }

// IsNotFound reports a 404 that is not JOB_NOT_FOUND: for render project, the project does not
// exist.
func IsNotFound(err error) bool {
	e, ok := asAPIError(err)
	return ok && e.StatusCode == http.StatusNotFound && e.Code != CodeJobNotFound
}

// IsJobNotFound reports a JOB_NOT_FOUND answer, whatever its HTTP status: the job id is unknown
// to the service, or the service has cleaned the job.
func IsJobNotFound(err error) bool {
	e, ok := asAPIError(err)
	return ok && e.Code == CodeJobNotFound
}

// IsConflict reports a 409: for render project, the project is already being rendered.
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

// IsInvalidRequest reports a 400; FieldErrors lists what the service rejected.
func IsInvalidRequest(err error) bool { return hasStatus(err, http.StatusBadRequest) }

// IsJobFailed reports a *JobFailedError (from Job.Err).
func IsJobFailed(err error) bool {
	var e *JobFailedError
	return errors.As(err, &e)
}

// IsRetryable reports a failure worth retrying later with back-off: 429, 408, any 5xx, a
// transport error or timeout, a connection that could not be opened, and an unusable 2xx body (usually a proxy's doing) unless it was
// merely too large, which a retry will not change. It is false once the caller's own context is
// cancelled.
//
// For the submit endpoints, retryable does not mean "no job was created": after a transport
// error, a 5xx or a DecodeError the service may have created the job. Use IsNotSubmitted to know
// that a resubmission cannot pay twice.
func IsRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if e, ok := asAPIError(err); ok {
		return e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusRequestTimeout ||
			e.StatusCode >= 500
	}
	var te *TransportError
	var de *DecodeError
	var ns *NotSentError
	return errors.As(err, &te) || (errors.As(err, &de) && !errors.Is(err, ErrBodyTooLarge)) ||
		(errors.As(err, &ns) && isDialError(ns.Err))
}

// IsNotSubmitted reports an error after which the service certainly created no job: the request
// was never sent (NotSentError), or the service refused it with a 4xx (400, 401, 404, 409, 429).
// A 5xx, a transport error or an unusable 2xx body leaves the outcome unknown.
func IsNotSubmitted(err error) bool {
	var ns *NotSentError
	if errors.As(err, &ns) {
		return true
	}
	e, ok := asAPIError(err)
	return ok && e.StatusCode >= 400 && e.StatusCode < 500 && e.StatusCode != http.StatusRequestTimeout
}

// RetryAfter returns the server's Retry-After of a 429 or 503, or 0.
func RetryAfter(err error) time.Duration {
	if e, ok := asAPIError(err); ok {
		return e.RetryAfter
	}
	return 0
}

// FieldErrors returns the field errors of a 400, or nil.
func FieldErrors(err error) []FieldError {
	if e, ok := asAPIError(err); ok {
		return e.Fields
	}
	return nil
}

// errorBody is the union of every error shape of "Errors".
type errorBody struct {
	Success *bool           `json:"success"`
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Fields  []FieldError    `json:"fields"`
	ID      string          `json:"id"`
	Error   json.RawMessage `json:"error"`
	Data    *struct {
		ErrorCode    string `json:"error_code"`
		ErrorMessage string `json:"error_message"`
	} `json:"data"`
}

// nested reads the 500 shape {error: {code, message}}, tolerating a bare string.
func (b *errorBody) nested() (code, msg string) {
	if len(b.Error) == 0 || isJSONNull(b.Error) {
		return "", ""
	}
	var obj struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(b.Error, &obj) == nil {
		return obj.Code, obj.Message
	}
	var s string
	if json.Unmarshal(b.Error, &s) == nil {
		return "", s
	}
	return "", ""
}

// parseErrorBody fills an APIError from a body of any documented shape. Bodies that are not JSON
// are described, not parsed. redact removes the API key from anything taken from the body.
func parseErrorBody(endpoint string, status int, header http.Header, body []byte, now time.Time,
	redact func(string) string) *APIError {
	e := &APIError{Endpoint: endpoint, StatusCode: status}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		e.RetryAfter = parseRetryAfter(header.Get("Retry-After"), now)
	}
	var b errorBody
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0:
		e.Message = http.StatusText(status)
	case json.Unmarshal(trimmed, &b) != nil:
		e.Message = describeBody(header.Get("Content-Type"), trimmed, redact)
	default:
		nc, nm := b.nested()
		e.Code = firstNonEmpty(b.Code, nc)
		e.Message = firstNonEmpty(b.Message, nm)
		if b.Data != nil && e.Code == "" && b.Data.ErrorCode == CodeJobNotFound {
			e.Code, e.Message = b.Data.ErrorCode, firstNonEmpty(e.Message, b.Data.ErrorMessage)
		}
		e.Fields = b.Fields
		e.ID = b.ID
		e.SuccessFalse = b.Success != nil && !*b.Success
	}
	e.Code, e.Message, e.ID = redact(e.Code), redact(e.Message), redact(e.ID)
	for i := range e.Fields {
		e.Fields[i].Name, e.Fields[i].Errors = redact(e.Fields[i].Name), redact(e.Fields[i].Errors)
	}
	return e
}

// jobNotFound recognises JOB_NOT_FOUND in a 2xx job answer: the document gives the code and the
// id field but neither the status nor where the code sits.
func jobNotFound(endpoint string, status int, body []byte, redact func(string) string) *APIError {
	var b errorBody
	if json.Unmarshal(body, &b) != nil {
		return nil
	}
	nc, nm := b.nested()
	var dc, dm string
	if b.Data != nil {
		dc, dm = b.Data.ErrorCode, b.Data.ErrorMessage
	}
	for _, c := range []struct{ code, msg string }{{b.Code, b.Message}, {nc, nm}, {dc, dm}} {
		if c.code == CodeJobNotFound {
			return &APIError{Endpoint: endpoint, StatusCode: status, Code: CodeJobNotFound,
				Message: redact(firstNonEmpty(c.msg, b.Message)), ID: redact(b.ID)}
		}
	}
	return nil
}

// describeBody says what a non-JSON body is, with a short, key-free snippet.
func describeBody(contentType string, body []byte, redact func(string) string) string {
	kind := "not JSON"
	if looksLikeJSON(body) {
		kind = "malformed JSON"
	}
	ct := contentType
	if ct == "" {
		ct = "no content type"
	}
	return fmt.Sprintf("response body is %s (%s), starts %q", kind, ct, snippet(body, redact))
}

func looksLikeJSON(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && (b[0] == '{' || b[0] == '[' || b[0] == '"')
}

const snippetBytes = 160

// snippet returns the start of a body for an error message: key removed, control characters
// replaced, valid UTF-8, at most snippetBytes.
func snippet(body []byte, redact func(string) string) string {
	// Redact before cutting, so that a key straddling the cut cannot leak its first half.
	s := redact(strings.ToValidUTF8(string(body), "?"))
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > snippetBytes {
		cut := snippetBytes
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// parseRetryAfter reads delay-seconds or an HTTP date; anything else, or a time in the past,
// gives 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	if d <= 0 {
		return 0
	}
	return min(d, maxRetryAfter)
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}
