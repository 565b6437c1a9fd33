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
	"path/filepath"
	"strings"
	"testing"
)

// TestDocumentedRollbackAfterTheMonitoringSetup is day two as a platform team lives it, on a real
// API server: the 0.1.0 chart installed, docs/release.md's upgrade to this tree's chart, then
// docs/monitoring.md's command for "a Prometheus that reads no files and verifies what it
// scrapes" (metrics.certSecret, the ServiceMonitor's authorization Secret and CA: values that
// came after 0.1.0). Then the new release misbehaves, and the on-call runs docs/release.md's
// rollback, "the chart of the version to go back to" with --reset-then-reuse-values and
// crds.install=false. --reset-then-reuse-values carries every value set on the release into the
// 0.1.0 chart, whose schema refuses each key it does not know: the documented rollback fails, at
// the moment it is needed, and the page says nothing of it (it says so for a value removed by an
// upgrade, not for the values a rollback carries back).
func TestDocumentedRollbackAfterTheMonitoringSetup(t *testing.T) {
	_, kubeconfig := startAdminEnvtest(t, "platform-admin")
	sh := newDocsShell(t, kubeconfig)
	previous := releaseChart(t)
	current, err := filepath.Abs(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := filepath.Abs(filepath.Join(root, "test", "testdata", "prometheus-operator-crds"))
	if err != nil {
		t.Fatal(err)
	}
	// The Prometheus Operator's CRDs and Prometheus's namespace, as the page assumes.
	sh.must("kubectl apply --server-side -f " + crds + "/monitoring.coreos.com_servicemonitors.yaml -f " + crds +
		"/monitoring.coreos.com_prometheusrules.yaml && kubectl create namespace monitoring")

	sh.must("helm install video-operator " + previous + " -n video-operator-system --create-namespace --set service.baseURL=" + serviceBaseURL)
	upgrade := strings.Replace(docLine(t, "release.md", "## Upgrade", "helm upgrade video-operator video-operator-x.y.z.tgz"),
		"video-operator-x.y.z.tgz", current, 1)
	sh.must(upgrade)

	monitoring := docBlock(t, "monitoring.md", "## With the Helm chart")
	if !strings.Contains(monitoring, "metrics.certSecret") || !strings.Contains(monitoring, "--reset-then-reuse-values") {
		t.Fatalf("docs/monitoring.md's verified-scrape command changed; this test runs it:\n%s", monitoring)
	}
	t.Logf("%s%s", monitoring, sh.must(strings.ReplaceAll(monitoring, "dist/chart", current)))

	// The page's rollback of any version starts from the values that version ran with, never
	// from the release's values carried back (the older schema refuses the keys it lacks).
	rollback := docLine(t, "release.md", "### Rolling back", "helm upgrade video-operator video-operator-x.y.z.tgz")
	if strings.Contains(rollback, "--reset-then-reuse-values") || strings.Contains(rollback, "--reuse-values") ||
		!strings.Contains(rollback, "--reset-values -f values-x.y.z.yaml") {
		t.Errorf("docs/release.md's rollback %q carries the release's values into the older chart", rollback)
	}
	// Back to 0.1.0 as the page says, its values from Helm's history: revision 1 installed 0.1.0.
	sh.withManager()
	rollBackTo010(t, sh, "video-operator",
		"helm get values video-operator -n video-operator-system --revision 1 -o yaml > values-0.1.0.yaml", previous)
	image := sh.must("kubectl -n video-operator-system get deploy video-operator-controller-manager -o jsonpath='{.spec.template.spec.containers[0].image}'")
	if !strings.HasSuffix(image, ":v0.1.0") {
		t.Errorf("after the documented rollback the manager runs %s, want v0.1.0", image)
	}
}

// leaseOf returns the leader-election id the manager Deployment of a release passes: its
// --leader-election-id, or the manager's default when it passes only --leader-elect.
func leaseOf(t *testing.T, sh *docsShell, deployment string) string {
	t.Helper()
	args := sh.must("kubectl -n video-operator-system get deploy " + deployment + " -o jsonpath='{.spec.template.spec.containers[0].args}'")
	if !strings.Contains(args, "--leader-elect") {
		return "(no leader election)"
	}
	for _, a := range strings.Split(strings.Trim(args, "[]"), ",") {
		if id, ok := strings.CutPrefix(strings.Trim(a, `"`), "--leader-election-id="); ok {
			return id
		}
	}
	return "video-operator.video.videoops.io (the manager's default)"
}

// TestDocumentedRollbackOfAScaleOut: docs/scale-out.md's two releases, as written, each hold a
// Lease of their own. The version misbehaves and the platform team rolls both releases back with
// docs/release.md's command ("the chart of the version to go back to", now "Back to 0.1.0", which
// passes each release's id through extraArgs). The 0.1.0 chart has no
// leaderElection.id and passes no --leader-election-id: both managers, in one namespace, then
// elect with the same Lease, video-operator.video.videoops.io. Only one leads; the other group's
// videos are never reconciled again (not even their deletion: the charge finalizer waits), and
// VideoOperatorNoLeader stays silent because the Lease is held (docs/scale-out.md says so of a
// shared id). The rollback itself succeeds and nothing says the split is gone.
func TestDocumentedRollbackOfAScaleOut(t *testing.T) {
	_, kubeconfig := startAdminEnvtest(t, "platform-admin")
	sh := newDocsShell(t, kubeconfig)
	previous := releaseChart(t)
	chart, err := filepath.Abs(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team-a", "team-b", "team-c"} {
		sh.must("kubectl create namespace " + ns)
	}
	commands := docBlock(t, "scale-out.md", "## One release per group of namespaces")
	sh.must(strings.ReplaceAll(commands, "dist/chart", chart))
	a, b := leaseOf(t, sh, "tenants-a-video-operator-controller-manager"), leaseOf(t, sh, "tenants-b-video-operator-controller-manager")
	if a == b {
		t.Fatalf("before the rollback both releases elect with %s: the check below tests nothing", a)
	}

	// docs/release.md "Back to 0.1.0" for each release, one after the other. They were installed
	// after 0.1.0, so Helm's history has no 0.1.0 values: theirs, all of which 0.1.0 knows.
	sh.withManager()
	for _, release := range []string{"tenants-a", "tenants-b"} {
		rollBackTo010(t, sh, release, "helm get values "+release+" -n video-operator-system -o yaml > values-0.1.0.yaml", previous)
		image := sh.must("kubectl -n video-operator-system get deploy " + release + "-video-operator-controller-manager -o jsonpath='{.spec.template.spec.containers[0].image}'")
		if !strings.HasSuffix(image, ":v0.1.0") {
			t.Errorf("after the documented rollback %s runs %s, want v0.1.0", release, image)
		}
	}
	a, b = leaseOf(t, sh, "tenants-a-video-operator-controller-manager"), leaseOf(t, sh, "tenants-b-video-operator-controller-manager")
	if a == b {
		t.Errorf("after docs/release.md's rollback both scale-out releases elect with the Lease %s in one namespace: "+
			"only one leads, and the other group's videos stop being reconciled, with no alert", a)
	}
}
