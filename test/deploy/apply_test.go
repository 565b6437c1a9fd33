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
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/videoops/video-operator/internal/testutil"
)

// buildInstaller runs what `make build-installer` runs and returns dist/install.yaml's content;
// baseURL is SERVICE_BASE_URL (none, or one).
func buildInstaller(t *testing.T, img string, baseURL ...string) []byte {
	t.Helper()
	k := testutil.Tool(t, "KUSTOMIZE")
	out := filepath.Join(t.TempDir(), "install.yaml")
	cmd := exec.CommandContext(t.Context(), filepath.Join(root, "hack", "build-installer.sh"), append([]string{k, img, out}, baseURL...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestInstaller checks that dist/install.yaml is config/default with the image set: every object
// of config/default, nothing else, and the manager running the given image.
func TestInstaller(t *testing.T) {
	const img = "registry.example.com/video-operator:v9.9.9"
	objs := decode(t, buildInstaller(t, img))
	want := decode(t, kustomizeBuild(t, filepath.Join(root, "config", "default")))
	var got, wantKeys []string
	for _, o := range objs {
		got = append(got, key(o))
	}
	for _, o := range want {
		wantKeys = append(wantKeys, key(o))
	}
	slices.Sort(got)
	slices.Sort(wantKeys)
	if !slices.Equal(got, wantKeys) {
		t.Errorf("install.yaml holds %v, config/default %v", got, wantKeys)
	}
	for _, k := range []string{"CustomResourceDefinition/videorenders.video.videoops.io", "ClusterRole/video-operator-manager-role",
		"Deployment/video-operator-controller-manager", "Namespace/" + namespace} {
		if !slices.Contains(got, k) {
			t.Errorf("install.yaml lacks %s", k)
		}
	}
	var d appsv1.Deployment
	typed(t, objs, "Deployment", "", &d)
	if c := d.Spec.Template.Spec.Containers[0]; c.Image != img {
		t.Errorf("the manager's image is %s, want %s", c.Image, img)
	}
	// The admission policies come before the CRDs, which leave the scenes' rules to them
	// (docs/deploy.md, "Upgrading to the admission policies"), in install.yaml as in config/default.
	for what, list := range map[string][]*unstructured.Unstructured{"install.yaml": objs, "config/default": want} {
		lastPolicy, firstCRD := -1, len(list)
		for i, o := range list {
			if strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy") {
				lastPolicy = i
			}
			if o.GetKind() == "CustomResourceDefinition" && i < firstCRD {
				firstCRD = i
			}
		}
		if lastPolicy < 0 || lastPolicy > firstCRD {
			t.Errorf("%s: the admission policies (last at %d) must come before the CRDs (first at %d)", what, lastPolicy, firstCRD)
		}
	}
}

// TestInstallerServiceBaseURL: the installer used to carry an empty service URL, with which the
// manager crash-loops. Without SERVICE_BASE_URL it carries the placeholder the manager refuses by
// name (cmd/manager, TestServiceBaseURLPlaceholderIsRefusedWithTheRemedy) and says in its header how
// to set it; that substitution, or SERVICE_BASE_URL, gives a ConfigMap with the URL.
func TestInstallerServiceBaseURL(t *testing.T) {
	const img = "ghcr.io/videoops/video-operator:v9.9.9"
	baseURL := func(t *testing.T, data []byte) string {
		t.Helper()
		objs := decode(t, data)
		var d appsv1.Deployment
		typed(t, objs, "Deployment", "", &d)
		var cm corev1.ConfigMap
		typed(t, objs, "ConfigMap", d.Spec.Template.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name, &cm)
		return cm.Data["VIDEO_SERVICE_BASE_URL"]
	}
	const placeholder = "SET-ME-video-service-base-url"
	plain := buildInstaller(t, img)
	if got := baseURL(t, plain); got != placeholder {
		t.Errorf("VIDEO_SERVICE_BASE_URL = %q, want the placeholder %q", got, placeholder)
	}
	// The header's documented one-liner, run as written.
	header := string(plain[:bytes.Index(plain, []byte("\napiVersion"))])
	if !strings.Contains(header, "sed 's|"+placeholder+"|https://video.example.com/serviceapis|' install.yaml") {
		t.Errorf("the installer's header does not show how to set the URL:\n%s", header)
	}
	substituted := bytes.ReplaceAll(plain, []byte(placeholder), []byte("https://video.example.com/serviceapis"))
	if got := baseURL(t, substituted); got != "https://video.example.com/serviceapis" {
		t.Errorf("after the substitution VIDEO_SERVICE_BASE_URL = %q", got)
	}
	if got := baseURL(t, buildInstaller(t, img, "https://video.example.com/serviceapis")); got != "https://video.example.com/serviceapis" {
		t.Errorf("with SERVICE_BASE_URL, VIDEO_SERVICE_BASE_URL = %q", got)
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(root, "hack", "build-installer.sh"), os.Getenv("KUSTOMIZE"), img,
		filepath.Join(t.TempDir(), "install.yaml"), "video.example.com")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "SERVICE_BASE_URL") {
		t.Errorf("a SERVICE_BASE_URL without a scheme must be refused naming it, got %v: %s", err, out)
	}
}

// TestChartInstallerAndMonitoringApplyToAPIServer applies each rendering a platform team would
// install to a real API server with --dry-run=server: the chart with its default and its full
// values, dist/install.yaml, and config/monitoring. The Prometheus Operator's CRDs are installed
// first, so that the ServiceMonitor and the PrometheusRule are validated against their schemas.
func TestChartInstallerAndMonitoringApplyToAPIServer(t *testing.T) {
	testutil.APIServer(t)
	renderings := map[string][]byte{
		"chart, default values": helmTemplate(t),
		"chart, full values":    helmTemplate(t, "--values", fullValuesFile),
		"install.yaml":          buildInstaller(t, "registry.example.com/video-operator:v0.1.0"),
		"config/monitoring":     kustomizeBuild(t, filepath.Join(root, "config", "monitoring")),
	}

	env := &envtest.Environment{
		CRDInstallOptions: envtest.CRDInstallOptions{
			Paths:              []string{filepath.Join(root, "test", "testdata", "prometheus-operator-crds")},
			ErrorIfPathMissing: true,
		},
	}
	if _, err := env.Start(); err != nil {
		t.Fatalf("starting envtest (run the tests through 'make test', which provides KUBEBUILDER_ASSETS): %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	if len(env.CRDs) != 2 {
		t.Fatalf("installed %d Prometheus Operator CRDs, want 2 (ServiceMonitor, PrometheusRule)", len(env.CRDs))
	}
	user, err := env.AddUser(envtest.User{Name: "installer", Groups: []string{"system:masters"}}, nil)
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
	apply := func(t *testing.T, input []byte, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), kubectl(t), append([]string{"--kubeconfig", kubeconfig, "apply", "--server-side", "-f", "-"}, args...)...)
		cmd.Stdin = bytes.NewReader(input)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl apply %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	// A dry run creates nothing, so the namespace the objects go to is created for real, as
	// `helm install --create-namespace` or the installer's own Namespace would.
	// The full values watch team-a and team-b, where the manager gets its Roles: the namespaces
	// must exist first (docs: values.yaml, watchNamespaces).
	// The full values put the ServiceMonitor in Prometheus's namespace, monitoring.
	for _, ns := range []string{namespace, "team-a", "team-b", "monitoring"} {
		apply(t, []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n"))
	}

	for name, rendered := range renderings {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, rendered)
			if len(objs) == 0 {
				t.Fatal("renders nothing")
			}
			out := apply(t, rendered, "--dry-run=server")
			if got := strings.Count(out, "(server dry run)"); got != len(objs) {
				t.Errorf("the dry run applied %d objects, want %d:\n%s", got, len(objs), out)
			}
		})
	}
}
