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

	"github.com/videoops/video-operator/internal/previewdigest"
)

func TestDigest(t *testing.T) {
	type a struct {
		X string `json:"x"`
		Y int    `json:"y"`
	}
	type b struct {
		Y int    `json:"y"`
		X string `json:"x"`
	}
	mustOf := func(kind string, v any) string {
		t.Helper()
		d, err := Of(kind, v)
		if err != nil {
			t.Fatal(err)
		}
		if !previewdigest.Valid(d) {
			t.Fatalf("digest %q has not the form sha256:<64 hex>", d)
		}
		return d
	}
	same := mustOf(Render, a{X: "v", Y: 1})
	cases := []struct {
		name string
		got  string
		want bool
	}{
		{"the same request again", mustOf(Render, a{X: "v", Y: 1}), true},
		{"the same fields in another order", mustOf(Render, b{X: "v", Y: 1}), true},
		{"a map with the same values", mustOf(Render, map[string]any{"y": 1, "x": "v"}), true},
		{"another value", mustOf(Render, a{X: "w", Y: 1}), false},
		{"the same body to another endpoint", mustOf(Preview, a{X: "v", Y: 1}), false},
	}
	for _, c := range cases {
		if (c.got == same) != c.want {
			t.Errorf("%s: equal=%v, want %v", c.name, c.got == same, c.want)
		}
	}
	p1, _ := OfProject("p-1")
	p2, _ := OfProject("p-2")
	n1, _ := OfApproved("sha256:aa", true)
	n2, _ := OfApproved("sha256:aa", false)
	if p1 == p2 || n1 == n2 {
		t.Errorf("different projects or narration choices share a digest")
	}
}
