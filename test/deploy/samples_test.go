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

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/videoops/video-operator/internal/testutil"
)

// TestSamplesAsATenantPayNothing: a tenant bound to the roles docs/deploy.md gives tenants (and
// allowed to write Secrets, as a namespace's admin is) ran `kubectl apply -k config/samples/`:
// 7 paid renders and 2 previews were submitted within a second, and the tenant's real
// video-api-key Secret was overwritten by a placeholder. Applied so now, config/samples/ creates
// no video (nothing that could pay) and leaves the Secret as it was; the paid samples are in
// config/samples/paid/, which the tenant can apply on purpose and which holds no Secret either.
func TestSamplesAsATenantPayNothing(t *testing.T) {
	testutil.APIServer(t)
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest (run the tests through 'make test', which provides KUBEBUILDER_ASSETS): %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	if err := testutil.InstallPolicies(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const ns, tenant = "team-a", "tenant-a"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	key := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "video-api-key"},
		StringData: map[string]string{"apiKey": "the-tenants-real-key"},
	}
	if err := c.Create(ctx, key); err != nil {
		t.Fatal(err)
	}

	// The tenant's roles as docs/deploy.md gives them, plus Secrets, as the namespace's admin has
	// them (envtest runs no controller to aggregate the built-in edit role: a role of its own).
	secrets := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "secrets-writer"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"},
			Verbs: []string{"get", "list", "create", "update", "patch", "delete"}}},
	}
	if err := c.Create(ctx, secrets); err != nil {
		t.Fatal(err)
	}
	bindings := map[string]string{"secrets": secrets.Name}
	for _, role := range []string{"videorender_editor_role", "videostoryboard_editor_role", "videobudget_viewer_role"} {
		var cr rbacv1.ClusterRole
		for _, o := range decode(t, readFile(t, filepath.Join(root, "config", "rbac", role+".yaml"))) {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cr); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Create(ctx, &cr); err != nil {
			t.Fatal(err)
		}
		bindings[role] = cr.Name
	}
	for name, role := range bindings {
		if err := c.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.ReplaceAll(name, "_", "-")},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: tenant}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	user, err := env.AddUser(envtest.User{Name: tenant}, nil)
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
	asTenant := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, kubectl(t), append([]string{"--kubeconfig", kubeconfig, "-n", ns}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// The tenant could pay and could overwrite the key: what follows is the samples' doing.
	for _, verb := range []string{"create videorenders.video.videoops.io", "create videostoryboards.video.videoops.io", "update secrets"} {
		if out, err := asTenant(append([]string{"auth", "can-i"}, strings.Fields(verb)...)...); err != nil || strings.TrimSpace(out) != "yes" {
			t.Fatalf("the tenant may not %s (%v: %s): the test would prove nothing", verb, err, out)
		}
	}

	// The budget is the namespace admin's: the tenant's apply of it is refused, and that is all
	// there is to apply.
	out, _ := asTenant("apply", "-k", filepath.Join(root, "config", "samples"))
	if !strings.Contains(out, "forbidden") || !strings.Contains(out, "videobudgets") {
		t.Errorf("kubectl apply -k config/samples/ as a tenant: want the budget refused, got:\n%s", out)
	}
	videos := func() int {
		n := 0
		for _, kind := range []string{"VideoRenderList", "VideoStoryboardList", "VideoBudgetList"} {
			l := &unstructured.UnstructuredList{}
			l.SetAPIVersion("video.videoops.io/v1alpha1")
			l.SetKind(kind)
			if err := c.List(ctx, l); err != nil {
				t.Fatal(err)
			}
			n += len(l.Items)
		}
		return n
	}
	if n := videos(); n != 0 {
		t.Errorf("kubectl apply -k config/samples/ as a tenant created %d objects of the operator: only what pays nothing may be there, and the tenant may create none", n)
	}
	checkKey := func(after string) {
		t.Helper()
		var got corev1.Secret
		if err := c.Get(ctx, client.ObjectKeyFromObject(key), &got); err != nil {
			t.Fatal(err)
		}
		if string(got.Data["apiKey"]) != "the-tenants-real-key" || got.ResourceVersion != key.ResourceVersion {
			t.Errorf("after %s the tenant's Secret is %q (resourceVersion %s, was %s), want it untouched",
				after, got.Data["apiKey"], got.ResourceVersion, key.ResourceVersion)
		}
	}
	checkKey("kubectl apply -k config/samples/")

	// The paid samples, on purpose: the tenant may apply them (server dry run: nothing is
	// reconciled here), and they write no Secret.
	out, err = asTenant("apply", "--dry-run=server", "-k", filepath.Join(root, "config", "samples", "paid"))
	if err != nil || !strings.Contains(out, "videorender.video.videoops.io/text-story created (server dry run)") {
		t.Errorf("kubectl apply -k config/samples/paid/ as a tenant: %v\n%s", err, out)
	}
	if strings.Contains(out, "secret/") {
		t.Errorf("config/samples/paid/ writes a Secret:\n%s", out)
	}
	checkKey("kubectl apply -k config/samples/paid/")
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
