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
	"testing"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/testutil"
)

// DESIGN.md "Records that outlive a version": golden tests pin every digest version's value for
// a fixture of every request field. A failure here means the digest of a request changed: every
// object in every cluster whose record holds the old value would no longer be recognised, and
// may pay again after the upgrade. Do not update a pinned value to make the test pass: if the
// change is wanted, add a new digest version (see docs/release.md, "Digest versions") and keep
// the old one recognised. A field added to the request types changes the fixture (it sets every
// field) and so fails here too: check that an unset field is omitted from the request (omitempty),
// so that existing requests keep their digests, then pin the fixture's new values.

// fixtureRequest is a StoryboardRequest with every field, at every depth, set.
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

// The version 2 values were also computed independently of this code (Python's json.dumps with
// sorted keys and no whitespace equals RFC 8785 for this fixture's ASCII keys and short numbers).
// The version 1 values were computed by the operator's code before digests had versions
// (main at ec05687, requestdigest.Of), over the same fixture: they are what objects of that
// release hold in status and annotations.
var golden = []struct {
	name   string
	v1, v2 string
	of     func(t *testing.T) (v1, v2 string, err1, err2 error)
}{
	{"preview of a request with every field",
		"sha256:9c29703c387a1b912250235b058598eb3f7bc642dbea6de0ba6af44e27360bc0",
		"sha256:c3c85d7ef93dd6feb9289bb6504bbff0fa1ac0f9549febf537661342bef3e7ad",
		func(t *testing.T) (string, string, error, error) {
			req := fixtureRequest(t)
			v1, err1 := OfV1(Preview, req)
			v2, err2 := Of(Preview, req)
			return v1, v2, err1, err2
		}},
	{"render of a request with every field",
		"sha256:f6a5cdf2731079a3df7e68d25c60e6acac5e4a2a9a0ca395b3d02f670841e993",
		"sha256:def6cc33e596cbfc4e05cb19130fc033dbf3befdbbf2f3b2bd7d36621beaf0c2",
		func(t *testing.T) (string, string, error, error) {
			req := fixtureRequest(t)
			v1, err1 := OfV1(Render, req)
			v2, err2 := Of(Render, req)
			return v1, v2, err1, err2
		}},
	{"project render",
		"sha256:ce6e7e0be30997d71f0f11a842cd8716374830c90c06fc6aa499c5a5fb68ee54",
		"sha256:1571bc1b4cae6e86244de0db88fadb7aba32ba6c40941752579c9a028c05cdbe",
		func(*testing.T) (string, string, error, error) {
			v1, err1 := OfProjectV1("project-0001")
			v2, err2 := OfProject("project-0001")
			return v1, v2, err1, err2
		}},
	{"render of an approved preview narrated word for word",
		"sha256:75453c523336971e61a9b12446193f586d7dc6a39046c08336794c42adb8e5b4",
		"sha256:74832a24165dd2435864f7316bd22bd433246186d42acbf3ec0afe79dff41bf7",
		func(*testing.T) (string, string, error, error) {
			v1, err1 := OfApprovedV1(fixturePreviewDigest, true)
			v2, err2 := OfApproved(fixturePreviewDigest, true)
			return v1, v2, err1, err2
		}},
}

func TestGoldenDigests(t *testing.T) {
	for _, g := range golden {
		t.Run(g.name, func(t *testing.T) {
			v1, v2, err1, err2 := g.of(t)
			if err1 != nil || err2 != nil {
				t.Fatalf("digests: %v, %v", err1, err2)
			}
			if v1 != g.v1 {
				t.Errorf("digest version 1 is %s, pinned %s: the frozen version 1 encoding changed, and records of it are no longer recognised", v1, g.v1)
			}
			if v2 != g.v2 {
				t.Errorf("digest version %d is %s, pinned %s: the encoding of the current version changed, or a request field was added (see the comment above)", Version, v2, g.v2)
			}
		})
	}
}

// A record of the previous encoding (the version 1 value main computed for the fixture, with no
// version beside it) is recognised, and is not taken for another request's.
func TestAVersion1RecordIsRecognised(t *testing.T) {
	req := fixtureRequest(t)
	cur, _ := Of(Render, req)
	v1, _ := OfV1(Render, req)
	d := Digests{Current: cur, V1: v1}
	const recordedByMain = "sha256:f6a5cdf2731079a3df7e68d25c60e6acac5e4a2a9a0ca395b3d02f670841e993"
	if !d.Recognised(recordedByMain, 0) {
		t.Fatal("a version 1 record without a version is not recognised")
	}
	if !d.Recognised(recordedByMain, 1) {
		t.Fatal("a record that says version 1 is not recognised")
	}
	if !d.Recognised(cur, 0) || !d.Recognised(cur, Version) {
		t.Fatal("a current record is not recognised")
	}
	if d.Recognised(recordedByMain, Version) {
		t.Fatal("a record that says it is of the current version matched the version 1 value")
	}
	other, _ := OfV1(Preview, req)
	if d.Recognised(other, 0) || d.Recognised("", 0) {
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
