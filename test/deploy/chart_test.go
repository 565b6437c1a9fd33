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

package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/videoops/video-operator/internal/admissionpolicy"
	"github.com/videoops/video-operator/internal/callback"
	"github.com/videoops/video-operator/internal/controller"
	"github.com/videoops/video-operator/internal/testutil"
)

// release is the release name that makes the chart's object names equal to config/default's.
const release = "video-operator"

// serviceBaseURL is the service URL the chart tests render with: the chart refuses to render
// without one.
const serviceBaseURL = "https://video.example.com/serviceapis"

var (
	chartDir       = filepath.Join(root, "dist", "chart")
	fullValuesFile = filepath.Join("testdata", "chart-values-full.yaml")
	// withBaseURL are the arguments every rendering needs (the value is required).
	withBaseURL = []string{"--set", "service.baseURL=" + serviceBaseURL}
)

// helm returns the pinned helm that `make test` installs and passes in $HELM.
func helm(t *testing.T) string {
	t.Helper()
	return testutil.Tool(t, "HELM")
}

// runHelm runs helm with args and returns its standard output.
func runHelm(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), helm(t), args...)
	// Keep helm away from the user's repositories and caches.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %v: %v\n%s%s", args, err, out, stderr.String())
	}
	return out
}

// helmTemplate renders the chart as release "video-operator" in the operator's namespace, with
// serviceBaseURL unless args set another.
func helmTemplate(t *testing.T, args ...string) []byte {
	t.Helper()
	return runHelm(t, append(append([]string{"template", release, chartDir, "--namespace", namespace}, withBaseURL...), args...)...)
}

// helmTemplateFails renders the chart with args, which must fail; it returns helm's output.
func helmTemplateFails(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), helm(t), append([]string{"template", release, chartDir, "--namespace", namespace}, args...)...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Errorf("helm template %v rendered, want a failure", args)
	}
	return string(out)
}

func TestChartLint(t *testing.T) {
	out := runHelm(t, append([]string{"lint", "--strict", chartDir}, withBaseURL...)...)
	if !strings.Contains(string(out), "0 chart(s) failed") {
		t.Errorf("helm lint:\n%s", out)
	}
	out = runHelm(t, "lint", "--strict", chartDir, "--values", fullValuesFile)
	if !strings.Contains(string(out), "0 chart(s) failed") {
		t.Errorf("helm lint with the full values:\n%s", out)
	}
}

// key names an object for comparisons between the two renderings.
func key(o *unstructured.Unstructured) string { return o.GetKind() + "/" + o.GetName() }

func byKey(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	m := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		m[key(o)] = o
	}
	return m
}

// TestChartMatchesKustomize renders the chart with its default values and config/default with
// kustomize and checks that they install the same thing: the same objects by kind and name (the
// Namespace is Helm's --create-namespace, and the ConfigMap name carries kustomize's hash), the
// same CRDs, the same RBAC rules and bindings (the chart's RBAC equals the generated role), the
// same settings, and the same manager container and pod.
func TestChartMatchesKustomize(t *testing.T) {
	var installed []*unstructured.Unstructured
	for _, o := range decode(t, helmTemplate(t)) {
		// Hooks run at a moment of the release's life (the uninstall's), not installed objects.
		if _, hook := o.GetAnnotations()["helm.sh/hook"]; !hook {
			installed = append(installed, o)
		}
	}
	chart := byKey(installed)
	kust := byKey(decode(t, kustomizeBuild(t, filepath.Join(root, "config", "default"))))

	var kustCM, chartCM *unstructured.Unstructured
	for k, o := range kust {
		switch {
		case o.GetKind() == "Namespace":
			continue
		case o.GetKind() == "ConfigMap":
			kustCM = o
			continue
		}
		if _, ok := chart[k]; !ok {
			t.Errorf("config/default renders %s, the chart does not", k)
		}
	}
	for k, o := range chart {
		if o.GetKind() == "ConfigMap" {
			chartCM = o
			continue
		}
		if _, ok := kust[k]; !ok {
			t.Errorf("the chart renders %s, config/default does not", k)
		}
		if o.GetKind() != "CustomResourceDefinition" && !clusterScoped(o.GetKind()) && o.GetNamespace() != namespace {
			t.Errorf("%s is in namespace %q, want the release's %s", k, o.GetNamespace(), namespace)
		}
	}

	for k, c := range chart {
		o, ok := kust[k]
		if !ok {
			continue
		}
		switch c.GetKind() {
		case "CustomResourceDefinition":
			if !reflect.DeepEqual(c.Object["spec"], o.Object["spec"]) {
				t.Errorf("%s: the chart's CRD differs from config/crd/bases: run 'make manifests'", k)
			}
		case "ClusterRole", "Role":
			if !reflect.DeepEqual(c.Object["rules"], o.Object["rules"]) {
				t.Errorf("%s: the chart's rules differ from config/rbac (run 'make manifests'):\nchart: %v\nkustomize: %v", k, c.Object["rules"], o.Object["rules"])
			}
		case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			if !reflect.DeepEqual(c.Object["spec"], o.Object["spec"]) || c.GetLabels()[admissionpolicy.Label] != o.GetLabels()[admissionpolicy.Label] {
				t.Errorf("%s: the chart's admission policy differs from config/policies: run 'make manifests'", k)
			}
		case "ClusterRoleBinding", "RoleBinding":
			for _, f := range []string{"roleRef", "subjects"} {
				if !reflect.DeepEqual(c.Object[f], o.Object[f]) {
					t.Errorf("%s: %s differs:\nchart: %v\nkustomize: %v", k, f, c.Object[f], o.Object[f])
				}
			}
		}
	}

	if kustCM == nil || chartCM == nil {
		t.Fatal("want the manager's settings ConfigMap in both renderings")
	}
	// The one difference: config/default carries the placeholder the manager refuses, the chart
	// the URL it was given (it refuses to render without one).
	kustData, _, _ := unstructured.NestedStringMap(kustCM.Object, "data")
	chartData, _, _ := unstructured.NestedStringMap(chartCM.Object, "data")
	if kustData["VIDEO_SERVICE_BASE_URL"] != "SET-ME-video-service-base-url" || chartData["VIDEO_SERVICE_BASE_URL"] != serviceBaseURL {
		t.Errorf("VIDEO_SERVICE_BASE_URL: config/default %q, want the placeholder; chart %q, want %q",
			kustData["VIDEO_SERVICE_BASE_URL"], chartData["VIDEO_SERVICE_BASE_URL"], serviceBaseURL)
	}
	delete(kustData, "VIDEO_SERVICE_BASE_URL")
	delete(chartData, "VIDEO_SERVICE_BASE_URL")
	if !reflect.DeepEqual(chartData, kustData) {
		t.Errorf("the chart's default settings differ from config/manager/manager-config.env:\nchart: %v\nkustomize: %v",
			chartCM.Object["data"], kustCM.Object["data"])
	}

	var cd, kd appsv1.Deployment
	typed(t, decode(t, helmTemplate(t)), "Deployment", "", &cd)
	typed(t, decode(t, kustomizeBuild(t, filepath.Join(root, "config", "default"))), "Deployment", "", &kd)
	cc, kc := cd.Spec.Template.Spec.Containers[0], kd.Spec.Template.Spec.Containers[0]
	for name, pair := range map[string][2]any{
		"args":            {cc.Args, kc.Args},
		"command":         {cc.Command, kc.Command},
		"ports":           {cc.Ports, kc.Ports},
		"securityContext": {cc.SecurityContext, kc.SecurityContext},
		"livenessProbe":   {cc.LivenessProbe, kc.LivenessProbe},
		"readinessProbe":  {cc.ReadinessProbe, kc.ReadinessProbe},
		"resources":       {cc.Resources, kc.Resources},
		"replicas":        {cd.Spec.Replicas, kd.Spec.Replicas},
		"pod securityContext": {cd.Spec.Template.Spec.SecurityContext,
			kd.Spec.Template.Spec.SecurityContext},
		"serviceAccountName": {cd.Spec.Template.Spec.ServiceAccountName, kd.Spec.Template.Spec.ServiceAccountName},
		"terminationGracePeriodSeconds": {cd.Spec.Template.Spec.TerminationGracePeriodSeconds,
			kd.Spec.Template.Spec.TerminationGracePeriodSeconds},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("the manager's %s differs:\nchart: %+v\nkustomize: %+v", name, pair[0], pair[1])
		}
	}
	// Both name the released image, with its registry (an image without one was pulled from
	// Docker Hub, where it does not exist).
	if registry, _, _ := strings.Cut(cc.Image, "/"); cc.Image != kc.Image || !strings.Contains(registry, ".") {
		t.Errorf("the chart runs %s, config/default %s: want the same image, with a registry", cc.Image, kc.Image)
	}
	if len(cc.EnvFrom) != 1 || cc.EnvFrom[0].ConfigMapRef == nil || cc.EnvFrom[0].ConfigMapRef.Name != chartCM.GetName() {
		t.Errorf("the chart's manager must read its settings from %s: %+v", chartCM.GetName(), cc.EnvFrom)
	}

	var svc corev1.Service
	typed(t, decode(t, helmTemplate(t)), "Service", "", &svc)
	for k, v := range svc.Spec.Selector {
		if cd.Spec.Template.Labels[k] != v {
			t.Errorf("the metrics Service selects %s=%s, which the chart's pods do not carry", k, v)
		}
	}
}

// TestChartFullValues checks that each value reaches the object it configures.
func TestChartFullValues(t *testing.T) {
	objs := decode(t, helmTemplate(t, "--values", fullValuesFile))
	var d appsv1.Deployment
	typed(t, objs, "Deployment", "", &d)
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2", d.Spec.Replicas)
	}
	if c.Image != "registry.example.com/video-operator:v0.2.0" || c.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("image = %s (%s)", c.Image, c.ImagePullPolicy)
	}
	for _, a := range []string{"--leader-elect", "--metrics-bind-address=:8443", "--callback-bind-address=:9443",
		"--callback-public-url=$(VIDEO_CALLBACK_PUBLIC_URL)", "--callback-key-file=/etc/video-operator/callback/signing-key",
		"--job-deadline=6h"} {
		if !slices.Contains(c.Args, a) {
			t.Errorf("args %q lack %s", c.Args, a)
		}
	}
	if pod.NodeSelector["kubernetes.io/os"] != "linux" || len(pod.Tolerations) != 1 || pod.Affinity == nil ||
		pod.PriorityClassName != "system-cluster-critical" || len(pod.ImagePullSecrets) != 1 {
		t.Errorf("node placement or pull secrets not applied: %+v", pod)
	}
	if d.Spec.Template.Labels["example.com/tier"] != "operators" || d.Spec.Template.Annotations["example.com/team"] != "platform" {
		t.Errorf("pod labels or annotations not applied: %v %v", d.Spec.Template.Labels, d.Spec.Template.Annotations)
	}
	if len(c.Env) != 3 || len(pod.TopologySpreadConstraints) != 1 || pod.SecurityContext.FSGroup == nil ||
		pod.ServiceAccountName != "video-operator-manager" || c.SecurityContext.RunAsNonRoot == nil {
		t.Errorf("env, topology spread, security contexts or ServiceAccount not applied: %+v", pod)
	}
	kinds := map[string]bool{}
	for _, o := range objs {
		kinds[o.GetKind()] = true
		if o.GetKind() == "ClusterRole" && o.GetName() == release+"-manager-role" {
			t.Error("with watchNamespaces the manager must get Roles, not a ClusterRole")
		}
	}
	for _, k := range []string{"PodDisruptionBudget", "NetworkPolicy", "PrometheusRule", "Role", "RoleBinding"} {
		if !kinds[k] {
			t.Errorf("the full values render no %s", k)
		}
	}
	if got := c.Resources.Limits.Memory().String(); got != "1Gi" {
		t.Errorf("memory limit = %s", got)
	}
	fromSecret := slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == "my-callback-key"
	})
	// The callback key, the extra mount of the values, and the metrics certificate.
	if !fromSecret || len(c.VolumeMounts) != 3 || !c.VolumeMounts[0].ReadOnly {
		t.Errorf("the callback key must be mounted read-only from Secret my-callback-key: %+v %+v", c.VolumeMounts, pod.Volumes)
	}

	var cm corev1.ConfigMap
	typed(t, objs, "ConfigMap", c.EnvFrom[0].ConfigMapRef.Name, &cm)
	want := map[string]string{
		"VIDEO_SERVICE_BASE_URL": "https://video.example.com/serviceapis", "VIDEO_POLL_MIN": "15s", "VIDEO_POLL_MAX": "45s",
		"VIDEO_POLL_SHARE": "0.4", "VIDEO_PROGRESS_INTERVAL": "2m",
		"VIDEO_SERVICE_RATE_LIMIT": "5", "VIDEO_SERVICE_BURST": "8", "VIDEO_SERVICE_TIMEOUT": "20s",
		"VIDEO_MAX_CONCURRENT_RECONCILES": "4", "VIDEO_WATCH_NAMESPACES": "team-a,team-b",
		"VIDEO_CALLBACK_PUBLIC_URL": "https://video-operator.example.com",
	}
	if !reflect.DeepEqual(cm.Data, want) {
		t.Errorf("settings = %v, want %v", cm.Data, want)
	}

	var svc corev1.Service
	typed(t, objs, "Service", release+"-callbacks", &svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 || svc.Spec.Ports[0].TargetPort.String() != "callbacks" {
		t.Errorf("the callback Service must target the callbacks port: %+v", svc.Spec.Ports)
	}
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the callback Service selects %s=%s, which the pods do not carry", k, v)
		}
	}
	var ing networkingv1.Ingress
	typed(t, objs, "Ingress", release+"-callbacks", &ing)
	path := ing.Spec.Rules[0].HTTP.Paths[0]
	if path.Path != callback.Path || path.Backend.Service.Name != svc.Name || path.Backend.Service.Port.Name != "callbacks" ||
		ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "nginx" || len(ing.Spec.TLS) != 1 {
		t.Errorf("the Ingress must route %s to %s over TLS: %+v", callback.Path, svc.Name, ing.Spec)
	}

	var monitors []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ServiceMonitor" {
			monitors = append(monitors, o)
		}
		if o.GetKind() == "CustomResourceDefinition" {
			if _, kept := o.GetAnnotations()["helm.sh/resource-policy"]; kept {
				t.Errorf("%s keeps helm.sh/resource-policy with crds.keep=false", o.GetName())
			}
		}
	}
	if len(monitors) != 1 || monitors[0].GetLabels()["release"] != "prometheus" {
		t.Fatalf("want one ServiceMonitor labelled release=prometheus, got %v", monitors)
	}
	var metricsSvc corev1.Service
	typed(t, objs, "Service", release+"-controller-manager-metrics-service", &metricsSvc)
	sel, _, _ := unstructured.NestedStringMap(monitors[0].Object, "spec", "selector", "matchLabels")
	for k, v := range sel {
		if metricsSvc.Labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%s, which the metrics Service does not carry (%v)", k, v, metricsSvc.Labels)
		}
	}
}

// TestChartSwitches checks the on/off values: CRDs, metrics (the ServiceMonitor is off by
// default), user roles, leader election, callbacks without a public URL.
func TestChartSwitches(t *testing.T) {
	// The scenes' rules (config/policies) are counted apart from the approval policies, which
	// have a switch of their own (approval_test.go).
	kinds := func(objs []*unstructured.Unstructured) map[string]int {
		n := map[string]int{}
		for _, o := range objs {
			kind := o.GetKind()
			if _, scenes := o.GetLabels()["video.videoops.io/admission-policy"]; strings.Contains(kind, "AdmissionPolicy") && !scenes {
				kind = "approval " + kind
			}
			n[kind]++
		}
		return n
	}
	def := kinds(decode(t, helmTemplate(t)))
	if def["CustomResourceDefinition"] != 3 || def["ServiceMonitor"] != 0 || def["Ingress"] != 0 ||
		def["ValidatingAdmissionPolicy"] != len(admissionpolicy.Expected) || def["ValidatingAdmissionPolicyBinding"] != len(admissionpolicy.Expected) {
		t.Errorf("defaults: want 3 CRDs, the admission policies and their bindings, no ServiceMonitor, no Ingress: %v", def)
	}
	if k := kinds(decode(t, helmTemplate(t, "--set", "admissionPolicies.install=false"))); k["ValidatingAdmissionPolicy"] != 0 || k["ValidatingAdmissionPolicyBinding"] != 0 {
		t.Errorf("admissionPolicies.install=false: want no admission policy: %v", k)
	}
	off := decode(t, helmTemplate(t, "--set", "crds.install=false", "--set", "metrics.enabled=false",
		"--set", "rbac.userRoles=false", "--set", "leaderElection.enabled=false"))
	if k := kinds(off); k["CustomResourceDefinition"] != 0 || k["Service"] != 0 || k["ClusterRole"] != 1 {
		t.Errorf("crds, metrics and user roles off: want no CRD, no Service, only the manager's ClusterRole: %v", k)
	}
	var d appsv1.Deployment
	typed(t, off, "Deployment", "", &d)
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if a == "--leader-elect" || strings.HasPrefix(a, "--metrics-bind-address") {
			t.Errorf("arg %s with leader election and metrics off", a)
		}
	}

	cmd := exec.CommandContext(t.Context(), helm(t), append([]string{"template", release, chartDir, "--set", "callbacks.enabled=true"}, withBaseURL...)...)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "callbacks.publicURL is required") {
		t.Errorf("callbacks without a public URL must fail to render, got %v:\n%.500s", err, out)
	}
}

// TestChartRefusesBrokenValues checks that values which would install a manager that breaks
// fail at template time with a message naming the value to fix.
func TestChartRefusesBrokenValues(t *testing.T) {
	callbacks := []string{"--set", "callbacks.enabled=true", "--set", "callbacks.publicURL=https://video-operator.example.com"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"several active managers", []string{"--set", "replicas=2", "--set", "leaderElection.enabled=false"},
			"replicas > 1 needs leaderElection.enabled=true"},
		{"callbacks without a key Secret", append(slices.Clone(callbacks), "--set", "callbacks.keySecret.name="),
			"callbacks.enabled needs callbacks.keySecret.name"},
		{"callbacks without a key in the Secret", append(slices.Clone(callbacks), "--set", "callbacks.keySecret.key="),
			"callbacks.enabled needs callbacks.keySecret.name and callbacks.keySecret.key"},
		{"a public URL with the callback path", []string{"--set", "callbacks.enabled=true", "--set", "callbacks.publicURL=https://video-operator.example.com/callbacks/"},
			"must be a scheme and host without a path"},
		{"a public URL without a scheme", []string{"--set", "callbacks.enabled=true", "--set", "callbacks.publicURL=video-operator.example.com"},
			"must be a scheme and host without a path"},
		{"a public URL the Ingress does not serve", []string{"--set", "callbacks.enabled=true", "--set", "callbacks.publicURL=https://other.example.com",
			"--set", "callbacks.ingress.enabled=true"}, `does not name callbacks.ingress.host "video-operator.example.com"`},
		{"the callback port on the metrics port", append(slices.Clone(callbacks), "--set", "callbacks.listenPort=8443"),
			"callbacks.listenPort 8443 is taken"},
		{"the callback port on the probes' port", append(slices.Clone(callbacks), "--set", "callbacks.listenPort=8081"),
			"callbacks.listenPort 8081 is taken"},
		// The schema refuses it first (values.schema.json); the template says the same without it.
		{"a timeout the grace period cannot be computed from", []string{"--set", "service.timeout=1m30s"},
			"at '/service/timeout'"},
		{"a timeout the grace period cannot be computed from, schema skipped", []string{"--set", "service.timeout=1m30s", "--skip-schema-validation"},
			"must be whole seconds or minutes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), helm(t), append(append([]string{"template", release, chartDir}, withBaseURL...), tc.args...)...)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("want a failure saying %q, got %v:\n%.500s", tc.want, err, out)
			}
		})
	}
}

// TestChartGracePeriodCoversShutdown checks that the pod's grace period follows service.timeout:
// the kubelet must not kill a manager whose paid call and job-id write are still under way.
func TestChartGracePeriodCoversShutdown(t *testing.T) {
	for _, timeout := range []string{"20s", "30s", "2m"} {
		var d appsv1.Deployment
		typed(t, decode(t, helmTemplate(t, "--set", "service.timeout="+timeout)), "Deployment", "", &d)
		callTimeout, err := time.ParseDuration(timeout)
		if err != nil {
			t.Fatal(err)
		}
		budget := controller.ShutdownBudget(callTimeout)
		grace := d.Spec.Template.Spec.TerminationGracePeriodSeconds
		if grace == nil || time.Duration(*grace)*time.Second <= budget {
			t.Errorf("service.timeout=%s: terminationGracePeriodSeconds = %v, want more than the shutdown budget %s", timeout, grace, budget)
		}
	}
}
