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
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/videoops/video-operator/internal/testutil"
)

// scopedEnv is an API server with the chart applied in namespace-scoped mode (watchNamespaces
// team-a,team-b), the namespaces team-a, team-b and team-c, and a kubeconfig of an administrator.
type scopedEnv struct {
	cfgClient  client.Client
	kubeconfig string
}

func startScoped(t *testing.T) scopedEnv {
	t.Helper()
	rendered := helmTemplate(t, "--set", "watchNamespaces={team-a,team-b}")
	cfg, kubeconfig := startAdminEnvtest(t, "platform-admin")
	apply := func(input []byte) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), kubectl(t), "--kubeconfig", kubeconfig, "apply", "--server-side", "-f", "-")
		cmd.Stdin = bytes.NewReader(input)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl apply: %v\n%s", err, out)
		}
	}
	for _, ns := range []string{namespace, "team-a", "team-b", "team-c"} {
		apply([]byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + ns + "\n"))
	}
	apply(rendered)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return scopedEnv{cfgClient: c, kubeconfig: kubeconfig}
}

// TestChartNamespaceScopedRBAC: with watchNamespaces set the manager used to keep cluster-wide
// get/list/watch on Secrets. Applied to a real API server, the chart now lets the manager's
// ServiceAccount read Secrets and videos only in the watched namespaces; `kubectl auth can-i`
// answers for it (the table is logged with -v).
func TestChartNamespaceScopedRBAC(t *testing.T) {
	e := startScoped(t)
	sa := "system:serviceaccount:" + namespace + ":" + release + "-controller-manager"
	rows := []struct {
		verb, resource, subresource, namespace string // namespace "*" is every namespace (-A)
		allowed                                string
	}{
		{"get", "secrets", "", "team-a", "yes"},
		{"list", "secrets", "", "team-a", "yes"},
		{"watch", "secrets", "", "team-b", "yes"},
		{"get", "secrets", "", "team-c", "no"},
		{"list", "secrets", "", "team-c", "no"},
		{"list", "secrets", "", namespace, "no"},
		{"list", "secrets", "", "*", "no"},
		{"watch", "secrets", "", "*", "no"},
		{"create", "secrets", "", "team-a", "no"},
		{"list", "videorenders.video.videoops.io", "", "team-a", "yes"},
		{"watch", "videostoryboards.video.videoops.io", "", "team-b", "yes"},
		{"get", "videobudgets.video.videoops.io", "", "team-a", "yes"},
		{"list", "videorenders.video.videoops.io", "", "team-c", "no"},
		{"list", "videorenders.video.videoops.io", "", "*", "no"},
		{"patch", "videorenders.video.videoops.io", "status", "team-a", "yes"},
		{"patch", "videorenders.video.videoops.io", "status", "team-c", "no"},
		{"update", "videorenders.video.videoops.io", "", "team-a", "no"},
		{"create", "events.events.k8s.io", "", "team-a", "yes"},
		{"create", "events.events.k8s.io", "", "team-c", "no"},
		{"create", "leases.coordination.k8s.io", "", namespace, "yes"},
		{"create", "secrets", "", namespace, "yes"},
		{"update", "secrets", "", namespace, "no"},
	}
	var table strings.Builder
	table.WriteString("| verb | resource | namespace | allowed |\n|---|---|---|---|\n")
	for _, r := range rows {
		args := []string{"--kubeconfig", e.kubeconfig, "auth", "can-i", r.verb, r.resource, "--as", sa}
		if r.subresource != "" {
			args = append(args, "--subresource", r.subresource)
		}
		if r.namespace == "*" {
			args = append(args, "--all-namespaces")
		} else {
			args = append(args, "--namespace", r.namespace)
		}
		out, err := exec.CommandContext(t.Context(), kubectl(t), args...).Output()
		got := strings.TrimSpace(string(out))
		var exit *exec.ExitError
		if err != nil && (!errors.As(err, &exit) || got != "no") {
			t.Fatalf("kubectl %v: %v %s", args, err, got)
		}
		resource := r.resource
		if r.subresource != "" {
			resource += "/" + r.subresource
		}
		fmt.Fprintf(&table, "| %s | %s | %s | %s |\n", r.verb, resource, r.namespace, got)
		if got != r.allowed {
			t.Errorf("can-i %s %s in %s = %s, want %s", r.verb, resource, r.namespace, got, r.allowed)
		}
	}
	t.Logf("kubectl auth can-i --as %s:\n%s", sa, table.String())
}

// TestChartNamespaceScopedManagerWorks runs the manager built from this tree with exactly the
// chart's namespace-scoped permissions (its kubeconfig impersonates the ServiceAccount): with
// --watch-namespaces it lists and watches only there, so its caches sync and it reconciles a
// VideoBudget in team-a. Without --watch-namespaces the same permissions are refused, which shows
// that the check can fail.
func TestChartNamespaceScopedManagerWorks(t *testing.T) {
	e := startScoped(t)
	cfg, err := clientcmd.LoadFromFile(e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.Impersonate = "system:serviceaccount:" + namespace + ":" + release + "-controller-manager"
		ai.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
	}
	asManager := filepath.Join(t.TempDir(), "kubeconfig-manager")
	if err := clientcmd.WriteToFile(*cfg, asManager); err != nil {
		t.Fatal(err)
	}
	manager := filepath.Join(t.TempDir(), "manager")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", manager, "./cmd/manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/manager: %v\n%s", err, out)
	}
	run := func(t *testing.T, args ...string) (*testutil.SyncBuffer, context.CancelFunc) {
		ctx, cancel := context.WithCancel(t.Context())
		cmd := exec.CommandContext(ctx, manager, append([]string{
			// Nothing is submitted: only a VideoBudget is reconciled, so the URL is never called.
			"--service-base-url=http://127.0.0.1:1/serviceapis", "--metrics-bind-address=0", "--health-probe-bind-address=0",
			// What the chart's POD_NAMESPACE gives a pod: the ledgers live in the release's namespace.
			"--budget-ledger-namespace=" + namespace,
		}, args...)...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+asManager)
		logs := &testutil.SyncBuffer{}
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cancel(); _ = cmd.Wait() })
		return logs, cancel
	}

	t.Run("watching team-a and team-b", func(t *testing.T) {
		logs, stop := run(t, "--watch-namespaces=team-a,team-b")
		defer stop()
		for _, ns := range []string{"team-a", "team-c"} {
			b := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "video.videoops.io/v1alpha1", "kind": "VideoBudget",
				"metadata": map[string]any{"name": "default", "namespace": ns},
				"spec":     map[string]any{"period": "Monthly", "maxRenders": int64(10)},
			}}
			if err := e.cfgClient.Create(t.Context(), b); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(90 * time.Second)
		for {
			b := &unstructured.Unstructured{}
			b.SetAPIVersion("video.videoops.io/v1alpha1")
			b.SetKind("VideoBudget")
			if err := e.cfgClient.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "default"}, b); err != nil {
				t.Fatal(err)
			}
			if g, _, _ := unstructured.NestedInt64(b.Object, "status", "observedGeneration"); g >= 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the manager did not reconcile the VideoBudget in team-a within 90s; its log:\n%s", logs.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
		if strings.Contains(logs.String(), "forbidden") {
			t.Errorf("the manager was refused something:\n%s", logs.String())
		}
		// The budget's ledger is in the release's namespace, out of the tenant's reach. It is
		// written after the budget's status, so it is waited for too.
		ledger := &unstructured.Unstructured{}
		ledger.SetAPIVersion("v1")
		ledger.SetKind("ConfigMap")
		for {
			err := e.cfgClient.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: "video-operator-budget-ledger.team-a"}, ledger)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the ledger of team-a in the release's namespace: %v\n%s", err, logs.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
		b := &unstructured.Unstructured{}
		b.SetAPIVersion("video.videoops.io/v1alpha1")
		b.SetKind("VideoBudget")
		if err := e.cfgClient.Get(t.Context(), client.ObjectKey{Namespace: "team-c", Name: "default"}, b); err != nil {
			t.Fatal(err)
		}
		if _, found, _ := unstructured.NestedMap(b.Object, "status"); found {
			t.Errorf("the manager reconciled a VideoBudget in team-c, which it does not watch: %v", b.Object["status"])
		}
	})

	t.Run("watching every namespace is refused", func(t *testing.T) {
		logs, stop := run(t)
		defer stop()
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(logs.String(), "forbidden") {
			if time.Now().After(deadline) {
				t.Fatalf("a manager watching every namespace with the namespace-scoped RBAC was not refused within 60s:\n%s", logs.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}
