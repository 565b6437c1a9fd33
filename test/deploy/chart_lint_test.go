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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// helmOutput runs helm with args and returns its combined output and error, for the runs that
// must fail.
func helmOutput(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), helm(t), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestChartLintDefaultsFailReadablyAndCIValuesPass is what a chart repository's CI runs (helm lint,
// and ct lint once per ci/*-values.yaml). The defaults used to fail with a regex dump
// ("” does not match pattern ...") and there was no ci/ values file: now the defaults fail
// naming the missing value, and every ci/ values file lints clean with --strict.
func TestChartLintDefaultsFailReadablyAndCIValuesPass(t *testing.T) {
	out, err := helmOutput(t, "lint", chartDir)
	if err == nil {
		t.Errorf("helm lint with the default values passed; the chart cannot install without service.baseURL:\n%s", out)
	}
	if !strings.Contains(out, "missing property 'baseURL'") || strings.Contains(out, "does not match pattern") {
		t.Errorf("helm lint with the default values must name the missing service.baseURL, without a regex:\n%s", out)
	}
	t.Logf("helm lint %s:\n%s", chartDir, out)

	ci, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ci) == 0 {
		t.Fatal("dist/chart/ci/ has no *-values.yaml: chart-testing (ct lint) has nothing to render")
	}
	for _, f := range ci {
		out := runHelm(t, "lint", "--strict", chartDir, "--values", f)
		if !strings.Contains(string(out), "0 chart(s) failed") {
			t.Errorf("helm lint --strict --values %s:\n%s", f, out)
		}
		t.Logf("helm lint --strict --values %s:\n%s", filepath.Base(f), out)
	}
}

// TestChartRefusesPlainHTTPBaseURL: an in-cluster http:// base URL used to render, then the
// manager refused it at start (crash loop) unless --allow-insecure-service-url. Now the chart
// refuses it, saying what to do, unless service.allowInsecureURL is set, which passes the flag.
func TestChartRefusesPlainHTTPBaseURL(t *testing.T) {
	const plain = "http://video-service-sim.video-sim.svc:8080/serviceapis"
	out := helmTemplateFails(t, "--set", "service.baseURL="+plain)
	if !strings.Contains(out, "is plain http://") || !strings.Contains(out, "service.allowInsecureURL=true") {
		t.Errorf("want the chart to refuse %s naming service.allowInsecureURL:\n%.800s", plain, out)
	}
	args := func(extra ...string) []string {
		var d appsv1.Deployment
		typed(t, decode(t, helmTemplate(t, extra...)), "Deployment", "", &d)
		return d.Spec.Template.Spec.Containers[0].Args
	}
	if a := args("--set", "service.baseURL="+plain, "--set", "service.allowInsecureURL=true"); !slices.Contains(a, "--allow-insecure-service-url") {
		t.Errorf("service.allowInsecureURL=true must pass --allow-insecure-service-url: %v", a)
	}
	// The manager accepts http on the loopback interface without the flag, and so does the chart.
	if a := args("--set", "service.baseURL=http://127.0.0.1:8080/serviceapis"); slices.Contains(a, "--allow-insecure-service-url") {
		t.Errorf("a loopback URL needs no insecure flag: %v", a)
	}
	if a := args(); slices.Contains(a, "--allow-insecure-service-url") {
		t.Errorf("an https URL must not turn the insecure flag on: %v", a)
	}
	// The explicit empty value, which the schema lets through to the templates, is refused there
	// with the same words.
	if out := helmTemplateFails(t, "--set", "service.baseURL="); !strings.Contains(out, "service.baseURL is required") {
		t.Errorf("want an empty service.baseURL refused as required:\n%.800s", out)
	}
}

// TestChartWatchNamespacesSetForms: values.yaml offered "team-a,team-b", which `--set
// watchNamespaces=team-a,team-b` breaks (Helm reads the comma as the next value). The forms the
// chart's README shows for --set render both namespaces; the bare one still fails, in Helm.
func TestChartWatchNamespacesSetForms(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{"watchNamespaces={team-a,team-b}", `watchNamespaces=team-a\,team-b`} {
		if !strings.Contains(string(readme), form) {
			t.Errorf("the chart's README does not show --set '%s'", form)
		}
		cm := decode(t, helmTemplate(t, "--set", form))
		var got string
		for _, o := range cm {
			if o.GetKind() == "ConfigMap" && o.GetName() == release+"-manager-config" {
				got, _ = o.Object["data"].(map[string]any)["VIDEO_WATCH_NAMESPACES"].(string)
			}
		}
		if got != "team-a,team-b" {
			t.Errorf("--set '%s': VIDEO_WATCH_NAMESPACES = %q, want team-a,team-b", form, got)
		}
	}
	if out, err := helmOutput(t, append([]string{"template", release, chartDir, "--set", "watchNamespaces=team-a,team-b"}, withBaseURL...)...); err == nil ||
		!strings.Contains(out, `key "team-b" has no value`) {
		t.Errorf("Helm's reading of a bare comma changed (update the docs): %v\n%s", err, out)
	}
}

// TestChartLeaseIDPerRelease: the leader-election id used to be fixed, so two releases in one
// namespace (two groups of tenants) shared one Lease and the second never reconciled. Each
// release now derives its own from its full name; a release named video-operator keeps the id
// of earlier charts and of config/default, and leaderElection.id overrides it.
func TestChartLeaseIDPerRelease(t *testing.T) {
	leaseID := func(release string, extra ...string) string {
		t.Helper()
		out := runHelm(t, append(append([]string{"template", release, chartDir, "--namespace", namespace}, withBaseURL...), extra...)...)
		var d appsv1.Deployment
		typed(t, decode(t, out), "Deployment", "", &d)
		var ids []string
		for _, a := range d.Spec.Template.Spec.Containers[0].Args {
			if v, ok := strings.CutPrefix(a, "--leader-election-id="); ok {
				ids = append(ids, v)
			}
		}
		if len(ids) != 1 {
			t.Fatalf("release %s: want one --leader-election-id, got %v", release, ids)
		}
		return ids[0]
	}
	a := leaseID("tenants-a", "--set", "watchNamespaces={team-a}")
	b := leaseID("tenants-b", "--set", "watchNamespaces={team-b}")
	t.Logf("release tenants-a: lease %s; release tenants-b: lease %s", a, b)
	if a == b {
		t.Errorf("two releases in one namespace share the lease %s: the second would never lead", a)
	}
	if got := leaseID(release); got != "video-operator.video.videoops.io" {
		t.Errorf("release %s: lease %s, want the id earlier charts used (an upgrade keeps its Lease)", release, got)
	}
	if got := leaseID("tenants-a", "--set", "leaderElection.id=kept.example.com"); got != "kept.example.com" {
		t.Errorf("leaderElection.id: lease %s, want kept.example.com", got)
	}
}

// TestChartUninstallHook: `helm uninstall` used to delete the manager and leave every render of a
// namespace with a budget holding the charge finalizer, so deleting it, its namespace or the CRDs
// hung. The chart now runs the manager's uninstall mode as a pre-delete hook, over the same
// namespaces and lease as the release's manager, with a Role that lets it scale only that
// Deployment; uninstall.releaseFinalizers=false leaves it out.
func TestChartUninstallHook(t *testing.T) {
	render := func(extra ...string) (appsv1.Deployment, *batchv1.Job, *rbacv1.Role) {
		t.Helper()
		var d appsv1.Deployment
		var job *batchv1.Job
		var role *rbacv1.Role
		objs := decode(t, runHelm(t, append(append([]string{"template", "tenants-a", chartDir, "--namespace", namespace}, withBaseURL...), extra...)...))
		typed(t, objs, "Deployment", "", &d)
		for _, o := range objs {
			switch {
			case o.GetKind() == "Job":
				job = &batchv1.Job{}
				typed(t, []*unstructured.Unstructured{o}, "Job", o.GetName(), job)
			case o.GetKind() == "Role" && strings.HasSuffix(o.GetName(), "-uninstall"):
				role = &rbacv1.Role{}
				typed(t, []*unstructured.Unstructured{o}, "Role", o.GetName(), role)
			}
		}
		return d, job, role
	}
	d, job, role := render("--set", "watchNamespaces={team-a,team-b}")
	if job == nil || role == nil {
		t.Fatal("the chart renders no uninstall Job and Role")
	}
	if job.Annotations["helm.sh/hook"] != "pre-delete" || role.Annotations["helm.sh/hook"] != "pre-delete" {
		t.Errorf("the uninstall Job and Role must be pre-delete hooks: %v, %v", job.Annotations, role.Annotations)
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	flag := func(args []string, name string) string {
		for _, a := range args {
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				return v
			}
		}
		return ""
	}
	mgr := d.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{"--release-finalizers", "--leader-elect", "--stop-deployment=" + d.Name} {
		if !slices.Contains(args, want) {
			t.Errorf("the uninstall Job's args lack %s: %v", want, args)
		}
	}
	if got, want := flag(args, "--leader-election-id"), flag(mgr, "--leader-election-id"); got != want || got == "" {
		t.Errorf("the uninstall waits for lease %q, the manager holds %q", got, want)
	}
	if got := flag(args, "--watch-namespaces"); got != "team-a,team-b" {
		t.Errorf("the uninstall covers %q, want the manager's team-a,team-b", got)
	}
	if sa := job.Spec.Template.Spec.ServiceAccountName; sa != d.Spec.Template.Spec.ServiceAccountName {
		t.Errorf("the uninstall runs as %s, the manager as %s", sa, d.Spec.Template.Spec.ServiceAccountName)
	}
	if len(role.Rules) == 0 || !slices.Equal(role.Rules[0].ResourceNames, []string{d.Name}) {
		t.Errorf("the uninstall's Role must name only the manager's Deployment: %+v", role.Rules)
	}
	if _, job, role := render("--set", "uninstall.releaseFinalizers=false"); job != nil || role != nil {
		t.Error("uninstall.releaseFinalizers=false still renders the hook")
	}
}
