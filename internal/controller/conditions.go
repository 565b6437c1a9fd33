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
	"fmt"
	"unicode/utf8"

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
//
// An object that has no phase yet is Pending whatever the outcome: it stalls before anything was
// submitted (a missing Secret, a rejected key, an invalid request), and kubectl shows Pending
// rather than a blank phase.
func setOutcome(st *videov1alpha1.JobStatus, generation int64, o outcome, reason videov1alpha1.ConditionReason, message string) {
	if st.Phase == "" {
		st.Phase = videov1alpha1.PhasePending
	}
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

// Bounds of the status schema (api/v1alpha1) that values from the service are fitted into; a
// test checks each against the generated CRD.
const (
	// maxConditionMessage keeps messages well inside the API's 32768-character limit.
	maxConditionMessage = 4096
	maxProgressMessage  = 1024
	maxRenderState      = 100
	maxFailureCode      = 200
	maxFailureMessage   = 4096
	maxPreviewStory     = 15000
	// maxURL bounds every output URL and thumbnail; a longer one is left out, never cut.
	maxURL = 16384
	// maxClearanceCode bounds a clearance code, which is never cut either.
	maxClearanceCode = 1024
	maxOmitted       = 20
	// maxCredits is the bound of status.aiCreditsUsed, a decimal string; a longer number is left
	// out rather than cut (a cut number is a wrong number).
	maxCredits = 32
)

// ellipsis marks a value that was cut.
const ellipsis = "…"

// truncate returns s when it has at most n characters (runes: the unit of the schema's
// maxLength), and otherwise its first n-1 characters and an ellipsis: n characters in all.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	cut, count := 0, 0
	for i := range s {
		if count == n-1 {
			cut = i
			break
		}
		count++
	}
	return s[:cut] + ellipsis
}

// truncateBytes is truncate for limits in bytes (an event's note), cutting on a rune boundary.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len(ellipsis)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:max(n, 0)] + ellipsis
}

// fitWhole returns u when it fits the status schema's bound. A value that only works whole (a
// URL, a clearance code, a number) is left out and named in omitted instead of being cut.
func fitWhole(name, u string, limit int, omitted *[]string) string {
	n := utf8.RuneCountInString(u)
	if n <= limit {
		return u
	}
	if len(*omitted) < maxOmitted {
		*omitted = append(*omitted, fmt.Sprintf("%s (%d characters, over %d)", name, n, limit))
	}
	return ""
}

// boundedError is an error's text, bounded for a condition message.
func boundedError(err error) string { return truncate(err.Error(), 1024) }
