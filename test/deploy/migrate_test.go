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
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// docBlock returns the first ```sh block after heading in a docs page.
func docBlock(t *testing.T, page, heading string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/%s has no heading %q", page, heading)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatalf("docs/%s: no sh block after %q", page, heading)
	}
	block, _, _ = strings.Cut(block, "```")
	return block
}

// TestMoveToHelm: moving an installation made with install.yaml or kustomize to Helm used to fail
// on ownership ("invalid ownership metadata"), and nothing said how. The commands of
// docs/uninstall.md "Moving from install.yaml or kustomize to Helm" run here, as written, against
// a real API server holding config/default: afterwards Helm has installed the release over the
// same objects, CRDs included.
func TestMoveToHelm(t *testing.T) {
	cfg, kubeconfig := startAdminEnvtest(t, "platform-admin")
	dir := t.TempDir()
	install := kustomizeBuild(t, filepath.Join(root, "config", "default"))
	if err := os.WriteFile(filepath.Join(dir, "install.yaml"), install, 0o600); err != nil {
		t.Fatal(err)
	}
	// kubectl and helm as the page calls them, on PATH.
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
	chart, err := filepath.Abs(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kubeconfig,
		"HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	sh := func(script string) (string, error) {
		cmd := exec.CommandContext(t.Context(), "bash", "-euo", "pipefail", "-c", script)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := sh("kubectl apply --server-side -f install.yaml"); err != nil {
		t.Fatalf("applying config/default: %v\n%s", err, out)
	}

	helmInstall := "helm install video-operator " + chart + " -n video-operator-system --set service.baseURL=" + serviceBaseURL
	out, err := sh(helmInstall)
	if err == nil || !strings.Contains(out, "invalid ownership metadata") {
		t.Fatalf("helm install over config/default without the documented step: %v\n%s\nwant Helm's refusal, which the page quotes", err, out)
	}
	t.Logf("without the documented step: %s", strings.TrimSpace(out))

	steps := strings.ReplaceAll(docBlock(t, "uninstall.md", "## Moving from `install.yaml` or kustomize to Helm"), "dist/chart", chart)
	if !strings.Contains(steps, "helm install video-operator") {
		t.Fatalf("the page's commands do not install the release:\n%s", steps)
	}
	if out, err := sh(steps); err != nil {
		t.Fatalf("the page's commands failed: %v\n%s\n%s", err, steps, out)
	} else {
		t.Logf("the page's commands:\n%s%s", steps, out)
	}

	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range decode(t, install) {
		if o.GetKind() == "Namespace" || o.GetKind() == "ConfigMap" {
			continue // Helm renders neither: --create-namespace's, and the chart's unhashed ConfigMap
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(o), got); err != nil {
			t.Errorf("%s %s: %v", o.GetKind(), o.GetName(), err)
			continue
		}
		if got.GetAnnotations()["meta.helm.sh/release-name"] != "video-operator" || got.GetLabels()["helm.sh/chart"] == "" {
			t.Errorf("%s %s is not the release's after the move: labels %v", o.GetKind(), o.GetName(), got.GetLabels())
		}
	}
	if out, err := sh("helm status video-operator -n video-operator-system"); err != nil || !bytes.Contains([]byte(out), []byte("STATUS: deployed")) {
		t.Errorf("helm status: %v\n%s", err, out)
	}
}
