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

package previewdigest

import (
	"encoding/json"
	"testing"
)

func base() Preview {
	return Preview{
		Scenes: []Scene{
			{Story: "This explainer video is about tides.", Thumbnail: "https://cdn.example/j1/scene-1.jpg"},
			{Story: "Point 1 of 2 explains why tides matter.", Thumbnail: "https://cdn.example/j1/scene-2.jpg"},
		},
		RenderParameters: json.RawMessage(`{"aspectRatio":"16:9","videoWidth":1920,"videoHeight":1080,"sceneCount":2}`),
		Request:          json.RawMessage(`{"videoName":"Tides","scenes":[{"brief":{"prompt":"tides"}}]}`),
	}
}

func mustOf(t *testing.T, p Preview) string {
	t.Helper()
	d, err := Of(p)
	if err != nil {
		t.Fatalf("Of: %v", err)
	}
	if !Valid(d) {
		t.Fatalf("digest %q does not match %s", d, Pattern)
	}
	return d
}

func TestSameInputSameDigest(t *testing.T) {
	a := mustOf(t, base())
	if b := mustOf(t, base()); a != b {
		t.Fatalf("same preview, two digests: %s %s", a, b)
	}
	reordered := base()
	reordered.RenderParameters = json.RawMessage(" {\n \"sceneCount\": 2, \"videoHeight\": 1080,\n\"videoWidth\":1920, \"aspectRatio\" : \"16:9\" }")
	if b := mustOf(t, reordered); a != b {
		t.Fatalf("key order and whitespace changed the digest: %s %s", a, b)
	}
	nullRaw := base()
	nullRaw.Raw = json.RawMessage("null")
	if b := mustOf(t, nullRaw); a != b {
		t.Fatalf("a null raw changed the digest: %s %s", a, b)
	}
}

func TestAnyChangeChangesTheDigest(t *testing.T) {
	a := mustOf(t, base())
	cases := map[string]func(p *Preview){
		"narration":     func(p *Preview) { p.Scenes[1].Story += " " },
		"thumbnail":     func(p *Preview) { p.Scenes[0].Thumbnail = "https://cdn.example/j2/scene-1.jpg" },
		"scene order":   func(p *Preview) { p.Scenes[0], p.Scenes[1] = p.Scenes[1], p.Scenes[0] },
		"scene removed": func(p *Preview) { p.Scenes = p.Scenes[:1] },
		"render parameter": func(p *Preview) {
			p.RenderParameters = json.RawMessage(`{"aspectRatio":"9:16","videoWidth":1920,"videoHeight":1080,"sceneCount":2}`)
		},
		"number": func(p *Preview) {
			p.RenderParameters = json.RawMessage(`{"aspectRatio":"16:9","videoWidth":1921,"videoHeight":1080,"sceneCount":2}`)
		},
		"parameters removed": func(p *Preview) { p.RenderParameters = nil },
		"raw shape kept":     func(p *Preview) { p.Raw = json.RawMessage(`[1]`) },
		// A setting the answer does not show: one approval must not pay for both requests.
		"request": func(p *Preview) {
			p.Request = json.RawMessage(`{"videoName":"Tides","voiceOver":{"enabled":false},"scenes":[{"brief":{"prompt":"tides"}}]}`)
		},
		"story moved to thumbnail": func(p *Preview) {
			p.Scenes[0] = Scene{Story: "", Thumbnail: p.Scenes[0].Story + p.Scenes[0].Thumbnail}
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			p := base()
			p.Scenes = append([]Scene(nil), p.Scenes...)
			change(&p)
			if b := mustOf(t, p); a == b {
				t.Fatalf("changed %s, same digest %s", name, a)
			}
		})
	}
}

func TestCanonicalForm(t *testing.T) {
	v := map[string]any{"b": "<&>", "a": []any{json.Number("1.50"), true}}
	b, err := Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"a":[1.5,true],"b":"<&>"}`; got != want {
		t.Fatalf("canonical JSON %s, want %s", got, want)
	}
	// Version 1 kept numbers as written.
	if b, err = CanonicalV1(v); err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"a":[1.50,true],"b":"<&>"}`; got != want {
		t.Fatalf("canonical JSON of version 1 %s, want %s", got, want)
	}
}

// RFC 8785 compares numbers by value: a number written another way is the same preview in the
// current version (it was another one in version 1).
func TestANumberWrittenAnotherWayIsTheSamePreview(t *testing.T) {
	p := base()
	q := base()
	q.RenderParameters = json.RawMessage(`{"aspectRatio":"16:9","videoWidth":1920.0,"videoHeight":1.08e3,"sceneCount":2}`)
	a, err := OfAll(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OfAll(q)
	if err != nil {
		t.Fatal(err)
	}
	if a.Current != b.Current {
		t.Fatalf("1920.0 and 1920 give two current digests: %s %s", a.Current, b.Current)
	}
	if a.V1 == b.V1 {
		t.Fatalf("version 1 no longer keeps numbers as written: %s", a.V1)
	}
}

func TestInvalidJSONIsAnError(t *testing.T) {
	p := base()
	p.RenderParameters = json.RawMessage(`{"a":`)
	if _, err := Of(p); err == nil {
		t.Fatal("invalid render parameters gave a digest")
	}
}
