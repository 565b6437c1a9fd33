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
	"fmt"
	"strconv"
	"strings"
)

// JobCreated is the interface document's "Job-created response":
// {"success": true, "data": {"jobId": "<uuid>"}}, flattened.
type JobCreated struct {
	// Success is the response's "success".
	Success bool
	// JobID is the response's "data.jobId"; never empty in a value returned by the Client.
	JobID string
}

type jobCreatedWire struct {
	Success bool `json:"success"`
	Data    struct {
		JobID string `json:"jobId"`
	} `json:"data"`
}

// JobStatus is the job's "data.status" ("States and transitions").
//
// The document lists in-progress, completed and failed; the live service also answers at least
// "pending" and "cleaned". Any other value is kept verbatim and reported by IsKnown as unknown, so a
// caller can never mistake it for completed.
type JobStatus string

// The job states of "States and transitions".
const (
	JobStatusInProgress JobStatus = "in-progress"
	JobStatusCompleted  JobStatus = "completed"
	JobStatusFailed     JobStatus = "failed"
)

// IsKnown reports whether s is one of the three states of the interface document.
func (s JobStatus) IsKnown() bool {
	switch s {
	case JobStatusInProgress, JobStatusCompleted, JobStatusFailed:
		return true
	}
	return false
}

// IsTerminal reports whether the job has ended: completed or failed. Unknown statuses are not
// terminal, so a caller keeps polling rather than recording outputs that are not there.
func (s JobStatus) IsTerminal() bool { return s == JobStatusCompleted || s == JobStatusFailed }

// IsCompleted reports whether s is exactly "completed".
func (s JobStatus) IsCompleted() bool { return s == JobStatusCompleted }

// IsFailed reports whether s is exactly "failed".
func (s JobStatus) IsFailed() bool { return s == JobStatusFailed }

// Job is the interface document's "Job status response" (GET /v1/jobs/{jobid}). The same shape,
// plus webhookInput, is POSTed to the request's webhook when the job ends ("Events").
type Job struct {
	// JobID is "job_id".
	JobID string `json:"job_id,omitempty"`
	// ID is "id", the alternate identifier.
	ID string `json:"id,omitempty"`
	// Success is "success"; false when the job failed.
	Success bool `json:"success"`
	// Data is "data"; its fields vary by status.
	Data JobData `json:"data"`
	// WebhookInput is the request's webhookInput echoed in a webhook payload; empty on GET.
	WebhookInput json.RawMessage `json:"webhookInput,omitempty"`
}

// JobData holds the fields of a job's "data" object. Numbers are kept as Number so that no
// precision is lost (aiCreditsUsed 12.5 stays "12.5"); absent fields are zero values.
type JobData struct {
	// Status is "status"; see JobStatus for unknown values.
	Status JobStatus `json:"status"`
	// RenderProgress is "renderProgress", 0-100, once rendering has started.
	RenderProgress Number `json:"renderProgress,omitempty"`
	// RenderProgressMessage is "renderProgressMessage", progress text.
	RenderProgressMessage string `json:"renderProgressMessage,omitempty"`
	// RenderState is "renderState", for example "RUNNING".
	RenderState string `json:"renderState,omitempty"`
	// Progress is "progress"; 100 when completed.
	Progress Number `json:"progress,omitempty"`

	// VideoURL is "videoURL", the MP4 download URL.
	VideoURL string `json:"videoURL,omitempty"`
	// VideoShareURL is "videoShareURL".
	VideoShareURL string `json:"videoShareURL,omitempty"`
	// VideoEmbedURL is "videoEmbedURL", embeddable in an iframe.
	VideoEmbedURL string `json:"videoEmbedURL,omitempty"`
	// AudioURL is "audioURL", the MP3 track.
	AudioURL string `json:"audioURL,omitempty"`
	// Thumbnail is "thumbnail".
	Thumbnail string `json:"thumbnail,omitempty"`
	// SRTFile is "srtFile", captions.
	SRTFile string `json:"srtFile,omitempty"`
	// TXTFile is "txtFile", the transcript (for a brief-mode AI storyboard, the generated narration).
	TXTFile string `json:"txtFile,omitempty"`
	// VTTFile is "vttFile", captions.
	VTTFile string `json:"vttFile,omitempty"`

	// VideoDuration is "videoDuration" in seconds.
	VideoDuration Number `json:"videoDuration,omitempty"`
	// EncodingDuration is "encodingDuration" in seconds.
	EncodingDuration Number `json:"encodingDuration,omitempty"`
	// AICreditsUsed is "aiCreditsUsed", present only when scenes use aiVisual.
	AICreditsUsed Number `json:"aiCreditsUsed,omitempty"`

	// PlatformClearanceCode is "platformClearanceCode", for completed renders using library music.
	PlatformClearanceCode string `json:"platformClearanceCode,omitempty"`
	// PlatformClearanceExpiresAt is "platformClearanceExpiresAt", kept verbatim: the document does
	// not give its format (the simulator sends RFC 3339).
	PlatformClearanceExpiresAt string `json:"platformClearanceExpiresAt,omitempty"`

	// ErrorCode is "error_code" of a failed job, for example TEXT_TO_VIDEO_FAILED.
	ErrorCode string `json:"error_code,omitempty"`
	// ErrorMessage is "error_message" of a failed job.
	ErrorMessage string `json:"error_message,omitempty"`

	// Storyboard is a completed preview's output ("storyboard"), nil otherwise. Its shape is not
	// documented, so it is decoded best-effort and never makes the job unreadable; see Storyboard.
	Storyboard *Storyboard `json:"storyboard,omitempty"`

	// Raw is the whole "data" object as received, for fields this package does not model.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw object beside the decoded fields.
func (d *JobData) UnmarshalJSON(b []byte) error {
	type plain JobData
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*d = JobData(p)
	if !isJSONNull(b) {
		d.Raw = append(json.RawMessage(nil), b...)
	}
	return nil
}

// Storyboard is a completed preview job's output. The document gives only scene thumbnails,
// render parameters and, in brief mode, the narration in "storyboard.scenes[].story"; everything
// else is kept raw.
//
// Decoding is best-effort: the document never gives the shape of "storyboard", so an unexpected
// shape yields fewer (or no) scenes rather than an error, and a completed job stays readable.
// An object is read for "scenes" and "renderParams"; an array is taken as the list of scenes; any
// other value leaves only Raw.
type Storyboard struct {
	// Scenes is "scenes", or the storyboard itself when it is an array; nil when it is neither
	// an object holding an array of scenes nor an array.
	Scenes []StoryboardScene `json:"scenes,omitempty"`
	// RenderParams holds the render parameters. The document does not name the field; this
	// package reads "renderParams" (what the simulator sends), of any JSON type, and otherwise
	// leaves it empty.
	RenderParams json.RawMessage `json:"renderParams,omitempty"`
	// Raw is the whole storyboard value as received, whatever its JSON type.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw value beside what could be recognised in it. It fails only when b
// is not JSON, which encoding/json has already ruled out when it calls this method.
func (s *Storyboard) UnmarshalJSON(b []byte) error {
	if !json.Valid(b) {
		return fmt.Errorf("apiclient: decoding a preview storyboard: %w", ErrMalformedJSON)
	}
	*s = decodeStoryboard(b)
	return nil
}

// StoryboardScene is one scene of a preview's storyboard. Like Storyboard, it is decoded
// best-effort, because the document names "thumbnail" and "story" but gives no types for them.
type StoryboardScene struct {
	// Thumbnail is the scene thumbnail URL: "thumbnail" when it is a string, or the first
	// non-empty string among its "url", "src", "href" and "thumbnail" when it is an object;
	// otherwise empty.
	Thumbnail string `json:"thumbnail,omitempty"`
	// Story is the scene's narration (generated by the AI in brief mode): "story" when it is a
	// string, otherwise empty.
	Story string `json:"story,omitempty"`
	// Raw is the whole scene value as received, even when it is not an object; empty for null.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw value beside what could be recognised in it. It fails only when b
// is not JSON, which encoding/json has already ruled out when it calls this method.
func (s *StoryboardScene) UnmarshalJSON(b []byte) error {
	if !json.Valid(b) {
		return fmt.Errorf("apiclient: decoding a preview storyboard scene: %w", ErrMalformedJSON)
	}
	*s = decodeScene(b)
	return nil
}

// Status returns j.Data.Status.
func (j *Job) Status() JobStatus { return j.Data.Status }

// Failure returns the job's failure when data.status is "failed", and nil otherwise. A failed job
// is not an HTTP error (the service answers 200), so GetJob returns it as a normal result.
func (j *Job) Failure() *JobFailedError {
	if j == nil || j.Data.Status != JobStatusFailed {
		return nil
	}
	return &JobFailedError{JobID: j.JobID, Code: j.Data.ErrorCode, Message: j.Data.ErrorMessage}
}

// Err is Failure as an error: nil (an untyped nil) unless the job failed.
func (j *Job) Err() error {
	if f := j.Failure(); f != nil {
		return f
	}
	return nil
}

// DecodeJob decodes a job status response, or a webhook payload, which has the same shape. It
// is what GetJob uses after its checks on the HTTP exchange; the callback handler can use it too.
func DecodeJob(b []byte) (*Job, error) {
	var j Job
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// Brand is the interface document's "Video brand".
type Brand struct {
	// ID is "id", used as brandId in a render.
	ID string `json:"id"`
	// Name is "name", usable as brandName.
	Name string `json:"name"`
}

// Number is a JSON number kept as its decimal text, so nothing is lost to float rounding. It
// accepts a JSON number or a string holding one; null, an empty string and any other value
// decode to the zero Number (absent), because a malformed informational field such as
// renderProgress must not make the whole job status unreadable.
type Number string

// UnmarshalJSON implements json.Unmarshaler.
func (n *Number) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*n = ""
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	if b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return nil // tolerated: see the type's comment
		}
		s = strings.TrimSpace(s)
	}
	if isJSONNumber(s) {
		*n = Number(s)
	}
	return nil
}

// MarshalJSON writes the number bare, or null when absent.
func (n Number) MarshalJSON() ([]byte, error) {
	if n == "" {
		return []byte("null"), nil
	}
	if !isJSONNumber(string(n)) {
		return nil, fmt.Errorf("apiclient: %q is not a number", string(n))
	}
	return []byte(n), nil
}

// IsSet reports whether the field was present with a numeric value.
func (n Number) IsSet() bool { return n != "" }

// String returns the decimal text, "" when absent.
func (n Number) String() string { return string(n) }

// Float64 returns the value and whether it was set.
func (n Number) Float64() (float64, bool) {
	if n == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return f, err == nil
}

// Int64 returns the value truncated toward zero, clamped to the int64 range, and whether it was
// set. Progress values are documented as 0-100 but may come with a fraction.
func (n Number) Int64() (int64, bool) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, true
	}
	f, ok := n.Float64()
	if !ok {
		return 0, false
	}
	switch {
	case f >= 9.2e18:
		return 1<<63 - 1, true
	case f <= -9.2e18:
		return -1 << 63, true
	}
	return int64(f), true
}

// isJSONNumber reports whether s is a JSON number literal (json.Number's grammar).
func isJSONNumber(s string) bool {
	if s == "" {
		return false
	}
	i := 0
	if s[i] == '-' {
		i++
		if i == len(s) {
			return false
		}
	}
	switch {
	case s[i] == '0':
		i++
	case s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}

func isJSONNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }
