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

// Command crdsplit turns the CRDs controller-gen writes, with every rule of the markers, into
// the CRDs the cluster installs, whose CEL rules the API server can afford, and the storyboard
// request schema with the other rules, which the controller checks before it submits
// (internal/requestrules).
//
//	go run ./hack/crdsplit -in bin/crd-full -out config/crd/bases -schema internal/requestrules/storyboardrequest.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/videoops/video-operator/internal/requestrules"
)

// requestCRD and requestPath locate the storyboard request in the generated CRDs: VideoRender's
// spec.storyboard is exactly the StoryboardRequest type.
const requestCRD = "video.videoops.io_videorenders.yaml"

var requestPath = []string{"spec", "storyboard"}

func main() {
	in := flag.String("in", "", "directory of the CRDs controller-gen wrote")
	out := flag.String("out", "", "directory of the CRDs to install")
	schemaOut := flag.String("schema", "", "file for the complete storyboard request schema (JSON)")
	flag.Parse()
	if err := run(*in, *out, *schemaOut); err != nil {
		fmt.Fprintln(os.Stderr, "crdsplit:", err)
		os.Exit(1)
	}
}

func run(in, out, schemaOut string) error {
	files, err := filepath.Glob(filepath.Join(in, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in %q (%v)", in, err)
	}
	sort.Strings(files)
	for _, f := range files {
		raw, err := os.ReadFile(f) //nolint:gosec // controller-gen's output, named by the Makefile
		if err != nil {
			return err
		}
		var crd map[string]any
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		versions, _ := dig(crd, "spec", "versions").([]any)
		for _, v := range versions {
			root, _ := dig(v, "schema", "openAPIV3Schema").(map[string]any)
			if root == nil {
				return fmt.Errorf("%s: a version without openAPIV3Schema", f)
			}
			if filepath.Base(f) == requestCRD && schemaOut != "" {
				if err := writeRequestSchema(root, schemaOut); err != nil {
					return err
				}
			}
			strip(root, nil)
			declareMetadataName(root)
		}
		body, err := yaml.Marshal(crd)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(f)), append([]byte("---\n"), body...), 0o644); err != nil { //nolint:gosec // committed manifests, read by everyone
			return err
		}
	}
	return nil
}

// declareMetadataName declares metadata.name in the schema when a rule of the root names it with
// fieldPath, as VideoBudget's "must be named default" does: the API server accepts a fieldPath
// only into declared properties, and controller-gen declares none under metadata. Without the
// fieldPath the error names no field ("<nil>: Invalid value").
func declareMetadataName(root map[string]any) {
	rules, _ := root["x-kubernetes-validations"].([]any)
	for _, r := range rules {
		if rule, _ := r.(map[string]any); rule["fieldPath"] == ".metadata.name" {
			md, _ := dig(root, "properties", "metadata").(map[string]any)
			if md == nil {
				return
			}
			md["properties"] = map[string]any{"name": map[string]any{"type": "string"}}
			return
		}
	}
}

// writeRequestSchema writes the request's schema, still with every rule, before strip runs.
func writeRequestSchema(root map[string]any, path string) error {
	node := root
	for _, name := range requestPath {
		next, _ := dig(node, "properties", name).(map[string]any)
		if next == nil {
			return fmt.Errorf("%s: no property %v", requestCRD, requestPath)
		}
		node = next
	}
	// A copy, so that the installed CRD keeps its rules: the controller evaluates only the ones
	// the installed CRDs leave out.
	raw, err := json.Marshal(node)
	if err != nil {
		return err
	}
	var request map[string]any
	if err := json.Unmarshal(raw, &request); err != nil {
		return err
	}
	keepPresubmitOnly(request, nil)
	body, err := json.MarshalIndent(request, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(body, '\n'), 0o644) //nolint:gosec // a committed source file
}

// keepPresubmitOnly removes the CEL rules of every schema node that is not under a
// PresubmitOnly place: admission checked those already.
func keepPresubmitOnly(node map[string]any, path []string) {
	walk(node, path, func(n map[string]any, p []string) {
		if !requestrules.Under(p) {
			delete(n, "x-kubernetes-validations")
		}
	})
}

// strip removes the CEL rules of every schema node under a PresubmitOnly place.
func strip(node map[string]any, path []string) {
	walk(node, path, func(n map[string]any, p []string) {
		if requestrules.Under(p) {
			delete(n, "x-kubernetes-validations")
		}
	})
}

// walk calls visit on node and every schema below it, with its path: property names, "[]" for
// list items and "{}" for map values.
func walk(node map[string]any, path []string, visit func(map[string]any, []string)) {
	visit(node, path)
	if props, ok := node["properties"].(map[string]any); ok {
		for name, child := range props {
			if c, ok := child.(map[string]any); ok {
				walk(c, append(append([]string(nil), path...), name), visit)
			}
		}
	}
	if items, ok := node["items"].(map[string]any); ok {
		walk(items, append(append([]string(nil), path...), "[]"), visit)
	}
	if extra, ok := node["additionalProperties"].(map[string]any); ok {
		walk(extra, append(append([]string(nil), path...), "{}"), visit)
	}
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
