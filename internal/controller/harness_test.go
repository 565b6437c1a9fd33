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

package controller

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/metrics"
	"github.com/videoops/video-operator/internal/simulator"
	"github.com/videoops/video-operator/internal/testutil"
)

// testAPIKey is the key the simulator accepts in these specs; every spec asserts it never shows
// up in a log line, an event or a status.
const testAPIKey = "sk-video-test-7f3a9c1e5b2d4086"

// harness is one spec's world: its own namespace, a simulator of the service (fast time scale)
// and a manager scoped to that namespace, so that specs never see each other's objects.
type harness struct {
	ns      string
	sim     *simulator.Server
	srv     *httptest.Server
	logs    *testutil.SyncBuffer
	metrics *metrics.Metrics
	// reg is the registry of metrics: specs read the operator's metrics as a scrape would.
	reg *prometheus.Registry

	// wrap, when set before startManager, wraps the service client the reconcilers use.
	wrap func(apiclient.Interface) apiclient.Interface
	// intercept, when set before startManager, intercepts the manager's Kubernetes client.
	intercept *interceptor.Funcs
	// callbackPoll, when set before startManager, enables the operator's callbacks with this
	// fallback polling interval. The callback server and its key outlive manager restarts.
	callbackPoll time.Duration
	// callbackKey, when set before startManager, is the key callback URLs are signed with; the
	// default is one fixed key, as with --callback-key-file.
	callbackKey []byte
	callbackSrv *httptest.Server
	callbackH   atomic.Pointer[http.Handler]
	// internalErrorIsRefusal, when set before startManager, opts in to taking the service's 500
	// on a submission as a refusal.
	internalErrorIsRefusal bool
	// jobDeadline, when set before startManager, is the manager's job deadline.
	jobDeadline time.Duration
	// leaderElection, when set before startManager, runs the managers with leader election
	// (a Lease in the spec's namespace), as replicas of one Deployment.
	leaderElection bool
	// serviceRate and serviceBurst, when set before startManager, are each API key's call
	// budget; the default is wide enough not to slow a spec down.
	serviceRate  float64
	serviceBurst int
	// clock, when set before startManager, is the manager's clock (a shiftClock moves it).
	clock clock.Clock

	stop context.CancelFunc
	done chan struct{}
	// extra are managers started beside the main one (a second replica, an old leader).
	extra []*runningManager
}

// runningManager is one manager started by the harness.
type runningManager struct {
	stop context.CancelFunc
	done chan struct{}
	// elected is closed once the manager leads.
	elected <-chan struct{}
}

func newHarness(opts simulator.Options) *harness {
	GinkgoHelper()
	if opts.APIKeys == nil {
		opts.APIKeys = []string{testAPIKey}
	}
	if opts.TimeScale == 0 {
		opts.TimeScale = 0.002 // a 2-minute render takes 0.24 s
	}
	if opts.Seed == 0 {
		opts.Seed = uint64(GinkgoRandomSeed())
	}
	h := &harness{ns: newNamespace(), logs: &testutil.SyncBuffer{}}
	h.sim = simulator.New(opts)
	h.srv = httptest.NewServer(h.sim)
	DeferCleanup(func() {
		h.stopManager()
		h.srv.Close()
		h.sim.Close()
	})
	return h
}

// startManager starts the spec's manager with both controllers against the simulator.
func (h *harness) startManager() {
	GinkgoHelper()
	m := h.launch(h.wrap, true)
	h.stop, h.done = m.stop, m.done
}

// startExtraManager starts another manager on the same namespace, with its own memo and caches,
// as a second process would have: an old leader still finishing, or a new one taking over.
func (h *harness) startExtraManager(wrap func(apiclient.Interface) apiclient.Interface) *runningManager {
	GinkgoHelper()
	m := h.launch(wrap, false)
	h.extra = append(h.extra, m)
	return m
}

// launch starts a manager. serveCallbacks routes the callback server to it.
func (h *harness) launch(wrap func(apiclient.Interface) apiclient.Interface, serveCallbacks bool) *runningManager {
	GinkgoHelper()
	logger := zap.New(zap.WriteTo(&teeWriter{h.logs, GinkgoWriter}), zap.UseDevMode(true), zap.Level(zapcore.DebugLevel))
	lease, renew, retry := 2*time.Second, 1500*time.Millisecond, 200*time.Millisecond
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		LeaderElection:                h.leaderElection,
		LeaderElectionNamespace:       h.ns,
		LeaderElectionID:              "video-operator-" + h.ns,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &lease,
		RenewDeadline:                 &renew,
		RetryPeriod:                   &retry,
		Scheme:                        scheme,
		Logger:                        logger,
		Cache:                         cache.Options{DefaultNamespaces: map[string]cache.Config{h.ns: {}}, DefaultTransform: CacheTransform},
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		Controller:                    config.Controller{SkipNameValidation: ptr.To(true)},
		NewClient: func(c *rest.Config, o client.Options) (client.Client, error) {
			cl, err := client.NewWithWatch(c, o)
			if err != nil || h.intercept == nil {
				return cl, err
			}
			return interceptor.NewClient(cl, *h.intercept), nil
		},
	})
	Expect(err).NotTo(HaveOccurred())

	var callback *CallbackOptions
	if h.callbackPoll > 0 {
		if h.callbackSrv == nil {
			h.callbackSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if hp := h.callbackH.Load(); hp != nil {
					(*hp).ServeHTTP(w, r)
					return
				}
				http.Error(w, "manager down", http.StatusServiceUnavailable)
			}))
			DeferCleanup(h.callbackSrv.Close)
		}
		cbKey := h.callbackKey
		if cbKey == nil {
			cbKey = []byte(strings.Repeat("k", 32))
		}
		callback = &CallbackOptions{PublicURL: h.callbackSrv.URL, Key: cbKey, PollInterval: h.callbackPoll,
			Elected: mgr.Elected()}
	}

	reg := prometheus.NewRegistry()
	opMetrics, err := metrics.New(reg)
	Expect(err).NotTo(HaveOccurred())
	if serveCallbacks {
		h.metrics, h.reg = opMetrics, reg
	}
	factory, err := apiclient.NewFactory(apiclient.Options{BaseURL: h.srv.URL + "/serviceapis", Timeout: 5 * time.Second, Observer: opMetrics}, nil)
	Expect(err).NotTo(HaveOccurred())
	r, err := NewReconcilers(mgr.GetClient(), Options{
		ClientFactory:   &wrappingFactory{inner: factory, wrap: wrap},
		APIReader:       mgr.GetAPIReader(),
		Recorder:        mgr.GetEventRecorder("video-operator"),
		LedgerNamespace: managerNamespace,
		PollMin:         20 * time.Millisecond,
		PollMax:         60 * time.Millisecond,
		BackoffBase:     20 * time.Millisecond,
		BackoffMax:      200 * time.Millisecond,
		BrandCacheTTL:   time.Second,
		CallTimeout:     5 * time.Second,
		ServiceRate:     cmp.Or(h.serviceRate, 1000),
		ServiceBurst:    cmp.Or(h.serviceBurst, 100),
		Metrics:         opMetrics,
		Callback:        callback,
		Clock:           h.clock,
		// The installation's secret survives a restart of the manager, as its Secret does.
		FingerprintKey: []byte(strings.Repeat("f", 32)),

		InternalErrorIsRefusal: h.internalErrorIsRefusal,
		JobDeadline:            h.jobDeadline,
		Audit:                  NewAuditLogger(&teeWriter{h.logs, GinkgoWriter}),
	})
	Expect(err).NotTo(HaveOccurred())
	if cb := r.CallbackHandler(); cb != nil && serveCallbacks {
		var handler http.Handler = cb
		h.callbackH.Store(&handler)
	}
	mctx, stop := context.WithCancel(ctx)
	Expect(r.SetupWithManager(mctx, mgr, 4)).To(Succeed())

	m := &runningManager{stop: stop, done: make(chan struct{}), elected: mgr.Elected()}
	go func() {
		defer GinkgoRecover()
		defer close(m.done)
		Expect(mgr.Start(mctx)).To(Succeed())
	}()
	return m
}

// stopExtra stops one extra manager and waits until it has returned.
func (h *harness) stopExtra(m *runningManager) {
	m.stop()
	Eventually(m.done, 30*time.Second).Should(BeClosed())
}

// stopManager stops the manager and waits until it has returned: a crash, as far as the API
// server and the service can tell.
func (h *harness) stopManager() {
	for _, m := range h.extra {
		h.stopExtra(m)
	}
	h.extra = nil
	if h.stop == nil {
		return
	}
	h.callbackH.Store(nil)
	h.stop()
	Eventually(h.done, 30*time.Second).Should(BeClosed())
	h.stop = nil
}

// createSecret creates the API key Secret the samples use.
func (h *harness) createSecret(value string) *corev1.Secret {
	GinkgoHelper()
	return h.createNamedSecret(videov1alpha1.DefaultAPIKeySecretName, value)
}

// createNamedSecret creates a Secret named name holding the API key value under the default key.
func (h *harness) createNamedSecret(name, value string) *corev1.Secret {
	GinkgoHelper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: name},
		StringData: map[string]string{videov1alpha1.DefaultAPIKeySecretKey: value},
	}
	Expect(k8sClient.Create(ctx, s)).To(Succeed())
	return s
}

// jobsNamed returns the simulator's jobs whose request has the given videoName.
func (h *harness) jobsNamed(videoName string) []simulator.JobInfo {
	var out []simulator.JobInfo
	for _, j := range h.sim.Jobs() {
		var req struct {
			VideoName string `json:"videoName"`
		}
		if len(j.Request) > 0 && json.Unmarshal(j.Request, &req) == nil && req.VideoName == videoName {
			out = append(out, j)
		}
	}
	return out
}

// expectNoKeyLeak asserts that the API key appears in no log line, event or object of the spec.
func (h *harness) expectNoKeyLeak(others ...string) {
	GinkgoHelper()
	for _, key := range append(others, testAPIKey) {
		h.expectNoLeakOf(key)
	}
}

func (h *harness) expectNoLeakOf(testAPIKey string) {
	GinkgoHelper()
	Expect(h.logs.String()).NotTo(ContainSubstring(testAPIKey), "the manager's logs")
	Expect(h.logs.String()).NotTo(BeEmpty(), "the manager logged nothing: the assertion above proves nothing")

	var events eventsv1.EventList
	Expect(k8sClient.List(ctx, &events, client.InNamespace(h.ns))).To(Succeed())
	raw, err := json.Marshal(events)
	Expect(err).NotTo(HaveOccurred())
	Expect(string(raw)).NotTo(ContainSubstring(testAPIKey), "events")

	for _, list := range []client.ObjectList{&videov1alpha1.VideoRenderList{}, &videov1alpha1.VideoStoryboardList{}} {
		Expect(k8sClient.List(ctx, list, client.InNamespace(h.ns))).To(Succeed())
		raw, err := json.Marshal(list)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(raw)).NotTo(ContainSubstring(testAPIKey), "objects and their status")
	}
}

// events returns the reasons of the events about the named object. Events are recorded
// asynchronously, after the status write: wait for one with Eventually.
func (h *harness) eventReasons(name string) []string {
	var events eventsv1.EventList
	Expect(k8sClient.List(ctx, &events, client.InNamespace(h.ns))).To(Succeed())
	var out []string
	for _, e := range events.Items {
		if e.Regarding.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

// kstatusOf computes the object's status the way Flux and kstatus do.
func kstatusOf(obj client.Object) status.Status {
	GinkgoHelper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: m}
	gvk, err := k8sClient.GroupVersionKindFor(obj)
	Expect(err).NotTo(HaveOccurred())
	u.SetGroupVersionKind(gvk)
	res, err := status.Compute(u)
	Expect(err).NotTo(HaveOccurred())
	return res.Status
}

// conditionOf returns the condition of type t of a status, for use in Eventually.
func conditionOf(st *videov1alpha1.JobStatus, t videov1alpha1.ConditionType) metav1.Condition {
	if c := meta.FindStatusCondition(st.Conditions, string(t)); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func key(obj client.Object) types.NamespacedName { return client.ObjectKeyFromObject(obj) }

// wrappingFactory lets a spec wrap the service client the reconcilers use.
type wrappingFactory struct {
	inner apiclient.Factory
	wrap  func(apiclient.Interface) apiclient.Interface
}

func (f *wrappingFactory) ForKey(k string) (apiclient.Interface, error) {
	c, err := f.inner.ForKey(k)
	if err != nil || f.wrap == nil {
		return c, err
	}
	return f.wrap(c), nil
}

type teeWriter struct {
	a, b interface{ Write([]byte) (int, error) }
}

func (t *teeWriter) Write(p []byte) (int, error) {
	_, _ = t.b.Write(p)
	return t.a.Write(p)
}

// series gathers the series of the metric family name, as a scrape would.
func (h *harness) series(name string) []*dto.Metric {
	families, err := h.reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()
		}
	}
	return nil
}

// metric is the value of the series of name whose labels are the given name, value pairs
// (counter or gauge); 0 when there is no such series.
func (h *harness) metric(name string, labelPairs ...string) float64 {
	want := map[string]string{}
	for i := 0; i+1 < len(labelPairs); i += 2 {
		want[labelPairs[i]] = labelPairs[i+1]
	}
	for _, m := range h.series(name) {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if !maps.Equal(got, want) {
			continue
		}
		if c := m.GetCounter(); c != nil {
			return c.GetValue()
		}
		return m.GetGauge().GetValue()
	}
	return 0
}

// oldestSubmissions is video_operator_oldest_submission_start_timestamp_seconds by kind.
func (h *harness) oldestSubmissions() map[string]float64 {
	out := map[string]float64{}
	for _, m := range h.series("video_operator_oldest_submission_start_timestamp_seconds") {
		out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	return out
}
