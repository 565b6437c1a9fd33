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
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// requestSchema is the StoryboardRequest schema with the rules of the markers that the installed
// CRDs leave out (those under PresubmitOnly), as hack/crdsplit writes it from controller-gen's
// output.
//
//go:embed storyboardrequest.json
var requestSchema []byte

// Rules evaluates CEL rules of a schema on objects, with the API server's own compiler and the
// walk of its evaluator (evaluate.go), so that a rule checked here says exactly what it would say
// at admission.
type Rules struct {
	root *node
}

// newRules compiles the CEL rules of a schema. The controller's own check passes no cost limit
// (math.MaxInt64): the object's size bounds what it costs, and the API server's limits are why it
// runs here; tests pass the API server's per-call limit.
func newRules(props *apiextensionsv1.JSONSchemaProps, perCallLimit uint64) (*Rules, error) {
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, &internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema: %w", err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, fmt.Errorf("the schema is not structural: %w", err)
	}
	root, err := buildNode(s, newMemoSchema(s), false, model.SchemaDeclType(s, false), perCallLimit)
	if err != nil {
		return nil, fmt.Errorf("compiling the schema's rules: %w", err)
	}
	if root == nil {
		return nil, fmt.Errorf("the schema has no CEL rule")
	}
	return &Rules{root: root}, nil
}

// Validate evaluates every rule on obj (an unstructured value of the schema's type) and returns
// the violations, paths below root, and the cost the evaluation used.
func (r *Rules) Validate(ctx context.Context, obj any, root *field.Path, budget int64) (field.ErrorList, int64) {
	errs, remaining := r.root.validate(ctx, root, obj, budget)
	return errs, budget - remaining
}

var storyboardRules = sync.OnceValues(func() (*Rules, error) {
	var props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(requestSchema, &props); err != nil {
		return nil, fmt.Errorf("reading the embedded request schema: %w", err)
	}
	return newRules(&props, math.MaxInt64)
})

// Check evaluates the rules of a storyboard request that admission leaves out on req, root being
// the path of the request in its object (spec, or spec.storyboard): the rules relating scenes to
// the request, then the markers' rules under PresubmitOnly, with the messages admission would
// give.
func Check(ctx context.Context, req *videov1alpha1.StoryboardRequest, root *field.Path) (field.ErrorList, error) {
	errs := sceneErrors(req, root)
	rules, err := storyboardRules()
	if err != nil {
		return nil, err
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(req)
	if err != nil {
		return nil, fmt.Errorf("converting the request: %w", err)
	}
	celErrs, _ := rules.Validate(ctx, obj, root, math.MaxInt64)
	return append(errs, celErrs...), nil
}
