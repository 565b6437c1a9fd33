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

package admissionpolicy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Wait bounds how long Install waits for the policies to be in force.
const Wait = 2 * time.Minute

// Install creates (or updates) every object of the YAML files of dir (config/policies) on the API
// server of cfg, as kustomize would install them but without its name prefix, and waits until
// each policy of Expected is in force (WaitInForce). Every envtest suite (testutil.InstallPolicies)
// and the demo call it after starting their API server, so that they have the admission an install
// has.
func Install(ctx context.Context, cfg *rest.Config, dir string) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	objs, err := Objects(dir)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := createOrReplace(ctx, c, o); err != nil {
			return fmt.Errorf("installing %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return WaitInForce(ctx, c, Wait)
}

// Objects reads the objects of the policies' directory: every YAML file but kustomize's.
func Objects(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var objs []*unstructured.Unstructured
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" || filepath.Base(f) == "kustomizeconfig.yaml" {
			continue
		}
		raw, err := os.ReadFile(f) //nolint:gosec // the policies of the repository, named by the caller
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
		for {
			o := &unstructured.Unstructured{}
			if err := dec.Decode(&o.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(o.Object) > 0 {
				objs = append(objs, o)
			}
		}
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("no policy in %s", dir)
	}
	return objs, nil
}

func createOrReplace(ctx context.Context, c client.Client, o *unstructured.Unstructured) error {
	err := c.Create(ctx, o.DeepCopy())
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	old := &unstructured.Unstructured{}
	old.SetGroupVersionKind(o.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(o), old); err != nil {
		return err
	}
	o = o.DeepCopy()
	o.SetResourceVersion(old.GetResourceVersion())
	return c.Update(ctx, o)
}

// WaitInForce waits, at most timeout, until every policy of Expected refuses the dry-run create of
// its probe (ProbeLabel): a policy takes effect some time after it is written.
func WaitInForce(ctx context.Context, c client.Client, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, p := range Expected {
		for {
			err := c.Create(ctx, ProbeObject(p.Resource), client.DryRunAll)
			if err != nil && strings.Contains(err.Error(), ProbeMessage) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("policy %s is not in force after %s: the probe's dry-run create answered %v", p.ID, timeout, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// ProbeObject is a valid object of resource (videorenders or videostoryboards) in namespace
// default, labelled ProbeLabel: only a policy in force refuses it.
func ProbeObject(resource string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "video.videoops.io/v1alpha1"}}
	switch resource {
	case "videorenders":
		o.SetKind("VideoRender")
		o.Object["spec"] = map[string]any{"projectId": "policy-probe"}
	case "videostoryboards":
		o.SetKind("VideoStoryboard")
		o.Object["spec"] = map[string]any{"videoName": "policy probe", "scenes": []any{map[string]any{"story": "A probe."}}}
	default:
		panic("no probe for " + resource)
	}
	o.SetNamespace("default")
	o.SetName("admission-policy-probe")
	o.SetLabels(map[string]string{ProbeLabel: "true"})
	return o
}
