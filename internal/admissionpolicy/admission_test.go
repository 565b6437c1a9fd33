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

package admissionpolicy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/videoops/video-operator/internal/admissionpolicy"
	"github.com/videoops/video-operator/internal/requestrules"
	"github.com/videoops/video-operator/internal/testutil"
)

// startAPIServer starts an API server with the installed CRDs (crdDir, default
// config/crd/bases) and no policy.
func startAPIServer(t *testing.T, crdDir string) (*envtest.Environment, *rest.Config, client.Client) {
	t.Helper()
	if testing.Short() || os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("the admission policies' tests " + testutil.ShortSkipsAPIServer)
	}
	env := &envtest.Environment{ErrorIfCRDPathMissing: true}
	if crdDir != "" {
		env.CRDDirectoryPaths = []string{crdDir}
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return env, cfg, c
}

// object is a VideoRender (inline storyboard) or a VideoStoryboard whose request is the YAML
// flow mapping request.
func object(t *testing.T, kind, name, request string) *unstructured.Unstructured {
	t.Helper()
	var req map[string]any
	if err := yaml.Unmarshal([]byte(request), &req); err != nil {
		t.Fatalf("%s: %v", request, err)
	}
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "video.videoops.io/v1alpha1", "kind": kind}}
	if kind == "VideoRender" {
		o.Object["spec"] = map[string]any{"storyboard": req}
	} else {
		o.Object["spec"] = req
	}
	o.SetNamespace("default")
	o.SetName(name)
	return o
}

// scenePath is where a kind's scenes are.
func scenePath(kind string) string {
	if kind == "VideoRender" {
		return "spec.storyboard.scenes"
	}
	return "spec.scenes"
}

// sceneCases are scenes that break one rule each: the field the refusal names (below the scene)
// and the marker's message. They cover every rule the policy holds (TestEveryRuleHasACase).
var sceneCases = []struct {
	scene, field, message string
}{
	{"{story: a, blogUrl: 'https://example.com/b'}", "", "a scene takes exactly one content source"},
	{"{hideSubtitles: true}", "", "a scene takes exactly one content source"},
	{"{brief: {prompt: a}, storyCoPilot: {prompt: b}}", ".storyCoPilot", "brief and storyCoPilot are mutually exclusive"},
	{"{audioUrl: 'https://example.com/a.mp3', transcript: [{words: [{word: a, start_time: 0, end_time: 1}]}]}", ".audioLanguage", "audioLanguage is required with audioUrl or videoUrl"},
	{"{videoUrl: 'https://example.com/a.mp4', audioLanguage: en-US}", ".transcript", "transcript is required with audioUrl or videoUrl"},
	{"{story: a, useSpeakerNotes: true}", ".useSpeakerNotes", "useSpeakerNotes is only valid with pptUrl"},
	{"{story: a, pptSlideAnimation: {enabled: true}}", ".pptSlideAnimation", "pptSlideAnimation is only valid with pptUrl"},
	{"{blogUrl: 'https://example.com/b', isSSMLStory: true}", ".isSSMLStory", "isSSMLStory is only valid with story"},
	{"{blogUrl: 'https://example.com/b', caption: Hi}", ".caption", "caption requires story"},
	{"{story: a, captionLanguage: en}", ".captionLanguage", "captionLanguage is only valid with caption"},
	{"{story: a, mediaRepurposeSettings: {removeSilences: true}}", ".mediaRepurposeSettings", "mediaRepurposeSettings is only valid with audioUrl or videoUrl"},
	{"{story: a, subtitleStyleId: s-1, subtitleStyleName: Clean}", ".subtitleStyleName", "subtitleStyleId and subtitleStyleName are mutually exclusive"},
	{"{story: a, avatar: {avatarId: a-2}}", ".avatar.avatarId", "avatarId cannot be changed at scene level"},
	{"{story: a, avatar: {position: top-left, top: '10%'}}", ".avatar", "top and left cannot be combined with position"},
	{"{story: a, background: {color: '#000000', visualUrl: 'https://example.com/i.png'}}", ".background", "background takes exactly one of visualUrl, color or aiVisual"},
	{"{story: a, background: {aiVisual: {model: flux-schnell, prompt: a cat}}}", ".background.type", "type (image or video) is required with aiVisual"},
	{"{story: a, background: {type: video, aiVisual: {model: flux-schnell, prompt: a cat}}}", ".background.type", "type must match the aiVisual model"},
	{"{story: a, background: {type: video, visualUrl: 'https://example.com/v.mp4', settings: {kenBurnsEffect: true}}}", ".background.settings.kenBurnsEffect", "settings.kenBurnsEffect applies to images only"},
	{"{story: a, background: {type: image, visualUrl: 'https://example.com/i.png', settings: {zoomAndPan: true, kenBurnsEffect: true}}}", ".background.settings", "zoomAndPan and kenBurnsEffect are mutually exclusive"},
	{"{story: a, background: {type: video, aiVisual: {model: veo3.1, prompt: a cat, mediaStyle: photorealistic}}}", ".background.aiVisual.mediaStyle", "mediaStyle applies to image models only"},
	{"{story: a, background: {type: video, aiVisual: {model: veo3.1, prompt: a cat, referenceImageUrl: 'https://example.com/i.png'}}}", ".background.aiVisual.referenceImageUrl", "referenceImageUrl applies to image models only"},
	{"{story: a, background: {type: image, aiVisual: {model: flux-schnell, prompt: a cat, firstFrameImageUrl: 'https://example.com/i.png'}}}", ".background.aiVisual.firstFrameImageUrl", "firstFrameImageUrl applies to video models only"},
	{"{story: a, background: {type: image, aiVisual: {model: flux-schnell, prompt: a cat, referenceImageUrls: ['https://example.com/i.png']}}}", ".background.aiVisual.referenceImageUrls", "referenceImageUrls applies to video models only"},
	{"{story: a, background: {type: video, aiVisual: {model: veo3.1, prompt: a cat, firstFrameImageUrl: 'https://example.com/i.png', referenceImageUrls: ['https://example.com/i.png']}}}", ".background.aiVisual.referenceImageUrls", "firstFrameImageUrl and referenceImageUrls are mutually exclusive"},
	{"{story: a, background: {type: image, aiVisual: {model: flux-schnell, prompt: a cat, videoDuration: 5s}}}", ".background.aiVisual.videoDuration", "videoDuration applies to video models only"},
	{"{story: a, background: {type: video, aiVisual: {model: pixverse5.5, prompt: a cat, videoDuration: 4s}}}", ".background.aiVisual.videoDuration", "videoDuration for pixverse5.5 must be 5s, 8s or 10s"},
	{"{story: a, background: {type: video, aiVisual: {model: veo3.1, prompt: a cat, videoDuration: 5s}}}", ".background.aiVisual.videoDuration", "videoDuration for veo3.1 and veo3.1_fast must be 4s, 6s or 8s"},
	{"{brief: {prompt: a, videoGoal: Marketing, videoType: Marketing}}", ".brief.videoType", "videoGoal and videoType are mutually exclusive"},
	{"{storyCoPilot: {prompt: a, videoGoal: Marketing, videoType: Marketing}}", ".storyCoPilot.videoType", "videoGoal and videoType are mutually exclusive"},
	{"{story: a, subtitleStyle: {fontUrl: 'https://example.com/f.ttf'}}", ".subtitleStyle.fontFamily", "fontFamily is required when fontUrl is given"},
	{"{story: a, subtitleStyle: {animations: [{type: entry, name: fade, speed: slow}, {type: entry, name: blur, speed: slow}]}}", ".subtitleStyle.animations", "animations holds at most one entry and one exit animation"},
	{"{story: a, subtitleStyle: {animations: [{type: entry, name: fade, speed: custom}]}}", ".subtitleStyle.animations[0].customSpeedValue", "customSpeedValue is required when speed is custom"},
	{"{story: a, subtitleStyle: {animations: [{type: exit, name: fade, speed: slow, futureWords: subtle}]}}", ".subtitleStyle.animations[0].futureWords", "futureWords applies only to fade and blur entry animations"},
	{"{story: a, voiceOver: {enabled: true, aiVoices: [{speaker: Matthew}], externalVoice: {voiceUrl: 'https://example.com/v.mp3'}}}", ".voiceOver", "aiVoices and externalVoice are mutually exclusive"},
}

const validScene = "{story: A valid scene.}"

// request is a request of three scenes whose third is scene.
func request(scene string) string {
	return fmt.Sprintf("{videoName: policy test, scenes: [%s, %s, %s]}", validScene, validScene, scene)
}

// TestScenesRefusedAtCreateAndUpdate: with the installed CRDs and config/policies, an object
// invalid only in a scene is refused at create and at update, with a message naming the scene's
// index and the field; its status and metadata writes are not checked again; kubectl apply
// --dry-run=server refuses it too.
func TestScenesRefusedAtCreateAndUpdate(t *testing.T) {
	env, cfg, c := startAPIServer(t, testutil.CRDDir())
	ctx := context.Background()
	if p := admissionpolicy.Problems(ctx, c); len(p) != len(admissionpolicy.Expected) {
		t.Errorf("before the policies are installed, the manager's check finds %v", p)
	}
	if err := testutil.InstallPolicies(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if p := admissionpolicy.Problems(ctx, c); len(p) != 0 {
		t.Errorf("the manager's check finds %v", p)
	}
	kubeconfig := adminKubeconfig(t, env)
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	t.Run("hack/wait-policies.sh", func(t *testing.T) {
		cmd := exec.CommandContext(t.Context(), filepath.Join(testutil.RepoRoot(), "hack", "wait-policies.sh"), kubectl, "30")
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "admission policies in force") {
			t.Errorf("hack/wait-policies.sh: %v\n%s", err, out)
		}
	})
	for _, kind := range []string{"VideoRender", "VideoStoryboard"} {
		for i, tc := range sceneCases {
			t.Run(fmt.Sprintf("%s/%d%s", kind, i, tc.field), func(t *testing.T) {
				want := fmt.Sprintf("%s[2]%s: %s", scenePath(kind), tc.field, tc.message)
				name := fmt.Sprintf("%s-%d", strings.ToLower(kind), i)
				err := c.Create(ctx, object(t, kind, name, request(tc.scene)))
				expectRefused(t, "create", err, want)

				valid := object(t, kind, name, request(validScene))
				if err := c.Create(ctx, valid); err != nil {
					t.Fatalf("the valid object: %v", err)
				}
				invalid := valid.DeepCopy()
				if err := unstructured.SetNestedField(invalid.Object, object(t, kind, name, request(tc.scene)).Object["spec"], "spec"); err != nil {
					t.Fatal(err)
				}
				expectRefused(t, "update", c.Update(ctx, invalid), want)
				// Status and metadata writes of the valid object pass (the policy does not see them).
				if err := c.Status().Patch(ctx, valid, client.RawPatch(types.MergePatchType, []byte(`{"status":{"phase":"Pending"}}`))); err != nil {
					t.Errorf("status patch: %v", err)
				}
				if err := c.Patch(ctx, valid, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"a":"b"}}}`))); err != nil {
					t.Errorf("metadata patch: %v", err)
				}
			})
		}
	}
	t.Run("kubectl apply --dry-run=server", func(t *testing.T) {
		o := object(t, "VideoRender", "kubectl-dry-run", request(sceneCases[3].scene))
		body, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "render.yaml")
		if err := os.WriteFile(file, body, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), kubectl, "apply", "--dry-run=server", "-f", file)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		outb, err := cmd.CombinedOutput()
		out := string(outb)
		if err == nil {
			t.Fatalf("kubectl apply --dry-run=server accepted an invalid scene: %s", out)
		}
		if want := "spec.storyboard.scenes[2].audioLanguage: audioLanguage is required"; !strings.Contains(out, want) {
			t.Errorf("kubectl said %q, want it to contain %q", out, want)
		}
	})
}

// adminKubeconfig is a kubeconfig file of an administrator of env, for kubectl.
func adminKubeconfig(t *testing.T, env *envtest.Environment) string {
	t.Helper()
	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

func expectRefused(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: accepted, want refused with %q", what, want)
	}
	if !apierrors.IsInvalid(err) {
		t.Errorf("%s: %v, want Invalid", what, err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v\nwant it to contain %q", what, err, want)
	}
}

// TestEveryRuleHasACase: every rule of the markers that the policies check (the rules under
// scenes[] that internal/requestrules' schema holds and requestrules.UnderPolicy places) has a
// case in sceneCases, so that TestScenesRefusedAtCreateAndUpdate checks each refusal the CRDs gave
// before the rules moved; and each policy carries each rule's message.
func TestEveryRuleHasACase(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "internal", "requestrules", "storyboardrequest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	type rule struct{ field, message string }
	var rules []rule
	var walk func(node map[string]any, path []string)
	walk = func(node map[string]any, path []string) {
		if requestrules.UnderPolicy(path) {
			list, _ := node["x-kubernetes-validations"].([]any)
			for _, r := range list {
				m, _ := r.(map[string]any)
				fieldPath, _ := m["fieldPath"].(string)
				message, _ := m["message"].(string)
				below := strings.ReplaceAll(strings.Join(path[2:], "."), ".[]", "[]")
				if below != "" {
					below = "." + below
				}
				rules = append(rules, rule{field: below + fieldPath, message: message})
			}
		}
		if props, ok := node["properties"].(map[string]any); ok {
			for name, child := range props {
				walk(child.(map[string]any), append(append([]string(nil), path...), name))
			}
		}
		if items, ok := node["items"].(map[string]any); ok {
			walk(items, append(append([]string(nil), path...), "[]"))
		}
	}
	walk(schema, nil)
	if len(rules) < 30 {
		t.Fatalf("%d rules under scenes[] in the request schema: the walk is wrong", len(rules))
	}
	objs, err := admissionpolicy.Objects(testutil.PolicyDir())
	if err != nil {
		t.Fatal(err)
	}
	messages := map[string]string{}
	for _, o := range objs {
		if o.GetKind() != "ValidatingAdmissionPolicy" {
			continue
		}
		validations, _, _ := unstructured.NestedSlice(o.Object, "spec", "validations")
		for _, v := range validations {
			m, _ := v.(map[string]any)["messageExpression"].(string)
			messages[o.GetName()] += m
		}
	}
	if len(messages) != len(admissionpolicy.Expected) {
		t.Errorf("%d policies in config/policies, want %d", len(messages), len(admissionpolicy.Expected))
	}
	for _, r := range rules {
		covered := false
		for _, tc := range sceneCases {
			if tc.message != "" && strings.HasPrefix(r.message, tc.message) && strings.ReplaceAll(tc.field, "[0]", "[]") == r.field {
				covered = true
			}
		}
		if !covered {
			t.Errorf("no case for the rule at scenes[]%s: %q", r.field, r.message)
		}
		for name, m := range messages {
			if !strings.Contains(m, r.message) {
				t.Errorf("policy %s lacks the message %q", name, r.message)
			}
		}
	}
}

// TestLargeRequestsFitTheCostBudget: the API server evaluates the policies within its CEL cost
// budget on the largest requests they check: 2,000 scenes as people write them (a story, a
// background, a subtitle style and elements each), and MaxScenes of the smallest scene. Above
// MaxScenes a policy does not apply: the controller refuses a broken scene before it pays.
func TestLargeRequestsFitTheCostBudget(t *testing.T) {
	_, cfg, c := startAPIServer(t, testutil.CRDDir())
	ctx := context.Background()
	if err := testutil.InstallPolicies(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	realistic := make([]string, 2000)
	for i := range realistic {
		realistic[i] = fmt.Sprintf("{story: Scene %d of a long video. It is told in two sentences., background: {visualUrl: 'https://media.example.com/b/%d.mp4'}, "+
			"subtitleStyle: {fontFamily: Inter, animations: [{type: entry, name: fade, speed: slow}]}, "+
			"elements: [{type: text, text: Part %d, position: top-center}, {type: image, visualUrl: 'https://media.example.com/i/%d.png'}]}", i, i, i, i)
	}
	minimal := func(n int) []string {
		m := make([]string, n)
		for i := range m {
			m[i] = "{story: ''}"
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		scenes []string
	}{{"2000-scenes-with-elements", realistic}, {"5000-minimal-scenes", minimal(admissionpolicy.MaxScenes)}} {
		for _, kind := range []string{"VideoRender", "VideoStoryboard"} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				req := fmt.Sprintf("{videoName: large, scenes: [%s]}", strings.Join(tc.scenes, ", "))
				o := object(t, kind, strings.ToLower(kind)+"-"+tc.name, req)
				start := time.Now()
				if err := c.Create(ctx, o); err != nil {
					t.Fatalf("create: %v", err)
				}
				t.Logf("create: %s", time.Since(start))
				// An update that changes the spec is evaluated again.
				patch := `{"spec":{"videoName":"large2"}}`
				if kind == "VideoRender" {
					patch = `{"spec":{"storyboard":{"videoName":"large2"}}}`
				}
				if err := c.Patch(ctx, o, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
					t.Fatalf("update: %v", err)
				}
			})
		}
	}
}

// TestAboveMaxScenesThePolicyStandsAside: a request of more than MaxScenes scenes is not checked
// by the policies (their rules could exceed the CEL cost budget), as documented; the controller's
// check before it pays (internal/requestrules) refuses it.
func TestAboveMaxScenesThePolicyStandsAside(t *testing.T) {
	_, cfg, c := startAPIServer(t, testutil.CRDDir())
	ctx := context.Background()
	if err := testutil.InstallPolicies(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	scenes := make([]string, admissionpolicy.MaxScenes)
	for i := range scenes {
		scenes[i] = validScene
	}
	atMax := object(t, "VideoRender", "at-max", fmt.Sprintf("{videoName: large, scenes: [%s]}", strings.Join(append(scenes[1:], sceneCases[5].scene), ", ")))
	expectRefused(t, "create at MaxScenes", c.Create(ctx, atMax), fmt.Sprintf("spec.storyboard.scenes[%d].useSpeakerNotes", admissionpolicy.MaxScenes-1))
	above := object(t, "VideoRender", "above-max", fmt.Sprintf("{videoName: large, scenes: [%s]}", strings.Join(append(scenes, sceneCases[5].scene), ", ")))
	if err := c.Create(ctx, above); err != nil {
		t.Fatalf("create above MaxScenes: %v", err)
	}
}

// TestProbeFileIsTheProbe: hack/policy-probe.yaml, which hack/wait-policies.sh creates with
// --dry-run=server, holds the objects of ProbeObject.
func TestProbeFileIsTheProbe(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "hack", "policy-probe.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(raw), "\n---\n")
	if len(docs) != len(admissionpolicy.Expected) {
		t.Fatalf("%d objects, want one per policy (%d)", len(docs), len(admissionpolicy.Expected))
	}
	for i, p := range admissionpolicy.Expected {
		var got map[string]any
		if err := yaml.Unmarshal([]byte(docs[i]), &got); err != nil {
			t.Fatal(err)
		}
		if want := admissionpolicy.ProbeObject(p.Resource).Object; !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", p.Resource, got, want)
		}
	}
}
