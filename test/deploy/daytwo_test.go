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
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// previousRelease is version 0.1.0, as docs/reliability.md ("The commits") names it: the merge
// of the release branch into main, with the chart's version 0.1.0.
const previousRelease = "7fd0fa8"

// releaseChart extracts dist/chart of previousRelease from the clone's history and returns its path.
func releaseChart(t *testing.T) string {
	t.Helper()
	commit := previousRelease
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "bash", "-euo", "pipefail", "-c", "git archive "+commit+" dist/chart | tar -x -C "+dir)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("extracting dist/chart of commit %s (version 0.1.0) from the clone: %v\n%s\n"+
			"the test needs the clone's full history (git fetch --unshallow)", commit, err, out)
	}
	return filepath.Join(dir, "dist", "chart")
}

// docsShell runs shell scripts as the docs' reader would: helm and kubectl on PATH, the
// API server's admin kubeconfig, and a Helm home of the test's own.
type docsShell struct {
	t   *testing.T
	bin string
	env []string
}

func newDocsShell(t *testing.T, kubeconfig string) *docsShell {
	t.Helper()
	bin := t.TempDir()
	for name, target := range map[string]string{"kubectl": kubectl(t), "helm": helm(t)} {
		abs, err := filepath.Abs(target)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	return &docsShell{t: t, bin: bin, env: append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+kubeconfig, "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)}
}

// withManager puts this tree's cmd/manager on the shell's PATH as `manager`, the release asset
// docs/release.md runs from a workstation (its uninstall mode, --release-finalizers).
func (s *docsShell) withManager() {
	s.t.Helper()
	build := exec.CommandContext(s.t.Context(), "go", "build", "-o", filepath.Join(s.bin, "manager"), "./cmd/manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		s.t.Fatalf("go build ./cmd/manager: %v\n%s", err, out)
	}
}

// rollBackTo010 runs docs/release.md "Back to 0.1.0", as written, for release, with previous (the
// 0.1.0 chart) for video-operator-0.1.0.tgz. values is the script that writes values-0.1.0.yaml,
// the values 0.1.0 ran with, as the page says to take them. The shell needs withManager.
func rollBackTo010(t *testing.T, sh *docsShell, release, values, previous string) {
	t.Helper()
	block := docBlock(t, "release.md", "#### Back to 0.1.0")
	for _, want := range []string{"RELEASE=video-operator NAMESPACE=video-operator-system", "manager --release-finalizers",
		"video-operator-0.1.0.tgz", "-f values-0.1.0.yaml", "crds.install=false"} {
		if !strings.Contains(block, want) {
			t.Fatalf("docs/release.md \"Back to 0.1.0\" changed (no %q); this test runs it:\n%s", want, block)
		}
	}
	script := strings.Replace(block, "RELEASE=video-operator ", "RELEASE="+release+" ", 1)
	script = strings.ReplaceAll(script, "video-operator-0.1.0.tgz", previous)
	t.Logf("%s\n%s\n%s", values, script, sh.must(values+"\n"+script))
}

// run runs script and returns its combined output and error.
func (s *docsShell) run(script string) (string, error) {
	cmd := exec.CommandContext(s.t.Context(), "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = s.t.TempDir(), s.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// must runs script and fails the test when it fails.
func (s *docsShell) must(script string) string {
	s.t.Helper()
	out, err := s.run(script)
	if err != nil {
		s.t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return out
}

// mustOnceServed runs script like must, again while the API server answers that the kind of a
// CRD just created is not served yet: the approval's mutating policies need the kind's schema,
// which the API server publishes a moment after the CRD (docs/approval.md "Kubernetes versions":
// "write it again"). Any other failure fails at once.
func (s *docsShell) mustOnceServed(script string) string {
	s.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := s.run(script)
		if err == nil {
			return out
		}
		if !strings.Contains(out, "There can be a delay between when CustomResourceDefinitions are created and when they are available") ||
			time.Now().After(deadline) {
			s.t.Fatalf("%s: %v\n%s", script, err, out)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// docLine returns the one line of the sh block after heading in a docs page that starts with
// prefix, with its continuation lines joined.
func docLine(t *testing.T, page, heading, prefix string) string {
	t.Helper()
	block := strings.ReplaceAll(docBlock(t, page, heading), "\\\n", " ")
	var found []string
	for line := range strings.SplitSeq(block, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), prefix) {
			found = append(found, strings.Join(strings.Fields(line), " "))
		}
	}
	if len(found) != 1 {
		t.Fatalf("docs/%s %q: want one line starting with %q, got %q", page, heading, prefix, found)
	}
	return found[0]
}

// renderChargeMark reports whether the VideoRender CRD's schema knows status.chargeMark, a
// field added after 0.1.0.
func renderChargeMark(t *testing.T, c client.Client) bool {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: "videorenders.video.videoops.io"}, crd); err != nil {
		t.Fatal(err)
	}
	_, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["chargeMark"]
	return ok
}

// leftBehind lists the objects of every kind the chart renders that still carry the release's
// label app.kubernetes.io/instance, and Helm's own release records, as "Kind/namespace/name",
// with " (terminating)" for one being deleted.
func leftBehind(t *testing.T, cfg *rest.Config, releaseName string, kinds []schema.GroupVersionKind) []string {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	list := func(gvk schema.GroupVersionKind, labels client.MatchingLabels) {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(t.Context(), l, labels); err != nil {
			t.Fatalf("listing %s: %v", gvk.Kind, err)
		}
		for _, o := range l.Items {
			s := gvk.Kind + "/" + o.GetNamespace() + "/" + o.GetName()
			if o.GetDeletionTimestamp() != nil {
				s += " (terminating)"
			}
			out = append(out, s)
		}
	}
	for _, gvk := range kinds {
		list(gvk, client.MatchingLabels{"app.kubernetes.io/instance": releaseName})
	}
	list(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, client.MatchingLabels{"owner": "helm", "name": releaseName})
	return out
}

// chartKinds returns the kinds a rendering holds.
func chartKinds(t *testing.T, rendered []byte) []schema.GroupVersionKind {
	t.Helper()
	seen := map[schema.GroupVersionKind]bool{}
	var out []schema.GroupVersionKind
	for _, o := range decode(t, rendered) {
		if gvk := o.GroupVersionKind(); !seen[gvk] {
			seen[gvk] = true
			out = append(out, gvk)
		}
	}
	return out
}

// TestHelmUpgradeFromThePreviousRelease is day two on a real API server: `helm install` of the
// 0.1.0 chart, then docs/release.md's upgrade command to this tree's chart. `--reuse-values`,
// the command the page gave before, fails on that upgrade (a value the new chart added is nil);
// the documented `--reset-then-reuse-values` succeeds. Then the rollbacks of the page: a plain
// `helm rollback` drops a field of the newer CRDs, and the documented rollback (the previous
// chart with crds.install=false) keeps it, and going forward again with the page's flags works.
// Last, `helm uninstall` leaves nothing of the release but the CRDs it keeps on purpose.
//
// envtest runs no pods: no manager starts, so no video holds the operator's finalizer, and the
// pre-delete hook Job would never run: the uninstall passes --no-hooks. What the hook does, and
// that it leaves nothing stuck with a manager that did put finalizers, is
// TestUninstallLeavesNothingStuck, with the manager as a process.
func TestHelmUpgradeFromThePreviousRelease(t *testing.T) {
	cfg, kubeconfig := startAdminEnvtest(t, "platform-admin")
	sh := newDocsShell(t, kubeconfig)
	previous := releaseChart(t)
	current, err := filepath.Abs(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	t.Log(sh.must("helm install video-operator " + previous + " -n video-operator-system --create-namespace --set service.baseURL=" + serviceBaseURL))
	if renderChargeMark(t, c) {
		t.Fatal("the 0.1.0 CRDs already know status.chargeMark: the rollback checks below test nothing")
	}

	// The page's command, with the tree's chart for the release's archive.
	upgrade := docLine(t, "release.md", "## Upgrade", "helm upgrade video-operator video-operator-x.y.z.tgz")
	if !strings.Contains(upgrade, "--reset-then-reuse-values") {
		t.Fatalf("docs/release.md's upgrade command %q does not pass --reset-then-reuse-values", upgrade)
	}
	upgrade = strings.Replace(upgrade, "video-operator-x.y.z.tgz", current, 1)

	out, err := sh.run(strings.Replace(upgrade, "--reset-then-reuse-values", "--reuse-values", 1))
	if err == nil || !strings.Contains(out, "releaseFinalizers") {
		t.Fatalf("the upgrade from 0.1.0 with --reuse-values: %v\n%s\nwant the failure the page quotes", err, out)
	}
	t.Logf("with --reuse-values: %s", strings.TrimSpace(out))

	out = sh.must(upgrade)
	t.Logf("%s\n%s", upgrade, out)
	status := sh.must("helm status video-operator -n video-operator-system")
	if !strings.Contains(status, "STATUS: deployed") {
		t.Errorf("after the upgrade:\n%s", status)
	}
	args := sh.must("kubectl -n video-operator-system get deploy video-operator-controller-manager -o jsonpath='{.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].args}'")
	if !strings.Contains(args, ":v0.2.0-dev") || !strings.Contains(args, "--poll-share") {
		t.Errorf("the upgraded Deployment runs %s, want this tree's image and flags", args)
	}
	if !renderChargeMark(t, c) {
		t.Fatal("the upgrade did not apply this tree's CRDs")
	}

	// A plain rollback takes the CRDs back to 0.1.0's schema, as the page warns.
	sh.must("helm rollback video-operator 1 -n video-operator-system")
	if renderChargeMark(t, c) {
		t.Error("helm rollback kept the newer CRDs: docs/release.md says it rolls them back")
	}
	sh.must(upgrade + " --set crds.install=true")

	// The page's rollback to 0.1.0: the previous chart with the values 0.1.0 ran with (those
	// of revision 1, from Helm's history), CRDs left as they are.
	sh.withManager()
	rollBackTo010(t, sh, "video-operator",
		"helm get values video-operator -n video-operator-system --revision 1 -o yaml > values-0.1.0.yaml", previous)
	if !renderChargeMark(t, c) {
		t.Error("the documented rollback rolled the CRDs back")
	}
	image := sh.must("kubectl -n video-operator-system get deploy video-operator-controller-manager -o jsonpath='{.spec.template.spec.containers[0].image}'")
	if !strings.HasSuffix(image, ":v0.1.0") {
		t.Errorf("after the documented rollback the manager runs %s, want v0.1.0", image)
	}
	// Forward again, as the page says: the CRDs are the release's again.
	sh.must(upgrade + " --set crds.install=true")
	crdOwner := sh.must("kubectl get crd videorenders.video.videoops.io -o jsonpath='{.metadata.annotations.meta\\.helm\\.sh/release-name} {.metadata.labels.helm\\.sh/chart}'")
	if crdOwner != "video-operator video-operator-0.2.0-dev" {
		t.Errorf("after going forward again the CRD is %q's, want the release's at 0.2.0-dev", crdOwner)
	}

	kinds := chartKinds(t, helmTemplate(t))
	t.Log(sh.must("helm uninstall video-operator -n video-operator-system --no-hooks"))
	var stuck []string
	for _, o := range leftBehind(t, cfg, "video-operator", kinds) {
		if !strings.HasPrefix(o, "CustomResourceDefinition/") || strings.HasSuffix(o, "(terminating)") {
			stuck = append(stuck, o)
		}
	}
	if len(stuck) > 0 {
		t.Errorf("helm uninstall left %v", stuck)
	}
	if !renderChargeMark(t, c) {
		t.Error("the uninstall removed the CRDs, which crds.keep keeps")
	}
}

// TestScaleOutCommands runs docs/scale-out.md's two `helm install`s as written (the chart of the
// tree for dist/chart) on a real API server whose tenant namespaces exist: both install, the
// second without the CRDs, which stay the first release's. A video in a namespace of each group;
// then `helm uninstall tenants-a` (--no-hooks: envtest runs no pods, see
// TestHelmUpgradeFromThePreviousRelease) leaves the CRDs, both videos and every object of
// tenants-b, and nothing of tenants-a.
func TestScaleOutCommands(t *testing.T) {
	cfg, kubeconfig := startAdminEnvtest(t, "platform-admin")
	sh := newDocsShell(t, kubeconfig)
	chart, err := filepath.Abs(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team-a", "team-b", "team-c"} {
		sh.must("kubectl create namespace " + ns)
	}
	commands := docBlock(t, "scale-out.md", "## One release per group of namespaces")
	if strings.Count(commands, "helm install") != 2 || !strings.Contains(commands, "dist/chart") {
		t.Fatalf("docs/scale-out.md's commands changed; this test runs two helm installs of dist/chart:\n%s", commands)
	}
	t.Logf("%s%s", commands, sh.must(strings.ReplaceAll(commands, "dist/chart", chart)))

	crdOwner := sh.must("kubectl get crd videorenders.video.videoops.io -o jsonpath='{.metadata.annotations.meta\\.helm\\.sh/release-name}'")
	if crdOwner != "tenants-a" {
		t.Errorf("the CRDs belong to %q, want tenants-a (the release that installs them)", crdOwner)
	}
	for _, ns := range []string{"team-a", "team-c"} {
		sh.mustOnceServed(`kubectl apply -f - <<'EOF'
apiVersion: video.videoops.io/v1alpha1
kind: VideoRender
metadata: {name: video, namespace: ` + ns + `}
spec:
  storyboard:
    videoName: A video of one group
    scenes: [{story: "A video that outlives the other group's release."}]
EOF`)
	}
	kinds := chartKinds(t, helmTemplate(t))
	before := leftBehind(t, cfg, "tenants-b", kinds)
	if len(before) == 0 {
		t.Fatal("tenants-b has no objects: the check below tests nothing")
	}

	t.Log(sh.must("helm uninstall tenants-a -n video-operator-system --no-hooks"))
	var left []string
	for _, o := range leftBehind(t, cfg, "tenants-a", kinds) {
		if !strings.HasPrefix(o, "CustomResourceDefinition/") || strings.HasSuffix(o, "(terminating)") {
			left = append(left, o)
		}
	}
	if len(left) > 0 {
		t.Errorf("uninstalling tenants-a left %v", left)
	}
	if after := leftBehind(t, cfg, "tenants-b", kinds); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("uninstalling tenants-a changed tenants-b's objects:\n before %v\n after  %v", before, after)
	}
	videos := sh.must("kubectl get videorenders -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name} {end}'")
	if strings.TrimSpace(videos) != "team-a/video team-c/video" {
		t.Errorf("after uninstalling tenants-a the videos are %q, want both groups'", videos)
	}
	if status := sh.must("helm status tenants-b -n video-operator-system"); !strings.Contains(status, "STATUS: deployed") {
		t.Errorf("tenants-b after uninstalling tenants-a:\n%s", status)
	}
}

// TestCRDsApartFromEveryRelease runs docs/scale-out.md "CRDs apart from every release" as
// written, crds.yaml being config/crd rendered as make release renders it: the CRDs belong to no
// release, both releases install without them, and uninstalling both leaves the CRDs and the
// videos.
func TestCRDsApartFromEveryRelease(t *testing.T) {
	cfg, kubeconfig := startAdminEnvtest(t, "platform-admin")
	sh := newDocsShell(t, kubeconfig)
	chart, err := filepath.Abs(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	crds := filepath.Join(t.TempDir(), "crds.yaml")
	if err := os.WriteFile(crds, kustomizeBuild(t, filepath.Join(root, "config", "crd")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team-a", "team-b", "team-c"} {
		sh.must("kubectl create namespace " + ns)
	}
	commands := docBlock(t, "scale-out.md", "## CRDs apart from every release")
	if !strings.Contains(commands, "kubectl apply --server-side --force-conflicts -f crds.yaml") || strings.Count(commands, "crds.install=false") != 2 {
		t.Fatalf("docs/scale-out.md's commands changed; this test applies crds.yaml and installs two releases without CRDs:\n%s", commands)
	}
	script := strings.ReplaceAll(strings.ReplaceAll(commands, "dist/chart", chart), "-f crds.yaml", "-f "+crds)
	t.Logf("%s%s", commands, sh.must(script))

	owner := sh.must("kubectl get crd -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.annotations.meta\\.helm\\.sh/release-name} {end}'")
	if strings.TrimSpace(owner) != "videobudgets.video.videoops.io= videorenders.video.videoops.io= videostoryboards.video.videoops.io=" {
		t.Errorf("the CRDs applied apart belong to a release: %s", owner)
	}
	sh.mustOnceServed(`kubectl apply -f - <<'EOF'
apiVersion: video.videoops.io/v1alpha1
kind: VideoRender
metadata: {name: video, namespace: team-c}
spec:
  storyboard:
    videoName: A video that outlives every release
    scenes: [{story: "A video that outlives every release."}]
EOF`)
	kinds := chartKinds(t, helmTemplate(t))
	for _, r := range []string{"tenants-a", "tenants-b"} {
		sh.must("helm uninstall " + r + " -n video-operator-system --no-hooks")
		if left := leftBehind(t, cfg, r, kinds); len(left) > 0 {
			t.Errorf("uninstalling %s left %v", r, left)
		}
	}
	if got := sh.must("kubectl get videorenders -n team-c -o name"); strings.TrimSpace(got) != "videorender.video.videoops.io/video" {
		t.Errorf("after uninstalling both releases the videos are %q", got)
	}
}
