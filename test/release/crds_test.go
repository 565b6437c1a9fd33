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

package release

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// yamlDocs parses a multi-document YAML file into its objects, by "Kind/name".
func yamlDocs(t *testing.T, data []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
			continue
		}
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		meta, _ := o["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		kind, _ := o["kind"].(string)
		out[kind+"/"+name] = o
	}
	return out
}

// checkCRDsAlone checks that the release's crds.yaml holds the three CRDs and nothing else, each
// with the spec install.yaml installs, so that CRDs applied apart are the release's CRDs.
func checkCRDsAlone(t *testing.T, path string, installer []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	crds := yamlDocs(t, data)
	var names []string
	for k := range crds {
		names = append(names, k)
	}
	slices.Sort(names)
	want := []string{
		"CustomResourceDefinition/videobudgets.video.videoops.io",
		"CustomResourceDefinition/videorenders.video.videoops.io",
		"CustomResourceDefinition/videostoryboards.video.videoops.io",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("crds.yaml holds %v, want %v", names, want)
	}
	installed := yamlDocs(t, installer)
	for _, k := range want {
		in, ok := installed[k]
		if !ok {
			t.Errorf("install.yaml has no %s", k)
			continue
		}
		if !reflect.DeepEqual(crds[k]["spec"], in["spec"]) {
			t.Errorf("%s of crds.yaml differs from install.yaml's", k)
		}
	}
}
