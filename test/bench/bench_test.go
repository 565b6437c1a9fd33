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

// Package bench is the scale benchmark of docs/architecture.md "Scale targets": a real API server
// (envtest), the service simulator with a spread of job durations behind a loopback listener,
// and the manager binary built from this tree run as its own OS process, measured from outside
// (the simulator's counters, a counting proxy in front of the API server, a watch, /proc and
// the manager's /metrics). It runs only with -bench (make bench), never in go test ./...
package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
	"github.com/videoops/video-operator/internal/testutil"
)

// The run's parameters; make bench sets them from BENCH_* variables.
var (
	flagN          = flag.Int("bench.n", 1000, "VideoRenders to create")
	flagNamespaces = flag.Int("bench.namespaces", 10, "namespaces (tenants) the objects are spread over, one API key Secret each")
	flagKeys       = flag.Int("bench.keys", 5, "distinct API keys; namespace i uses key i mod keys, so namespaces share keys when keys < namespaces")
	flagCallbacks  = flag.Bool("bench.callbacks", false, "start the manager with job-result callbacks (--callback-*)")
	flagTimeScale  = flag.Float64("bench.time-scale", 1.0/12, "simulator time scale: 1/12 turns the 2-6 min renders into 10-30 s")
	flagRenderMin  = flag.Duration("bench.render-min", 2*time.Minute, "shortest render at the service's pace, before the time scale")
	flagRenderMax  = flag.Duration("bench.render-max", 6*time.Minute, "longest render at the service's pace, before the time scale")
	flagManager    = flag.String("bench.manager-args", "", "flags passed to the manager after the harness's own (a later flag wins), space-separated")
	flagWorkers    = flag.Int("bench.create-workers", 8, "parallel creates of objects")
	flagBudget     = flag.Bool("bench.budget", false, "a VideoBudget in each namespace whose maxRenders is exactly that namespace's renders: every render must be counted once, and none refused")
	flagTimeout    = flag.Duration("bench.timeout", 40*time.Minute, "how long to wait for every object to be terminal")
	flagEvery      = flag.Duration("bench.sample-every", 15*time.Second, "interval of the timeline samples (/metrics, /proc)")
	flagSeed       = flag.Uint64("bench.seed", 1, "simulator seed (job ids, durations)")
	flagLabel      = flag.String("bench.label", "", "name of the run in the report (default: derived from the parameters)")
	flagOut        = flag.String("bench.out", "", "directory for the JSON and Markdown reports (default: bin/bench of the repository)")
	flagBaseline   = flag.String("bench.baseline", "", "a report JSON to compare this run with")
	flagProfile    = flag.Duration("bench.apiserver-profile", 0, "take a CPU profile of the API server for this long from the first create (go tool pprof reads it); written next to the report")
	flagMix        = flag.String("bench.mix", "", "a request mix: comma-separated scene counts (e.g. 1,12,60); the renders are split evenly, each size created and finished in its own phase, "+
		"its renders as people write them (a voice-over, music, a logo, scenes with a background and three elements), and the report gives the CPU per render of each size; empty: every render is one bare scene")
)

// repoRoot is the repository the benchmark runs in: go test runs it in test/bench.
var repoRoot = filepath.Join("..", "..")

func BenchmarkScale(b *testing.B) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Fatal("KUBEBUILDER_ASSETS is not set: run the benchmark through 'make bench'")
	}
	if *flagN < 1 || *flagNamespaces < 1 || *flagKeys < 1 || *flagWorkers < 1 || *flagRenderMax < *flagRenderMin {
		b.Fatal("-bench.n, -bench.namespaces, -bench.keys and -bench.create-workers must be positive, and -bench.render-max at least -bench.render-min")
	}
	// A baseline that cannot be read is found now, not after a long run.
	if *flagBaseline != "" {
		if _, err := readResult(*flagBaseline); err != nil {
			b.Fatalf("-bench.baseline: %v", err)
		}
	}
	// The harness's own informer and envtest log through controller-runtime; their lines are not
	// what the benchmark reports.
	logf.SetLogger(logr.Discard())
	r := runScale(b)
	b.ReportMetric(r.CompletionToStatus.P99, "p99-completion-ms")
	b.ReportMetric(r.TotalCallsPerJob, "calls/job")
	b.ReportMetric(r.StatusWritesPerObj, "status-writes/obj")
	b.ReportMetric(r.ManagerPeakRSSMiB, "manager-MiB")
	b.ReportMetric(r.ManagerCPUSeconds, "manager-cpu-s")
}

// scaleRun holds what one run has started.
type scaleRun struct {
	b *testing.B
	// settledIn is how long the budgets took to hold every charge after the run (-1: not within
	// budgetSettle).
	settledIn time.Duration
	dir       string
	scheme    *k8sruntime.Scheme
	cfg       *rest.Config
	k8s       client.Client
	sim       *simulator.Server
	simURL    string
	proxy     *countingProxy
	watch     *terminalWatch
	mgr       *managerProc
	apiPID    int
	etcdPID   int
	keys      []string
	created   map[string]time.Time // by object name
	start     time.Time
	timeline  []timeStep
	tree      string // git describe of the tree, taken before the manager is built
}

func runScale(b *testing.B) *result {
	ctx := b.Context()
	s := &scaleRun{b: b, created: map[string]time.Time{}, tree: gitDescribe()}
	var err error
	s.dir, err = os.MkdirTemp("", "video-operator-bench-")
	must(b, err)
	// Registered first, so it runs last, once the manager and the API server are gone. The
	// report copies the manager's log next to itself; a run that failed before keeps the
	// directory for its log.
	b.Cleanup(func() {
		if b.Failed() {
			fmt.Fprintf(os.Stderr, "bench: the run failed; the manager's log is kept in %s\n", s.dir)
			return
		}
		_ = os.RemoveAll(s.dir)
	})

	bin, err := buildManager(ctx, repoRoot, s.dir)
	must(b, err)
	s.startCluster()
	s.startSimulator()
	s.proxy, err = startCountingProxy(s.cfg, s.dir)
	must(b, err)
	b.Cleanup(s.proxy.Close)
	s.watch, err = startTerminalWatch(ctx, s.cfg, s.scheme)
	must(b, err)
	s.createTenants()

	extra, err := s.managerArgs()
	must(b, err)
	cpu0 := s.cpuNow()
	s.mgr, err = startManager(bin, s.dir, s.proxy.kubeconfig, s.simURL+simulator.BasePath, extra)
	must(b, err)
	b.Cleanup(func() { s.mgr.stop(time.Minute) })
	s.waitMetrics()

	mix, err := parseMix(*flagMix, *flagN)
	must(b, err)
	s.start = time.Now()
	profiled := s.profileAPIServer(ctx)
	deadline := s.start.Add(*flagTimeout)
	var (
		createSeconds float64
		allDone       = true
		sizes         []sizeResult
	)
	for _, ph := range mix {
		before := s.cpuNow()
		started := time.Now()
		createSeconds += s.createRenders(ph.from, ph.to, ph.scenes)
		// Each phase ends when its renders are terminal, so that its CPU is its own.
		allDone = s.watch.waitAll(ctx, ph.to, deadline, *flagEvery, s.sample) && allDone
		if ph.scenes > 0 {
			sizes = append(sizes, ph.result(before, s.cpuNow(), time.Since(started)))
		}
	}
	wall := time.Since(s.start)
	s.sample()

	r := s.measure(extra, cpu0)
	r.BySize = sizes
	if p := <-profiled; p != "" {
		r.APIServerProfile = p
	}
	r.CreateSeconds, r.WallSeconds = createSeconds, wall.Seconds()
	s.mgr.stop(time.Minute)
	r.ManagerLogErrors = s.mgr.logErrors()
	s.report(r)
	if !allDone {
		b.Errorf("%d of %d objects terminal after %s", s.watch.count(), *flagN, *flagTimeout)
	}
	if r.DuplicateObjects > 0 {
		b.Errorf("%d objects have more than one job at the service", r.DuplicateObjects)
	}
	if r.Budget != nil && len(r.Budget.Mismatched) > 0 {
		b.Errorf("the spend guard's account differs from the renders paid in %v", r.Budget.Mismatched)
	}
	return r
}

// startCluster starts envtest with the CRDs and finds the API server's and etcd's PIDs.
func (s *scaleRun) startCluster() {
	s.scheme = k8sruntime.NewScheme()
	must(s.b, clientgoscheme.AddToScheme(s.scheme))
	must(s.b, videov1alpha1.AddToScheme(s.scheme))
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(repoRoot, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	must(s.b, err)
	s.b.Cleanup(func() { _ = env.Stop() })
	must(s.b, testutil.InstallPolicies(s.b.Context(), cfg))
	// The harness's own client creates thousands of objects: client-go's default 5 QPS would
	// make the creates the bottleneck. Rate limiting off; -bench.create-workers bounds them.
	cfg.QPS, cfg.Burst = -1, 0
	s.cfg = cfg
	s.k8s, err = client.New(cfg, client.Options{Scheme: s.scheme})
	must(s.b, err)
	if s.apiPID, err = childNamed("kube-apiserver"); err != nil {
		s.b.Logf("API server CPU not measured: %v", err)
	}
	if s.etcdPID, err = childNamed("etcd"); err != nil {
		s.b.Logf("etcd CPU not measured: %v", err)
	}
}

// startSimulator serves the simulator on a loopback listener with one key per tenant group.
func (s *scaleRun) startSimulator() {
	for i := range *flagKeys {
		s.keys = append(s.keys, fmt.Sprintf("sk-bench-%02d-7c1e5a9d3f", i))
	}
	s.sim = simulator.New(simulator.Options{
		APIKeys:           s.keys,
		TimeScale:         *flagTimeScale,
		RenderDuration:    *flagRenderMin,
		RenderDurationMax: *flagRenderMax,
		Seed:              *flagSeed,
	})
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	must(s.b, err)
	srv := &http.Server{Handler: s.sim, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	s.simURL = "http://" + ln.Addr().String()
	s.b.Cleanup(func() {
		_ = srv.Close()
		s.sim.Close()
	})
}

// createTenants creates the namespaces and their API key Secrets.
func (s *scaleRun) createTenants() {
	for i := range *flagNamespaces {
		ns := namespaceName(i)
		must(s.b, s.k8s.Create(s.b.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
		must(s.b, s.k8s.Create(s.b.Context(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: videov1alpha1.DefaultAPIKeySecretName},
			StringData: map[string]string{videov1alpha1.DefaultAPIKeySecretKey: s.keys[i%len(s.keys)]},
		}))
		if *flagBudget {
			s.createBudget(ns, rendersIn(i))
		}
	}
}

func namespaceName(i int) string { return fmt.Sprintf("bench-%02d", i) }

// managerArgs are the extra manager flags: the callbacks' when asked, then -bench.manager-args.
func (s *scaleRun) managerArgs() ([]string, error) {
	var extra []string
	if *flagCallbacks {
		cb, err := callbackArgs(s.dir)
		if err != nil {
			return nil, err
		}
		extra = append(extra, cb...)
	}
	return append(extra, strings.Fields(*flagManager)...), nil
}

// waitMetrics waits until the manager serves /metrics: it has started, so that the creates
// measure the manager at work rather than its start-up.
func (s *scaleRun) waitMetrics() {
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := scrapeMetrics(s.b.Context(), s.mgr.metricsURL); err == nil {
			return
		}
		if s.mgr.exited() || time.Now().After(deadline) {
			s.b.Fatalf("the manager did not serve /metrics (exited: %v, %v); its log is %s", s.mgr.exited(), s.mgr.err, s.mgr.log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// createRenders creates VideoRenders from to to (exclusive) of scenes scenes each (0: the bare
// one-scene render), spread round-robin over the namespaces, with -bench.create-workers in
// parallel; it returns how long that took.
func (s *scaleRun) createRenders(from, to, scenes int) float64 {
	began := time.Now()
	var (
		next    atomic.Int64
		mu      sync.Mutex
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for range *flagWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := from + int(next.Add(1)) - 1; i < to; i = from + int(next.Add(1)) - 1 {
				vr := render(i, scenes)
				err := s.k8s.Create(s.b.Context(), vr)
				if err != nil {
					errOnce.Do(func() { first = err })
					return
				}
				mu.Lock()
				s.created[vr.Name] = time.Now()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	must(s.b, first)
	return time.Since(began).Seconds()
}

// render is object i: its videoName is its name, unique across namespaces, so that the
// service's jobs can be matched to objects. With scenes > 0 it is a render as people write it
// (realisticRender) of that many scenes.
func render(i, scenes int) *videov1alpha1.VideoRender {
	name := fmt.Sprintf("r-%05d", i)
	if scenes > 0 {
		vr := realisticRender(name, scenes)
		vr.Namespace = namespaceName(i % *flagNamespaces)
		return vr
	}
	return &videov1alpha1.VideoRender{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespaceName(i % *flagNamespaces), Name: name},
		Spec: videov1alpha1.VideoRenderSpec{Storyboard: &videov1alpha1.StoryboardRequest{
			VideoName: name,
			Scenes:    []videov1alpha1.Scene{{Story: ptr.To("A video made while ten thousand others are made. It is made once.")}},
		}},
	}
}

// cpu is the CPU seconds of the processes measured, and of the whole machine.
type cpu struct{ manager, apiServer, etcd, harness, machine float64 }

func (s *scaleRun) cpuNow() cpu {
	var c cpu
	if s.mgr != nil {
		if st, err := readProcStat(s.mgr.pid()); err == nil {
			c.manager = st.cpuSeconds
		}
	}
	if st, err := readProcStat(s.apiPID); s.apiPID != 0 && err == nil {
		c.apiServer = st.cpuSeconds
	}
	if st, err := readProcStat(s.etcdPID); s.etcdPID != 0 && err == nil {
		c.etcd = st.cpuSeconds
	}
	c.machine, _ = machineBusySeconds()
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		c.harness = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
	return c
}

// sample adds a timeline step: progress, the manager's memory and CPU, its workqueues.
func (s *scaleRun) sample() {
	step := timeStep{Seconds: time.Since(s.start).Seconds(), Terminal: s.watch.count(), Load1: loadAverage()}
	for _, n := range s.sim.Counters().SubmissionsByKey {
		step.Jobs += n
	}
	step.RSSMiB, _, _ = memory(s.mgr.pid())
	step.CPUSeconds = s.cpuNow().manager
	if m, err := scrapeMetrics(s.b.Context(), s.mgr.metricsURL); err == nil {
		step.Depth, step.QueueP99 = map[string]float64{}, map[string]float64{}
		for k, v := range m.Gauges {
			if strings.HasPrefix(k, "workqueue_depth") {
				step.Depth[k] = v
			}
		}
		for k, h := range m.Histograms {
			if strings.HasPrefix(k, "workqueue_queue_duration_seconds") {
				step.QueueP99[k] = h.P99
			}
		}
	}
	if *flagBudget {
		step.BudgetMaxBytes, step.BudgetMaxReservations = s.largestBudget()
	}
	s.timeline = append(s.timeline, step)
	// Progress goes to stderr as it happens (b.Logf would hold it until the end).
	fmt.Fprintf(os.Stderr, "bench: t=%4.0fs jobs=%d terminal=%d manager RSS=%.0f MiB CPU=%.1f s, load %.1f\n",
		step.Seconds, step.Jobs, step.Terminal, step.RSSMiB, step.CPUSeconds, step.Load1)
}

// largestBudget is the size (as JSON) and the reservations of the largest VideoBudget now: one
// list of the run's few budgets per sample, read directly (not through the manager's proxy).
func (s *scaleRun) largestBudget() (maxBytes, maxReservations int) {
	var list videov1alpha1.VideoBudgetList
	if err := s.k8s.List(s.b.Context(), &list); err != nil {
		return 0, 0
	}
	for i := range list.Items {
		b := &list.Items[i]
		b.ManagedFields = nil
		if data, err := json.Marshal(b); err == nil {
			maxBytes = max(maxBytes, len(data))
		}
		maxReservations = max(maxReservations, len(b.Status.AllReservations()))
	}
	return maxBytes, maxReservations
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// gitDescribe names the tree the manager was built from.
func gitDescribe() string {
	out, err := exec.CommandContext(context.Background(), "git", "-C", repoRoot, "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// machineInfo is the CPU count and memory of this machine.
func machineInfo() machine {
	m := machine{CPUs: runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %f kB", &kb); err == nil {
			m.MemGiB = kb / (1 << 20)
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// profileAPIServer takes a CPU profile of the API server for -bench.apiserver-profile from now,
// through its /debug/pprof (envtest's user is an administrator). The channel gives the profile's
// path in the run's directory, or "" when none was asked for or it could not be taken.
func (s *scaleRun) profileAPIServer(ctx context.Context) <-chan string {
	out := make(chan string, 1)
	if *flagProfile <= 0 {
		out <- ""
		return out
	}
	go func() {
		path, err := s.fetchProfile(ctx, *flagProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: no API server profile: %v\n", err)
		}
		out <- path
	}()
	return out
}

func (s *scaleRun) fetchProfile(ctx context.Context, d time.Duration) (string, error) {
	hc, err := rest.HTTPClientFor(s.cfg)
	if err != nil {
		return "", err
	}
	hc.Timeout = d + time.Minute
	u := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimSuffix(s.cfg.Host, "/"), int(d.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	path := filepath.Join(s.dir, "apiserver.pprof")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return "", err
	}
	return path, f.Close()
}
