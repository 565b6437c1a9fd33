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

// Package faults is the process-level fault suite: a real API server (envtest), the service
// simulator behind a real HTTP listener, and the manager binary started, stopped and killed as
// an OS process, as a Deployment's pods are. Each case prints what the service charged and
// what the objects say. The short variant runs in `make test`; `-faults.long` runs the long one.
package faults

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
	"github.com/videoops/video-operator/internal/testutil"
)

// long selects the long variant: more objects, more kills.
var long = flag.Bool("faults.long", false, "run the long variant of the fault suite (more objects, more kills)")

// apiKey is the key the simulator accepts; every case checks it appears in no log, event or status.
const apiKey = "sk-video-faults-5d1c9e7a3b2f4068"

var (
	scheme     = runtime.NewScheme()
	restConfig *rest.Config
	k8s        client.Client
	kubeconfig string
	managerBin string
	workDir    string
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// envtest logs through controller-runtime (the upgrade test installs CRDs after the start):
	// without a logger it prints a warning with a stack trace instead.
	ctrllog.SetLogger(logr.Discard())
	if testing.Short() {
		// Every case runs the manager as a process against one API server this function starts.
		fmt.Println("the fault suite " + testutil.ShortSkipsAPIServer)
		return 0
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run the fault suite through 'make test' (or see README.md, Reliability)")
		return 1
	}
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, videov1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	var err error
	if workDir, err = os.MkdirTemp("", "video-operator-faults-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := 1
	defer func() {
		if code == 0 {
			_ = os.RemoveAll(workDir)
			return
		}
		fmt.Fprintf(os.Stderr, "fault suite: the managers' logs are kept in %s\n", workDir)
	}()

	// The manager binary, built as the image builds it.
	managerBin = filepath.Join(workDir, "manager")
	build := exec.CommandContext(context.Background(), "go", "build", "-o", managerBin, "./cmd/manager")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the manager: %v\n%s", err, out)
		return 1
	}

	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	restConfig = cfg
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting envtest: %v\n", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if err := testutil.InstallPolicies(context.Background(), cfg); err != nil {
		fmt.Fprintf(os.Stderr, "installing the admission policies: %v\n", err)
		return 1
	}
	user, err := env.AddUser(envtest.User{Name: "video-operator", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kc, err := user.KubeConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kubeconfig = filepath.Join(workDir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	k8s = client.WithFieldValidation(c, metav1.FieldValidationStrict)
	code = m.Run()
	return code
}

// world is one case: its namespace, the simulator behind a listener that can be taken down, and
// the manager processes it started.
type world struct {
	t   *testing.T
	ns  string
	sim *simulator.Server
	svc *switchableServer

	mu    sync.Mutex
	procs []*managerProc
	// ready records when each object was first seen Completed or Stalled, for latencies.
	ready map[string]time.Time
	// note goes into the case's report.
	note string
}

func newWorld(t *testing.T, opts simulator.Options) *world {
	t.Helper()
	opts.APIKeys = []string{apiKey}
	if opts.TimeScale == 0 {
		opts.TimeScale = 0.005 // a 2-minute render takes 0.6 s
	}
	if opts.Seed == 0 {
		opts.Seed = uint64(time.Now().UnixNano())
	}
	w := &world{t: t, sim: simulator.New(opts), ready: map[string]time.Time{}}
	w.svc = newSwitchableServer(t, w.sim)
	t.Cleanup(func() {
		w.stopAll()
		w.svc.down()
		w.sim.Close()
	})

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "faults-"}}
	must(t, k8s.Create(t.Context(), ns))
	w.ns = ns.Name
	must(t, k8s.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: videov1alpha1.DefaultAPIKeySecretName},
		StringData: map[string]string{videov1alpha1.DefaultAPIKeySecretKey: apiKey},
	}))
	go w.watchReady(t.Context())
	return w
}

// managerProc is one manager process.
type managerProc struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// startManager starts the manager binary against this world's namespace and simulator.
func (w *world) startManager(extra ...string) *managerProc {
	w.t.Helper()
	return w.startManagerBinary(managerBin, extra...)
}

// startManagerBinary starts bin, a manager built from this tree or from an older commit (the
// upgrade test): the flags below exist in every commit that test names.
func (w *world) startManagerBinary(bin string, extra ...string) *managerProc {
	w.t.Helper()
	w.mu.Lock()
	n := len(w.procs)
	w.mu.Unlock()
	logPath := filepath.Join(workDir, fmt.Sprintf("%s-manager-%d.log", w.ns, n))
	logFile, err := os.Create(logPath)
	must(w.t, err)
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--service-base-url=" + w.svc.url + "/serviceapis",
		"--watch-namespaces=" + w.ns,
		"--poll-min=200ms", "--poll-max=600ms",
		"--service-timeout=5s",
		"--retry-backoff-base=200ms", "--retry-backoff-max=2s",
		"--service-rate-limit=500", "--service-burst=500",
		"--max-concurrent-reconciles=20",
		"--metrics-bind-address=0", "--health-probe-bind-address=0",
	}, extra...)
	cmd := exec.CommandContext(context.Background(), bin, args...)
	// The manager's own namespace, as the Deployment's downward API gives it (its budget ledgers
	// and fingerprint Secret live there); an environment variable, not a flag, so that managers
	// of older commits, which have no such flag, run with the same arguments.
	cmd.Env = append(os.Environ(), "POD_NAMESPACE="+w.ns)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	must(w.t, cmd.Start())
	p := &managerProc{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	w.mu.Lock()
	w.procs = append(w.procs, p)
	w.mu.Unlock()
	return p
}

// kill sends sig and waits until the process has exited; it returns how long that took.
func (p *managerProc) kill(t *testing.T, sig syscall.Signal, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(within):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("the manager did not exit within %s of %s", within, sig)
	}
	return time.Since(start)
}

func (w *world) stopAll() {
	w.mu.Lock()
	procs := append([]*managerProc(nil), w.procs...)
	w.mu.Unlock()
	for _, p := range procs {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}

// createRenders creates n VideoRenders named prefix-i whose videoName is their name, so the
// simulator's jobs can be matched to objects.
func (w *world) createRenders(prefix string, from, to int) {
	w.t.Helper()
	for i := from; i < to; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		vr := &videov1alpha1.VideoRender{}
		must(w.t, yaml.UnmarshalStrict([]byte(`
metadata: {name: `+name+`}
spec:
  storyboard:
    videoName: `+name+`
    scenes:
      - story: A video made while the operator is restarted, killed and starved. It still gets made once.
`), vr))
		vr.Namespace = w.ns
		must(w.t, k8s.Create(w.t.Context(), vr))
	}
}

func (w *world) renders(ctx context.Context) ([]videov1alpha1.VideoRender, error) {
	var list videov1alpha1.VideoRenderList
	if err := k8s.List(ctx, &list, client.InNamespace(w.ns)); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// watchReady records when each object is first seen terminal.
func (w *world) watchReady(ctx context.Context) {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		items, err := w.renders(ctx)
		if err != nil {
			continue
		}
		now := time.Now()
		w.mu.Lock()
		for i := range items {
			if _, seen := w.ready[items[i].Name]; !seen && terminal(&items[i]) {
				w.ready[items[i].Name] = now
			}
		}
		w.mu.Unlock()
	}
}

// terminal reports an object that needs nothing more from the operator: Ready for its
// generation, or Stalled.
func terminal(vr *videov1alpha1.VideoRender) bool {
	for _, c := range vr.Status.Conditions {
		if c.ObservedGeneration != vr.Generation {
			continue
		}
		if (c.Type == string(videov1alpha1.ConditionReady) || c.Type == string(videov1alpha1.ConditionStalled)) &&
			c.Status == metav1.ConditionTrue {
			return true
		}
	}
	return false
}

// waitTerminal waits until every object is terminal, or the deadline.
func (w *world) waitTerminal(within time.Duration) {
	w.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		items, err := w.renders(w.t.Context())
		must(w.t, err)
		all := true
		for i := range items {
			all = all && terminal(&items[i])
		}
		if all && len(items) > 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// expectNoKeyLeak checks every manager log, event and object of the case for the API key.
func (w *world) expectNoKeyLeak() {
	w.t.Helper()
	w.mu.Lock()
	procs := append([]*managerProc(nil), w.procs...)
	w.mu.Unlock()
	lines := 0
	for _, p := range procs {
		b, err := os.ReadFile(p.log)
		must(w.t, err)
		if strings.Contains(string(b), apiKey) {
			w.t.Errorf("the API key is in the manager log %s", p.log)
		}
		lines += strings.Count(string(b), "\n")
	}
	if lines == 0 {
		w.t.Error("the managers logged nothing: the check above proves nothing")
	}
	var events corev1.EventList
	must(w.t, k8s.List(w.t.Context(), &events, client.InNamespace(w.ns)))
	items, err := w.renders(w.t.Context())
	must(w.t, err)
	for _, v := range []any{events, items} {
		b, err := json.Marshal(v)
		must(w.t, err)
		if strings.Contains(string(b), apiKey) {
			w.t.Errorf("the API key is in an event or an object")
		}
	}
}

// auditCounts counts the managers' audit lines of paid submissions by outcome.
func (w *world) auditCounts() map[string]int {
	w.t.Helper()
	w.mu.Lock()
	procs := append([]*managerProc(nil), w.procs...)
	w.mu.Unlock()
	counts := map[string]int{}
	for _, p := range procs {
		b, err := os.ReadFile(p.log)
		must(w.t, err)
		for _, line := range strings.Split(string(b), "\n") {
			var entry struct {
				Logger, Msg, Outcome string
			}
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Logger == "audit" && entry.Msg == "Paid submission" {
				counts[entry.Outcome]++
			}
		}
	}
	return counts
}

// expectBillMatchesAudit checks that the audit log names every job the service created: what a
// platform team reconciles the bill with.
func (w *world) expectBillMatchesAudit(r report) {
	w.t.Helper()
	if a := w.auditCounts()["accepted"]; a != r.Jobs {
		w.t.Errorf("%s: the audit log has %d accepted submissions, the service created %d jobs", r.Case, a, r.Jobs)
	}
}

// switchableServer serves the simulator on a fixed loopback address that can be taken down (a
// refused connection: nothing listens) and brought back.
type switchableServer struct {
	t       *testing.T
	handler http.Handler
	addr    string
	url     string
	mu      sync.Mutex
	srv     *http.Server
}

func newSwitchableServer(t *testing.T, h http.Handler) *switchableServer {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	must(t, err)
	s := &switchableServer{t: t, handler: h, addr: ln.Addr().String()}
	s.url = "http://" + s.addr
	s.serve(ln)
	return s
}

func (s *switchableServer) serve(ln net.Listener) {
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 5 * time.Second}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.t.Logf("simulator listener: %v", err)
		}
	}()
}

// down closes the listener and every connection: new connections are refused.
func (s *switchableServer) down() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// up listens again on the same address.
func (s *switchableServer) up() {
	s.t.Helper()
	var ln net.Listener
	var err error
	for range 50 {
		if ln, err = (&net.ListenConfig{}).Listen(context.Background(), "tcp", s.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	must(s.t, err)
	s.serve(ln)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
