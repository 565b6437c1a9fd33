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
	"os"
	"path/filepath"
	"testing"

	"github.com/videoops/video-operator/internal/testutil"
)

// docs/architecture.md "Records that outlive a version": a preview digest is what a reviewer pins
// in Git (spec.storyboardRef.approvedDigest), so its value for the same preview must never change
// within a version. See internal/requestdigest/golden_test.go for what to do when this fails.

// fixturePreview sets every field of the digest's input, with values where RFC 8785 and version
// 1 differ: numbers not in their shortest form, non-ASCII keys, HTML characters, U+2028. Its
// previewed request is the frozen request with every field of internal/requestdigest's tests (as
// main at ec05687 serialised it), so that a field added to the request types changes nothing
// here; internal/requestdigest checks that today's types still serialise it the same way.
func fixturePreview(t *testing.T) Preview {
	t.Helper()
	request, err := os.ReadFile(filepath.Join("..", "requestdigest", "testdata", "request-every-field-ec05687.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := Preview{
		Scenes:           []Scene{{Story: "Scene one, \u201cquoted\u201d <b>&</b>\u2028.", Thumbnail: "https://cdn.example/j1/scene-1.jpg"}},
		RenderParameters: json.RawMessage(`{"aspectRatio":"16:9","videoWidth":1920.0,"videoHeight":1080,"sceneCount":1,"speed":1.50,"big":1e3}`),
		Raw:              json.RawMessage(`{"storyboard":{"scenes":[{"story":"x"}]},"é":1,"z":2}`),
		Request:          request,
	}
	if unset := testutil.UnsetFields(&p); len(unset) > 0 {
		t.Fatalf("the fixture leaves fields of Preview unset: %v", unset)
	}
	return p
}

func TestGoldenPreviewDigests(t *testing.T) {
	p := fixturePreview(t)
	// Computed by main at ec05687 (previewdigest.Of before versions) for this fixture: the value
	// of status.preview.digest, and of approvedDigest pins in Git, written before the upgrade.
	const wantV1 = "sha256:32652fba873af5026f6afb9558140970cf24353ed2c917e7a30717f3fc54c5a4"
	// Also computed independently of this code: Python's json.dumps with sorted keys, no
	// whitespace, no ASCII escaping, and integral floats written as integers, which is RFC 8785
	// for this document.
	const wantV2 = "sha256:f0d43ac1c8f602c7b389977af28565a51ab00852b6f98a2e907fe98e12cd8066"
	d, err := OfAll(p)
	if err != nil {
		t.Fatal(err)
	}
	if d.V1 != wantV1 {
		t.Errorf("preview digest version 1 is %s, pinned %s: the frozen encoding changed, and pins written before the upgrade no longer match", d.V1, wantV1)
	}
	if d.Current != wantV2 {
		t.Errorf("preview digest version %d is %s, pinned %s: the encoding changed, or a request field was added", Version, d.Current, wantV2)
	}
}

// RFC 8785 sections 3.2.2 and 3.2.3: the published examples of value serialisation and of
// member sorting by UTF-16 code units.
func TestCanonicalIsRFC8785(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
		   "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
		   "literals": [null, true, false]}`,
			`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
		{`{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
		   "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control",
		   "\u00f6": "Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\"," +
				"\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"},
		// HTML characters and U+2028 are not escaped (encoding/json would escape both).
		{`{"b":"<&>\u2028","a":1.50}`, "{\"a\":1.5,\"b\":\"<&>\u2028\"}"},
	}
	for _, c := range cases {
		got, err := Canonical(json.RawMessage(c.in))
		if err != nil {
			t.Fatalf("Canonical(%s): %v", c.in, err)
		}
		if string(got) != c.want {
			t.Errorf("Canonical(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}
