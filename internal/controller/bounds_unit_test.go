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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/testutil"
)

// Issue 9, case 7 "Status writes rejected forever": every bound the controller fits a service
// value into must be exactly the generated schema's maxLength, or the API server refuses the
// status write on every reconcile.
func TestBoundsMatchTheGeneratedSchema(t *testing.T) {
	render := testutil.StatusSchema(t, "video.videoops.io_videorenders.yaml")
	preview := testutil.StatusSchema(t, "video.videoops.io_videostoryboards.yaml")
	tests := []struct {
		schema apiextensionsv1.JSONSchemaProps
		path   string
		bound  int
	}{
		{render, "progressMessage", maxProgressMessage},
		{render, "renderState", maxRenderState},
		{render, "failure.code", maxFailureCode},
		{render, "failure.message", maxFailureMessage},
		{render, "outputs.videoURL", maxURL},
		{render, "outputs.videoShareURL", maxURL},
		{render, "outputs.videoEmbedURL", maxURL},
		{render, "outputs.audioURL", maxURL},
		{render, "outputs.thumbnail", maxURL},
		{render, "outputs.srtFile", maxURL},
		{render, "outputs.txtFile", maxURL},
		{render, "outputs.vttFile", maxURL},
		{render, "clearance.code", maxClearanceCode},
		{render, "lastHandledRetry", maxAnnotationValue},
		{render, "aiCreditsUsed", maxCredits},
		{render, "jobId", maxJobID},
		{render, "submission.retry", maxAnnotationValue},
		{preview, "preview.scenes[].thumbnail", maxURL},
		{preview, "preview.scenes[].story", maxPreviewStory},
		{preview, "progressMessage", maxProgressMessage},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p := lookup(t, tt.schema, tt.path)
			if p.MaxLength == nil || int(*p.MaxLength) != tt.bound {
				t.Fatalf("schema maxLength of status.%s is %v, the controller fits values into %d", tt.path, p.MaxLength, tt.bound)
			}
		})
	}
	if scenes := lookup(t, preview, "preview.scenes"); scenes.MaxItems == nil || int(*scenes.MaxItems) != maxPreviewScenes {
		t.Errorf("preview.scenes maxItems %v, the controller keeps up to %d", scenes.MaxItems, maxPreviewScenes)
	}
	omitted := lookup(t, render, "outputsOmitted")
	if omitted.MaxItems == nil || int(*omitted.MaxItems) != maxOmitted {
		t.Errorf("outputsOmitted maxItems %v, want %d", omitted.MaxItems, maxOmitted)
	}
	for _, s := range []apiextensionsv1.JSONSchemaProps{render, preview} {
		c := lookup(t, s, "conditions[].message")
		if c.MaxLength == nil || int(*c.MaxLength) < maxConditionMessage {
			t.Errorf("condition message maxLength %v is below %d", c.MaxLength, maxConditionMessage)
		}
	}
}

// lookup follows a dotted path; "[]" steps into a list's items.
func lookup(t *testing.T, s apiextensionsv1.JSONSchemaProps, path string) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	for _, part := range strings.Split(path, ".") {
		name, list := strings.CutSuffix(part, "[]")
		next, ok := s.Properties[name]
		if !ok {
			t.Fatalf("status schema has no %q (in %s)", name, path)
		}
		s = next
		if list {
			s = *s.Items.Schema
		}
	}
	return s
}

func TestTruncateByRunes(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdefgh", 5, "abcd…"},
		{strings.Repeat("é", 10), 5, "éééé…"},
		{"日本語のテキスト", 3, "日本…"},
		{"ab", 1, "…"},
		{"ab", 0, ""},
	}
	for _, tt := range tests {
		got := truncate(tt.in, tt.n)
		if got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
		if utf8.RuneCountInString(got) > tt.n {
			t.Errorf("truncate(%q, %d) has %d characters", tt.in, tt.n, utf8.RuneCountInString(got))
		}
	}
}

// Issue 9, case 16 "Events over 1 KiB are refused": the note is cut to the events API's limit in
// bytes, on a rune boundary.
func TestBoundedRecorder(t *testing.T) {
	rec := events.NewFakeRecorder(4)
	r := boundedRecorder{fakeAnnotated{rec}}
	long := strings.Repeat("€", 2000) // 6000 bytes
	r.Eventf(nil, nil, "Warning", "JobFailed", "Fail", "Job %s failed: %s", "j1", long)
	r.Eventf(nil, nil, "Normal", "Submitted", "Submit", "a note with a literal 100%% and no args")
	got := []string{<-rec.Events, <-rec.Events}
	note := strings.TrimPrefix(got[0], "Warning JobFailed ")
	if len(note) > maxEventNote || !utf8.ValidString(note) || !strings.HasPrefix(note, "Job j1 failed: €") || !strings.HasSuffix(note, ellipsis) {
		t.Errorf("bounded note: %d bytes, valid %v, %q…", len(note), utf8.ValidString(note), note[:40])
	}
	if got[1] != "Normal Submitted a note with a literal 100% and no args" {
		t.Errorf("formatted note = %q", got[1])
	}
}

// fakeAnnotated adds AnnotatedEventf to client-go's fake recorder.
type fakeAnnotated struct{ *events.FakeRecorder }

func (f fakeAnnotated) AnnotatedEventf(regarding, related runtime.Object, _ map[string]string, eventtype, reason, action, note string, args ...any) {
	f.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// Issue 9, case 15: the Reconciling message of a backoff must not change from one try to the
// next, or every try is a status write.
func TestDescribeAnswerIsStable(t *testing.T) {
	pairs := [][2]error{
		{&apiclient.APIError{StatusCode: http.StatusTooManyRequests, RetryAfter: time.Second, Message: "slow down 1"},
			&apiclient.APIError{StatusCode: http.StatusTooManyRequests, RetryAfter: 7 * time.Second, Message: "slow down 2"}},
		{&apiclient.TransportError{Err: errors.New("dial tcp 127.0.0.1:41234: connect: connection refused")},
			&apiclient.TransportError{Err: errors.New("dial tcp 127.0.0.1:41235: connect: connection refused")}},
		{&apiclient.TransportError{Err: context.DeadlineExceeded}, &apiclient.TransportError{Err: context.DeadlineExceeded}},
	}
	for _, p := range pairs {
		if a, b := describeAnswer(p[0]), describeAnswer(p[1]); a != b {
			t.Errorf("describeAnswer changes between tries: %q vs %q", a, b)
		}
	}
	if got := describeAnswer(&apiclient.APIError{StatusCode: 404, Message: "404 page not found"}); got != "HTTP 404: 404 page not found" {
		t.Errorf("a 404 says what the service answered: %q", got)
	}
}

// Issue 9, case 15 "Worker held for minutes": the job-id write is retried a few times within
// milliseconds, re-reading the object, and then left to the memo; it never holds the worker in
// a long backoff.
func TestWriteJobIDGivesUpQuicklyAndKeepsTheJobInMemory(t *testing.T) {
	s := runtime.NewScheme()
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	vr := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Generation: 1}}
	vr.Status.Submission = &videov1alpha1.Submission{Generation: 1, AttemptID: "attempt-1"}
	attempts := 0
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(vr).WithStatusSubresource(vr).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			attempts++
			return errors.New("injected: the API server is unavailable")
		}}).Build()
	r, err := NewReconcilers(c, Options{ClientFactory: &apiclient.FakeFactory{Client: &apiclient.Fake{}}, APIReader: c,
		Recorder: fakeAnnotated{events.NewFakeRecorder(10)}})
	if err != nil {
		t.Fatal(err)
	}
	l := r.Render.lifecycle
	obj := &videov1alpha1.VideoRender{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(vr), obj); err != nil {
		t.Fatal(err)
	}
	sc := l.newScope(obj)
	sc.attempt = "attempt-1"
	l.memo.Remember("attempt-1", "job-1", false)
	l.recordSubmitted(sc, "job-1", false)
	if err := l.writeJobID(context.Background(), sc, "job-1", false); err == nil {
		t.Fatal("writeJobID succeeded although every write failed")
	}
	if attempts != 3 {
		t.Errorf("writeJobID tried %d writes, want 3 quick tries before leaving the job to the memo", attempts)
	}
	if job, ok := l.memo.Lookup("attempt-1"); !ok || job != "job-1" {
		t.Errorf("the memo lost the job: %q %v", job, ok)
	}
}

// Issue 10, "An audit trail of money": every paid submission is logged, none sampled away, as
// JSON a platform team can reconcile against the service's bill.
func TestAuditLoggerDoesNotSample(t *testing.T) {
	var buf bytes.Buffer
	audit := NewAuditLogger(&buf)
	const n = 1000
	for i := range n {
		audit.Info("Paid submission", "attempt", fmt.Sprintf("a%d", i), "outcome", "accepted")
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != n {
		t.Fatalf("%d audit lines for %d submissions", len(lines), n)
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatalf("an audit line is not JSON: %v: %s", err, lines[0])
	}
	if first["logger"] != "audit" || first["outcome"] != "accepted" || first["attempt"] != "a0" {
		t.Errorf("audit line fields: %v", first)
	}
}

// An audit line names its object as controller-runtime's reconciler logs do (the kind as key of
// a klog.KObj reference) and keeps the flat namespace and name a bill reconciliation reads
// (docs/operating.md).
func TestAuditLineNamesItsObject(t *testing.T) {
	var buf bytes.Buffer
	vr := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "promo"}}
	NewAuditLogger(&buf).Info("Paid submission", append(auditObject(vr.JobKind(), vr), "outcome", "accepted")...)
	var line struct {
		Kind      string            `json:"kind"`
		Ref       map[string]string `json:"VideoRender"`
		Namespace string            `json:"namespace"`
		Name      string            `json:"name"`
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("an audit line is not JSON: %v: %s", err, buf.String())
	}
	if line.Kind != "VideoRender" || line.Ref["name"] != "promo" || line.Ref["namespace"] != "tenant" ||
		line.Namespace != "tenant" || line.Name != "promo" {
		t.Errorf("audit line %s: want kind, a VideoRender reference and the flat namespace and name", buf.String())
	}
}

// Issue 10, "Client and credential hardening": the cache holds no Secret annotation (where
// kubectl keeps the Secret's data) and no managedFields; a video's annotations stay, the retry
// and confirm-resubmit annotations are read from the cache.
func TestCacheTransform(t *testing.T) {
	secret := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "video-api-key",
		Annotations:   map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"apiKey":"c2stdmlkZW8="}}`},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	out, err := CacheTransform(secret)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*metav1.PartialObjectMetadata); got.Annotations != nil || got.ManagedFields != nil {
		t.Errorf("Secret metadata kept annotations or managedFields: %+v", got.ObjectMeta)
	}
	vr := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Name: "v",
		Annotations:   map[string]string{videov1alpha1.AnnotationRetry: "1", lastApplied: `{"spec":{"storyboard":{"scenes":[]}}}`},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	out, err = CacheTransform(vr)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*videov1alpha1.VideoRender); len(got.Annotations) != 1 || got.Annotations[videov1alpha1.AnnotationRetry] != "1" || got.ManagedFields != nil {
		t.Errorf("VideoRender: annotations %v (want only the retry one), managedFields %v", got.Annotations, got.ManagedFields)
	}
}

// Issue 9, case 5 and the second review: a storyboardRef render's job belongs to one
// VideoStoryboard, by uid; a job recorded before uids were recorded belongs to another storyboard
// only if that one was created after the job.
func TestSameSource(t *testing.T) {
	submitted := metav1.NewTime(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	tests := []struct {
		name       string
		recorded   string
		target     string
		created    time.Time
		generation int64
		want       bool
	}{
		{"same uid", "uid-a", "uid-a", submitted.Add(time.Hour), 1, true},
		{"recreated storyboard", "uid-a", "uid-b", submitted.Add(-time.Hour), 1, false},
		{"other generation", "uid-a", "uid-a", submitted.Add(-time.Hour), 2, false},
		{"legacy job, storyboard older than it", "", "uid-b", submitted.Add(-time.Hour), 1, true},
		{"legacy job, storyboard created after it", "", "uid-b", submitted.Add(time.Hour), 1, false},
		{"inline storyboard", "", "", time.Time{}, 0, true},
	}
	l := &lifecycle[*videov1alpha1.VideoRender]{adapter: renderAdapter{}}
	for _, tt := range tests {
		vr := &videov1alpha1.VideoRender{}
		vr.Status.StoryboardGeneration = 1
		if tt.target == "" {
			vr.Status.StoryboardGeneration = 0
		}
		vr.Status.StoryboardUID = tt.recorded
		vr.Status.SubmittedAt = &submitted
		got := l.sameSource(vr, &target{sourceGeneration: tt.generation, sourceUID: types.UID(tt.target), sourceCreated: tt.created})
		if got != tt.want {
			t.Errorf("%s: sameSource = %v, want %v", tt.name, got, tt.want)
		}
	}
}
