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

package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// outcome is where a resource stands after a reconcile, in the three kstatus conditions: exactly
// one of ready, reconciling (work under way, including waiting) or stalled (a human must act).
type outcome int

const (
	outcomeReconciling outcome = iota
	outcomeReady
	outcomeStalled
)

// setOutcome writes Ready, Reconciling and Stalled consistently, so kstatus computes Current,
// InProgress or Failed from any of them. Unchanged conditions keep their lastTransitionTime, so
// a repeated outcome does not change the status and causes no write.
func setOutcome(st *videov1alpha1.JobStatus, generation int64, o outcome, reason videov1alpha1.ConditionReason, message string) {
	set := func(t videov1alpha1.ConditionType, on bool, r videov1alpha1.ConditionReason, msg string) {
		status := metav1.ConditionFalse
		if on {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type:               string(t),
			Status:             status,
			Reason:             string(r),
			Message:            truncate(msg, maxConditionMessage),
			ObservedGeneration: generation,
		})
	}
	switch o {
	case outcomeReady:
		set(videov1alpha1.ConditionReady, true, reason, message)
		set(videov1alpha1.ConditionReconciling, false, reason, "")
		set(videov1alpha1.ConditionStalled, false, reason, "")
	case outcomeStalled:
		set(videov1alpha1.ConditionReady, false, reason, message)
		set(videov1alpha1.ConditionReconciling, false, reason, "")
		set(videov1alpha1.ConditionStalled, true, reason, message)
	default:
		set(videov1alpha1.ConditionReady, false, reason, message)
		set(videov1alpha1.ConditionReconciling, true, reason, message)
		set(videov1alpha1.ConditionStalled, false, reason, "")
	}
}

// condition returns the condition of type t, or nil.
func condition(st *videov1alpha1.JobStatus, t videov1alpha1.ConditionType) *metav1.Condition {
	return meta.FindStatusCondition(st.Conditions, string(t))
}

// isStalledWith reports whether the Stalled condition is True with the given reason.
func isStalledWith(st *videov1alpha1.JobStatus, reason videov1alpha1.ConditionReason) bool {
	c := condition(st, videov1alpha1.ConditionStalled)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == string(reason)
}

// maxConditionMessage keeps messages well inside the API's 32768-byte limit on a condition message.
const maxConditionMessage = 4096

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary so the status stays valid UTF-8.
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
