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
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
	"github.com/videoops/video-operator/internal/testutil"
)

// The tests of this file run the manager binary as its own OS process, as a Deployment's pod
// runs it, against a real API server with the CRDs and the service simulator.

// apiKey is the key the simulator accepts.
const apiKey = "sk-video-deploy-7e3a1c5b9d2f4860"

// operatorWorld is one test's API server (with the CRDs), its simulator and its manager binary.
type operatorWorld struct {
	t          *testing.T
	c          client.Client
	env        *envtest.Environment
	kubeconfig string
	manager    string
	sim        *simulator.Server
	clock      *simulator.FakeClock
	serviceURL string
}

func newOperatorWorld(t *testing.T) *operatorWorld {
	t.Helper()
	testutil.APIServer(t)
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, videov1alpha1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	w := &operatorWorld{t: t}
	w.env = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := w.env.Start()
	if err != nil {
		t.Fatalf("starting envtest (run the tests through 'make test', which provides KUBEBUILDER_ASSETS): %v", err)
	}
	t.Cleanup(func() {
		if err := w.env.Stop(); err != nil {
			t.Error(err)
		}
	})
	if err := testutil.InstallPolicies(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	admin, err := w.env.AddUser(envtest.User{Name: "video-operator", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	w.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(w.kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	if w.c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}

	w.manager = filepath.Join(t.TempDir(), "manager")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", w.manager, "./cmd/manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/manager: %v\n%s", err, out)
	}

	// Jobs move only when the test advances this clock: a render stays running as long as needed.
	w.clock = simulator.NewFakeClock(time.Now())
	w.sim = simulator.New(simulator.Options{APIKeys: []string{apiKey}, Clock: w.clock, Seed: 31})
	srv := httptest.NewServer(w.sim)
	t.Cleanup(func() { srv.Close(); w.sim.Close() })
	w.serviceURL = srv.URL + "/serviceapis"
	return w
}

// namespace creates a namespace, with the API key Secret when tenant is set.
func (w *operatorWorld) namespace(name string, tenant bool) {
	w.t.Helper()
	if err := w.c.Create(w.t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		w.t.Fatal(err)
	}
	if !tenant {
		return
	}
	if err := w.c.Create(w.t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: videov1alpha1.DefaultAPIKeySecretName},
		StringData: map[string]string{videov1alpha1.DefaultAPIKeySecretKey: apiKey},
	}); err != nil {
		w.t.Fatal(err)
	}
}

// proc is one manager process.
type proc struct {
	cmd  *exec.Cmd
	logs *testutil.SyncBuffer
	done chan struct{}
	err  error
}

// start runs the manager binary with args after the test's base arguments (kubeconfig, the
// simulator, quick polls, no listeners).
func (w *operatorWorld) start(args ...string) *proc {
	w.t.Helper()
	base := []string{
		"--kubeconfig=" + w.kubeconfig,
		"--service-base-url=" + w.serviceURL,
		"--poll-min=200ms", "--poll-max=400ms",
		"--retry-backoff-base=200ms", "--retry-backoff-max=2s",
		"--metrics-bind-address=0", "--health-probe-bind-address=0",
		// Quick lease hand-overs: a test waits for them.
		"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms",
	}
	cmd := exec.CommandContext(context.Background(), w.manager, append(base, args...)...)
	p := &proc{cmd: cmd, logs: &testutil.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	w.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// stop sends SIGTERM, as the kubelet does, and waits for the process to end.
func (p *proc) stop(t *testing.T, within time.Duration) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if !p.wait(within) {
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("the manager did not exit within %s of SIGTERM:\n%s", within, p.logs.String())
	}
}

// wait reports whether the process ended within d.
func (p *proc) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}
