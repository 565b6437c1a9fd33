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
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The stalled gauge and the awaiting-approval gauge are kept from the conditions the controller
// writes, so that every reason a human must act on can page someone: an object stalled before
// any job (a missing Secret, a rejected key) stays Pending and the jobs gauge cannot show it, and
// a render waiting for an approval is Reconciling, not Stalled.

// StalledReasons are the values of the reason label of video_operator_stalled_objects: the
// reasons the controllers stall an object with (api/v1alpha1). Any other reason is counted as
// ReasonOther, so the label's values stay this fixed set whatever a later version adds.
var StalledReasons = []videov1alpha1.ConditionReason{
	videov1alpha1.ReasonJobFailed, videov1alpha1.ReasonJobNotFound, videov1alpha1.ReasonJobDeadlineExceeded,
	videov1alpha1.ReasonSecretNotFound, videov1alpha1.ReasonSecretKeyMissing, videov1alpha1.ReasonUnauthorized,
	videov1alpha1.ReasonSubmissionUnknown, videov1alpha1.ReasonAdoptedJobNotFound, videov1alpha1.ReasonAPIKeyChanged,
	videov1alpha1.ReasonEarlierSubmissionRendering, videov1alpha1.ReasonNarrationIncomplete,
	videov1alpha1.ReasonBriefSettingsNotCarried, videov1alpha1.ReasonStoryboardNotFound,
	videov1alpha1.ReasonProjectNotFound, videov1alpha1.ReasonProjectBusy, videov1alpha1.ReasonBrandNotFound,
	videov1alpha1.ReasonInvalidRequest, videov1alpha1.ReasonBudgetExhausted,
	// A render of a stalled VideoStoryboard stalls too, with this reason.
	videov1alpha1.ReasonWaitingForPreview,
}

// ReasonOther is the reason label of a stall whose reason is not in StalledReasons.
const ReasonOther = "Other"

// stalledLabel is the reason label value of a Stalled condition's reason.
func stalledLabel(reason string) string {
	if slices.Contains(StalledReasons, videov1alpha1.ConditionReason(reason)) {
		return reason
	}
	return ReasonOther
}

// objectState is what the two gauges keep of one object.
type objectState struct {
	stalled string // the reason label, "" when not stalled
	// awaiting is when the render began waiting for an approval (the Reconciling condition's
	// lastTransitionTime, which survives a restart of the manager); zero when it does not wait.
	awaiting time.Time
}

// oldestAwaitingDesc is video_operator_oldest_awaiting_approval_timestamp_seconds.
var oldestAwaitingDesc = prometheus.NewDesc("video_operator_oldest_awaiting_approval_timestamp_seconds",
	"Since when (Unix time) the oldest render of a namespace waits for a person to approve its preview "+
		"(Reconciling, reason AwaitingApproval; the time the render last became Reconciling), by namespace; no series "+
		"when none waits. time() minus it is how long a review has gone undone.", []string{"namespace"}, nil)

// oldestAwaiting exposes the oldest awaiting time per namespace, computed at scrape.
type oldestAwaiting struct{ m *Metrics }

func (o oldestAwaiting) Describe(ch chan<- *prometheus.Desc) { ch <- oldestAwaitingDesc }

func (o oldestAwaiting) Collect(ch chan<- prometheus.Metric) {
	o.m.mu.Lock()
	defer o.m.mu.Unlock()
	oldest := map[string]time.Time{}
	for _, byName := range o.m.states {
		for nn, s := range byName {
			if s.awaiting.IsZero() {
				continue
			}
			if t, ok := oldest[nn.Namespace]; !ok || s.awaiting.Before(t) {
				oldest[nn.Namespace] = s.awaiting
			}
		}
	}
	for ns, t := range oldest {
		ch <- prometheus.MustNewConstMetric(oldestAwaitingDesc, prometheus.GaugeValue, float64(t.UnixNano())/1e9, ns)
	}
}

// ObserveConditions keeps the stalled gauge and the awaiting-approval gauge equal to the
// conditions of the object's status as written.
func (m *Metrics) ObserveConditions(kind string, nn types.NamespacedName, conditions []metav1.Condition) {
	if m == nil {
		return
	}
	var now objectState
	if c := meta.FindStatusCondition(conditions, string(videov1alpha1.ConditionStalled)); c != nil && c.Status == metav1.ConditionTrue {
		now.stalled = stalledLabel(c.Reason)
	}
	if c := meta.FindStatusCondition(conditions, string(videov1alpha1.ConditionReconciling)); c != nil &&
		c.Status == metav1.ConditionTrue && c.Reason == string(videov1alpha1.ReasonAwaitingApproval) {
		now.awaiting = c.LastTransitionTime.Time
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	byName := m.states[kind]
	if byName == nil {
		byName = map[types.NamespacedName]objectState{}
		m.states[kind] = byName
	}
	old := byName[nn]
	if old.stalled != now.stalled {
		m.moveStalled(kind, nn.Namespace, old.stalled, now.stalled)
	}
	if now == (objectState{}) {
		delete(byName, nn)
	} else {
		byName[nn] = now
	}
}

// moveStalled moves one object from the series of reason from to that of reason to ("" is none).
// A series at 0 is removed: the gauge holds only what is stalled, so its series are bounded by
// the namespaces and reasons that have a stalled object. Called with m.mu held.
func (m *Metrics) moveStalled(kind, namespace, from, to string) {
	if from != "" {
		k := stalledKey{kind, namespace, from}
		if m.stalledCount[k]--; m.stalledCount[k] > 0 {
			m.stalled.WithLabelValues(kind, namespace, from).Set(float64(m.stalledCount[k]))
		} else {
			delete(m.stalledCount, k)
			m.stalled.DeleteLabelValues(kind, namespace, from)
		}
	}
	if to != "" {
		k := stalledKey{kind, namespace, to}
		m.stalledCount[k]++
		m.stalled.WithLabelValues(kind, namespace, to).Set(float64(m.stalledCount[k]))
	}
}

// forgetConditions removes a deleted object from both gauges. Called with m.mu held.
func (m *Metrics) forgetConditions(kind string, nn types.NamespacedName) {
	if old, ok := m.states[kind][nn]; ok {
		m.moveStalled(kind, nn.Namespace, old.stalled, "")
		delete(m.states[kind], nn)
	}
}

// stalledKey keys Metrics.stalledCount: the labels of one series of the stalled gauge.
type stalledKey struct{ kind, namespace, reason string }
