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

package gitops

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"
)

// fluxKustomization is the part of a Flux Kustomization these tests read.
type fluxKustomization struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Wait         bool `json:"wait"`
		HealthChecks []struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"healthChecks"`
		HealthCheckExprs []struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			InProgress string `json:"inProgress"`
			Failed     string `json:"failed"`
			Current    string `json:"current"`
		} `json:"healthCheckExprs"`
	} `json:"spec"`
}

func readFluxExample(t *testing.T) []fluxKustomization {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "gitops", "flux", "video-operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []fluxKustomization
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := yaml.Unmarshal(doc, &fields); err != nil {
			t.Fatal(err)
		}
		if len(fields) == 0 {
			continue // only comments
		}
		var k fluxKustomization
		if err := yaml.Unmarshal(doc, &k); err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	return out
}

// fluxEvaluate computes an object's status the way Flux's kustomize-controller does with
// healthCheckExprs (RFC-0009, fluxcd/pkg runtime/cel StatusEvaluator): InProgress when
// status.observedGeneration differs from metadata.generation, then the first of inProgress,
// failed and current that is true, else InProgress. The CEL environment has the options Flux
// uses; expressions are parsed, not type-checked, with the object's top-level fields as variables.
func fluxEvaluate(obj map[string]any, inProgress, failed, current string) (status.Status, error) {
	u := &unstructured.Unstructured{Object: obj}
	if og, ok, _ := unstructured.NestedInt64(obj, "status", "observedGeneration"); ok && og != u.GetGeneration() {
		return status.InProgressStatus, nil
	}
	env, err := cel.NewEnv(cel.HomogeneousAggregateLiterals(), cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true), cel.CrossTypeNumericComparisons(true), cel.OptionalTypes(),
		ext.Strings(), ext.Sets(), ext.Encoders())
	if err != nil {
		return "", err
	}
	for _, e := range []struct {
		expr string
		st   status.Status
	}{{inProgress, status.InProgressStatus}, {failed, status.FailedStatus}, {current, status.CurrentStatus}} {
		if e.expr == "" {
			continue
		}
		ast, iss := env.Parse(e.expr)
		if iss.Err() != nil {
			return "", iss.Err()
		}
		prg, err := env.Program(ast)
		if err != nil {
			return "", err
		}
		val, _, err := prg.Eval(obj)
		if err != nil {
			return "", err
		}
		if b, ok := val.(types.Bool); !ok {
			return "", errors.New("the expression is not a boolean")
		} else if b {
			return e.st, nil
		}
	}
	return status.InProgressStatus, nil
}

// TestFluxHealthCheckExprs evaluates the example's expressions on every case of the Argo CD
// health check: both tools must agree.
func TestFluxHealthCheckExprs(t *testing.T) {
	var videos *fluxKustomization
	for _, k := range readFluxExample(t) {
		if k.Kind != "Kustomization" {
			t.Errorf("unexpected kind %q in the Flux example", k.Kind)
		}
		if len(k.Spec.HealthCheckExprs) == 0 {
			if !k.Spec.Wait {
				t.Errorf("Kustomization %s (the operator): wait must be true, or Flux does not wait for the manager", k.Metadata.Name)
			}
			continue
		}
		videos = &k
		// The videos must not hold the Kustomization: a render takes up to 30 minutes and a
		// render awaiting approval waits for a person, for days. Only named objects are gated on,
		// and only previews (minutes).
		if k.Spec.Wait {
			t.Errorf("Kustomization %s: wait: true gates it on every render, including one waiting for a person; use wait: false and name previews in healthChecks", k.Metadata.Name)
		}
		for _, hc := range k.Spec.HealthChecks {
			if hc.Name == "" || hc.Kind != "VideoStoryboard" {
				t.Errorf("Kustomization %s: healthChecks entry %s %q: name a preview (VideoStoryboard), not every object or a render", k.Metadata.Name, hc.Kind, hc.Name)
			}
		}
		if len(k.Spec.HealthChecks) == 0 {
			t.Errorf("Kustomization %s: its healthCheckExprs are used only for objects named in healthChecks", k.Metadata.Name)
		}
	}
	if videos == nil {
		t.Fatal("no Kustomization in the Flux example has healthCheckExprs")
	}
	// Flux has no Suspended: a spent budget fails the health check until it is raised or resets.
	want := map[string]status.Status{"Healthy": status.CurrentStatus, "Degraded": status.FailedStatus,
		"Suspended": status.FailedStatus, "Progressing": status.InProgressStatus}
	kinds := map[string]bool{}
	for _, hc := range videos.Spec.HealthCheckExprs {
		if hc.APIVersion != "video.videoops.io/v1alpha1" {
			t.Errorf("healthCheckExprs for %s: apiVersion %q", hc.Kind, hc.APIVersion)
		}
		kinds[hc.Kind] = true
		for _, c := range healthCases() {
			t.Run(hc.Kind+"/"+c.name, func(t *testing.T) {
				got, err := fluxEvaluate(objectFor(t, hc.Kind, c), hc.InProgress, hc.Failed, hc.Current)
				if c.status == nil {
					// No status at all: the expressions cannot read it, and Flux keeps waiting
					// (an evaluation error is retried until the Kustomization's timeout) instead
					// of calling it Current as plain kstatus would.
					if err == nil && got != status.InProgressStatus {
						t.Errorf("Flux status = %s, want InProgress or an error that makes Flux wait", got)
					}
					return
				}
				if err != nil {
					t.Fatalf("evaluating: %v", err)
				}
				wantFlux := want[c.wantStatus]
				if c.waitsForAPerson {
					wantFlux = status.InProgressStatus
				}
				if got != wantFlux {
					t.Errorf("Flux status = %s, but Argo CD says %s", got, c.wantStatus)
				}
			})
		}
	}
	if !kinds["VideoStoryboard"] || !kinds["VideoRender"] {
		t.Errorf("healthCheckExprs must cover both kinds, got %v", kinds)
	}
}
