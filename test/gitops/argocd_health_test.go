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

// Package gitops tests what config/gitops gives GitOps tools: the Argo CD health check (run here
// with gopher-lua, the Lua runtime Argo CD itself embeds) and the Flux example.
package gitops

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

var argocdDir = filepath.Join("..", "..", "config", "gitops", "argocd")

// health is what an Argo CD health script returns.
type health struct {
	Status, Message string
}

// runHealth evaluates the script on obj the way Argo CD does: obj is a global table built from
// the object's JSON, and the script returns a table with status and message.
func runHealth(t *testing.T, script string, obj map[string]any) health {
	t.Helper()
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	// The libraries Argo CD opens for health scripts.
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(script); err != nil {
		t.Fatalf("the health script failed: %v", err)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the health script returned %s, want a table", L.Get(-1).Type())
	}
	return health{Status: lua.LVAsString(ret.RawGetString("status")), Message: lua.LVAsString(ret.RawGetString("message"))}
}

// toLua converts a JSON value as decoded by the unstructured converter (maps, slices, strings,
// bool, int64, float64) into Lua values.
func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case string:
		return lua.LString(x)
	case int64:
		return lua.LNumber(x)
	case float64:
		return lua.LNumber(x)
	case map[string]any:
		tbl := L.NewTable()
		for k, e := range x {
			tbl.RawSetString(k, toLua(L, e))
		}
		return tbl
	case []any:
		tbl := L.NewTable()
		for _, e := range x {
			tbl.Append(toLua(L, e))
		}
		return tbl
	default:
		panic(fmt.Sprintf("unexpected JSON value %T", v))
	}
}

// outcome writes Ready, Reconciling and Stalled the way the controllers do (setOutcome in
// internal/controller/conditions.go): exactly one of them True.
func outcome(st *videov1alpha1.JobStatus, gen int64, ready, reconciling, stalled bool, reason videov1alpha1.ConditionReason, msg string) {
	b := func(v bool) metav1.ConditionStatus {
		if v {
			return metav1.ConditionTrue
		}
		return metav1.ConditionFalse
	}
	stalledMsg := ""
	if stalled {
		stalledMsg = msg
	}
	st.Conditions = []metav1.Condition{
		{Type: string(videov1alpha1.ConditionReady), Status: b(ready), Reason: string(reason), Message: msg, ObservedGeneration: gen},
		{Type: string(videov1alpha1.ConditionReconciling), Status: b(reconciling), Reason: string(reason), ObservedGeneration: gen},
		{Type: string(videov1alpha1.ConditionStalled), Status: b(stalled), Reason: string(reason), Message: stalledMsg, ObservedGeneration: gen},
	}
}

type healthCase struct {
	name string
	// status sets the JobStatus of an object at generation 2; nil leaves the object without status.
	status      func(st *videov1alpha1.JobStatus)
	wantStatus  string
	wantMessage string // a substring of the message
	// kstatusGap marks the cases where plain kstatus says Current although nothing is done yet:
	// an object the controller has not written any status to. The Argo CD check and the Flux
	// healthCheckExprs say Progressing there.
	kstatusGap bool
	// waitsForAPerson marks a Reconciling object that only a person moves on (AwaitingApproval):
	// Argo CD shows it Suspended (not Degraded: nothing failed), kstatus and Flux InProgress.
	waitsForAPerson bool
}

func healthCases() []healthCase {
	working := func(phase videov1alpha1.Phase, reason videov1alpha1.ConditionReason, msg string, progress *int32) func(*videov1alpha1.JobStatus) {
		return func(st *videov1alpha1.JobStatus) {
			st.ObservedGeneration, st.Phase, st.Progress = 2, phase, progress
			outcome(st, 2, false, true, false, reason, msg)
		}
	}
	cases := []healthCase{
		{name: "no status", wantStatus: "Progressing", wantMessage: "Waiting for the video-operator to report a status", kstatusGap: true},
		{name: "empty status", status: func(*videov1alpha1.JobStatus) {}, wantStatus: "Progressing", wantMessage: "act on generation 2", kstatusGap: true},
		{name: "Pending", status: working(videov1alpha1.PhasePending, videov1alpha1.ReasonPending, "Nothing submitted yet", nil),
			wantStatus: "Progressing", wantMessage: "Pending: Nothing submitted yet"},
		{name: "Pending, waiting for the preview", status: working(videov1alpha1.PhasePending, videov1alpha1.ReasonWaitingForPreview, "Waiting for VideoStoryboard \"a\"", nil),
			wantStatus: "Progressing", wantMessage: "WaitingForPreview"},
		{name: "Submitting", status: working(videov1alpha1.PhaseSubmitting, videov1alpha1.ReasonSubmitting, "Submitting generation 2", nil),
			wantStatus: "Progressing", wantMessage: "Submitting"},
		{name: "InProgress", status: working(videov1alpha1.PhaseInProgress, videov1alpha1.ReasonInProgress, "Rendering scenes", ptr.To[int32](42)),
			wantStatus: "Progressing", wantMessage: "InProgress: Rendering scenes (42%)"},
		{name: "InProgress, a newer spec waits for the running job", status: working(videov1alpha1.PhaseInProgress, videov1alpha1.ReasonWaitingForJob, "Waiting for job j-1", ptr.To[int32](10)),
			wantStatus: "Progressing", wantMessage: "WaitingForJob"},
		{name: "Completed", status: func(st *videov1alpha1.JobStatus) {
			st.ObservedGeneration, st.Phase, st.Progress = 2, videov1alpha1.PhaseCompleted, ptr.To[int32](100)
			outcome(st, 2, true, false, false, videov1alpha1.ReasonCompleted, "Job j-1 completed")
		}, wantStatus: "Healthy", wantMessage: "Completed: Job j-1 completed"},
		{name: "Completed for an older generation", status: func(st *videov1alpha1.JobStatus) {
			st.ObservedGeneration, st.Phase = 1, videov1alpha1.PhaseCompleted
			outcome(st, 1, true, false, false, videov1alpha1.ReasonCompleted, "Job j-1 completed")
		}, wantStatus: "Progressing", wantMessage: "act on generation 2"},
		{name: "Failed for an older generation", status: func(st *videov1alpha1.JobStatus) {
			st.ObservedGeneration, st.Phase = 1, videov1alpha1.PhaseFailed
			outcome(st, 1, false, false, true, videov1alpha1.ReasonJobFailed, "TEXT_TO_VIDEO_FAILED")
		}, wantStatus: "Progressing", wantMessage: "act on generation 2"},
	}
	// Waiting out the service, or for a VideoStoryboard to be created: the controller carries on
	// by itself.
	for _, r := range []videov1alpha1.ConditionReason{videov1alpha1.ReasonRateLimited, videov1alpha1.ReasonServiceUnavailable,
		videov1alpha1.ReasonProjectBusy, videov1alpha1.ReasonStoryboardNotFound} {
		cases = append(cases, healthCase{name: "waiting, " + string(r), status: working(videov1alpha1.PhasePending, r, "Retrying in 5s", nil),
			wantStatus: "Progressing", wantMessage: string(r)})
	}
	// A spent VideoBudget: Stalled (a person or the next period moves it on, which may take a
	// month), shown by Argo CD as Suspended, not Degraded: nothing failed, and it submits by
	// itself at the reset time the message gives. kstatus and Flux have no Suspended: Failed.
	cases = append(cases, healthCase{name: "waiting for budget", status: func(st *videov1alpha1.JobStatus) {
		st.ObservedGeneration, st.Phase = 2, videov1alpha1.PhasePending
		outcome(st, 2, false, false, true, videov1alpha1.ReasonBudgetExhausted,
			"Not submitted: VideoBudget \"default\" of namespace \"a\" has no room: maxRenders reached: 5 of 5 renders used (0 of them in flight). Submits by itself when the period resets at 2026-12-01T00:00:00Z or when the budget is raised")
	}, wantStatus: "Suspended", wantMessage: "BudgetExhausted: Not submitted: VideoBudget \"default\""})
	// A render whose preview nobody has approved yet: Reconciling, and it may wait for days. Argo
	// CD shows Suspended, so an Application is not Progressing for as long as a review takes,
	// and never Degraded: nothing failed.
	cases = append(cases, healthCase{name: "waiting for approval", status: working(videov1alpha1.PhasePending, videov1alpha1.ReasonAwaitingApproval,
		"Waiting for approval of the preview sha256:abc: kubectl video approve vr/a --digest sha256:abc", nil),
		wantStatus: "Suspended", wantMessage: "AwaitingApproval: Waiting for approval", waitsForAPerson: true})
	// Every other reason of Stalled: only a human can move the object on.
	for _, r := range []videov1alpha1.ConditionReason{
		videov1alpha1.ReasonJobFailed, videov1alpha1.ReasonInvalidRequest, videov1alpha1.ReasonProjectNotFound,
		videov1alpha1.ReasonBrandNotFound, videov1alpha1.ReasonSecretNotFound, videov1alpha1.ReasonSecretKeyMissing,
		videov1alpha1.ReasonUnauthorized, videov1alpha1.ReasonJobNotFound, videov1alpha1.ReasonSubmissionUnknown,
	} {
		cases = append(cases, healthCase{name: "Failed, " + string(r), status: func(st *videov1alpha1.JobStatus) {
			st.ObservedGeneration, st.Phase = 2, videov1alpha1.PhaseFailed
			st.Failure = &videov1alpha1.JobFailure{Code: "X", Message: "why"}
			outcome(st, 2, false, false, true, r, "what to do about "+string(r))
		}, wantStatus: "Degraded", wantMessage: string(r) + ": what to do about " + string(r)})
	}
	return cases
}

// objectFor builds the object of kind with the case's status, as the API server would serve it.
func objectFor(t *testing.T, kind string, c healthCase) map[string]any {
	t.Helper()
	meta := metav1.ObjectMeta{Name: "demo", Namespace: "videos", Generation: 2}
	var obj runtime.Object
	switch kind {
	case "VideoRender":
		o := &videov1alpha1.VideoRender{ObjectMeta: meta, Spec: videov1alpha1.VideoRenderSpec{ProjectID: ptr.To("p")}}
		if c.status != nil {
			c.status(&o.Status.JobStatus)
		}
		obj = o
	case "VideoStoryboard":
		o := &videov1alpha1.VideoStoryboard{ObjectMeta: meta}
		if c.status != nil {
			c.status(&o.Status.JobStatus)
		}
		obj = o
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	m["apiVersion"], m["kind"] = videov1alpha1.GroupVersion.String(), kind
	if c.status == nil {
		delete(m, "status")
	}
	return m
}

func TestArgoCDHealth(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(argocdDir, "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	// kstatus (Flux, kubectl wait, cli-utils) must reach the same verdict as the Lua script.
	kstatusFor := map[string]status.Status{"Healthy": status.CurrentStatus, "Degraded": status.FailedStatus,
		"Suspended": status.FailedStatus, "Progressing": status.InProgressStatus}
	for _, kind := range []string{"VideoStoryboard", "VideoRender"} {
		for _, c := range healthCases() {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				obj := objectFor(t, kind, c)
				got := runHealth(t, string(script), obj)
				if got.Status != c.wantStatus {
					t.Errorf("status = %q (message %q), want %q", got.Status, got.Message, c.wantStatus)
				}
				if !strings.Contains(got.Message, c.wantMessage) {
					t.Errorf("message = %q, want it to contain %q", got.Message, c.wantMessage)
				}
				res, err := status.Compute(&unstructured.Unstructured{Object: obj})
				if err != nil {
					t.Fatal(err)
				}
				want := kstatusFor[c.wantStatus]
				if c.waitsForAPerson {
					want = status.InProgressStatus
				}
				if c.kstatusGap {
					want = status.CurrentStatus
				}
				if res.Status != want {
					t.Errorf("kstatus = %s (%s), but Argo CD says %s: the two disagree", res.Status, res.Message, c.wantStatus)
				}
			})
		}
	}
}

// TestArgoCDConfigMap checks that argocd-cm.yaml installs health.lua, unchanged, under the keys
// Argo CD looks up for both kinds: resource.customizations.health.<group>_<kind>.
func TestArgoCDConfigMap(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(argocdDir, "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(argocdDir, "argocd-cm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   metav1.ObjectMeta `json:"metadata"`
		Data       map[string]string `json:"data"`
	}
	if err := yaml.UnmarshalStrict(raw, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Kind != "ConfigMap" || cm.Metadata.Name != "argocd-cm" {
		t.Errorf("want the ConfigMap argocd-cm, got %s %s", cm.Kind, cm.Metadata.Name)
	}
	want := []string{
		"resource.customizations.health.video.videoops.io_VideoStoryboard",
		"resource.customizations.health.video.videoops.io_VideoRender",
	}
	if len(cm.Data) != len(want) {
		t.Errorf("want exactly the keys %q, got %d keys", want, len(cm.Data))
	}
	for _, k := range want {
		if got, ok := cm.Data[k]; !ok {
			t.Errorf("argocd-cm.yaml has no key %s", k)
		} else if got != string(script) {
			t.Errorf("%s differs from health.lua: regenerate argocd-cm.yaml from it", k)
		}
	}
}
