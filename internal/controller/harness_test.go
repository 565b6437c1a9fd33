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
	"sigs.k8s.io/yaml"

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
	// secretMetadataFault, when set before startManager, answers the key store's reads of Secret
	// metadata (the Secret watches, apart from the manager's client) when it returns an error.
	secretMetadataFault func(key client.ObjectKey) error
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
	// budgetGather, when set before startManager, is Options.BudgetGather (the manager's default
	// is DefaultBudgetGather; specs write each reservation at once unless they set it).
	budgetGather time.Duration

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
		BudgetGather:           h.budgetGather,
		Audit:                  NewAuditLogger(&teeWriter{h.logs, GinkgoWriter}),
	})
	Expect(err).NotTo(HaveOccurred())
	if cb := r.CallbackHandler(); cb != nil && serveCallbacks {
		var handler http.Handler = cb
		h.callbackH.Store(&handler)
	}
	mctx, stop := context.WithCancel(ctx)
	Expect(r.SetupWithManager(mctx, mgr, 4)).To(Succeed())
	if h.secretMetadataFault != nil {
		r.Storyboard.keys.ReadMetadataFrom(faultyReader{Reader: r.secrets, fault: h.secretMetadataFault})
	}

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
	Eventually(m.done, within(30*time.Second)).Should(BeClosed())
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
	Eventually(h.done, within(30*time.Second)).Should(BeClosed())
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

// fromYAML decodes an object as a user would write it and places it in namespace ns.
func fromYAML[T client.Object](obj T, ns, doc string) T {
	GinkgoHelper()
	Expect(yaml.UnmarshalStrict([]byte(doc), obj)).To(Succeed())
	obj.SetNamespace(ns)
	return obj
}

func storyRender(ns, name, videoName string) *videov1alpha1.VideoRender {
	return fromYAML(&videov1alpha1.VideoRender{}, ns, `
metadata: {name: `+name+`}
spec:
  storyboard:
    videoName: `+videoName+`
    scenes:
      - story: Operators turn runbooks into code. They make it so, again and again.
`)
}

func storyPreview(ns, name, videoName string) *videov1alpha1.VideoStoryboard {
	return fromYAML(&videov1alpha1.VideoStoryboard{}, ns, `
metadata: {name: `+name+`}
spec:
  videoName: `+videoName+`
  scenes:
    - story: A preview to review before paying. It has two sentences.
`)
}

// badVoiceRender is a render whose job fails at the service: its speaker is no known voice
// ("Errors": TEXT_TO_VIDEO_FAILED).
func badVoiceRender(ns, name, videoName string) *videov1alpha1.VideoRender {
	return fromYAML(&videov1alpha1.VideoRender{}, ns, `
metadata: {name: `+name+`}
spec:
  storyboard:
    videoName: `+videoName+`
    voiceOver: {enabled: true, aiVoices: [{speaker: NoSuchVoice}]}
    scenes:
      - story: This voice does not exist.
`)
}

func getRender(obj *videov1alpha1.VideoRender) func(Gomega) *videov1alpha1.VideoRender {
	return func(g Gomega) *videov1alpha1.VideoRender {
		out := &videov1alpha1.VideoRender{}
		g.Expect(k8sClient.Get(ctx, key(obj), out)).To(Succeed())
		return out
	}
}

func getStoryboard(obj *videov1alpha1.VideoStoryboard) func(Gomega) *videov1alpha1.VideoStoryboard {
	return func(g Gomega) *videov1alpha1.VideoStoryboard {
		out := &videov1alpha1.VideoStoryboard{}
		g.Expect(k8sClient.Get(ctx, key(obj), out)).To(Succeed())
		return out
	}
}

// updateObject reads the object, changes it and updates it, retrying on conflict.
func updateObject(obj client.Object, change func(client.Object)) {
	GinkgoHelper()
	Eventually(func() error {
		cur := obj.DeepCopyObject().(client.Object)
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
			return err
		}
		change(cur)
		return k8sClient.Update(ctx, cur)
	}).Should(Succeed())
}

// editRender writes edit to the render's spec or metadata, again on a conflict.
func editRender(vr *videov1alpha1.VideoRender, edit func(*videov1alpha1.VideoRender)) {
	GinkgoHelper()
	updateObject(vr, func(o client.Object) { edit(o.(*videov1alpha1.VideoRender)) })
}

// editStory changes the story of a render's first scene: a new spec generation.
func editStory(vr *videov1alpha1.VideoRender, story string) {
	GinkgoHelper()
	updateObject(vr, func(o client.Object) { o.(*videov1alpha1.VideoRender).Spec.Storyboard.Scenes[0].Story = ptrTo(story) })
}

// editPreviewStory sets the narration of the storyboard's first scene: a new request, so a new
// preview (editStory is the same for a render).
func editPreviewStory(sb *videov1alpha1.VideoStoryboard, story string) {
	GinkgoHelper()
	updateObject(sb, func(o client.Object) { o.(*videov1alpha1.VideoStoryboard).Spec.Scenes[0].Story = ptrTo(story) })
}

// setAnnotation sets one annotation, retrying on conflict.
func setAnnotation(obj client.Object, key, value string) {
	GinkgoHelper()
	updateObject(obj, func(o client.Object) { o.SetAnnotations(with(o.GetAnnotations(), key, value)) })
}

// setLabel sets one label, retrying on conflict.
func setLabel(obj client.Object, key, value string) {
	GinkgoHelper()
	updateObject(obj, func(o client.Object) { o.SetLabels(with(o.GetLabels(), key, value)) })
}

func with(m map[string]string, key, value string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[key] = value
	return m
}

// beReady matches an object of either kind whose Ready condition is True for its generation.
func readyFor(st *videov1alpha1.JobStatus, generation int64) bool {
	c := conditionOf(st, videov1alpha1.ConditionReady)
	return c.Status == metav1.ConditionTrue && c.ObservedGeneration == generation && st.ObservedGeneration == generation
}

// eventuallyReady waits until the render is Ready for its current generation.
func eventuallyReady(vr *videov1alpha1.VideoRender) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		got := getRender(vr)(g)
		g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
	}).Should(Succeed())
}

func stalledWith(st *videov1alpha1.JobStatus, reason videov1alpha1.ConditionReason) bool {
	c := conditionOf(st, videov1alpha1.ConditionStalled)
	return c.Status == metav1.ConditionTrue && c.Reason == string(reason)
}

// eventNotesG is eventNotes for use inside Eventually.
func eventNotesG(g Gomega, ns, name, reason string) []string {
	var events eventsv1.EventList
	g.Expect(k8sClient.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range events.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out
}

// eventNotes returns the notes of the events with reason about the named object.
func eventNotes(ns, name, reason string) []string {
	GinkgoHelper()
	return eventNotesG(Default, ns, name, reason)
}

func renderJobs(jobs []simulator.JobInfo) int {
	n := 0
	for _, j := range jobs {
		if j.Kind == "render" {
			n++
		}
	}
	return n
}

// inFlightAttempt returns the attempt id a status patch writes into status.submission, or "".
func inFlightAttempt(patch []byte) string {
	var p struct {
		Status struct {
			Submission *struct {
				AttemptID string `json:"attemptId"`
			} `json:"submission"`
		} `json:"status"`
	}
	if json.Unmarshal(patch, &p) != nil || p.Status.Submission == nil {
		return ""
	}
	return p.Status.Submission.AttemptID
}

// crashAfterRender makes the manager die right after the service accepted its nth render call
// (see crashAfterSubmit); the flag says when it happened.
func (h *harness) crashAfterRender(n int32) *atomic.Bool {
	var renders atomic.Int32
	crashed := &atomic.Bool{}
	h.wrap = func(c apiclient.Interface) apiclient.Interface {
		return &crashAfterSubmit{Interface: c, crash: func() bool {
			if renders.Add(1) == n && crashed.CompareAndSwap(false, true) {
				h.stop()
				return true
			}
			return false
		}}
	}
	return crashed
}

// crashAfterSubmit calls crash right after the service accepted a render, before the caller
// sees the answer. When crash reports that the process died, the reconcile ends with a panic
// (controller-runtime recovers it), so nothing after the call happens: no status write, as after
// a real crash.
type crashAfterSubmit struct {
	apiclient.Interface
	crash func() bool
}

func (c *crashAfterSubmit) RenderStoryboard(ctx context.Context, body any) (*apiclient.JobCreated, error) {
	created, err := c.Interface.RenderStoryboard(ctx, body)
	if err == nil && c.crash() {
		panic("simulated crash right after the paid call")
	}
	return created, err
}

// jobRewriter changes each job read from the service, as a service answering otherwise would.
type jobRewriter struct {
	apiclient.Interface
	rewrite func(*apiclient.Job)
}

func (r *jobRewriter) GetJob(ctx context.Context, id string) (*apiclient.Job, error) {
	j, err := r.Interface.GetJob(ctx, id)
	if err == nil {
		r.rewrite(j)
	}
	return j, err
}

var errInjected = injectedError("injected failure of the status write")

type injectedError string

func (e injectedError) Error() string { return string(e) }

// keyedWorld is the set-up the lifecycle Describes share, called in a Describe's body: after each
// spec no API key has leaked, and the start it returns makes a spec's world (simulator, Secret)
// into *h; each spec starts the manager once its interceptors and wrappers are set.
func keyedWorld(h **harness) func(simulator.Options) {
	AfterEach(func() {
		if *h != nil {
			(*h).expectNoKeyLeak()
		}
	})
	return func(opts simulator.Options) {
		*h = newHarness(opts)
		(*h).createSecret(testAPIKey)
	}
}

// faultyReader answers a read with fault's error, when it returns one.
type faultyReader struct {
	client.Reader
	fault func(key client.ObjectKey) error
}

func (f faultyReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := f.fault(key); err != nil {
		return err
	}
	return f.Reader.Get(ctx, key, obj, opts...)
}
