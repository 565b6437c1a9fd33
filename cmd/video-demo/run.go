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

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/admissionpolicy"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/controller"
	"github.com/videoops/video-operator/internal/metrics"
	"github.com/videoops/video-operator/internal/simulator"
)

// The files the demo applies, in order, from the repository's hack/demo/ folder. The last one is
// invalid on purpose: the API server must refuse it.
var (
	demoFiles   = []string{"1-storyboard-preview.yaml", "2-render-reviewed-storyboard.yaml", "3-render-direct.yaml"}
	invalidFile = "4-invalid-render.yaml"
)

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(videov1alpha1.AddToScheme(scheme))
}

// demo is one run: what it started, and how to stop each piece again.
type demo struct {
	cfg      *config
	out      io.Writer
	repo     string // absolute path of the repository
	stateDir string // <repo>/.demo: the kubeconfig, the log and the lock file
	runDir   string // <repo>/.demo/run: the control plane's files, removed on exit
	assets   string // kube-apiserver, etcd and kubectl
	log      *os.File

	rest   *rest.Config
	client client.Client

	// stops run in reverse order on exit, so that each piece stops before what it depends on.
	stops []namedStop
}

type namedStop struct {
	what string
	stop func() error
}

func (d *demo) say(format string, args ...any) { _, _ = fmt.Fprintf(d.out, format+"\n", args...) }

func (d *demo) onExit(what string, stop func() error) {
	d.stops = append(d.stops, namedStop{what, stop})
}

// run is the whole demo. Everything it starts is stopped before it returns, whatever happens.
func run(ctx context.Context, cfg *config, out io.Writer) (err error) {
	d := &demo{cfg: cfg, out: out}
	defer func() { err = errors.Join(err, d.stopAll()) }()
	if err := d.prepare(); err != nil {
		return err
	}
	d.say("Welcome to the video-operator demo. It runs everything on this machine; nothing is installed.")
	d.say("The operator's own log goes to %s.", d.rel(d.log.Name()))
	d.say("")

	if err := d.startControlPlane(); err != nil {
		return err
	}
	baseURL, apiKey, err := d.startService(ctx)
	if err != nil {
		return err
	}
	if err := d.startManager(ctx, baseURL); err != nil {
		return err
	}
	objects, rejected, err := d.applyManifests(ctx, apiKey)
	if err != nil {
		return err
	}
	d.printKubectlHelp()

	followCtx := ctx
	if cfg.exitWhenDone {
		var cancel context.CancelFunc
		followCtx, cancel = context.WithTimeout(ctx, cfg.timeout)
		defer cancel()
	}
	states, err := d.follow(followCtx, objects)
	if err != nil {
		if ctx.Err() != nil {
			if cfg.exitWhenDone {
				return errors.New("interrupted before the demo objects finished")
			}
			return nil // Ctrl-C is how an interactive demo ends
		}
		return fmt.Errorf("the demo objects did not finish within %s: %w", cfg.timeout, err)
	}
	d.printOutputs(states)
	problems := verdict(states, rejected)
	if len(problems) == 0 {
		d.say("All done: the preview completed, both renders completed, and the invalid render was refused.")
	} else {
		d.say("Not everything went as expected:")
		for _, p := range problems {
			d.say("  - %s", p)
		}
		d.say("The operator's log is in %s; `kubectl describe` shows the conditions and events.", d.rel(d.log.Name()))
	}
	if cfg.exitWhenDone {
		if len(problems) > 0 {
			return fmt.Errorf("%d of the demo's expectations failed", len(problems))
		}
		return nil
	}
	d.say("")
	d.say("The demo keeps running so that you can explore it with kubectl (see above), or apply your own")
	d.say("VideoStoryboards and VideoRenders. Press Ctrl-C to stop it.")
	<-ctx.Done()
	d.say("")
	return nil
}

// prepare checks what the demo needs before starting anything, and takes the lock.
func (d *demo) prepare() error {
	repo, err := filepath.Abs(d.cfg.repo)
	if err != nil {
		return err
	}
	d.repo = repo
	for _, p := range []string{"config/crd/bases", "hack/demo"} {
		if _, err := os.Stat(filepath.Join(repo, p)); err != nil {
			return fmt.Errorf("%s not found: run the demo from the repository's root folder with 'make demo'", p)
		}
	}
	d.assets = os.Getenv("KUBEBUILDER_ASSETS")
	if d.assets == "" {
		return errors.New("KUBEBUILDER_ASSETS is not set: run the demo with 'make demo', which obtains kube-apiserver, etcd and kubectl first")
	}
	if d.cfg.real && (os.Getenv(envBaseURL) == "" || os.Getenv(envAPIKey) == "") {
		return fmt.Errorf("--real needs $%s (the service's base URL, including /serviceapis) and $%s (your API key)", envBaseURL, envAPIKey)
	}

	d.stateDir = filepath.Join(repo, ".demo")
	d.runDir = filepath.Join(d.stateDir, "run")
	if err := os.MkdirAll(d.stateDir, 0o750); err != nil {
		return err
	}
	if err := d.lock(); err != nil {
		return err
	}
	// A demo killed with SIGKILL leaves its run folder behind; nothing in it is worth keeping.
	if err := os.RemoveAll(d.runDir); err != nil {
		return err
	}
	tmp := filepath.Join(d.runDir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	d.onExit("", func() error { return os.RemoveAll(d.runDir) })
	// envtest (and kube-apiserver and etcd, which inherit the environment) put their certificates
	// and data in the temporary folder: keep them inside .demo/ rather than in /tmp.
	if err := os.Setenv("TMPDIR", tmp); err != nil {
		return err
	}

	d.log, err = os.Create(filepath.Join(d.stateDir, "demo.log"))
	if err != nil {
		return err
	}
	d.onExit("", d.log.Close)
	logger := zap.New(zap.WriteTo(d.log))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	return nil
}

// lock refuses to start while another demo runs from the same folder: both would use .demo/.
func (d *demo) lock() error {
	path := filepath.Join(d.stateDir, "demo.pid")
	if b, err := os.ReadFile(path); err == nil { //nolint:gosec // the demo's own pid file
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid != os.Getpid() && syscall.Kill(pid, 0) == nil {
			return fmt.Errorf("another demo is running (process %d); stop it with Ctrl-C first, or delete %s if it is gone", pid, path)
		}
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return err
	}
	d.onExit("", func() error { return os.Remove(path) })
	return nil
}

// stopAll runs the stop functions in reverse order and returns their errors.
func (d *demo) stopAll() error {
	var errs []error
	for i := len(d.stops) - 1; i >= 0; i-- {
		s := d.stops[i]
		if s.what != "" {
			d.say("%s...", s.what)
		}
		if err := s.stop(); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("%s: %w", strings.ToLower(s.what), err))
		}
	}
	d.stops = nil
	if len(errs) == 0 && d.log != nil {
		d.say("Stopped. Nothing is left running; the log is kept in %s.", d.rel(d.log.Name()))
	}
	return errors.Join(errs...)
}

func (d *demo) rel(path string) string {
	if r, err := filepath.Rel(d.repo, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func (d *demo) kubeconfigPath() string { return filepath.Join(d.stateDir, "kubeconfig") }

// startControlPlane starts kube-apiserver and etcd, installs the CRDs and writes a kubeconfig.
func (d *demo) startControlPlane() error {
	d.say("Starting a local Kubernetes API server and etcd, and installing the VideoStoryboard and")
	d.say("VideoRender CRDs from config/crd/bases...")
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(d.repo, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: d.assets,
	}
	start := time.Now()
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("starting the API server: %w", err)
	}
	d.onExit("Stopping the API server and etcd", env.Stop)
	d.say("  The API server is up at %s (%.1f s).", cfg.Host, time.Since(start).Seconds())
	d.say("Installing the admission policies of config/policies (the scenes' rules)...")
	if err := admissionpolicy.Install(context.Background(), cfg, filepath.Join(d.repo, "config", "policies")); err != nil {
		return fmt.Errorf("installing the admission policies: %w", err)
	}

	// An administrator for kubectl in another shell: envtest's own identity stays private.
	user, err := env.AddUser(envtest.User{Name: "demo-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("creating the kubectl user: %w", err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	if err := os.WriteFile(d.kubeconfigPath(), kubeconfig, 0o600); err != nil {
		return err
	}
	// The kubeconfig points at a server that is gone once the demo stops.
	d.onExit("", func() error { return os.Remove(d.kubeconfigPath()) })

	d.rest = cfg
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	// Strict, as kubectl is: an unknown field in a demo file is an error, not silently dropped.
	d.client = client.WithFieldValidation(c, metav1.FieldValidationStrict)
	return nil
}

// startService starts the simulator on a free local port, or takes the real service from the
// environment, and returns its base URL and the API key to put in the Secret.
func (d *demo) startService(ctx context.Context) (baseURL, apiKey string, err error) {
	if d.cfg.real {
		d.say("Using the real video service at %s, with the API key from $%s.", os.Getenv(envBaseURL), envAPIKey)
		d.say("  It submits one preview and two renders to your account; renders are paid.")
		return os.Getenv(envBaseURL), strings.TrimSpace(os.Getenv(envAPIKey)), nil
	}
	key := make([]byte, 16)
	if _, err := rand.Read(key); err != nil {
		return "", "", err
	}
	apiKey = "demo-" + hex.EncodeToString(key)
	sim := simulator.New(simulator.Options{
		APIKeys:   []string{apiKey},
		TimeScale: d.cfg.timeScale,
		Logger:    slog.New(slog.NewTextHandler(d.log, nil)),
	})
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		sim.Close()
		return "", "", fmt.Errorf("listening for the simulator: %w", err)
	}
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	d.onExit("Stopping the service simulator", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(ctx)
		sim.Close()
		return err
	})
	baseURL = "http://" + ln.Addr().String() + simulator.BasePath
	d.say("Started the video service simulator at %s.", baseURL)
	d.say("  Its jobs run at %g times the real duration, so a render takes seconds instead of minutes.", d.cfg.timeScale)
	return baseURL, apiKey, nil
}

// startManager runs both controllers in this process, the way cmd/manager builds them, with the
// demo's poll interval.
func (d *demo) startManager(ctx context.Context, baseURL string) error {
	mgr, err := ctrl.NewManager(d.rest, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cache.Options{DefaultTransform: controller.CacheTransform},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		return err
	}
	// No client-side limiter: the controllers' per-key call budget paces the calls.
	factory, err := apiclient.NewFactory(apiclient.Options{BaseURL: baseURL, Timeout: apiclient.DefaultTimeout, Observer: m}, nil)
	if err != nil {
		return fmt.Errorf("configuring the service client: %w", err)
	}
	r, err := controller.NewReconcilers(mgr.GetClient(), controller.Options{
		ClientFactory: factory,
		APIReader:     mgr.GetAPIReader(),
		Recorder:      mgr.GetEventRecorder("video-operator"),
		PollMin:       d.cfg.pollMin,
		PollMax:       d.cfg.pollMax,
		CallTimeout:   apiclient.DefaultTimeout,
		Metrics:       m,
	})
	if err != nil {
		return err
	}
	mctx, cancel := context.WithCancel(ctx)
	if err := r.SetupWithManager(mctx, mgr, 10); err != nil {
		cancel()
		return err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	d.onExit("Stopping the operator", func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			return errors.New("the manager did not stop within 30 s")
		}
	})
	if !mgr.GetCache().WaitForCacheSync(mctx) {
		return errors.New("the manager's cache did not sync")
	}
	d.say("Started the operator (both controllers), polling each running job every %s to %s.", d.cfg.pollMin, d.cfg.pollMax)
	d.say("")
	return nil
}

// objectRef names one demo object.
type objectRef struct {
	Kind, Name, File string
}

// applyManifests creates the API key Secret and the demo objects, then the invalid one, and
// returns the objects and the API server's message for the invalid one ("" if it was accepted).
func (d *demo) applyManifests(ctx context.Context, apiKey string) ([]objectRef, string, error) {
	ns := d.cfg.namespace
	if err := d.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, "", fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: videov1alpha1.DefaultAPIKeySecretName},
		StringData: map[string]string{videov1alpha1.DefaultAPIKeySecretKey: apiKey},
	}
	if err := d.client.Create(ctx, secret); err != nil {
		return nil, "", fmt.Errorf("creating the API key Secret: %w", err)
	}
	d.say("Created the Secret %s/%s that holds the API key (the objects below use it by default).", ns, secret.Name)

	var refs []objectRef
	for _, f := range demoFiles {
		u, err := d.readManifest(f)
		if err != nil {
			return nil, "", err
		}
		if err := d.client.Create(ctx, u); err != nil {
			return nil, "", fmt.Errorf("applying hack/demo/%s: %w", f, err)
		}
		refs = append(refs, objectRef{Kind: u.GetKind(), Name: u.GetName(), File: f})
		d.say("Applied %s %s (hack/demo/%s).", u.GetKind(), u.GetName(), f)
	}

	u, err := d.readManifest(invalidFile)
	if err != nil {
		return nil, "", err
	}
	d.say("Applying %s %s (hack/demo/%s), which names two sources: the API server must refuse it.", u.GetKind(), u.GetName(), invalidFile)
	err = d.client.Create(ctx, u)
	switch {
	case err == nil:
		d.say("  It was accepted, which is wrong: the CRD's validation did not run.")
		_ = d.client.Delete(ctx, u)
		return refs, "", nil
	case apierrors.IsInvalid(err):
		d.say("  Refused, as expected. The API server said:")
		d.say("    %s", err.Error())
		d.say("")
		return refs, err.Error(), nil
	default:
		return nil, "", fmt.Errorf("applying hack/demo/%s: %w", invalidFile, err)
	}
}

func (d *demo) readManifest(name string) (*unstructured.Unstructured, error) {
	data, err := os.ReadFile(filepath.Join(d.repo, "hack", "demo", name)) //nolint:gosec // the demo's own files
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("hack/demo/%s: %w", name, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("hack/demo/%s: %w", name, err)
	}
	u.SetNamespace(d.cfg.namespace)
	return u, nil
}

func (d *demo) printKubectlHelp() {
	d.say("From another shell, kubectl works against this demo while it runs:")
	d.say("")
	d.say("  export KUBECONFIG=%s", d.kubeconfigPath())
	d.say("  export PATH=\"%s:$PATH\"   # a kubectl as new as the API server", d.assets)
	ns := ""
	if d.cfg.namespace != "default" {
		ns = " -n " + d.cfg.namespace
	}
	d.say("  kubectl get videos -o wide%s", ns)
	d.say("  kubectl describe videorender why-operators%s", ns)
	d.say("  kubectl wait --for=condition=Ready videorender/meet-video-operator --timeout=5m%s", ns)
	d.say("")
}
