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

package admissionpolicy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The approval policies of config/approval (docs/approval.md) come in pairs: a mutating policy
// that stamps and a validating one that checks what it stamped. Each pair must agree on what a
// write changes, or one of them stamps a write the other refuses. These tests read the shipped
// files; the envtest specs of internal/controller run them in an API server.

type policyVariable struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

func policyVariables(t *testing.T, file string) []policyVariable {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "approval", file))
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := bytes.Cut(raw, []byte("\n---\n"))
	var obj struct {
		Spec struct {
			Variables []policyVariable `json:"variables"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(obj.Spec.Variables) == 0 {
		t.Fatalf("%s: no variables", file)
	}
	return obj.Spec.Variables
}

func TestEachApprovalPolicyPairReadsAWriteTheSameWay(t *testing.T) {
	for _, pair := range [][2]string{
		{"videorender_approval_stamp.yaml", "videorender_approval_policy.yaml"},
		{"videostoryboard_author_stamp.yaml", "videostoryboard_author_policy.yaml"},
	} {
		stamp, check := policyVariables(t, pair[0]), policyVariables(t, pair[1])
		for _, v := range stamp {
			i := slices.IndexFunc(check, func(c policyVariable) bool { return c.Name == v.Name })
			if i < 0 {
				t.Errorf("%s has variable %s, %s has not", pair[0], v.Name, pair[1])
				continue
			}
			if check[i].Expression != v.Expression {
				t.Errorf("variable %s differs:\n%s: %s\n%s: %s", v.Name, pair[0], v.Expression, pair[1], check[i].Expression)
			}
		}
	}
}

// A storyboard's author is who last changed what a reviewer reads: every field of the spec but
// apiKeySecretRef (the preview digest's previewed request). A field added to the API and left out
// of the comparison would let its writer change the content without becoming its author.
func TestTheStoryboardAuthorStampComparesEveryContentField(t *testing.T) {
	var want []string
	spec := reflect.TypeFor[videov1alpha1.VideoStoryboardSpec]()
	for f := range spec.Fields() {
		if f.Anonymous {
			for g := range f.Type.Fields() {
				want = append(want, jsonName(g))
			}
			continue
		}
		want = append(want, jsonName(f))
	}
	want = slices.DeleteFunc(want, func(n string) bool { return n == "apiKeySecretRef" || n == "" })
	slices.Sort(want)

	var expr string
	for _, v := range policyVariables(t, "videostoryboard_author_stamp.yaml") {
		if v.Name == "contentChanged" {
			expr = v.Expression
		}
	}
	var got []string
	for _, m := range regexp.MustCompile(`object\.spec\.(\w+) != oldObject\.spec\.(\w+)`).FindAllStringSubmatch(expr, -1) {
		if m[1] != m[2] || !strings.Contains(expr, "has(object.spec."+m[1]+") != has(oldObject.spec."+m[1]+")") {
			t.Errorf("field %s is not compared both for presence and value: %s", m[1], m[0])
		}
		got = append(got, m[1])
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("contentChanged compares %v,\nthe API's content fields are %v", got, want)
	}
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}
