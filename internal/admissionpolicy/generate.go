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
	"fmt"
	"regexp"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Rule is one CEL rule of a schema node (x-kubernetes-validations), at its path in the CRD's
// schema: property names, "[]" for a list item.
type Rule struct {
	Path              []string
	Rule              string
	Message           string
	MessageExpression string
	FieldPath         string
}

// ChunkSize is how many scenes one inner loop of a rule visits. The API server's CEL evaluator
// takes time quadratic in the length of the list a comprehension iterates over (its cost tracking
// searches a stack that grows with every item: 20 s for one rule over 120,000 scenes), so a rule
// iterates over chunks of the scenes (variables.chunks), then over the scenes of each chunk: 0.2 s
// for the same rule.
const ChunkSize = 128

// MaxScenes is the most scenes a policy checks: above it the policy does not apply (a match
// condition), since its rules could exceed the API server's CEL cost budget for one expression,
// and the controller's check before it pays (internal/requestrules, the same rules) refuses such a
// request with InvalidRequest. The CRDs' scene bound is what the object's size allows (120,989).
const MaxScenes = 5000

// SceneList is the path segment pair that starts a scene: a rule below it goes to the policy.
var SceneList = []string{"scenes", "[]"}

// ScenePolicy turns the rules of the scenes of one kind (every Rule is at or below
// <prefix>.scenes[]; sorted by path, then in the order they are to be reported) into a
// ValidatingAdmissionPolicy and its binding:
//
//   - bound to CREATE and UPDATE of the main resource only, so that status and metadata writes
//     (and any subresource) never evaluate them;
//   - a match condition skips an UPDATE that leaves the spec as it was (a metadata write), as the
//     CRD's ratcheting would have accepted it, and another leaves a request of more than
//     MaxScenes scenes to the controller;
//   - first the probe (ProbeValidation), then one validation per schema node below the scene,
//     holding the node's rules, over every scene by chunks of ChunkSize (variables.chunks), self
//     rewritten to the scene (or the node below it);
//   - a messageExpression that names the first failing scene's index and the first broken rule's
//     field ("spec.storyboard.scenes[3].audioLanguage: audioLanguage is required ..."), the
//     marker's message after it.
func ScenePolicy(p Policy, group, version string, rules []Rule) (*admissionregistrationv1.ValidatingAdmissionPolicy,
	*admissionregistrationv1.ValidatingAdmissionPolicyBinding, error) {
	if len(rules) == 0 {
		return nil, nil, fmt.Errorf("%s: no rule", p.ID)
	}
	prefix, _ := splitAtScenes(rules[0].Path)
	if prefix == nil {
		return nil, nil, fmt.Errorf("%s: rule at %v is not under a scene list", p.ID, rules[0].Path)
	}
	// variables.scenes: the scene list, or an empty list when the object has none.
	var guards []string
	expr := "object"
	for _, name := range append(append([]string(nil), prefix...), "scenes") {
		expr += "." + name
		guards = append(guards, "has("+expr+")")
	}
	scenes := fmt.Sprintf("%s ? %s : []", strings.Join(guards, " && "), expr)
	listPath := strings.Join(append(append([]string(nil), prefix...), "scenes"), ".")

	validations := []admissionregistrationv1.Validation{ProbeValidation()}
	variables := []admissionregistrationv1.Variable{
		{Name: "scenes", Expression: scenes},
		{Name: "chunks", Expression: fmt.Sprintf("lists.range((size(variables.scenes) + %[1]d) / %[2]d).map(c, "+
			"variables.scenes.slice(c * %[2]d, c * %[2]d + %[2]d > size(variables.scenes) ? size(variables.scenes) : c * %[2]d + %[2]d))",
			ChunkSize-1, ChunkSize)},
	}
	// One validation per schema node: its rules (consecutive, rules being sorted by path) are
	// evaluated in one walk of the scenes.
	for start := 0; start < len(rules); {
		end := start + 1
		for end < len(rules) && strings.Join(rules[end].Path, ".") == strings.Join(rules[start].Path, ".") {
			end++
		}
		group := rules[start:end]
		pre, rest := splitAtScenes(group[0].Path)
		if strings.Join(pre, ".") != strings.Join(prefix, ".") {
			return nil, nil, fmt.Errorf("%s: rules under two scene lists (%v, %v)", p.ID, prefix, pre)
		}
		for _, r := range group {
			if oldSelf.MatchString(r.Rule) || oldSelf.MatchString(r.MessageExpression) {
				return nil, nil, fmt.Errorf("%s: rule %q at %v is a transition rule (oldSelf): a policy would need the old scene", p.ID, r.Rule, r.Path)
			}
		}
		v, vars, err := validation(fmt.Sprintf("node%d", len(validations)), group, rest, listPath)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p.ID, err)
		}
		validations = append(validations, v)
		variables = append(variables, vars...)
		start = end
	}

	labels := map[string]string{Label: p.ID}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: p.ID, Labels: labels},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{version},
						Resources: []string{p.Resource}, Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
				}}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "spec-written",
				Expression: "oldObject == null || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec",
			}, {
				Name:       "within-budget",
				Expression: fmt.Sprintf("!(%s) || size(%s) <= %d", strings.Join(guards, " && "), expr, MaxScenes),
			}},
			Variables:   variables,
			Validations: validations,
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: p.ID, Labels: labels},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        p.ID,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	return policy, binding, nil
}

// ProbeLabel marks an object that asks whether the policies are enforced: every policy refuses
// its create with ProbeMessage. An installer, a test or a person dry-runs the create of a valid
// object with this label (`kubectl create --dry-run=server`) and knows the policy is in force when
// it is refused: a policy takes effect some time after it is written, and an object that breaks
// a scene rule cannot tell, since the CRD refuses it first while it still has the rules.
const ProbeLabel = "video.videoops.io/admission-policy-probe"

// ProbeMessage is the refusal of a probe.
const ProbeMessage = "the admission policy is in force (label " + ProbeLabel + ")"

// ProbeValidation refuses an object labelled ProbeLabel.
func ProbeValidation() admissionregistrationv1.Validation {
	return admissionregistrationv1.Validation{
		Expression: fmt.Sprintf("!has(object.metadata.labels) || !(%s in object.metadata.labels)", quote(ProbeLabel)),
		Message:    ProbeMessage,
		Reason:     ptr.To(metav1.StatusReasonInvalid),
	}
}

var (
	oldSelf    = regexp.MustCompile(`\boldSelf\b`)
	selfWord   = regexp.MustCompile(`\bself\b`)
	identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// splitAtScenes splits a path at its first scene list: what is before "scenes", and what is after
// "scenes", "[]". prefix is nil when the path has no scene list.
func splitAtScenes(path []string) (prefix, rest []string) {
	for i := 0; i+1 < len(path); i++ {
		if path[i] == SceneList[0] && path[i+1] == SceneList[1] {
			return append([]string{}, path[:i]...), path[i+2:]
		}
	}
	return nil, nil
}

// validation checks the rules of one schema node (group, at rest below the scene) over every
// scene, in one walk. Its message names the first failing scene (its chunk, then its place in the
// chunk), the first failing item of each list below it, and the first rule of the group that the
// node breaks, with the rule's field. The variables it returns (prefixed name) find that node:
// they are evaluated only for the message, when the validation fails.
func validation(name string, group []Rule, rest []string, listPath string) (admissionregistrationv1.Validation, []admissionregistrationv1.Variable, error) {
	parts := make([]string, len(group))
	for i, r := range group {
		parts[i] = "(" + r.Rule + ")"
	}
	merged := strings.Join(parts, " && ")
	holds, err := holdsOn("scene", rest, merged, 1)
	if err != nil {
		return admissionregistrationv1.Validation{}, nil, err
	}
	v := func(suffix string) string { return "variables." + name + suffix }
	vars := []admissionregistrationv1.Variable{
		{Name: name + "Chunk", Expression: fmt.Sprintf("variables.chunks.map(chunk, chunk.all(scene, %s)).indexOf(false)", holds)},
		{Name: name + "Scene", Expression: fmt.Sprintf("%s * %d + variables.chunks[%s].map(scene, %s).indexOf(false)",
			v("Chunk"), ChunkSize, v("Chunk"), holds)},
	}
	pathExpr := []string{quote(listPath + "["), "string(" + v("Scene") + ")", quote("]")}
	staticPath := listPath + "[]"
	node := "variables.scenes[" + v("Scene") + "]"
	for i, seg := range rest {
		if seg == "[]" {
			inner, err := holdsOn("item", rest[i+1:], merged, 1)
			if err != nil {
				return admissionregistrationv1.Validation{}, nil, err
			}
			item := fmt.Sprintf("Item%d", len(vars))
			vars = append(vars, admissionregistrationv1.Variable{Name: name + item, Expression: fmt.Sprintf("%s.map(item, %s).indexOf(false)", node, inner)})
			pathExpr = append(pathExpr, quote("["), "string("+v(item)+")", quote("]"))
			staticPath += "[]"
			node += "[" + v(item) + "]"
			continue
		}
		pathExpr = append(pathExpr, quote("."+seg))
		staticPath += "." + seg
		node += "." + seg
	}
	vars = append(vars, admissionregistrationv1.Variable{Name: name + "Node", Expression: node})
	// The first rule broken: a chain of conditionals, in the group's order.
	var choice string
	var static []string
	for i := len(group) - 1; i >= 0; i-- {
		r := group[i]
		message := quote(r.Message)
		if r.MessageExpression != "" {
			message = "(" + selfWord.ReplaceAllString(r.MessageExpression, v("Node")) + ")"
		}
		message = quote(r.FieldPath+": ") + " + " + message
		if choice == "" {
			choice = message
		} else {
			choice = fmt.Sprintf("!(%s) ? %s : (%s)", selfWord.ReplaceAllString(r.Rule, v("Node")), message, choice)
		}
		text := r.Message
		if text == "" {
			text = "the rule " + r.Rule
		}
		static = append([]string{staticPath + r.FieldPath + ": " + text}, static...)
	}
	pathExpr = append(pathExpr, "("+choice+")")
	return admissionregistrationv1.Validation{
		Expression:        "variables.chunks.all(chunk, chunk.all(scene, " + holds + "))",
		Message:           strings.Join(static, "; or "),
		MessageExpression: strings.Join(pathExpr, " + "),
		Reason:            ptr.To(metav1.StatusReasonInvalid),
	}, vars, nil
}

// holdsOn is the rule on every node at rest below base: a property that is absent holds, a list
// holds when every item does. depth numbers the variables of nested lists.
func holdsOn(base string, rest []string, rule string, depth int) (string, error) {
	if len(rest) == 0 {
		return "(" + selfWord.ReplaceAllString(rule, base) + ")", nil
	}
	switch seg := rest[0]; {
	case seg == "[]":
		v := fmt.Sprintf("item%d", depth)
		inner, err := holdsOn(v, rest[1:], rule, depth+1)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s.all(%s, %s)", base, v, inner), nil
	case identifier.MatchString(seg) && !celReserved[seg]:
		inner, err := holdsOn(base+"."+seg, rest[1:], rule, depth)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("(!has(%s.%s) || %s)", base, seg, inner), nil
	default:
		return "", fmt.Errorf("rule %q: path segment %q has no CEL field selection", rule, seg)
	}
}

// celReserved are the property names a CEL field selection cannot spell as they are.
var celReserved = map[string]bool{"as": true, "break": true, "const": true, "continue": true, "else": true, "false": true,
	"for": true, "function": true, "if": true, "import": true, "in": true, "let": true, "loop": true, "package": true,
	"namespace": true, "null": true, "return": true, "true": true, "var": true, "void": true, "while": true}

// quote is a CEL string literal of s.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
