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

package requestdigest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/testutil"
)

// docs/architecture.md "Records that outlive a version": golden tests pin every digest version's
// value for a fixture of every request field. A failure here means the digest of a request changed:
// every object in every cluster whose record holds the old value would no longer be recognised, and
// may pay again after the upgrade. Do not update a pinned value to make a test pass: if the
// change is wanted, add a new digest version (docs/release.md, "Digest versions") and keep the
// old one recognised.
//
// Two fixtures:
//   - testdata/request-every-field-ec05687.json is frozen: the request with every field set, as
//     main at ec05687 (before digest versions) serialised it. Version 1 is pinned over it with the
//     values main computed, and it is read into today's types to prove that a request of that
//     release still has the digest its records hold: a field added without omitempty, or a
//     changed JSON name, fails TestARecordOfTheReleaseBeforeVersionsIsRecognised.
//   - fixtureRequest sets every field of today's types (testutil.FillEveryField), so a field
//     added to the request types changes it and fails TestGoldenDigests: check that the field is
//     omitempty (the test above still passes), then pin the new value.

// frozenRequest is the frozen fixture as bytes.
func frozenRequest(t *testing.T) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "request-every-field-ec05687.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureRequest is a StoryboardRequest of today's types with every field, at every depth, set.
func fixtureRequest(t *testing.T) *videov1alpha1.StoryboardRequest {
	t.Helper()
	var req videov1alpha1.StoryboardRequest
	if err := testutil.FillEveryField(&req); err != nil {
		t.Fatalf("filling the request fixture: %v", err)
	}
	if unset := testutil.UnsetFields(&req); len(unset) > 0 {
		t.Fatalf("the fixture leaves fields of the request types unset: %v", unset)
	}
	return &req
}

// fixturePreviewDigest is the version 1 preview digest an approved render of the fixture names.
const fixturePreviewDigest = "sha256:ab0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd"

// Computed by main at ec05687 (requestdigest.Of before versions) over the frozen fixture: what
// objects of that release hold in status.requestDigest and the request-digest annotation.
const (
	mainPreview  = "sha256:9c29703c387a1b912250235b058598eb3f7bc642dbea6de0ba6af44e27360bc0"
	mainRender   = "sha256:f6a5cdf2731079a3df7e68d25c60e6acac5e4a2a9a0ca395b3d02f670841e993"
	mainProject  = "sha256:ce6e7e0be30997d71f0f11a842cd8716374830c90c06fc6aa499c5a5fb68ee54"
	mainApproved = "sha256:75453c523336971e61a9b12446193f586d7dc6a39046c08336794c42adb8e5b4"
)

func TestVersion1IsFrozen(t *testing.T) {
	req := frozenRequest(t)
	for _, g := range []struct {
		name, want string
		of         func() (string, error)
	}{
		{"preview", mainPreview, func() (string, error) { return OfV1(Preview, req) }},
		{"render", mainRender, func() (string, error) { return OfV1(Render, req) }},
		{"project render", mainProject, func() (string, error) { return OfProjectV1("project-0001") }},
		{"approved render", mainApproved, func() (string, error) { return OfApprovedV1(fixturePreviewDigest, true) }},
	} {
		got, err := g.of()
		if err != nil {
			t.Fatal(err)
		}
		if got != g.want {
			t.Errorf("%s: digest version 1 is %s, main computed %s: the frozen encoding changed, and records of it are no longer recognised", g.name, got, g.want)
		}
	}
}

// The version 2 values were also computed independently of this code (Python's json.dumps with
// sorted keys and no whitespace equals RFC 8785 for this fixture's ASCII keys and short numbers).
var golden = []struct {
	name string
	want string
	of   func(t *testing.T) (string, error)
}{
	{"preview of a request with every field",
		"sha256:c3c85d7ef93dd6feb9289bb6504bbff0fa1ac0f9549febf537661342bef3e7ad",
		func(t *testing.T) (string, error) { return Of(Preview, fixtureRequest(t)) }},
	{"render of a request with every field",
		"sha256:def6cc33e596cbfc4e05cb19130fc033dbf3befdbbf2f3b2bd7d36621beaf0c2",
		func(t *testing.T) (string, error) { return Of(Render, fixtureRequest(t)) }},
	{"project render",
		"sha256:1571bc1b4cae6e86244de0db88fadb7aba32ba6c40941752579c9a028c05cdbe",
		func(*testing.T) (string, error) { return OfProject("project-0001") }},
	{"render of an approved preview narrated word for word",
		"sha256:74832a24165dd2435864f7316bd22bd433246186d42acbf3ec0afe79dff41bf7",
		func(*testing.T) (string, error) { return OfApproved(fixturePreviewDigest, true) }},
}

func TestGoldenDigests(t *testing.T) {
	for _, g := range golden {
		t.Run(g.name, func(t *testing.T) {
			got, err := g.of(t)
			if err != nil {
				t.Fatal(err)
			}
			if got != g.want {
				t.Errorf("digest version %d is %s, pinned %s: the encoding of the current version changed, or a request field was added (see the comment above)", Version, got, g.want)
			}
		})
	}
}

// A record of the previous encoding (the version 1 value main computed, with no version beside
// it) is recognised for the same request read into today's types, and is not taken for another
// request's.
func TestARecordOfTheReleaseBeforeVersionsIsRecognised(t *testing.T) {
	var req videov1alpha1.StoryboardRequest
	d := json.NewDecoder(bytes.NewReader(frozenRequest(t)))
	d.DisallowUnknownFields()
	if err := d.Decode(&req); err != nil {
		t.Fatalf("today's types no longer read the request of ec05687: %v", err)
	}
	cur, err := Of(Render, &req)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := OfV1(Render, &req)
	if err != nil {
		t.Fatal(err)
	}
	if v1 != mainRender {
		t.Fatalf("today's types serialise the request of ec05687 differently (version 1 digest %s, main recorded %s): "+
			"a field was added without omitempty or renamed, and every record of that release would pay again", v1, mainRender)
	}
	digests := Digests{Current: cur, V1: v1}
	if !digests.Recognised(mainRender, 0) {
		t.Fatal("a version 1 record without a version is not recognised")
	}
	if !digests.Recognised(mainRender, 1) {
		t.Fatal("a record that says version 1 is not recognised")
	}
	if !digests.Recognised(cur, 0) || !digests.Recognised(cur, Version) {
		t.Fatal("a current record is not recognised")
	}
	if digests.Recognised(mainRender, Version) {
		t.Fatal("a record that says it is of the current version matched the version 1 value")
	}
	if digests.Recognised(mainPreview, 0) || digests.Recognised("", 0) {
		t.Fatal("another request's record (or none) was recognised")
	}
	if cur == v1 {
		t.Fatal("the current version's value is version 1's: the version is not in the document")
	}
}

func TestVersionAnnotation(t *testing.T) {
	for in, want := range map[string]int{"": 0, "1": 1, "2": 2, "x": 0, "-3": 0} {
		if got := ParseVersion(in); got != want {
			t.Errorf("ParseVersion(%q) = %d, want %d", in, got, want)
		}
	}
	if FormatVersion(0) != "" || FormatVersion(2) != "2" {
		t.Error("FormatVersion")
	}
}
