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

// Package requestrules checks a storyboard request against every CEL rule of the API types,
// including the ones the installed CRDs leave out.
//
// The rules are written once, as XValidation markers in api/v1alpha1. The API server refuses a
// CRD whose rules could cost too much: it multiplies a rule's cost by the maxItems of every list
// around it, and the interface document sets no limit on scenes, B-rolls, transcript sentences or
// words. So `make manifests` (hack/crdsplit) takes the rules below the paths of PresubmitOnly out
// of the installed CRDs and keeps the complete request schema in this package, where the
// controller evaluates all of it before it submits: a request that breaks a rule admission could
// not afford stalls with InvalidRequest and nothing is paid.
package requestrules

import "strings"

// PresubmitOnly are the places in a storyboard request (relative to the request; "[]" is a list
// item) under which the installed CRDs carry no CEL rule. Each is a list without a limit in the
// interface document, or nested in one twice:
//   - scene elements (20 per scene, times unlimited scenes),
//   - background B-rolls (unlimited, per scene),
//   - transcript words (unlimited, per sentence, per scene),
//   - template subtitle and layer styles (500 subtitles and 500 x 500 layers per scene).
//
// Everything else the markers say is checked at admission.
var PresubmitOnly = []string{
	"scenes[].elements[]",
	"scenes[].backgroundBrolls[]",
	"scenes[].transcript[].words[]",
	"scenes[].templateOverride.subtitles[].style",
	"scenes[].templateOverride.layers[][].style",
}

// PolicyChecked are the places (relative to the request, as PresubmitOnly) whose markers' rules
// the installed CRDs leave to the admission policies of config/policies: every rule of a scene
// and of what a scene holds, except those under PresubmitOnly. A CRD's rules run on every write
// of the object, status and metadata included; a ValidatingAdmissionPolicy bound to the main
// resource runs only where the spec may change (docs/architecture.md, "Admission rules"). The
// controller checks these rules too before it pays, so a missing policy lets nothing invalid be
// paid for.
var PolicyChecked = []string{
	"scenes[]",
}

// UnderPolicy reports whether a schema node at path lies at or below a PolicyChecked place and not
// under a PresubmitOnly one.
func UnderPolicy(path []string) bool {
	if Under(path) {
		return false
	}
	for _, p := range PolicyChecked {
		if containsRun(path, Segments(p)) {
			return true
		}
	}
	return false
}

// Segments splits a path of PresubmitOnly into property names and "[]" for list items:
// "layers[][].style" is layers, [], [], style.
func Segments(path string) []string {
	var segs []string
	for _, part := range strings.Split(path, ".") {
		name, lists, _ := strings.Cut(part, "[")
		segs = append(segs, name)
		for range strings.Count("["+lists, "[]") {
			segs = append(segs, "[]")
		}
	}
	return segs
}

// Under reports whether a schema node at path (segments as Segments gives them, from the root
// of the CRD's schema) lies at or below one of the PresubmitOnly places.
func Under(path []string) bool {
	for _, p := range PresubmitOnly {
		if containsRun(path, Segments(p)) {
			return true
		}
	}
	return false
}

// containsRun reports whether run occurs in path as consecutive segments.
func containsRun(path, run []string) bool {
	for i := 0; i+len(run) <= len(path); i++ {
		match := true
		for j := range run {
			if path[i+j] != run[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
