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

// Package admissionpolicy is the one place of the operator's ValidatingAdmissionPolicies: which
// ones an install has (Expected, found by their label whatever the installer named them), the
// generation of the scene rules' policies from the CEL rules of the markers (ScenePolicy, run by
// `make manifests` through hack/crdsplit), and the manager's check that they are installed and
// bound (Checker).
//
// The policies live in config/policies; kustomize (config/default), the Helm chart and
// install.yaml install them, and every envtest suite installs them with testutil.InstallPolicies.
package admissionpolicy

// Label is the label every policy and binding of config/policies carries; its value is the
// policy's ID. The manager finds them by it, since kustomize and Helm prefix their names.
const Label = "video.videoops.io/admission-policy"

// Policy is one admission policy an install must have, with its binding.
type Policy struct {
	// ID is the value of Label on the policy and its binding, and their name in config/policies
	// (kustomize and the chart prefix it).
	ID string
	// Resource is the resource (plural) the policy checks.
	Resource string
}

// Expected are the policies every install has. A later policy is added here and to
// config/policies.
var Expected = []Policy{
	{ID: "videorender-scenes", Resource: "videorenders"},
	{ID: "videostoryboard-scenes", Resource: "videostoryboards"},
}

// SceneResources maps a CRD file of config/crd/bases that holds a scene list to its policy.
var SceneResources = map[string]Policy{
	"video.videoops.io_videorenders.yaml":     Expected[0],
	"video.videoops.io_videostoryboards.yaml": Expected[1],
}
