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
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicies;validatingadmissionpolicybindings,verbs=get;list;watch

// MissingMetric is the gauge the Checker sets, per policy ID: 1 while the policy, or a binding
// that denies with it, is absent.
const MissingMetric = "video_operator_admission_policy_missing"

// Reasons of the Checker's events.
const (
	ReasonMissing  = "AdmissionPolicyMissing"
	ReasonRestored = "AdmissionPolicyFound"
)

// DefaultInterval is how often the Checker looks again after its first look at start.
const DefaultInterval = 10 * time.Minute

// Checker reports an install whose admission policies (Expected) are missing or unbound: the
// scenes' rules are then not checked at admission, and only the controller's check before it
// pays refuses a broken scene (Stalled, InvalidRequest). It looks at start and every Interval,
// sets MissingMetric for each policy, and emits a Warning event on the policy's CRD
// (`kubectl describe crd videorenders.video.videoops.io`) when a policy goes missing, a Normal
// one when it is back.
type Checker struct {
	// Reader reads policies and bindings from the API server (the manager's API reader: no
	// informer is kept for two objects read every few minutes).
	Reader client.Reader
	// Recorder emits the events; nil emits none.
	Recorder events.EventRecorder
	// Interval between two looks; DefaultInterval when zero.
	Interval time.Duration
	// Log receives what each look found wrong.
	Log logr.Logger

	missing *prometheus.GaugeVec
	// problems is what the last look found, by policy ID ("" when in order).
	problems map[string]string
}

// NewChecker makes a Checker and registers its gauge with reg.
func NewChecker(reader client.Reader, recorder events.EventRecorder, reg prometheus.Registerer, log logr.Logger) (*Checker, error) {
	c := &Checker{Reader: reader, Recorder: recorder, Log: log, problems: map[string]string{},
		missing: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MissingMetric,
			Help: "1 while an admission policy of the operator (config/policies), or a binding that denies with it, is " +
				"not installed: the scenes' rules of its kind are then not checked at admission, only before paying; 0 otherwise.",
		}, []string{"policy"}),
	}
	if err := reg.Register(c.missing); err != nil {
		return nil, fmt.Errorf("registering %s: %w", MissingMetric, err)
	}
	return c, nil
}

// Start looks at start and then every Interval until ctx ends (a manager.Runnable).
func (c *Checker) Start(ctx context.Context) error {
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	for {
		c.Look(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// NeedLeaderElection is false: every replica reports what it sees.
func (c *Checker) NeedLeaderElection() bool { return false }

// Look reads the policies and bindings once, sets the gauge and emits the events of what
// changed since the last look. It returns the problems found, by policy ID.
func (c *Checker) Look(ctx context.Context) map[string]string {
	found := Problems(ctx, c.Reader)
	for _, p := range Expected {
		problem := found[p.ID]
		before, seen := c.problems[p.ID]
		c.problems[p.ID] = problem
		if problem == "" {
			c.missing.WithLabelValues(p.ID).Set(0)
			if seen && before != "" {
				c.event(p, corev1.EventTypeNormal, ReasonRestored, "The admission policy %s is installed and bound again: "+
					"the scenes' rules of %s are checked at admission.", p.ID, p.Resource)
			}
			continue
		}
		c.missing.WithLabelValues(p.ID).Set(1)
		c.Log.Error(nil, "An admission policy of the operator is missing: the scenes' rules are not checked at admission, "+
			"only before paying (InvalidRequest)", "policy", p.ID, "resource", p.Resource, "problem", problem)
		if before != problem {
			c.event(p, corev1.EventTypeWarning, ReasonMissing, "%s. The scenes' rules of %s are not checked at admission: "+
				"a broken scene is accepted and refused only before it is paid for (Stalled, InvalidRequest). "+
				"Install config/policies (docs/deploy.md).", problem, p.Resource)
		}
	}
	return found
}

func (c *Checker) event(p Policy, eventType, reason, note string, args ...any) {
	if c.Recorder == nil {
		return
	}
	crd := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Resource + ".video.videoops.io"},
	}
	c.Recorder.Eventf(crd, nil, eventType, reason, "CheckAdmissionPolicy", note, args...)
}

// Problems reads the policies and bindings labelled Label and says, for each policy of Expected,
// what is wrong: no policy, no binding of it that denies, or an error reading them (a policy that
// cannot be read is not known to be in force). A policy in order has no entry.
func Problems(ctx context.Context, r client.Reader) map[string]string {
	problems := map[string]string{}
	var policies admissionregistrationv1.ValidatingAdmissionPolicyList
	var bindings admissionregistrationv1.ValidatingAdmissionPolicyBindingList
	err := r.List(ctx, &policies, client.HasLabels{Label})
	if err == nil {
		err = r.List(ctx, &bindings, client.HasLabels{Label})
	}
	for _, p := range Expected {
		if err != nil {
			problems[p.ID] = fmt.Sprintf("the admission policy %s cannot be read: %v", p.ID, err)
			continue
		}
		var policy *admissionregistrationv1.ValidatingAdmissionPolicy
		for i := range policies.Items {
			if policies.Items[i].Labels[Label] == p.ID {
				policy = &policies.Items[i]
			}
		}
		if policy == nil {
			problems[p.ID] = fmt.Sprintf("no ValidatingAdmissionPolicy labelled %s=%s is installed", Label, p.ID)
			continue
		}
		bound := false
		for _, b := range bindings.Items {
			if b.Spec.PolicyName == policy.Name && slices.Contains(b.Spec.ValidationActions, admissionregistrationv1.Deny) {
				bound = true
			}
		}
		if !bound {
			problems[p.ID] = fmt.Sprintf("the ValidatingAdmissionPolicy %s has no ValidatingAdmissionPolicyBinding labelled %s "+
				"that denies with it", policy.Name, Label)
		}
	}
	return problems
}
