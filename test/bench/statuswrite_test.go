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

package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/testutil"
)

// BenchmarkStatusWrite measures what one write costs the API server (issues 23, 30 and 39): wall
// time and kube-apiserver CPU per write, for a VideoRender of 1, 30, 60, 200 and 2,000 scenes as people
// write them (realisticRender: a voice-over, music, a logo, and per scene a story, a background and
// three elements), each against the installed CRDs and admission policies ("rules"), the CRD as it
// was before the scenes' rules moved to the policies ("before-policies") and a copy of the CRD
// without any CEL rule ("no-cel"). A status write that sends one changed field
// still makes the API server decode, validate and store the whole object; whether the spec's rules
// run again on it is what the ratio of the two shows. Run:
//
//	KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)" go test ./test/bench -run '^$' -bench StatusWrite -benchtime 20x
func BenchmarkStatusWrite(b *testing.B) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Skip("KUBEBUILDER_ASSETS is not set")
	}
	scheme := k8sruntime.NewScheme()
	must(b, clientgoscheme.AddToScheme(scheme))
	must(b, videov1alpha1.AddToScheme(scheme))
	must(b, apiextensionsv1.AddToScheme(scheme))
	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(repoRoot, "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	must(b, err)
	b.Cleanup(func() { _ = env.Stop() })
	cfg.QPS, cfg.Burst = -1, 0
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	must(b, err)
	must(b, testutil.InstallPolicies(b.Context(), cfg))
	apiPID, err := childNamed("kube-apiserver")
	must(b, err)
	apiCPU := func() float64 {
		st, err := readProcStat(apiPID)
		must(b, err)
		return st.cpuSeconds
	}
	// variants are the installed CRDs and admission policies ("rules"), and copies of the
	// VideoRender CRD under other groups: as it was before the scenes' rules moved to the
	// policies (the CRD of beforePolicies, read with git, every rule in the schema), without its
	// CEL rules (x-kubernetes-validations) and without any schema
	// (x-kubernetes-preserve-unknown-fields), the differences being what the rules and the
	// schema cost; what is left is decoding, merging, encoding and storing.
	type variant struct {
		what string
		gvk  schema.GroupVersionKind
	}
	variants := []variant{{what: "rules", gvk: videov1alpha1.GroupVersion.WithKind("VideoRender")}}
	for _, v := range []struct{ group, what string }{{"before.bench.videoops.io", "before-policies"},
		{"nocel.bench.videoops.io", "no-cel"}, {"noschema.bench.videoops.io", "no-schema"}} {
		variants = append(variants, variant{what: v.what, gvk: installRenderCRDVariant(b, c, v.group, v.what)})
	}
	obj := func(v variant, name string, scenes int) *unstructured.Unstructured {
		raw, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(realisticRender(name, scenes))
		must(b, err)
		u := &unstructured.Unstructured{Object: raw}
		u.SetGroupVersionKind(v.gvk)
		return u
	}
	for _, n := range []int{1, 30, 60, 200, 2000} {
		for _, v := range variants {
			if v.what == "no-schema" && n != 2000 {
				continue
			}
			b.Run(fmt.Sprintf("create/scenes=%d/%s", n, v.what), func(b *testing.B) {
				cpu0 := apiCPU()
				for i := range b.N {
					must(b, c.Create(b.Context(), obj(v, fmt.Sprintf("create-%d-%d-%d", n, b.N, i), n)))
				}
				b.ReportMetric(1000*(apiCPU()-cpu0)/float64(b.N), "apiserver-cpu-ms/op")
			})
			b.Run(fmt.Sprintf("status-patch/scenes=%d/%s", n, v.what), func(b *testing.B) {
				u := obj(v, fmt.Sprintf("status-%d-%d", n, b.N), n)
				must(b, c.Create(b.Context(), u))
				cpu0, start := apiCPU(), time.Now()
				for i := range b.N {
					// What the manager's merge patch sends for a progress-only change: one field.
					patch := fmt.Appendf(nil, `{"status":{"progress":%d}}`, i%100)
					must(b, c.Status().Patch(b.Context(), u, client.RawPatch(types.MergePatchType, patch)))
				}
				b.ReportMetric(1000*(apiCPU()-cpu0)/float64(b.N), "apiserver-cpu-ms/op")
				b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "wall-ms/op")
			})
			// The record of issue 22: one conditional merge patch of the annotations, a write of
			// the main resource that leaves the spec as it is.
			b.Run(fmt.Sprintf("metadata-patch/scenes=%d/%s", n, v.what), func(b *testing.B) {
				u := obj(v, fmt.Sprintf("meta-%d-%d", n, b.N), n)
				must(b, c.Create(b.Context(), u))
				cpu0, start := apiCPU(), time.Now()
				for i := range b.N {
					patch := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"annotations":{%q:"job-%d"}}}`,
						u.GetResourceVersion(), videov1alpha1.AnnotationJobID, i)
					must(b, c.Patch(b.Context(), u, client.RawPatch(types.MergePatchType, patch)))
				}
				b.ReportMetric(1000*(apiCPU()-cpu0)/float64(b.N), "apiserver-cpu-ms/op")
				b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "wall-ms/op")
			})
		}
	}
	// A storyboard's status holds its preview: per scene the narration and the thumbnail URL,
	// which the digest covers, the reviewer reads and a brief's render narrates word for word, so
	// they are kept, not linked (docs/benchmarks.md "Renders people write"). A 15,000-character
	// story split one scene per sentence is about 200 scenes; 2,000 is a preview near the 512 KiB
	// the controller lets it take. A status write after the preview sends one field, like the
	// render's.
	for _, n := range []int{0, 200, 2000} {
		b.Run(fmt.Sprintf("storyboard-status-patch/preview-scenes=%d", n), func(b *testing.B) {
			sb := previewedStoryboard(fmt.Sprintf("sb-%d-%d", n, b.N))
			must(b, c.Create(b.Context(), sb))
			if n > 0 {
				sb.Status.Preview = &videov1alpha1.StoryboardPreview{Digest: "sha256:" + strings.Repeat("ab", 32), Generation: sb.Generation}
				for i := range n {
					sb.Status.Preview.Scenes = append(sb.Status.Preview.Scenes, videov1alpha1.PreviewScene{
						Story:     fmt.Sprintf("Sentence %d of a long story, which the service's preview made into a scene of its own.", i),
						Thumbnail: fmt.Sprintf("https://media.example.com/previews/job-123456/scene-%04d.jpg", i)})
				}
				must(b, c.Status().Update(b.Context(), sb))
			}
			cpu0, start := apiCPU(), time.Now()
			for i := range b.N {
				patch := fmt.Appendf(nil, `{"status":{"progress":%d}}`, i%100)
				must(b, c.Status().Patch(b.Context(), sb, client.RawPatch(types.MergePatchType, patch)))
			}
			b.ReportMetric(1000*(apiCPU()-cpu0)/float64(b.N), "apiserver-cpu-ms/op")
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "wall-ms/op")
		})
	}
	// A VideoBudget's status write as the spend guard makes it, with K running jobs of the
	// namespace holding their reservation: a merge patch sends the changed list whole (a
	// reservation added) with the usage. "objects" keeps the running jobs as reservations, as
	// before status.runningJobs; "lines" as the guard keeps them now, one line each.
	for _, k := range []int{0, 100, 300, 999} {
		for _, form := range []string{"objects", "lines"} {
			if k == 0 && form == "lines" {
				continue
			}
			b.Run(fmt.Sprintf("budget-status-patch/running=%d/%s", k, form), func(b *testing.B) {
				ns := fmt.Sprintf("budget-%d-%s-%d", k, form, b.N)
				must(b, c.Create(b.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
				vb := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: videov1alpha1.VideoBudgetName},
					Spec: videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](100000)}}
				must(b, c.Create(b.Context(), vb))
				var objects []videov1alpha1.BudgetReservation
				var lines []string
				for i := range k {
					name, uid, attempt := fmt.Sprintf("bench-r-%05d", i), fmt.Sprintf("0b6c1f2e-5d1a-4c8e-9f3b-%012d", i), fmt.Sprintf("7c1e9a2b-3f4d-4e5a-8b6c-%012d", i)
					job := fmt.Sprintf("5f0c2d7e-1a2b-4c3d-8e9f-%012d", i)
					if form == "lines" {
						lines = append(lines, fmt.Sprintf("%s %s %s %d 30 - %s", name, uid, attempt, time.Now().Unix(), job))
						continue
					}
					objects = append(objects, videov1alpha1.BudgetReservation{Kind: "VideoRender", Name: name, UID: uid, AttemptID: attempt,
						ReservedAt: metav1.Now(), EstimatedSeconds: 30, JobID: job})
				}
				cpu0, start := apiCPU(), time.Now()
				for i := range b.N {
					pending := []videov1alpha1.BudgetReservation{{Kind: "VideoRender", Name: "next", UID: fmt.Sprintf("uid-%d", i),
						AttemptID: fmt.Sprintf("a-%d", i), ReservedAt: metav1.Now(), EstimatedSeconds: 30}}
					raw, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": vb.ResourceVersion},
						"status": map[string]any{"used": map[string]any{"renders": i}, "reservations": append(objects, pending...), "runningJobs": lines}})
					must(b, err)
					must(b, c.Status().Patch(b.Context(), vb, client.RawPatch(types.MergePatchType, raw)))
				}
				b.ReportMetric(1000*(apiCPU()-cpu0)/float64(b.N), "apiserver-cpu-ms/op")
				b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "wall-ms/op")
			})
		}
	}
	// The one API read an unguarded paid submission makes (spendguard Ledgers.holds): the ledger
	// ConfigMap of a namespace that never had a budget, which is not found.
	b.Run("configmap-get-missing", func(b *testing.B) {
		cpu0 := apiCPU()
		for range b.N {
			err := c.Get(b.Context(), client.ObjectKey{Namespace: "default", Name: "video-operator-budget-ledger.none"}, &corev1.ConfigMap{})
			if !apierrors.IsNotFound(err) {
				b.Fatalf("want not found, got %v", err)
			}
		}
		b.ReportMetric(1000*(apiCPU()-cpu0)/float64(b.N), "apiserver-cpu-ms/op")
	})
	b.Run("event-create", func(b *testing.B) {
		cpu0 := apiCPU()
		for i := range b.N {
			must(b, c.Create(b.Context(), &eventsv1.Event{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("ev-%d-%d", b.N, i)},
				EventTime:  metav1.NewMicroTime(time.Now()), ReportingController: "bench", ReportingInstance: "bench",
				Action: "Submit", Reason: "Submitted", Type: "Normal", Note: "Submitted job 123 for storyboard digest sha256:0123",
				Regarding: corev1.ObjectReference{Kind: "VideoRender", Namespace: "default", Name: "x", APIVersion: videov1alpha1.GroupVersion.String()},
			}))
		}
		b.ReportMetric(1000*(apiCPU()-cpu0)/float64(b.N), "apiserver-cpu-ms/op")
	})
}

// realisticRender is a render as people write it: a voice-over, library music, a logo, and scenes
// each with a two-sentence story, a stock background and three elements (a heading, an image and
// a rectangle).
func realisticRender(name string, scenes int) *videov1alpha1.VideoRender {
	s := make([]videov1alpha1.Scene, scenes)
	for i := range s {
		s[i] = videov1alpha1.Scene{
			Story:      ptr.To(fmt.Sprintf("Scene %d of a long video. It is told in two sentences.", i)),
			Background: &videov1alpha1.Background{VisualURL: ptr.To(fmt.Sprintf("https://media.example.com/backgrounds/%d.mp4", i))},
			Elements: []videov1alpha1.SceneElement{
				{Type: "text", Text: ptr.To(fmt.Sprintf("Part %d", i)), TextVariant: ptr.To(videov1alpha1.TextVariant("heading")),
					Position: ptr.To(videov1alpha1.ElementPosition("top-center"))},
				{Type: "image", VisualURL: ptr.To(fmt.Sprintf("https://media.example.com/images/%d.png", i)), Top: ptr.To("40%"), Left: ptr.To("10%"), Width: ptr.To("30%")},
				{Type: "shape", Name: ptr.To("rectangle"), Fill: ptr.To("#102030"), BorderRadius: ptr.To(4.0), Position: ptr.To(videov1alpha1.ElementPosition("bottom-left"))},
			},
		}
	}
	return &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: videov1alpha1.VideoRenderSpec{Storyboard: &videov1alpha1.StoryboardRequest{
			VideoName:       name,
			Scenes:          s,
			VoiceOver:       &videov1alpha1.VoiceOver{Enabled: true, AIVoices: []videov1alpha1.AIVoice{{Speaker: "Matthew"}}},
			BackgroundMusic: &videov1alpha1.BackgroundMusic{Enabled: true, AutoMusic: ptr.To(true)},
			Logo:            &videov1alpha1.Logo{URL: "https://media.example.com/logo.png", Position: ptr.To(videov1alpha1.Position("top-right"))},
		}}}
}

// previewedStoryboard is a storyboard of one story scene of 15,000 characters (the interface's
// limit), which a preview splits one scene per sentence.
func previewedStoryboard(name string) *videov1alpha1.VideoStoryboard {
	story := strings.Repeat("A sentence of a long story, as people write one to be narrated. ", 15000/66)
	return &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: videov1alpha1.VideoStoryboardSpec{StoryboardRequest: videov1alpha1.StoryboardRequest{
			VideoName: name, Scenes: []videov1alpha1.Scene{{Story: ptr.To(story)}}}}}
}

// beforePolicies is the last commit whose VideoRender CRD carried the scenes' rules (issue 39).
const beforePolicies = "ef297600c5c284cc7bebe1f7ee347ceae55f8219"

// installRenderCRDVariant installs the VideoRender CRD under group: without its CEL rules
// ("no-cel"), without any schema ("no-schema"), or as beforePolicies had it ("before-policies"),
// and returns the kind to create.
func installRenderCRDVariant(b *testing.B, c client.Client, group, what string) schema.GroupVersionKind {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "config", "crd", "bases", "video.videoops.io_videorenders.yaml"))
	if what == "before-policies" {
		raw, err = exec.CommandContext(b.Context(), "git", "-C", repoRoot, "show", beforePolicies+":config/crd/bases/video.videoops.io_videorenders.yaml").Output()
	}
	must(b, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	must(b, yaml.Unmarshal(raw, crd))
	crd.ObjectMeta = metav1.ObjectMeta{Name: crd.Spec.Names.Plural + "." + group}
	crd.Spec.Group = group
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		switch what {
		case "no-schema":
			v.Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", XPreserveUnknownFields: ptr.To(true)}}
		case "before-policies":
			// Every rule where the CRD had it.
		default:
			walkSchema(v.Schema.OpenAPIV3Schema, func(s *apiextensionsv1.JSONSchemaProps) { s.XValidations = nil })
		}
		v.AdditionalPrinterColumns = nil
	}
	if err := c.Create(b.Context(), crd); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: group, Version: videov1alpha1.GroupVersion.Version, Kind: "VideoRender"}
	// The new kind is served once its CRD is established.
	deadline := time.Now().Add(time.Minute)
	for {
		got := &apiextensionsv1.CustomResourceDefinition{}
		must(b, c.Get(b.Context(), client.ObjectKey{Name: crd.Name}, got))
		established := false
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		if _, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); established && err == nil {
			return gvk
		}
		if time.Now().After(deadline) {
			b.Fatalf("CRD %s not served", crd.Name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// walkSchema calls f on every node of the schema.
func walkSchema(s *apiextensionsv1.JSONSchemaProps, f func(*apiextensionsv1.JSONSchemaProps)) {
	if s == nil {
		return
	}
	f(s)
	for k, p := range s.Properties {
		walkSchema(&p, f)
		s.Properties[k] = p
	}
	if s.Items != nil {
		walkSchema(s.Items.Schema, f)
		for i := range s.Items.JSONSchemas {
			walkSchema(&s.Items.JSONSchemas[i], f)
		}
	}
	if s.AdditionalProperties != nil {
		walkSchema(s.AdditionalProperties.Schema, f)
	}
	for _, list := range [][]apiextensionsv1.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			walkSchema(&list[i], f)
		}
	}
}
