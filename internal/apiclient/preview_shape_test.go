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
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Issue 9, case 14 "Undocumented preview shape". The interface document ("Job status response")
// says only that a completed preview returns scene thumbnails and render parameters, and a
// brief-mode preview its narration in storyboard.scenes[].story; it never gives the shape of
// data.storyboard. Whatever shape the service sends, the job must stay readable and what can be
// recognised must be extracted.

// wantScene is one scene expected from a storyboard; raw is the scene's bytes ("" for none).
type wantScene struct{ thumbnail, story, raw string }

// previewShapeCase is a data.storyboard value and what decoding it must give.
type previewShapeCase struct {
	name       string
	storyboard string // the raw JSON value of data.storyboard
	scenes     []wantScene
	// renderParams is the expected RenderParams bytes, "" for none.
	renderParams string
}

var previewShapeCases = []previewShapeCase{
	{
		name:         "Undocumented preview shape: the shape the simulator sends",
		storyboard:   `{"scenes":[{"thumbnail":"https://cdn/1.jpg","story":"One."}],"renderParams":{"a":1}}`,
		scenes:       []wantScene{{"https://cdn/1.jpg", "One.", `{"thumbnail":"https://cdn/1.jpg","story":"One."}`}},
		renderParams: `{"a":1}`,
	},
	{
		name:       "Undocumented preview shape: storyboard is an array of scenes",
		storyboard: `[{"thumbnail":"https://cdn/1.jpg","story":"One."},{"thumbnail":"https://cdn/2.jpg"}]`,
		scenes: []wantScene{
			{"https://cdn/1.jpg", "One.", `{"thumbnail":"https://cdn/1.jpg","story":"One."}`},
			{"https://cdn/2.jpg", "", `{"thumbnail":"https://cdn/2.jpg"}`},
		},
	},
	{
		name:       "Undocumented preview shape: storyboard is an array of odd scenes",
		storyboard: `[{"thumbnail":{"src":"https://cdn/1.jpg"},"story":7},"scene two",null]`,
		scenes: []wantScene{
			{"https://cdn/1.jpg", "", `{"thumbnail":{"src":"https://cdn/1.jpg"},"story":7}`},
			{"", "", `"scene two"`},
			{"", "", ""},
		},
	},
	{name: "Undocumented preview shape: storyboard is an empty array", storyboard: `[]`},
	{name: "Undocumented preview shape: storyboard is a string", storyboard: `"https://cdn/storyboard.json"`},
	{name: "Undocumented preview shape: storyboard is a number", storyboard: `42.5`},
	{name: "Undocumented preview shape: storyboard is a bool", storyboard: `true`},
	{name: "Undocumented preview shape: storyboard is an empty object", storyboard: `{}`},
	{
		name:         "Undocumented preview shape: scenes is an object",
		storyboard:   `{"scenes":{"0":{"thumbnail":"https://cdn/1.jpg","story":"One."}},"renderParams":{"a":1}}`,
		renderParams: `{"a":1}`,
	},
	{name: "Undocumented preview shape: scenes is a string", storyboard: `{"scenes":"none"}`},
	{name: "Undocumented preview shape: scenes is a number", storyboard: `{"scenes":3}`},
	{name: "Undocumented preview shape: scenes is null", storyboard: `{"scenes":null}`},
	{
		name:       "Undocumented preview shape: thumbnail is an object with url and width",
		storyboard: `{"scenes":[{"thumbnail":{"url":"https://cdn/1.jpg","width":320},"story":"One."}]}`,
		scenes: []wantScene{{"https://cdn/1.jpg", "One.",
			`{"thumbnail":{"url":"https://cdn/1.jpg","width":320},"story":"One."}`}},
	},
	{
		name: "Undocumented preview shape: thumbnail object fields in order url, src, href, thumbnail",
		storyboard: `{"scenes":[` +
			`{"thumbnail":{"src":"s","url":"u"}},` +
			`{"thumbnail":{"href":"h","src":"s"}},` +
			`{"thumbnail":{"thumbnail":"t","href":"h"}},` +
			`{"thumbnail":{"thumbnail":"t","height":180}},` +
			`{"thumbnail":{"url":7,"src":null,"href":{"x":"y"},"thumbnail":"t"}},` +
			`{"thumbnail":{"url":"","src":"s"}},` +
			`{"thumbnail":{"width":320,"height":180}},` +
			`{"thumbnail":{}}]}`,
		scenes: []wantScene{
			{"u", "", `{"thumbnail":{"src":"s","url":"u"}}`},
			{"s", "", `{"thumbnail":{"href":"h","src":"s"}}`},
			{"h", "", `{"thumbnail":{"thumbnail":"t","href":"h"}}`},
			{"t", "", `{"thumbnail":{"thumbnail":"t","height":180}}`},
			{"t", "", `{"thumbnail":{"url":7,"src":null,"href":{"x":"y"},"thumbnail":"t"}}`},
			{"s", "", `{"thumbnail":{"url":"","src":"s"}}`},
			{"", "", `{"thumbnail":{"width":320,"height":180}}`},
			{"", "", `{"thumbnail":{}}`},
		},
	},
	{
		name:       "Undocumented preview shape: thumbnail neither string nor object",
		storyboard: `{"scenes":[{"thumbnail":320,"story":"a"},{"thumbnail":["u"],"story":"b"},{"thumbnail":true,"story":"c"},{"thumbnail":null,"story":"d"}]}`,
		scenes: []wantScene{
			{"", "a", `{"thumbnail":320,"story":"a"}`},
			{"", "b", `{"thumbnail":["u"],"story":"b"}`},
			{"", "c", `{"thumbnail":true,"story":"c"}`},
			{"", "d", `{"thumbnail":null,"story":"d"}`},
		},
	},
	{
		name:       "Undocumented preview shape: story not a string",
		storyboard: `{"scenes":[{"thumbnail":"t1","story":7},{"thumbnail":"t2","story":null},{"thumbnail":"t3","story":{"text":"x"}},{"thumbnail":"t4","story":["x"]},{"thumbnail":"t5","story":false}]}`,
		scenes: []wantScene{
			{"t1", "", `{"thumbnail":"t1","story":7}`},
			{"t2", "", `{"thumbnail":"t2","story":null}`},
			{"t3", "", `{"thumbnail":"t3","story":{"text":"x"}}`},
			{"t4", "", `{"thumbnail":"t4","story":["x"]}`},
			{"t5", "", `{"thumbnail":"t5","story":false}`},
		},
	},
	{
		name:       "Undocumented preview shape: scene elements that are not objects",
		storyboard: `{"scenes":[1,"two",true,["x"],null,{"thumbnail":"t","story":"s"}]}`,
		scenes: []wantScene{
			{"", "", `1`}, {"", "", `"two"`}, {"", "", `true`}, {"", "", `["x"]`},
			{"", "", ""}, // a null scene has no Raw, as before
			{"t", "s", `{"thumbnail":"t","story":"s"}`},
		},
	},
	{name: "Undocumented preview shape: renderParams a string", storyboard: `{"renderParams":"fast"}`, renderParams: `"fast"`},
	{name: "Undocumented preview shape: renderParams an array", storyboard: `{"renderParams":[1,2]}`, renderParams: `[1,2]`},
	{name: "Undocumented preview shape: renderParams null", storyboard: `{"renderParams":null}`, renderParams: `null`},
	{
		name:       "Undocumented preview shape: whitespace kept in Raw",
		storyboard: "{ \"scenes\" : [ { \"thumbnail\" : { \"url\" : \"u\" } , \"story\" : \"s\" } ] ,\n\t\"renderParams\" : { } }",
		scenes:     []wantScene{{"u", "s", `{ "thumbnail" : { "url" : "u" } , "story" : "s" }`}},
		// renderParams is kept as received.
		renderParams: `{ }`,
	},
	{
		// encoding/json matches keys without regard to case; the best-effort decoding keeps that.
		name:         "Undocumented preview shape: keys in another case",
		storyboard:   `{"Scenes":[{"Thumbnail":{"URL":"u"},"STORY":"s"}],"RenderParams":{"a":1}}`,
		scenes:       []wantScene{{"u", "s", `{"Thumbnail":{"URL":"u"},"STORY":"s"}`}},
		renderParams: `{"a":1}`,
	},
	{
		name:       "Undocumented preview shape: unicode escapes in strings",
		storyboard: `{"scenes":[{"thumbnail":{"url":"https://cdn/\u00e9.jpg"},"story":"caf\u00e9 \ud83d\ude00"}]}`,
		scenes: []wantScene{{"https://cdn/é.jpg", "café 😀",
			`{"thumbnail":{"url":"https://cdn/\u00e9.jpg"},"story":"caf\u00e9 \ud83d\ude00"}`}},
	},
}

// previewJobBody is a completed preview job whose data.storyboard is sb.
func previewJobBody(sb string) string {
	return `{"job_id":"j-1","success":true,"data":{"status":"completed","progress":100,` +
		`"videoURL":"https://cdn/v.mp4","storyboard":` + sb + `},"webhookInput":{"attemptId":"a-1"}}`
}

// checkPreviewJob asserts that j is the completed job of previewJobBody(tc.storyboard) with the
// storyboard tc describes.
func checkPreviewJob(t *testing.T, j *Job, tc previewShapeCase) {
	t.Helper()
	if j == nil {
		t.Fatal("no job")
	}
	if !j.Status().IsCompleted() || !j.Success || j.JobID != "j-1" || j.Failure() != nil {
		t.Errorf("job %q status %q success %v failure %v", j.JobID, j.Status(), j.Success, j.Failure())
	}
	if j.Data.VideoURL != "https://cdn/v.mp4" || j.Data.Progress != "100" || string(j.WebhookInput) != `{"attemptId":"a-1"}` {
		t.Errorf("other fields lost: videoURL %q progress %q webhookInput %s", j.Data.VideoURL, j.Data.Progress, j.WebhookInput)
	}
	sb := j.Data.Storyboard
	if sb == nil {
		t.Fatal("storyboard dropped")
	}
	if string(sb.Raw) != tc.storyboard {
		t.Errorf("Raw %s, want %s", sb.Raw, tc.storyboard)
	}
	if string(sb.RenderParams) != tc.renderParams {
		t.Errorf("RenderParams %s, want %q", sb.RenderParams, tc.renderParams)
	}
	if len(sb.Scenes) != len(tc.scenes) {
		t.Fatalf("%d scenes %+v, want %d", len(sb.Scenes), sb.Scenes, len(tc.scenes))
	}
	for i, w := range tc.scenes {
		got := sb.Scenes[i]
		if got.Thumbnail != w.thumbnail || got.Story != w.story || string(got.Raw) != w.raw {
			t.Errorf("scene %d: thumbnail %q story %q raw %s; want %q %q %s", i, got.Thumbnail, got.Story, got.Raw, w.thumbnail, w.story, w.raw)
		}
	}
}

func TestUndocumentedPreviewShapeDecodeJob(t *testing.T) {
	for _, tc := range previewShapeCases {
		t.Run(tc.name, func(t *testing.T) {
			j, err := DecodeJob([]byte(previewJobBody(tc.storyboard)))
			if err != nil {
				t.Fatalf("DecodeJob: %v", err)
			}
			checkPreviewJob(t, j, tc)
		})
	}
}

// GetJob must not turn an odd storyboard into a DecodeError: the job would be unreadable forever.
func TestUndocumentedPreviewShapeGetJob(t *testing.T) {
	for _, tc := range previewShapeCases {
		t.Run(tc.name, func(t *testing.T) {
			base := handlerServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, previewJobBody(tc.storyboard))
			})
			j, err := newClient(t, base, testKey).GetJob(ctxT(t), "j-1")
			if err != nil {
				t.Fatalf("GetJob: %v", err)
			}
			checkPreviewJob(t, j, tc)
		})
	}
}

// A null or absent storyboard is still no storyboard.
func TestUndocumentedPreviewShapeNoStoryboard(t *testing.T) {
	for name, body := range map[string]string{
		"Undocumented preview shape: storyboard null":   `{"data":{"status":"completed","storyboard":null}}`,
		"Undocumented preview shape: storyboard absent": `{"data":{"status":"completed"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			j, err := DecodeJob([]byte(body))
			if err != nil || !j.Status().IsCompleted() || j.Data.Storyboard != nil {
				t.Fatalf("job %+v, err %v", j, err)
			}
		})
	}
}

// An odd storyboard beside a failure leaves the failure as it is.
func TestUndocumentedPreviewShapeFailedJob(t *testing.T) {
	for _, sb := range []string{`[1]`, `"x"`, `{"scenes":{"a":1}}`, `{"scenes":[{"thumbnail":{"url":1},"story":{}}]}`} {
		t.Run(sb, func(t *testing.T) {
			body := fmt.Sprintf(`{"job_id":"j-1","success":false,"data":{"status":"failed",`+
				`"error_code":"TEXT_TO_VIDEO_FAILED","error_message":"bad voice","storyboard":%s}}`, sb)
			j, err := DecodeJob([]byte(body))
			if err != nil {
				t.Fatalf("DecodeJob: %v", err)
			}
			f := j.Failure()
			if f == nil || f.Code != "TEXT_TO_VIDEO_FAILED" || f.Message != "bad voice" || f.JobID != "j-1" {
				t.Fatalf("failure %+v", f)
			}
			if j.Data.Storyboard == nil || string(j.Data.Storyboard.Raw) != sb {
				t.Errorf("storyboard %+v", j.Data.Storyboard)
			}
		})
	}
}

// Called directly rather than by encoding/json, the decoders still refuse what is not JSON, with
// an error that says what was being decoded.
func TestUndocumentedPreviewShapeNotJSON(t *testing.T) {
	for _, b := range []string{``, `{`, `[1,`, `{"scenes":[}`, `nul`} {
		t.Run(fmt.Sprintf("%q", b), func(t *testing.T) {
			var sb Storyboard
			if err := sb.UnmarshalJSON([]byte(b)); !errors.Is(err, ErrMalformedJSON) || !strings.Contains(err.Error(), "storyboard") {
				t.Errorf("Storyboard: %v", err)
			}
			var sc StoryboardScene
			if err := sc.UnmarshalJSON([]byte(b)); !errors.Is(err, ErrMalformedJSON) || !strings.Contains(err.Error(), "scene") {
				t.Errorf("StoryboardScene: %v", err)
			}
		})
	}
}
