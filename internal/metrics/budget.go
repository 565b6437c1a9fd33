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

package metrics

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The budget gauges carry a namespace label. That is the one exception to the rule that labels
// have a small, fixed set of values: a namespace has at most one VideoBudget (it is named
// "default"), so the series are bounded by the number of namespaces with a budget times four
// limits, which is what a platform team wants to alert on per tenant.

// budgetLimits are the values of the limit label, in the order the status lists them.
var budgetLimits = []videov1alpha1.BudgetLimit{
	videov1alpha1.BudgetLimitRenders, videov1alpha1.BudgetLimitRenderSeconds,
	videov1alpha1.BudgetLimitAICredits, videov1alpha1.BudgetLimitPreviews,
}

// ObserveBudget sets the used and remaining gauges of a budget's namespace.
func (m *Metrics) ObserveBudget(b *videov1alpha1.VideoBudget) {
	if m == nil {
		return
	}
	st, s := &b.Status, &b.Spec
	credits := 0.0
	if st.Used.AICredits != nil {
		credits = st.Used.AICredits.AsApproximateFloat64()
	}
	used := map[videov1alpha1.BudgetLimit]float64{
		videov1alpha1.BudgetLimitRenders:       float64(st.Used.Renders + st.Reserved.Renders),
		videov1alpha1.BudgetLimitRenderSeconds: float64(st.Used.RenderSeconds),
		videov1alpha1.BudgetLimitAICredits:     credits,
		videov1alpha1.BudgetLimitPreviews:      float64(st.Used.Previews + st.Reserved.Previews),
	}
	maxima := map[videov1alpha1.BudgetLimit]*float64{}
	for l, v := range map[videov1alpha1.BudgetLimit]*int64{videov1alpha1.BudgetLimitRenders: s.MaxRenders,
		videov1alpha1.BudgetLimitRenderSeconds: s.MaxRenderSeconds, videov1alpha1.BudgetLimitPreviews: s.MaxPreviews} {
		if v != nil {
			maxima[l] = ptr.To(float64(*v))
		}
	}
	if s.MaxAICredits != nil {
		maxima[videov1alpha1.BudgetLimitAICredits] = ptr.To(s.MaxAICredits.AsApproximateFloat64())
	}
	unavailable := 0.0
	if c := meta.FindStatusCondition(st.Conditions, string(videov1alpha1.ConditionReady)); c != nil &&
		c.Status == metav1.ConditionFalse && c.Reason == string(videov1alpha1.ReasonLedgerUnavailable) {
		unavailable = 1
	}
	m.budgetLedger.WithLabelValues(b.Namespace).Set(unavailable)
	for _, l := range budgetLimits {
		m.budgetUsed.WithLabelValues(b.Namespace, string(l)).Set(used[l])
		if mx := maxima[l]; mx != nil {
			m.budgetRemaining.WithLabelValues(b.Namespace, string(l)).Set(max(*mx-used[l], 0))
		} else {
			m.budgetRemaining.DeleteLabelValues(b.Namespace, string(l))
		}
	}
}

// ForgetBudget removes the gauges of a namespace whose VideoBudget was deleted.
func (m *Metrics) ForgetBudget(namespace string) {
	if m == nil {
		return
	}
	m.budgetLedger.DeleteLabelValues(namespace)
	for _, l := range budgetLimits {
		m.budgetUsed.DeleteLabelValues(namespace, string(l))
		m.budgetRemaining.DeleteLabelValues(namespace, string(l))
	}
}

// ObserveBudgetWrite implements spendguard.Metrics. writer, cause and result are the
// spend guard's fixed lists (spendguard.Changes, the controller's causes).
func (m *Metrics) ObserveBudgetWrite(writer, cause, result string) {
	if m == nil {
		return
	}
	m.budgetWrites.WithLabelValues(writer, cause, result).Inc()
}

// ObserveGrant implements spendguard.Metrics.
func (m *Metrics) ObserveGrant(result string) {
	if m == nil {
		return
	}
	m.budgetGrants.WithLabelValues(result).Inc()
}

// ObserveBudgetChanges implements spendguard.Metrics.
func (m *Metrics) ObserveBudgetChanges(change string, n int) {
	if m == nil {
		return
	}
	m.budgetChanges.WithLabelValues(change).Add(float64(n))
}
