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
	"fmt"
	"os"
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
)

// BenchmarkStatusWrite measures what one status write costs the API server (issue 23, "Cheaper
// writes"): wall time and kube-apiserver CPU per write, for a VideoRender of 1 scene and of
// 2,000, against the create of the same objects (every admission rule evaluated). A status
// write that sends one changed field still makes the API server decode, validate and store the
// whole object; whether the spec's CEL rules run again on it is what the large object shows
// (Kubernetes ratchets unchanged fields since 1.30). Run:
//
//	KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)" go test ./test/bench -run '^$' -bench StatusWrite -benchtime 50x
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
	apiPID, err := childNamed("kube-apiserver")
	must(b, err)
	apiCPU := func() float64 {
		st, err := readProcStat(apiPID)
		must(b, err)
		return st.cpuSeconds
	}
	scenes := func(n int) []videov1alpha1.Scene {
		s := make([]videov1alpha1.Scene, n)
		for i := range s {
			s[i] = videov1alpha1.Scene{Story: ptr.To(fmt.Sprintf("Scene %d of a long video. It is told in two sentences.", i))}
		}
		return s
	}
	for _, n := range []int{1, 2000} {
		obj := func(name string) *videov1alpha1.VideoRender {
			return &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
				Spec: videov1alpha1.VideoRenderSpec{Storyboard: &videov1alpha1.StoryboardRequest{VideoName: name, Scenes: scenes(n)}}}
		}
		b.Run(fmt.Sprintf("create/scenes=%d", n), func(b *testing.B) {
			cpu0 := apiCPU()
			for i := range b.N {
				must(b, c.Create(b.Context(), obj(fmt.Sprintf("create-%d-%d-%d", n, b.N, i))))
			}
			b.ReportMetric(1000*(apiCPU()-cpu0)/float64(b.N), "apiserver-cpu-ms/op")
		})
		b.Run(fmt.Sprintf("status-patch/scenes=%d", n), func(b *testing.B) {
			vr := obj(fmt.Sprintf("status-%d-%d", n, b.N))
			must(b, c.Create(b.Context(), vr))
			cpu0, start := apiCPU(), time.Now()
			for i := range b.N {
				// What the manager's merge patch sends for a progress-only change: one field.
				patch := fmt.Appendf(nil, `{"status":{"progress":%d}}`, i%100)
				must(b, c.Status().Patch(b.Context(), vr, client.RawPatch(types.MergePatchType, patch)))
			}
			b.ReportMetric(1000*(apiCPU()-cpu0)/float64(b.N), "apiserver-cpu-ms/op")
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "wall-ms/op")
		})
		// The same change as a conditional update of the status: the API server decodes the body
		// instead of encoding the stored object, merging the patch and decoding the result.
		b.Run(fmt.Sprintf("status-update/scenes=%d", n), func(b *testing.B) {
			vr := obj(fmt.Sprintf("status-update-%d-%d", n, b.N))
			must(b, c.Create(b.Context(), vr))
			cpu0, start := apiCPU(), time.Now()
			for i := range b.N {
				vr.Status.Progress = ptr.To(int32(i % 100))
				must(b, c.Status().Update(b.Context(), vr))
			}
			b.ReportMetric(1000*(apiCPU()-cpu0)/float64(b.N), "apiserver-cpu-ms/op")
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "wall-ms/op")
		})
		// The record of issue 22: one conditional merge patch of the annotations, which makes the
		// API server validate the whole object as it does for a spec change.
		b.Run(fmt.Sprintf("metadata-patch/scenes=%d", n), func(b *testing.B) {
			vr := obj(fmt.Sprintf("meta-%d-%d", n, b.N))
			must(b, c.Create(b.Context(), vr))
			cpu0, start := apiCPU(), time.Now()
			for i := range b.N {
				base := vr.DeepCopy()
				vr.Annotations = map[string]string{videov1alpha1.AnnotationJobID: fmt.Sprintf("job-%d", i)}
				must(b, c.Patch(b.Context(), vr, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
			}
			b.ReportMetric(1000*(apiCPU()-cpu0)/float64(b.N), "apiserver-cpu-ms/op")
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "wall-ms/op")
		})
	}
	// What dominates the status write of a large render (issue 30, "Large objects"): the same
	// one-field status patch of a 2,000-scene render against copies of the VideoRender CRD under
	// other groups: without its CEL rules (x-kubernetes-validations), and without any schema
	// (x-kubernetes-preserve-unknown-fields). The differences are what the rules and the schema
	// cost on every status write; what is left is decoding, merging, encoding and storing.
	// "merged": each schema node's rules folded into one rule whose messageExpression names the
	// first one broken (the admission feedback kept), to see what one evaluation per scene
	// instead of eleven saves.
	for _, variant := range []struct{ group, what string }{{"nocel.bench.videoops.io", "no-cel"}, {"noschema.bench.videoops.io", "no-schema"},
		{"merged.bench.videoops.io", "merged-rules"}} {
		b.Run(fmt.Sprintf("status-patch/scenes=2000/%s", variant.what), func(b *testing.B) {
			gvk := installRenderCRDVariant(b, c, variant.group, variant.what)
			typed := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("variant-%d", b.N)},
				Spec: videov1alpha1.VideoRenderSpec{Storyboard: &videov1alpha1.StoryboardRequest{VideoName: "variant", Scenes: scenes(2000)}}}
			raw, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(typed)
			must(b, err)
			u := &unstructured.Unstructured{Object: raw}
			u.SetGroupVersionKind(gvk)
			must(b, c.Create(b.Context(), u))
			cpu0, start := apiCPU(), time.Now()
			for i := range b.N {
				patch := fmt.Appendf(nil, `{"status":{"progress":%d}}`, i%100)
				must(b, c.Status().Patch(b.Context(), u, client.RawPatch(types.MergePatchType, patch)))
			}
			b.ReportMetric(1000*(apiCPU()-cpu0)/float64(b.N), "apiserver-cpu-ms/op")
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "wall-ms/op")
		})
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

// installRenderCRDVariant installs the VideoRender CRD under group, without its CEL rules, or
// without any schema when bare, and returns the kind to create.
func installRenderCRDVariant(b *testing.B, c client.Client, group, what string) schema.GroupVersionKind {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "config", "crd", "bases", "video.videoops.io_videorenders.yaml"))
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
		case "merged-rules":
			walkSchema(v.Schema.OpenAPIV3Schema, mergeRules)
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

// mergeRules folds a node's rules into groups of at most mergedRules: each group's conjunction,
// with a messageExpression that names the first rule broken. (All of a scene's eleven in one
// rule exceed the API server's estimated cost budget for one rule.)
func mergeRules(s *apiextensionsv1.JSONSchemaProps) {
	var out apiextensionsv1.ValidationRules
	for start := 0; start < len(s.XValidations); start += mergedRules {
		group := s.XValidations[start:min(start+mergedRules, len(s.XValidations))]
		if len(group) == 1 {
			out = append(out, group[0])
			continue
		}
		msg := ""
		rules := make([]string, 0, len(group))
		for i := len(group) - 1; i >= 0; i-- {
			r := group[i]
			m := "'" + strings.ReplaceAll(r.Message, "'", "\\'") + "'"
			if r.MessageExpression != "" {
				m = r.MessageExpression
			}
			if msg == "" {
				msg = m
			} else {
				msg = fmt.Sprintf("!(%s) ? %s : %s", r.Rule, m, msg)
			}
		}
		for _, r := range group {
			rules = append(rules, "("+r.Rule+")")
		}
		out = append(out, apiextensionsv1.ValidationRule{Rule: strings.Join(rules, " && "), MessageExpression: msg})
	}
	s.XValidations = out
}

// mergedRules is how many rules the merged-rules variant folds into one.
const mergedRules = 4
