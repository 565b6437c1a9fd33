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

package main

import (
	"io"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The end-to-end behaviour of the demo is tested by hack/demo-test.sh (CI runs it); these are
// the decisions it makes on its own: when an object is finished, and what counts as success.

// state is an object at generation gen whose status was written for generation 1.
func state(name string, gen int64, phase videov1alpha1.Phase, ready, stalled metav1.ConditionStatus, reason string) objectState {
	return objectState{
		objectRef:  objectRef{Kind: kindRender, Name: name},
		found:      true,
		generation: gen,
		job: videov1alpha1.JobStatus{
			ObservedGeneration: 1,
			Phase:              phase,
			Progress:           ptr.To[int32](42),
			Conditions: []metav1.Condition{
				{Type: string(videov1alpha1.ConditionReady), Status: ready, Reason: reason, Message: "m"},
				{Type: string(videov1alpha1.ConditionStalled), Status: stalled, Reason: reason, Message: "m"},
			},
		},
	}
}

func TestFinalAndVerdict(t *testing.T) {
	const (
		yes = metav1.ConditionTrue
		no  = metav1.ConditionFalse
	)
	tests := []struct {
		name          string
		s             objectState
		final, passed bool
	}{
		{"completed", state("a", 1, videov1alpha1.PhaseCompleted, yes, no, "Completed"), true, true},
		{"in progress", state("a", 1, videov1alpha1.PhaseInProgress, no, no, "InProgress"), false, false},
		{"stalled", state("a", 1, videov1alpha1.PhaseFailed, no, yes, "JobFailed"), true, false},
		// Ready from an older spec is not the end: the new spec has not been looked at yet.
		{"ready for an older generation", state("a", 2, videov1alpha1.PhaseCompleted, yes, no, "Completed"), false, false},
		{"not found", objectState{objectRef: objectRef{Kind: kindRender, Name: "a"}}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.final(); got != tt.final {
				t.Errorf("final() = %v, want %v", got, tt.final)
			}
			problems := verdict([]objectState{tt.s}, "refused")
			if passed := len(problems) == 0; passed != tt.passed {
				t.Errorf("verdict passed = %v, want %v (problems %q)", passed, tt.passed, problems)
			}
		})
	}

	done := state("a", 1, videov1alpha1.PhaseCompleted, yes, no, "Completed")
	if problems := verdict([]objectState{done}, ""); len(problems) != 1 || !strings.Contains(problems[0], "was accepted") {
		t.Errorf("an accepted invalid object must fail the demo, got %q", problems)
	}
	if allFinal(nil) {
		t.Error("allFinal of no objects must be false: the demo would end before anything was applied")
	}
}

func TestTable(t *testing.T) {
	s := state("why-operators", 1, videov1alpha1.PhaseInProgress, metav1.ConditionFalse, metav1.ConditionFalse, "InProgress")
	s.job.ProgressMessage = "Rendering scenes"
	got := table([]objectState{s})
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a header and one row, got %q", got)
	}
	if f := strings.Fields(lines[0]); strings.Join(f, " ") != "NAME KIND PHASE PROGRESS REASON MESSAGE" {
		t.Errorf("header = %q", lines[0])
	}
	if f := strings.Fields(lines[1]); strings.Join(f, " ") != "why-operators VideoRender InProgress 42% InProgress Rendering scenes" {
		t.Errorf("row = %q", lines[1])
	}
}

func TestClip(t *testing.T) {
	got := clip("abcdef\nab\n", 4)
	if got != "abc\nab\n" {
		t.Errorf("clip = %q", got)
	}
	if terminalWidth(io.Discard) != 0 {
		t.Error("a non-terminal writer must not get cursor movements")
	}
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.pollMin != time.Second || c.pollMax != 2*time.Second || c.timeout != 3*time.Minute || c.real {
		t.Errorf("simulator defaults: %+v", c)
	}
	c, err = parseFlags([]string{"--real"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The real service asks to be polled every 10 to 30 seconds.
	if c.pollMin != 10*time.Second || c.pollMax != 30*time.Second || c.timeout != 30*time.Minute {
		t.Errorf("--real defaults: %+v", c)
	}
	if _, err := parseFlags([]string{"--poll-min=3s", "--poll-max=1s"}, io.Discard); err == nil {
		t.Error("--poll-min above --poll-max must be refused")
	}
	if _, err := parseFlags([]string{"extra"}, io.Discard); err == nil {
		t.Error("a stray argument must be refused")
	}
}
