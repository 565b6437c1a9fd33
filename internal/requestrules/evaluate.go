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
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
)

// This file is the evaluation of apiextensions' cel.Validator (validation.go of
// k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel), with the same compiled programs, the
// same costs and the same errors, on a schema adapter that is built once. The Validator hands
// CEL model.Structural, whose Properties() builds a map of every property, and a wrapper per
// property, on each field access of each rule: on a request of 60 scenes that was half of the
// manager's CPU (issue 39). The Validator takes no other adapter, so its walk is repeated here
// for what a request schema can hold; newRules refuses what it cannot (transition rules, rules
// under allOf), and check_test.go compares every case with the Validator itself.

// node is a schema node that holds rules or has a descendant that does, as the Validator's tree.
type node struct {
	schema *structuralschema.Structural
	// self is the adapter CEL sees the node's value through: with the type and object meta
	// of an embedded resource's root, as the Validator gives it.
	self           common.Schema
	rules          []apiextensionsv1.ValidationRule
	compiled       []cel.CompilationResult
	compilationErr error

	items      *node
	additional *node
	// properties are sorted by name, so that errors come in an order of their own rather than
	// Go's map order, which the Validator follows.
	properties []property
}

type property struct {
	name string
	node *node
}

// buildNode mirrors the Validator's validator(): the same declared types and compilation per
// node, and nil where no rule lies at or below s.
func buildNode(s *structuralschema.Structural, self *memoSchema, isResourceRoot bool, declType *apiservercel.DeclType, perCallLimit uint64) (*node, error) {
	if s.ValueValidation != nil {
		for i := range s.ValueValidation.AllOf {
			if nestedHasRules(&s.ValueValidation.AllOf[i]) {
				return nil, errors.New("a rule under allOf: the Validator's allOf is not reproduced here")
			}
		}
	}
	compiled, compileErr := cel.Compile(s, declType, perCallLimit,
		environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), cel.StoredExpressionsEnvLoader())
	for i, c := range compiled {
		if c.UsesOldSelf {
			// Check has no old object, and the Validator's handling of one is not reproduced.
			return nil, fmt.Errorf("rule %q is a transition rule (oldSelf)", s.XValidations[i].Rule)
		}
	}
	n := &node{schema: s, self: self, rules: s.XValidations, compiled: compiled, compilationErr: compileErr}
	if isResourceRoot {
		n.self = &model.Structural{Structural: model.WithTypeAndObjectMeta(s)}
	}
	var elemType *apiservercel.DeclType
	if declType != nil {
		elemType = declType.ElemType
	}
	var err error
	if s.Items != nil {
		if n.items, err = buildNode(s.Items, self.items.(*memoSchema), s.Items.XEmbeddedResource, elemType, perCallLimit); err != nil {
			return nil, fmt.Errorf("items: %w", err)
		}
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		prop := s.Properties[name]
		var fieldType *apiservercel.DeclType
		if escaped, ok := apiservercel.Escape(name); ok {
			if declType == nil {
				continue
			}
			f, ok := declType.Fields[escaped]
			if !ok {
				// The Validator leaves fields of unknown types out of CEL validation.
				continue
			}
			fieldType = f.Type
		} else if fieldType = model.SchemaDeclType(&prop, prop.XEmbeddedResource); fieldType == nil {
			continue
		}
		child, err := buildNode(&prop, self.properties[name].(*memoSchema), prop.XEmbeddedResource, fieldType, perCallLimit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if child != nil {
			n.properties = append(n.properties, property{name: name, node: child})
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		a := s.AdditionalProperties.Structural
		if n.additional, err = buildNode(a, self.additional.Schema().(*memoSchema), a.XEmbeddedResource, elemType, perCallLimit); err != nil {
			return nil, fmt.Errorf("additionalProperties: %w", err)
		}
	}
	if len(compiled) == 0 && compileErr == nil && n.items == nil && n.additional == nil && len(n.properties) == 0 {
		return nil, nil
	}
	return n, nil
}

func nestedHasRules(v *structuralschema.NestedValueValidation) bool {
	if v == nil {
		return false
	}
	if len(v.XValidations) > 0 || nestedHasRules(v.Items) || nestedHasRules(v.AdditionalProperties) {
		return true
	}
	for k := range v.Properties {
		p := v.Properties[k]
		if nestedHasRules(&p) {
			return true
		}
	}
	return false
}

// validate is the Validator's validate: the node's rules, then its items or properties, until
// the budget runs out.
func (n *node) validate(ctx context.Context, path *field.Path, obj any, budget int64) (field.ErrorList, int64) {
	if n == nil || obj == nil {
		return nil, budget
	}
	errs, budget := n.validateExpressions(ctx, path, obj, budget)
	if budget < 0 {
		return errs, budget
	}
	switch obj := obj.(type) {
	case []any:
		if n.items == nil {
			return errs, budget
		}
		for i := range obj {
			var itemErrs field.ErrorList
			itemErrs, budget = n.items.validate(ctx, path.Index(i), obj[i], budget)
			errs = append(errs, itemErrs...)
			if budget < 0 {
				return errs, budget
			}
		}
	case map[string]any:
		if n.additional != nil {
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				var valueErrs field.ErrorList
				valueErrs, budget = n.additional.validate(ctx, path.Key(k), obj[k], budget)
				errs = append(errs, valueErrs...)
				if budget < 0 {
					return errs, budget
				}
			}
		}
		for _, p := range n.properties {
			v, ok := obj[p.name]
			if !ok {
				continue
			}
			var propErrs field.ErrorList
			propErrs, budget = p.node.validate(ctx, path.Child(p.name), v, budget)
			errs = append(errs, propErrs...)
			if budget < 0 {
				return errs, budget
			}
		}
	}
	return errs, budget
}

// validateExpressions is the Validator's validateExpressions without an old object: the same
// errors, messages and costs, and the same early stops.
func (n *node) validateExpressions(ctx context.Context, path *field.Path, obj any, budget int64) (field.ErrorList, int64) {
	typ := n.schema.Type
	var errs field.ErrorList
	if n.compilationErr != nil {
		return append(errs, field.Invalid(path, typ, fmt.Sprintf("rule compiler initialization error: %v", n.compilationErr))), budget
	}
	if len(n.compiled) == 0 {
		return nil, budget
	}
	if budget <= 0 {
		return append(errs, field.Invalid(path, typ, "validation failed due to running out of cost budget, no further validation rules will be run")), -1
	}
	activation := &selfActivation{self: common.UnstructuredToVal(obj, n.self)}
	for i, compiled := range n.compiled {
		rule := n.rules[i]
		if compiled.Error != nil {
			errs = append(errs, field.Invalid(path, typ, fmt.Sprintf("rule compile error: %v", compiled.Error)))
			continue
		}
		if compiled.Program == nil {
			continue // an empty rule
		}
		result, details, err := compiled.Program.ContextEval(ctx, activation)
		if details == nil {
			return append(errs, field.InternalError(path, fmt.Errorf("runtime cost could not be calculated for validation rule: %v, no further validation rules will be run", ruleErrorString(rule)))), -1
		}
		cost := details.ActualCost()
		if cost == nil {
			return append(errs, field.Invalid(path, typ, fmt.Sprintf("runtime cost could not be calculated for validation rule: %v, no further validation rules will be run", ruleErrorString(rule)))), -1
		}
		if *cost > math.MaxInt64 || int64(*cost) > budget {
			return append(errs, field.Invalid(path, typ, "validation failed due to running out of cost budget, no further validation rules will be run")), -1
		}
		budget -= int64(*cost)
		if err != nil {
			switch {
			case strings.HasPrefix(err.Error(), "no such overload"):
				errs = append(errs, field.Invalid(path, typ, fmt.Sprintf("'%v': call arguments did not match a supported operator, function or macro signature for rule: %v", err, ruleErrorString(rule))))
			case strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded"):
				return append(errs, field.Invalid(path, typ, fmt.Sprintf("'%v': no further validation rules will be run due to call cost exceeds limit for rule: %v", err, ruleErrorString(rule)))), -1
			default:
				errs = append(errs, field.Invalid(path, typ, fmt.Sprintf("%v evaluating rule: %v", err, ruleErrorString(rule))))
			}
			continue
		}
		if result == types.True {
			continue
		}

		rulePath := path
		if compiled.NormalizedRuleFieldPath != "" {
			rulePath = rulePath.Child(compiled.NormalizedRuleFieldPath)
		}
		detail, ok := "", false
		if compiled.MessageExpression != nil {
			message, remaining, msgErr := evalMessageExpression(ctx, compiled.MessageExpression, rule.MessageExpression, activation, budget)
			switch {
			case msgErr == nil:
				detail, ok = message, true
				budget = remaining
			case msgErr.Type == apiservercel.ErrorTypeInternal:
				return append(errs, field.InternalError(rulePath, msgErr)), -1
			case msgErr.Type == apiservercel.ErrorTypeInvalid:
				return append(errs, field.Invalid(rulePath, typ, msgErr.Error())), -1
			default:
				// The Validator logs the failure and falls back to the message.
				budget = remaining
			}
		}
		if !ok {
			detail = ruleMessageOrDefault(rule)
		}
		value := obj
		if typ == "object" || typ == "array" {
			value = field.OmitValueType{}
		}
		errs = append(errs, fieldErrorForReason(rulePath, value, detail, rule.Reason))
	}
	return errs, budget
}

// selfActivation resolves self; a transition rule's oldSelf is unset, as the Validator leaves it
// without an old object (newRules refuses such rules anyway).
type selfActivation struct{ self ref.Val }

func (a *selfActivation) ResolveName(name string) (any, bool) {
	if name == cel.ScopedVarName {
		return a.self, true
	}
	return nil, false
}

func (a *selfActivation) Parent() interpreter.Activation { return nil }

// evalMessageExpression is the Validator's, to the letter: its errors are part of what a
// refusal says.
func evalMessageExpression(ctx context.Context, expr celgo.Program, exprSrc string, activation interpreter.Activation, budget int64) (string, int64, *apiservercel.Error) {
	result, details, err := expr.ContextEval(ctx, activation)
	if details == nil {
		return "", -1, &apiservercel.Error{Type: apiservercel.ErrorTypeInternal,
			Detail: fmt.Sprintf("runtime cost could not be calculated for messageExpression: %q", exprSrc)}
	}
	cost := details.ActualCost()
	if cost == nil {
		return "", -1, &apiservercel.Error{Type: apiservercel.ErrorTypeInternal,
			Detail: fmt.Sprintf("runtime cost could not be calculated for messageExpression: %q", exprSrc)}
	}
	if *cost > math.MaxInt64 || int64(*cost) > budget {
		return "", -1, &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid,
			Detail: "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"}
	}
	remaining := budget - int64(*cost)
	if err != nil {
		if strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded") {
			return "", -1, &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid,
				Detail: fmt.Sprintf("no further validation rules will be run due to call cost exceeds limit for messageExpression: %q", exprSrc)}
		}
		return "", remaining, &apiservercel.Error{Detail: fmt.Sprintf("messageExpression evaluation failed due to: %v", err.Error())}
	}
	message, ok := result.Value().(string)
	if !ok {
		return "", remaining, &apiservercel.Error{Detail: "messageExpression failed to convert to string"}
	}
	message = strings.TrimSpace(message)
	switch {
	case len(message) > celconfig.MaxEvaluatedMessageExpressionSizeBytes:
		return "", remaining, &apiservercel.Error{Detail: fmt.Sprintf("messageExpression beyond allowable length of %d", celconfig.MaxEvaluatedMessageExpressionSizeBytes)}
	case newlines.MatchString(message):
		return "", remaining, &apiservercel.Error{Detail: "messageExpression should not contain line breaks"}
	case message == "":
		return "", remaining, &apiservercel.Error{Detail: "messageExpression should evaluate to a non-empty string"}
	}
	return message, remaining, nil
}

var newlines = regexp.MustCompile(`[\n]+`)

func ruleMessageOrDefault(rule apiextensionsv1.ValidationRule) string {
	if rule.Message == "" {
		return fmt.Sprintf("failed rule: %s", ruleErrorString(rule))
	}
	return strings.TrimSpace(rule.Message)
}

func ruleErrorString(rule apiextensionsv1.ValidationRule) string {
	if rule.Message != "" {
		return strings.TrimSpace(rule.Message)
	}
	return strings.TrimSpace(rule.Rule)
}

func fieldErrorForReason(path *field.Path, value any, detail string, reason *apiextensionsv1.FieldValueErrorReason) *field.Error {
	if reason == nil {
		return field.Invalid(path, value, detail)
	}
	switch *reason {
	case apiextensionsv1.FieldValueForbidden:
		return field.Forbidden(path, detail)
	case apiextensionsv1.FieldValueRequired:
		return field.Required(path, detail)
	case apiextensionsv1.FieldValueDuplicate:
		return field.Duplicate(path, value)
	default:
		return field.Invalid(path, value, detail)
	}
}

// memoSchema is model.Structural with its children built once: CEL asks for a node's
// properties on every field access, and model.Structural builds them anew each time.
type memoSchema struct {
	*model.Structural
	items      common.Schema
	properties map[string]common.Schema
	additional common.SchemaOrBool
}

func newMemoSchema(s *structuralschema.Structural) *memoSchema {
	m := &memoSchema{Structural: &model.Structural{Structural: s}}
	if s.Items != nil {
		m.items = newMemoSchema(s.Items)
	}
	// CEL tells an object from a map by whether Properties() is nil, empty or not.
	if s.Properties != nil {
		m.properties = make(map[string]common.Schema, len(s.Properties))
		for name := range s.Properties {
			prop := s.Properties[name]
			m.properties[name] = newMemoSchema(&prop)
		}
	}
	if s.AdditionalProperties != nil {
		a := &memoSchemaOrBool{allows: s.AdditionalProperties.Bool}
		if s.AdditionalProperties.Structural != nil {
			a.schema = newMemoSchema(s.AdditionalProperties.Structural)
		}
		m.additional = a
	}
	return m
}

func (m *memoSchema) Items() common.Schema                 { return m.items }
func (m *memoSchema) Properties() map[string]common.Schema { return m.properties }
func (m *memoSchema) AdditionalProperties() common.SchemaOrBool {
	return m.additional
}

type memoSchemaOrBool struct {
	schema common.Schema
	allows bool
}

func (m *memoSchemaOrBool) Schema() common.Schema { return m.schema }
func (m *memoSchemaOrBool) Allows() bool          { return m.allows }
