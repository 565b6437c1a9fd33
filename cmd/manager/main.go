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

// Command manager runs the video-operator controllers.
package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/admissionpolicy"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/callgate"
	"github.com/videoops/video-operator/internal/controller"
	"github.com/videoops/video-operator/internal/metrics"
	"github.com/videoops/video-operator/internal/spendguard"
	"github.com/videoops/video-operator/internal/version"
)

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(videov1alpha1.AddToScheme(scheme))
}

// serviceBaseURLPlaceholder is the value config/manager/manager-config.env, and so
// dist/install.yaml and a released install.yaml, carry until the platform team sets the service's
// URL (docs/release.md, "Install"). It is recognised so that the manager says what to do instead of
// failing on a URL it cannot call.
const serviceBaseURLPlaceholder = "SET-ME-video-service-base-url"

// options holds the command-line configuration of the manager.
type options struct {
	metricsAddr          string
	metricsSecure        bool
	metricsCertDir       string
	probeAddr            string
	pprofAddr            string
	leaderElect          bool
	leaderElectionID     string
	leaderElectNamespace string
	leaseDuration        time.Duration
	renewDeadline        time.Duration
	retryPeriod          time.Duration
	enableHTTP2          bool

	serviceBaseURL  string
	serviceTimeout  time.Duration
	serviceRate     float64
	serviceBurst    int
	pollMin         time.Duration
	pollMax         time.Duration
	pollShare       float64
	progressEvery   time.Duration
	jobDeadline     time.Duration
	backoffBase     time.Duration
	backoffMax      time.Duration
	concurrency     int
	watchNamespaces string

	internalErrorIsRefusal bool
	allowInsecureURL       bool

	releaseFinalizers bool
	stopDeployment    string

	callbackAddr    string
	callbackURL     string
	callbackKeyFile string
	callbackPoll    time.Duration
	callbackRate    float64

	ledgerNamespace         string
	fingerprintKeyFile      string
	fingerprintKeySecret    string
	fingerprintKeyNamespace string
}

func (o *options) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0",
		"Address the metrics endpoint binds to, for example :8443 (secure) or :8080 (plain); 0 disables it.")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true,
		"Serve metrics over HTTPS, with authentication and authorization through the API server.")
	fs.StringVar(&o.metricsCertDir, "metrics-cert-dir", "",
		"Directory holding tls.crt and tls.key (for example a mounted kubernetes.io/tls Secret) that the HTTPS metrics endpoint serves, "+
			"reloaded when they change. Empty: a self-signed certificate made at start.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address the liveness and readiness probes bind to.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "0",
		"Address of the Go profiler (net/http/pprof), for example 127.0.0.1:6060; 0 disables it. Keep it off the network: it shows the process's memory.")
	fs.BoolVar(&o.leaderElect, "leader-elect", false,
		"Enable leader election, so that only one of several manager replicas is active at a time.")
	fs.StringVar(&o.leaderElectionID, "leader-election-id", "video-operator.video.videoops.io",
		"Name of the Lease used for leader election.")
	fs.StringVar(&o.leaderElectNamespace, "leader-election-namespace", "",
		"Namespace of the leader election Lease; defaults to the namespace the manager runs in.")
	fs.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"How long a standby waits after the leader's last renewal before taking over (a leader that is killed cannot release the lease).")
	fs.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"How long the leader retries renewing before it gives up leadership and exits.")
	fs.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "How often replicas try to acquire or renew the lease.")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false,
		"Enable HTTP/2 for the metrics server; off by default because of the HTTP/2 rapid reset and stream cancellation CVEs.")

	fs.StringVar(&o.serviceBaseURL, "service-base-url", os.Getenv("VIDEO_SERVICE_BASE_URL"),
		"Base URL of the video service, including the /serviceapis prefix (env VIDEO_SERVICE_BASE_URL).")
	fs.DurationVar(&o.serviceTimeout, "service-timeout", apiclient.DefaultTimeout, "Timeout of one call to the video service.")
	fs.Float64Var(&o.serviceRate, "service-rate-limit", float64(apiclient.DefaultRateLimit),
		"Calls per second to the video service, per API key, across both controllers.")
	fs.IntVar(&o.serviceBurst, "service-burst", apiclient.DefaultBurst, "Burst of calls to the video service, per API key.")
	fs.DurationVar(&o.pollMin, "poll-min", controller.DefaultPollMin,
		"Shortest delay between two reads of a running job (the service asks for 10 to 30 seconds).")
	fs.DurationVar(&o.pollMax, "poll-max", controller.DefaultPollMax,
		"Longest delay between two reads of a running job; each delay is drawn at random in between.")
	fs.Float64Var(&o.pollShare, "poll-share", controller.DefaultPollShare,
		"Part (0 to 0.5) of each API key's call rate and of the reconcile workers kept for the reads of running jobs "+
			"while submissions are queued, so that a burst of submissions does not delay the status of jobs that ended. "+
			"0 turns it off: reads of running jobs then wait behind queued submissions.")
	fs.DurationVar(&o.progressEvery, "progress-interval", controller.DefaultProgressInterval,
		"Least time between two status writes that only carry a running job's progress; the writes of a "+
			"submission and of a job's end are never held back. Negative writes every progress read.")
	fs.DurationVar(&o.jobDeadline, "job-deadline", controller.DefaultJobDeadline,
		"How long a job may run before the controller stops waiting for it: it is recorded as failed "+
			"(JOB_DEADLINE_EXCEEDED), so that a spec change or a retry submits a new one. 0 disables it.")
	fs.DurationVar(&o.backoffBase, "retry-backoff-base", controller.DefaultBackoffBase,
		"First delay after a 429, a 5xx or a network error; it doubles with each further failure (with jitter), "+
			"and a longer Retry-After of the service wins.")
	fs.DurationVar(&o.backoffMax, "retry-backoff-max", controller.DefaultBackoffMax, "Longest delay after repeated failures.")
	fs.IntVar(&o.concurrency, "max-concurrent-reconciles", 10, "Objects of each kind reconciled in parallel.")
	fs.StringVar(&o.watchNamespaces, "watch-namespaces", "",
		"Comma-separated namespaces to manage; empty manages all namespaces.")
	fs.StringVar(&o.ledgerNamespace, "budget-ledger-namespace", managerNamespace(),
		"Namespace of the VideoBudget ledgers, out of tenants' reach; defaults to the namespace the manager runs in (env "+
			"POD_NAMESPACE, set by the install through the downward API, or its service account's). Given empty: the "+
			"service account's namespace, or "+spendguard.DefaultLedgerNamespace+".")

	fs.BoolVar(&o.allowInsecureURL, "allow-insecure-service-url", false,
		"Accept a plain http:// --service-base-url on a host other than the loopback interface. The API key then "+
			"crosses the network in clear text: only for a simulator inside the cluster.")
	fs.BoolVar(&o.internalErrorIsRefusal, "treat-internal-error-as-refused", false,
		"Take the service's documented 500 body (INTERNAL_ERROR) on a submission as proof that no job was created, "+
			"and submit again later. The interface document does not promise it: a 500 that did create a job is then "+
			"paid twice. Off: such a submission stalls with SubmissionUnknown for a human to confirm.")

	fs.BoolVar(&o.releaseFinalizers, "release-finalizers", false,
		"Uninstall mode: instead of running the controllers, let go of the operator's finalizers with what they guard "+
			"settled (running jobs charged their estimate, budget reservations settled), then exit. Run it with no manager "+
			"running over the namespaces: with --leader-elect it waits for the managers' lease (docs/uninstall.md).")
	fs.StringVar(&o.stopDeployment, "stop-deployment", "",
		"With --release-finalizers: first scale this Deployment (the manager's, in --leader-election-namespace or the pod's "+
			"namespace) to 0 and wait until its pods are gone, as the Helm chart's pre-delete hook does.")

	fs.StringVar(&o.callbackAddr, "callback-bind-address", "0",
		"Address the job-result callback server binds to, for example :9443; 0 disables callbacks.")
	fs.StringVar(&o.callbackURL, "callback-public-url", "",
		"URL at which the video service reaches the callback server (without the path). When set, requests "+
			"whose spec names no webhook carry the operator's callback URL, and polling becomes the fallback.")
	fs.StringVar(&o.callbackKeyFile, "callback-key-file", "",
		"File holding the key (at least 32 bytes) that signs callback URLs, for example a mounted Secret. "+
			"Keep it stable: a callback for a submission interrupted by a restart is recognised only with the same key.")
	fs.DurationVar(&o.callbackPoll, "callback-poll-interval", controller.DefaultCallbackPollInterval,
		"Fallback polling interval of jobs that will call back.")
	fs.StringVar(&o.fingerprintKeyFile, "fingerprint-key-file", "",
		"File holding the installation's secret (at least 32 bytes) that keys the fingerprints of API keys in status and annotations. "+
			"When empty, the secret is read from --fingerprint-key-secret, which the manager creates once if absent.")
	fs.StringVar(&o.fingerprintKeySecret, "fingerprint-key-secret", DefaultFingerprintKeySecret,
		"Secret in --fingerprint-key-namespace holding the installation's fingerprint secret (data key \"key\"); created with a random secret if absent.")
	fs.StringVar(&o.fingerprintKeyNamespace, "fingerprint-key-namespace", managerNamespace(),
		"Namespace of --fingerprint-key-secret; defaults to the namespace the manager runs in (POD_NAMESPACE, or its service account's). "+
			"Out of a cluster without it, fingerprints are keyed with a secret of the process.")
	fs.Float64Var(&o.callbackRate, "callback-rate-limit", 1000,
		"Signed callbacks accepted per second (twice as many at once). The service does not retry a refused callback: "+
			"its job is then read at its fallback poll, so keep this above the rate at which jobs end.")
}

func (o *options) validate() error {
	var errs []error
	if o.stopDeployment != "" && !o.releaseFinalizers {
		errs = append(errs, errors.New("--stop-deployment goes with --release-finalizers"))
	}
	if o.releaseFinalizers {
		// The uninstall calls no service: the base URL is not needed.
		if o.retryPeriod <= 0 || o.renewDeadline <= o.retryPeriod || o.leaseDuration <= o.renewDeadline {
			errs = append(errs, errors.New("leader election needs --leader-elect-lease-duration > --leader-elect-renew-deadline > --leader-elect-retry-period > 0"))
		}
		return errors.Join(errs...)
	}
	if o.serviceBaseURL == "" {
		errs = append(errs, errors.New("--service-base-url (or VIDEO_SERVICE_BASE_URL) is required"))
	} else if strings.TrimSpace(o.serviceBaseURL) == serviceBaseURLPlaceholder {
		errs = append(errs, fmt.Errorf("--service-base-url (VIDEO_SERVICE_BASE_URL) is still the installer's placeholder %q: "+
			"set the video service's base URL, including /serviceapis, in the manager's ConfigMap (docs/release.md, \"Install\")",
			serviceBaseURLPlaceholder))
	}
	if o.pollShare < 0 || o.pollShare > callgate.MaxPollShare {
		errs = append(errs, fmt.Errorf("--poll-share (%g) must be between 0 and %g", o.pollShare, callgate.MaxPollShare))
	}
	if o.pollMin <= 0 || o.pollMax < o.pollMin {
		errs = append(errs, fmt.Errorf("--poll-min (%s) must be positive and at most --poll-max (%s)", o.pollMin, o.pollMax))
	}
	if o.retryPeriod <= 0 || o.renewDeadline <= o.retryPeriod || o.leaseDuration <= o.renewDeadline {
		errs = append(errs, errors.New("leader election needs --leader-elect-lease-duration > --leader-elect-renew-deadline > --leader-elect-retry-period > 0"))
	}
	if o.backoffBase <= 0 || o.backoffMax < o.backoffBase {
		errs = append(errs, fmt.Errorf("--retry-backoff-base (%s) must be positive and at most --retry-backoff-max (%s)", o.backoffBase, o.backoffMax))
	}
	if o.serviceRate <= 0 || o.serviceBurst < 1 {
		errs = append(errs, errors.New("--service-rate-limit must be positive and --service-burst at least 1"))
	}
	if o.concurrency < 1 {
		errs = append(errs, errors.New("--max-concurrent-reconciles must be at least 1"))
	}
	if (o.callbackURL != "") != (o.callbackAddr != "0" && o.callbackAddr != "") {
		errs = append(errs, errors.New("--callback-public-url and --callback-bind-address go together"))
	}
	return errors.Join(errs...)
}

// namespaces returns the cache configuration for --watch-namespaces.
func (o *options) namespaces() map[string]cache.Config {
	if strings.TrimSpace(o.watchNamespaces) == "" {
		return nil
	}
	out := map[string]cache.Config{}
	for _, ns := range strings.Split(o.watchNamespaces, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out[ns] = cache.Config{}
		}
	}
	return out
}

func main() {
	var opts options
	opts.bind(flag.CommandLine)
	zapOpts := zap.Options{Development: false}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := opts.validate(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if opts.releaseFinalizers {
		if err := runReleaseFinalizers(opts); err != nil {
			ctrl.Log.WithName("uninstall").Error(err, "Releasing the operator's finalizers failed; run it again (it charges nothing twice)")
			os.Exit(1)
		}
		return
	}
	if err := run(opts); err != nil {
		ctrl.Log.WithName("setup").Error(err, "Manager exited with an error")
		os.Exit(1)
	}
}

func run(opts options) error {
	setupLog := ctrl.Log.WithName("setup")
	ctx := ctrl.SetupSignalHandler()

	var tlsOpts []func(*tls.Config)
	if !opts.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}

	metricsOpts := metricsserver.Options{
		BindAddress:   opts.metricsAddr,
		SecureServing: opts.metricsSecure,
		TLSOpts:       tlsOpts,
	}
	if opts.metricsCertDir != "" {
		// controller-runtime falls back to a self-signed certificate when the files are missing;
		// a scraper told to verify with a CA would then fail with nothing in the manager's log.
		for _, f := range []string{"tls.crt", "tls.key"} {
			if _, err := os.Stat(filepath.Join(opts.metricsCertDir, f)); err != nil {
				return fmt.Errorf("--metrics-cert-dir: %w", err)
			}
		}
		metricsOpts.CertDir, metricsOpts.CertName, metricsOpts.KeyName = opts.metricsCertDir, "tls.crt", "tls.key"
	}
	if opts.metricsSecure {
		// Only callers allowed by the API server (TokenReview and SubjectAccessReview) read metrics.
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cache.Options{DefaultNamespaces: opts.namespaces(), DefaultTransform: controller.CacheTransform},
		Metrics:                 metricsOpts,
		WebhookServer:           webhook.NewServer(webhook.Options{TLSOpts: tlsOpts}),
		HealthProbeBindAddress:  opts.probeAddr,
		PprofBindAddress:        opts.pprofAddr,
		LeaderElection:          opts.leaderElect,
		LeaderElectionID:        opts.leaderElectionID,
		LeaderElectionNamespace: opts.leaderElectNamespace,
		LeaseDuration:           &opts.leaseDuration,
		RenewDeadline:           &opts.renewDeadline,
		RetryPeriod:             &opts.retryPeriod,
		// The manager exits right after losing the lease, so releasing it on shutdown is safe and
		// lets a new leader start without waiting for the lease to expire.
		LeaderElectionReleaseOnCancel: true,
		// A paid call in flight and the write of its job id run to their end on shutdown; the
		// lease is released only after them. The pod's terminationGracePeriodSeconds must be longer.
		GracefulShutdownTimeout: ptr.To(controller.ShutdownBudget(opts.serviceTimeout)),
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}

	if err := setupControllers(ctx, mgr, opts); err != nil {
		return err
	}
	if err := registerLeaderElectionGauge(crmetrics.Registry, opts.leaderElect, opts.leaderElectionID); err != nil {
		return err
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding readiness check: %w", err)
	}

	setupLog.Info("Starting manager", "version", version.Version, "serviceBaseURL", opts.serviceBaseURL, "pollMin", opts.pollMin.String(),
		"pollMax", opts.pollMax.String(), "watchNamespaces", opts.watchNamespaces)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running manager: %w", err)
	}
	return nil
}

// setupControllers builds the service client factory, the metrics and both reconcilers. The
// clients carry no rate limiter: its wait would park a reconcile worker. The controllers pace
// each API key's calls with a budget that requeues instead (--service-rate-limit).
func setupControllers(ctx context.Context, mgr ctrl.Manager, opts options) error {
	m, err := metrics.New(crmetrics.Registry)
	if err != nil {
		return err
	}
	factory, err := apiclient.NewFactory(apiclient.Options{
		BaseURL:           opts.serviceBaseURL,
		Timeout:           opts.serviceTimeout,
		Observer:          m,
		AllowInsecureHTTP: opts.allowInsecureURL,
	}, nil)
	if err != nil {
		return fmt.Errorf("configuring the video service client: %w", err)
	}
	callback, err := callbackOptions(opts)
	if err != nil {
		return err
	}
	if callback != nil {
		callback.Elected = mgr.Elected()
	}
	fpKey, err := fingerprintKey(ctx, ctrl.Log.WithName("setup"), mgr.GetAPIReader(), mgr.GetClient(), opts)
	if err != nil {
		return err
	}
	r, err := controller.NewReconcilers(mgr.GetClient(), controller.Options{
		ClientFactory:   factory,
		APIReader:       mgr.GetAPIReader(),
		WatchNamespaces: slices.Sorted(maps.Keys(opts.namespaces())),
		LedgerNamespace: ledgerNamespace(opts.ledgerNamespace),
		Recorder:        mgr.GetEventRecorder("video-operator"),
		PollMin:         opts.pollMin,
		PollMax:         opts.pollMax,
		// 0 turns the share off; Options reads 0 as "the default".
		PollShare:        cmp.Or(opts.pollShare, -1),
		ProgressInterval: opts.progressEvery,
		BudgetGather:     controller.DefaultBudgetGather,
		BackoffBase:      opts.backoffBase,
		JobDeadline:      jobDeadline(opts.jobDeadline),
		BackoffMax:       opts.backoffMax,
		CallTimeout:      opts.serviceTimeout,
		ServiceRate:      opts.serviceRate,
		ServiceBurst:     opts.serviceBurst,
		Metrics:          m,
		Callback:         callback,
		FingerprintKey:   fpKey,

		InternalErrorIsRefusal: opts.internalErrorIsRefusal,
		Audit:                  controller.NewAuditLogger(os.Stderr),
	})
	if err != nil {
		return err
	}
	if err := r.SetupWithManager(ctx, mgr, opts.concurrency); err != nil {
		return err
	}
	// The scenes' rules are checked at admission by the policies of config/policies: say so when
	// they are missing (video_operator_admission_policy_missing, an event on the CRD).
	checker, err := admissionpolicy.NewChecker(mgr.GetAPIReader(), mgr.GetEventRecorder("video-operator"), crmetrics.Registry,
		ctrl.Log.WithName("admission-policy"))
	if err != nil {
		return err
	}
	if err := mgr.Add(checker); err != nil {
		return fmt.Errorf("adding the admission policy check: %w", err)
	}
	if h := r.CallbackHandler(); h != nil {
		s, err := newCallbackServer(ctx, opts.callbackAddr, h)
		if err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("callbacks", s.ready); err != nil {
			return fmt.Errorf("adding the callback readiness check: %w", err)
		}
		return mgr.Add(s)
	}
	return nil
}

// ledgerNamespace is the namespace of the budget ledgers: the flag (managerNamespace by default),
// else the pod's own namespace, else the default install's, said in the log (a manager run
// outside the cluster). An empty flag given explicitly skips POD_NAMESPACE, as it did when
// POD_NAMESPACE was the flag's whole default: the ledgers do not move for anyone who passes it.
func ledgerNamespace(flagValue string) string {
	if ns := strings.TrimSpace(flagValue); ns != "" {
		return ns
	}
	if ns := podNamespace(); ns != "" {
		return ns
	}
	ctrl.Log.WithName("setup").Info("The manager's namespace is not known (no --budget-ledger-namespace, POD_NAMESPACE or service account): "+
		"budget ledgers are kept in the default", "namespace", spendguard.DefaultLedgerNamespace)
	return spendguard.DefaultLedgerNamespace
}

// jobDeadline maps the flag's "0 disables" onto the controller's "negative disables".
func jobDeadline(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// callbackOptions reads the callback configuration; nil when callbacks are off.
func callbackOptions(opts options) (*controller.CallbackOptions, error) {
	if opts.callbackURL == "" {
		return nil, nil
	}
	var key []byte
	if opts.callbackKeyFile != "" {
		b, err := os.ReadFile(opts.callbackKeyFile)
		if err != nil {
			return nil, fmt.Errorf("reading --callback-key-file: %w", err)
		}
		key = []byte(strings.TrimSpace(string(b)))
	} else {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("generating a callback key: %w", err)
		}
		ctrl.Log.WithName("setup").Info("No --callback-key-file: callback URLs are signed with a key that changes " +
			"at each start, so the callback of a submission interrupted by a restart is not recognised")
	}
	return &controller.CallbackOptions{PublicURL: opts.callbackURL, Key: key, RateLimit: opts.callbackRate,
		Burst: max(1, int(2*opts.callbackRate)), PollInterval: opts.callbackPoll}, nil
}
