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

package requestrules

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/videoops/video-operator/internal/testutil"
)

var crdDir = testutil.CRDDir()

// TestInstalledCRDsFitTheCELBudget runs the API server's own CRD validation on the CRDs
// `make manifests` writes: it refuses a CRD whose CEL rules could cost more than the budget.
func TestInstalledCRDsFitTheCELBudget(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s: %v", crdDir, err)
	}
	for _, f := range files {
		v1 := testutil.ReadCRD(t, f)
		apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1)
		var crd apiextensions.CustomResourceDefinition
		if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1, &crd, nil); err != nil {
			t.Fatal(err)
		}
		for _, e := range validation.ValidateCustomResourceDefinition(context.Background(), &crd) {
			t.Errorf("%s: %v", filepath.Base(f), e)
		}
	}
}

// installedRequestRules are the CEL rules the API server evaluates on a VideoRender's inline
// request, with the API server's per-call limit.
func installedRequestRules(t *testing.T) *Rules {
	t.Helper()
	crd := testutil.ReadCRD(t, filepath.Join(crdDir, "video.videoops.io_videorenders.yaml"))
	props := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["storyboard"]
	rules, err := newRules(&props, celconfig.PerCallLimit)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// fill is a request of videoName plus as many copies of scene as fit in etcd's limit.
func fill(t *testing.T, scene string) (map[string]any, int) {
	t.Helper()
	n := (testutil.EtcdObjectLimit - 200) / (len(scene) + 1)
	body := `{"videoName":"dense","scenes":[` + strings.TrimSuffix(strings.Repeat(scene+",", n), ",") + `]}`
	var req map[string]any
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("%v: %.200s", err, body)
	}
	return req, n
}

// TestAdmissionCostOfTheDensestRequests checks the other half of the budget: at admission the API
// server stops evaluating rules on an object whose rules cost more than RuntimeCELCostBudget and
// refuses it. The requests below are the densest in rules per byte this schema allows, each as
// large as etcd takes; all must fit, so that the only bound on a storyboard is the object size.
func TestAdmissionCostOfTheDensestRequests(t *testing.T) {
	rules := installedRequestRules(t)
	dense := map[string]string{
		"smallest scenes":                     `{"story":""}`,
		"scenes with an AI visual background": `{"story":"","background":{"type":"image","aiVisual":{"model":"flux-schnell"},"settings":{"zoomAndPan":true}}}`,
		"scenes with every scene-level rule": `{"story":"","caption":"c","captionLanguage":"en","isSSMLStory":false,"subtitleStyleId":"s",` +
			`"subtitleStyle":{"fontUrl":"https://f.io/f","fontFamily":"F","animations":[{"name":"fade","type":"entry","speed":"custom","customSpeedValue":1,"futureWords":"hidden"},{"name":"wipe","type":"exit","speed":"slow"}]},` +
			`"avatar":{"top":"1","left":"1"},"background":{"type":"video","aiVisual":{"model":"veo3.1","videoDuration":"4s","firstFrameImageUrl":"https://f.io/i"}}}`,
	}
	for name, scene := range dense {
		t.Run(name, func(t *testing.T) {
			req, n := fill(t, scene)
			errs, cost := rules.Validate(t.Context(), req, field.NewPath("spec", "storyboard"), celconfig.RuntimeCELCostBudget)
			t.Logf("%d scenes: cost %d of %d (%.0f%%)", n, cost, celconfig.RuntimeCELCostBudget, 100*float64(cost)/celconfig.RuntimeCELCostBudget)
			for _, e := range errs {
				t.Errorf("%v", e)
			}
		})
	}
}
