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

// Package deploy tests what `make deploy` applies: config/default, rendered by kustomize, is
// accepted by a real API server (envtest), follows the security and RBAC rules a platform team
// expects, and grants the manager what it needs and nothing more.
package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/videoops/video-operator/internal/callback"
	"github.com/videoops/video-operator/internal/controller"
	"github.com/videoops/video-operator/internal/testutil"
)

const (
	namespace      = "video-operator-system"
	serviceAccount = "system:serviceaccount:video-operator-system:video-operator-controller-manager"
)

var root = filepath.Join("..", "..")

// kustomizeBuild renders a kustomization with the kustomize `make deploy` uses ($KUSTOMIZE, which
// make test sets), or with the kubectl of the envtest assets when run by hand.
func kustomizeBuild(t *testing.T, dir string) []byte {
	t.Helper()
	var cmd *exec.Cmd
	if k := os.Getenv("KUSTOMIZE"); k != "" {
		cmd = exec.CommandContext(t.Context(), k, "build", dir)
	} else {
		cmd = exec.CommandContext(t.Context(), kubectl(t), "kustomize", dir)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, stderr.String())
	}
	return out
}

// kubectl returns the kubectl of the envtest assets.
func kubectl(t *testing.T) string {
	t.Helper()
	return filepath.Join(testutil.Tool(t, "KUBEBUILDER_ASSETS"), "kubectl")
}

// decode splits a multi-document YAML stream into objects.
func decode(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		if string(bytes.TrimSpace(js)) == "null" {
			continue
		}
		if err := u.UnmarshalJSON(js); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
	}
}

// typed converts the first rendered object of the given kind and name into out.
func typed(t *testing.T, objs []*unstructured.Unstructured, kind, name string, out runtime.Object) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && (name == "" || o.GetName() == name) {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, out); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("config/default renders no %s %s", kind, name)
}

// TestDeployManifests checks the rendered objects themselves.
func TestDeployManifests(t *testing.T) {
	objs := decode(t, kustomizeBuild(t, filepath.Join(root, "config", "default")))

	var names []string
	for _, o := range objs {
		names = append(names, o.GetKind()+"/"+o.GetName())
		if o.GetKind() != "Namespace" && o.GetKind() != "CustomResourceDefinition" && !clusterScoped(o.GetKind()) &&
			o.GetNamespace() != namespace {
			t.Errorf("%s/%s is in namespace %q, want %s", o.GetKind(), o.GetName(), o.GetNamespace(), namespace)
		}
	}
	for _, want := range []string{
		"Namespace/" + namespace,
		"CustomResourceDefinition/videorenders.video.videoops.io",
		"CustomResourceDefinition/videostoryboards.video.videoops.io",
		"CustomResourceDefinition/videobudgets.video.videoops.io",
		"ServiceAccount/video-operator-controller-manager",
		"ClusterRole/video-operator-manager-role",
		"Role/video-operator-leader-election-role",
		"ClusterRole/video-operator-metrics-auth-role",
		"ClusterRole/video-operator-metrics-reader",
		"ClusterRole/video-operator-videorender-editor-role",
		"ClusterRole/video-operator-videorender-viewer-role",
		"ClusterRole/video-operator-videostoryboard-editor-role",
		"ClusterRole/video-operator-videostoryboard-viewer-role",
		"ClusterRole/video-operator-videobudget-editor-role",
		"ClusterRole/video-operator-videobudget-viewer-role",
		"Service/video-operator-controller-manager-metrics-service",
		"Deployment/video-operator-controller-manager",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("config/default renders no %s (it renders %v)", want, names)
		}
	}

	var d appsv1.Deployment
	typed(t, objs, "Deployment", "", &d)
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("the pod must run as non-root with the RuntimeDefault seccomp profile: %+v", psc)
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("the container needs a read-only root filesystem, no privilege escalation and no capabilities: %+v", sc)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Requests[r]; !ok {
			t.Errorf("no %s request", r)
		}
		if _, ok := c.Resources.Limits[r]; !ok {
			t.Errorf("no %s limit", r)
		}
	}
	probe := func(name string, p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path || p.HTTPGet.Port.IntValue() != 8081 {
			t.Errorf("%s probe: want GET %s on 8081, got %+v", name, path, p)
		}
	}
	probe("liveness", c.LivenessProbe, "/healthz")
	probe("readiness", c.ReadinessProbe, "/readyz")
	for _, a := range []string{"--leader-elect", "--metrics-bind-address=:8443", "--health-probe-bind-address=:8081"} {
		if !slices.Contains(c.Args, a) {
			t.Errorf("the manager's args %q lack %s", c.Args, a)
		}
	}
	if pod.ServiceAccountName != "video-operator-controller-manager" {
		t.Errorf("serviceAccountName = %q", pod.ServiceAccountName)
	}

	// Every $(VAR) in the args must come from the ConfigMap, or Kubernetes passes it literally and
	// the manager fails to parse the flag.
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].ConfigMapRef == nil {
		t.Fatalf("want the settings from one ConfigMap through envFrom, got %+v", c.EnvFrom)
	}
	var cm corev1.ConfigMap
	typed(t, objs, "ConfigMap", c.EnvFrom[0].ConfigMapRef.Name, &cm)
	if _, ok := cm.Data["VIDEO_SERVICE_BASE_URL"]; !ok {
		t.Error("the manager ConfigMap has no VIDEO_SERVICE_BASE_URL, the manager's --service-base-url default")
	}
	ref := regexp.MustCompile(`\$\(([A-Z_]+)\)`)
	used := 0
	for _, a := range c.Args {
		for _, m := range ref.FindAllStringSubmatch(a, -1) {
			used++
			if _, ok := cm.Data[m[1]]; !ok {
				t.Errorf("arg %q refers to %s, which the ConfigMap %s does not define", a, m[1], cm.Name)
			}
		}
	}
	for _, flag := range []string{"--poll-min=", "--poll-max=", "--service-rate-limit=", "--service-burst="} {
		if !slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, flag+"$(") }) {
			t.Errorf("%s is not configurable through the ConfigMap", flag)
		}
	}
	if used == 0 {
		t.Error("no arg takes its value from the ConfigMap")
	}

	// Issue 9, case 3 "Shutdown": a rolling update must let every paid call in flight finish and
	// its job id be written. The pod's grace period must exceed the manager's shutdown budget for
	// the configured call timeout, or the kubelet kills the manager in the middle of it.
	callTimeout, err := time.ParseDuration(cm.Data["VIDEO_SERVICE_TIMEOUT"])
	if err != nil {
		t.Fatalf("VIDEO_SERVICE_TIMEOUT %q: %v", cm.Data["VIDEO_SERVICE_TIMEOUT"], err)
	}
	budget := controller.ShutdownBudget(callTimeout)
	if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= budget {
		t.Errorf("terminationGracePeriodSeconds = %v, must exceed the shutdown budget %s (call timeout %s plus the status writes)",
			ptrString(g), budget, callTimeout)
	}

	var svc corev1.Service
	typed(t, objs, "Service", "", &svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8443 {
		t.Errorf("the metrics Service must expose 8443, got %+v", svc.Spec.Ports)
	}
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the metrics Service selects %s=%s, which the manager's pods do not carry", k, v)
		}
	}

	// Least privilege: the manager reads Secrets and videos, and writes only their status.
	var role rbacv1.ClusterRole
	typed(t, objs, "ClusterRole", "video-operator-manager-role", &role)
	for _, r := range role.Rules {
		if slices.Contains(r.Verbs, "*") || slices.Contains(r.Resources, "*") || slices.Contains(r.APIGroups, "*") {
			t.Errorf("the manager role has a wildcard: %+v", r)
		}
		for _, v := range r.Verbs {
			if slices.Contains(r.Resources, "secrets") && !slices.Contains([]string{"get", "list", "watch"}, v) {
				t.Errorf("the manager may %s Secrets; it only needs to read them", v)
			}
		}
	}
}

func ptrString(p *int64) string {
	if p == nil {
		return "unset"
	}
	return strconv.FormatInt(*p, 10)
}

// TestOperatorOverlay checks that the overlay example sets the image and the service URL.
func TestOperatorOverlay(t *testing.T) {
	objs := decode(t, kustomizeBuild(t, filepath.Join(root, "config", "gitops", "operator-overlay")))
	var d appsv1.Deployment
	typed(t, objs, "Deployment", "", &d)
	// The tree's version, as the chart's appVersion (TestChartImageIsNotOlderThanTheChart).
	chart, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct{ AppVersion string }
	if err := yaml.Unmarshal(chart, &meta); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "registry.example.com/video-operator:"+meta.AppVersion {
		t.Errorf("image = %q, want the tree's version %s", got, meta.AppVersion)
	}
	var cm corev1.ConfigMap
	typed(t, objs, "ConfigMap", d.Spec.Template.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name, &cm)
	if got := cm.Data["VIDEO_SERVICE_BASE_URL"]; got != "https://video.example.com/serviceapis" {
		t.Errorf("VIDEO_SERVICE_BASE_URL = %q", got)
	}
	if cm.Data["VIDEO_POLL_MAX"] == "" || cm.Data["VIDEO_SERVICE_BURST"] == "" {
		t.Errorf("the merge lost the base's settings: %v", cm.Data)
	}
}

// TestCallbacksOverlay checks that config/callbacks fits together: every replica serves
// callbacks on the port the Service targets, the Ingress routes the callback path to that
// Service, the key comes from a Secret, and every $(VAR) of the new args is defined.
func TestCallbacksOverlay(t *testing.T) {
	objs := decode(t, kustomizeBuild(t, filepath.Join(root, "config", "callbacks")))
	var d appsv1.Deployment
	typed(t, objs, "Deployment", "", &d)
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas = %v: the overlay runs replicas that all serve callbacks", d.Spec.Replicas)
	}
	c := d.Spec.Template.Spec.Containers[0]
	for _, a := range []string{"--callback-bind-address=:9443", "--callback-public-url=$(VIDEO_CALLBACK_PUBLIC_URL)",
		"--callback-key-file=/etc/video-operator/callback/key"} {
		if !slices.Contains(c.Args, a) {
			t.Errorf("args %q lack %s", c.Args, a)
		}
	}
	port := slices.IndexFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "callbacks" && p.ContainerPort == 9443 })
	if port < 0 {
		t.Errorf("no container port callbacks/9443: %+v", c.Ports)
	}
	var cm corev1.ConfigMap
	typed(t, objs, "ConfigMap", c.EnvFrom[0].ConfigMapRef.Name, &cm)
	if !strings.HasPrefix(cm.Data["VIDEO_CALLBACK_PUBLIC_URL"], "https://") {
		t.Errorf("VIDEO_CALLBACK_PUBLIC_URL = %q", cm.Data["VIDEO_CALLBACK_PUBLIC_URL"])
	}
	mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.MountPath == "/etc/video-operator/callback" && m.ReadOnly
	})
	fromSecret := slices.ContainsFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == "video-operator-callback-key"
	})
	if !mounted || !fromSecret {
		t.Errorf("the callback key must be mounted read-only from Secret video-operator-callback-key: %+v %+v", c.VolumeMounts, d.Spec.Template.Spec.Volumes)
	}

	var svc corev1.Service
	typed(t, objs, "Service", "video-operator-callbacks", &svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "callbacks" {
		t.Errorf("the callback Service must target the callbacks port: %+v", svc.Spec.Ports)
	}
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the callback Service selects %s=%s, which the manager's pods do not carry", k, v)
		}
	}
	var ing networkingv1.Ingress
	typed(t, objs, "Ingress", "video-operator-callbacks", &ing)
	path := ing.Spec.Rules[0].HTTP.Paths[0]
	if path.Path != callback.Path || path.Backend.Service.Name != svc.Name || path.Backend.Service.Port.Name != svc.Spec.Ports[0].Name {
		t.Errorf("the Ingress must route %s to Service %s: %+v", callback.Path, svc.Name, path)
	}
}

// TestDeployAppliesToAPIServer applies what `make deploy` applies to a real API server: first
// with --dry-run=server (the objects are valid as the API server sees them), then for real,
// after which the manager's ServiceAccount must be allowed exactly what the manager needs.
func TestDeployAppliesToAPIServer(t *testing.T) {
	rendered := kustomizeBuild(t, filepath.Join(root, "config", "default"))
	cfg, kubeconfig := startAdminEnvtest(t, "deployer")
	apply := func(input []byte, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), kubectl(t), append([]string{"--kubeconfig", kubeconfig, "apply", "--server-side", "-f", "-"}, args...)...)
		cmd.Stdin = bytes.NewReader(input)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl apply %v: %v\n%s", args, err, out)
		}
		return string(out)
	}

	// A server-side dry run validates every object against the API server, but creates nothing:
	// the namespaced objects would be refused because their Namespace does not exist yet. So the
	// Namespace is applied for real first, as `make deploy` would create it.
	objs := decode(t, rendered)
	var ns []byte
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			var err error
			ns, err = o.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	apply(ns)
	out := apply(rendered, "--dry-run=server")
	if got, want := strings.Count(out, "(server dry run)"), len(objs); got != want {
		t.Errorf("the dry run applied %d objects, want %d:\n%s", got, want, out)
	}

	// For real, then ask the API server what the manager's ServiceAccount may do.
	apply(rendered)
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		verb, group, resource, subresource, namespace string
		allowed                                       bool
	}{
		{"list", "video.videoops.io", "videorenders", "", "", true},
		{"watch", "video.videoops.io", "videostoryboards", "", "", true},
		{"patch", "video.videoops.io", "videorenders", "status", "team-a", true},
		{"update", "video.videoops.io", "videostoryboards", "status", "team-a", true},
		// The record of a job in the object's annotations (docs/backup-restore.md): patch only.
		{"patch", "video.videoops.io", "videorenders", "", "team-a", true},
		{"patch", "video.videoops.io", "videostoryboards", "", "team-a", true},
		{"watch", "video.videoops.io", "videobudgets", "", "", true},
		{"patch", "video.videoops.io", "videobudgets", "status", "team-a", true},
		{"get", "", "secrets", "", "team-a", true},
		{"create", "events.k8s.io", "events", "", "team-a", true},
		{"create", "coordination.k8s.io", "leases", "", namespace, true},
		{"get", "coordination.k8s.io", "leases", "", namespace, true},
		{"update", "coordination.k8s.io", "leases", "", namespace, true},
		// The Lease lock needs no more than get, create and update; the ledgers no more than
		// get, list, watch, create and patch (watched from the manager's own namespace, never
		// replaced or deleted).
		{"list", "coordination.k8s.io", "leases", "", namespace, false},
		{"watch", "coordination.k8s.io", "leases", "", namespace, false},
		{"patch", "coordination.k8s.io", "leases", "", namespace, false},
		{"delete", "coordination.k8s.io", "leases", "", namespace, false},
		{"patch", "", "configmaps", "", namespace, true},
		{"list", "", "configmaps", "", namespace, true},
		{"watch", "", "configmaps", "", namespace, true},
		{"delete", "", "configmaps", "", namespace, false},
		{"update", "", "configmaps", "", namespace, false},
		// The installation's key fingerprint Secret, created once in the manager's own namespace
		// (docs/backup-restore.md, "Key fingerprints"); never updated.
		{"create", "", "secrets", "", namespace, true},
		{"update", "", "secrets", "", namespace, false},
		// Least privilege: never replacing a video, never writing a Secret, and leader
		// election only in the manager's own namespace.
		{"update", "video.videoops.io", "videorenders", "", "team-a", false},
		{"delete", "video.videoops.io", "videostoryboards", "", "team-a", false},
		// The manager never changes a budget's limits, only its status.
		{"update", "video.videoops.io", "videobudgets", "", "team-a", false},
		{"create", "video.videoops.io", "videobudgets", "", "team-a", false},
		{"create", "", "secrets", "", "team-a", false},
		{"update", "", "secrets", "", "team-a", false},
		{"create", "coordination.k8s.io", "leases", "", "team-a", false},
		{"list", "", "configmaps", "", "team-a", false},
		{"watch", "", "configmaps", "", "", false},
	}
	for _, tt := range tests {
		name := strings.Join([]string{tt.verb, tt.resource, tt.subresource, tt.namespace}, " ")
		t.Run(name, func(t *testing.T) {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:   serviceAccount,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Verb: tt.verb, Group: tt.group, Resource: tt.resource, Subresource: tt.subresource, Namespace: tt.namespace,
				},
			}}
			if err := c.Create(t.Context(), sar); err != nil {
				t.Fatal(err)
			}
			if sar.Status.Allowed != tt.allowed {
				t.Errorf("allowed = %v, want %v (%s)", sar.Status.Allowed, tt.allowed, sar.Status.Reason)
			}
		})
	}

	// The objects exist as rendered: the Deployment is there with its ConfigMap.
	var d appsv1.Deployment
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: "video-operator-controller-manager"}, &d); err != nil {
		t.Fatal(err)
	}
	var cms corev1.ConfigMapList
	if err := c.List(t.Context(), &cms, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(cms.Items, func(cm corev1.ConfigMap) bool {
		return cm.Name == d.Spec.Template.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name
	}) {
		t.Error("the ConfigMap the Deployment reads was not applied")
	}
}

// startAdminEnvtest starts a real API server for one test, stopped at its end, and returns its
// config and a kubeconfig file of a cluster admin named user, for kubectl.
func startAdminEnvtest(t *testing.T, user string) (*rest.Config, string) {
	t.Helper()
	testutil.APIServer(t)
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest (run the tests through 'make test', which provides KUBEBUILDER_ASSETS): %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	admin, err := env.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, kubeconfig
}
