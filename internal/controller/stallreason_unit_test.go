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
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/metrics"
)

// TestRenderOfAStalledStoryboardIsCountedByItsReason: a render whose VideoStoryboard is stalled
// stalls with WaitingForPreview, and video_operator_stalled_objects counts it under that reason;
// it was counted as Other, a label no alert and no reader can tell apart from a reason a later
// version adds.
func TestRenderOfAStalledStoryboardIsCountedByItsReason(t *testing.T) {
	sb := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: fixtureNS, Name: "sb", Generation: 1},
		Status: videov1alpha1.VideoStoryboardStatus{JobStatus: videov1alpha1.JobStatus{Phase: videov1alpha1.PhaseFailed,
			Conditions: []metav1.Condition{{Type: string(videov1alpha1.ConditionStalled), Status: metav1.ConditionTrue,
				Reason: string(videov1alpha1.ReasonJobFailed), Message: "the preview job failed"}}}}}
	render := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: fixtureNS, Name: "of-sb", Generation: 1},
		Spec: videov1alpha1.VideoRenderSpec{StoryboardRef: &videov1alpha1.StoryboardReference{Name: "sb"}}}
	f := newStepFixture(t, sb, render)

	w := f.targetOf(f.get("of-sb")).wait
	if w == nil || !w.stalled || w.reason != videov1alpha1.ReasonWaitingForPreview {
		t.Fatalf("the render of a stalled storyboard waits with %+v, want a stall with reason %s", w, videov1alpha1.ReasonWaitingForPreview)
	}

	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.ObserveConditions("VideoRender", types.NamespacedName{Namespace: fixtureNS, Name: "of-sb"}, []metav1.Condition{{
		Type: string(videov1alpha1.ConditionStalled), Status: metav1.ConditionTrue, Reason: string(w.reason), Message: w.message}})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, mf := range families {
		if mf.GetName() != "video_operator_stalled_objects" {
			continue
		}
		for _, sample := range mf.GetMetric() {
			for _, l := range sample.GetLabel() {
				if l.GetName() == "reason" {
					reasons = append(reasons, fmt.Sprintf("%s=%v", l.GetValue(), sample.GetGauge().GetValue()))
				}
			}
		}
	}
	if want := []string{"WaitingForPreview=1"}; !slices.Equal(reasons, want) {
		t.Errorf("video_operator_stalled_objects reasons %v, want %v", reasons, want)
	}
}
