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

// Package metrics holds the operator's Prometheus metrics (Metrics): jobs by kind, namespace and
// phase, submissions and endings, the service's answers and their latency, AI credits, callbacks,
// status writes, the budgets' usage, the oldest submission in flight, the objects stalled by reason
// and the oldest render awaiting an approval. Every label has a small,
// bounded set of values; none holds an API key, a URL, an object name or a job id.
package metrics

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// Metrics are the operator's Prometheus metrics. Every label has a small, fixed set of values:
// no label ever holds an API key, a URL, an object name or a job id. A nil *Metrics records
// nothing.
//
// The one exception is namespace, on video_operator_jobs, the stalled and awaiting-approval gauges
// and the budget gauges, so that an alert can be routed to the tenant that owns it. Its values
// are bounded by the namespaces of the cluster that hold objects of the kind (or by
// --watch-namespaces): at most namespaces x 2 kinds x 5 phases series for the jobs, namespaces x
// 2 kinds x the fixed StalledReasons for the stalled gauge (a series only while an object is
// stalled), one per namespace for the approvals; a namespace's series are removed when its last
// object of a kind goes.
type Metrics struct {
	jobs        *prometheus.GaugeVec
	submissions *prometheus.CounterVec
	endings     *prometheus.CounterVec
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	credits     *prometheus.CounterVec
	callbacks   *prometheus.CounterVec
	// statusWrite and answerToWrite split the time from a job's end to its status between the
	// API server (the write) and the manager (from the service's answer to issuing the write).
	statusWrite   prometheus.Histogram
	answerToWrite prometheus.Histogram
	// budgetUsed and budgetRemaining are the VideoBudget of each namespace (see budgetmetrics.go).
	budgetUsed      *prometheus.GaugeVec
	budgetRemaining *prometheus.GaugeVec
	// budgetLedger is 1 while a namespace's budget cannot write its ledger (nothing is paid there).
	budgetLedger *prometheus.GaugeVec
	// budgetWrites and budgetChanges are the VideoBudget status writes and what they carried.
	budgetWrites  *prometheus.CounterVec
	budgetChanges *prometheus.CounterVec
	// budgetGrants are how renders that came to pay found their reservation written ahead.
	budgetGrants *prometheus.CounterVec

	mu     sync.Mutex
	phases map[string]map[types.NamespacedName]videov1alpha1.Phase
	// objects counts the objects of each kind and namespace that phases holds, so that the
	// namespace's jobs series go when its last object goes, at O(1) per reconcile.
	objects map[kindNamespace]int
	// inFlight is status.submission.startedAt of every object whose submission has no job id
	// yet (a call under way, or an outcome unknown), by kind: the oldest is exposed at scrape.
	inFlight map[string]map[types.NamespacedName]time.Time
	// stalled is video_operator_stalled_objects, kept from states and stalledCount (stalled.go).
	stalled      *prometheus.GaugeVec
	states       map[string]map[types.NamespacedName]objectState
	stalledCount map[stalledKey]int
}

// kindNamespace keys Metrics.objects.
type kindNamespace struct{ kind, namespace string }

// allPhases are the values of the phase label, for removing a namespace's series.
var allPhases = []videov1alpha1.Phase{videov1alpha1.PhasePending, videov1alpha1.PhaseSubmitting,
	videov1alpha1.PhaseInProgress, videov1alpha1.PhaseCompleted, videov1alpha1.PhaseFailed}

// oldestSubmissionDesc is video_operator_oldest_submission_start_timestamp_seconds.
var oldestSubmissionDesc = prometheus.NewDesc("video_operator_oldest_submission_start_timestamp_seconds",
	"Start (Unix time) of the oldest submission without a job id (status.submission), by kind; no series "+
		"when none. A healthy one lasts at most --service-timeout plus two status writes: an old one is stuck "+
		"(SubmissionUnknown waits for a human).", []string{"kind"}, nil)

// oldestSubmission exposes the oldest entry of Metrics.inFlight per kind, computed at scrape from
// the submissions in flight only (usually a handful), so a reconcile pays one map write.
type oldestSubmission struct{ m *Metrics }

func (o oldestSubmission) Describe(ch chan<- *prometheus.Desc) { ch <- oldestSubmissionDesc }

func (o oldestSubmission) Collect(ch chan<- prometheus.Metric) {
	o.m.mu.Lock()
	defer o.m.mu.Unlock()
	for kind, byName := range o.m.inFlight {
		var oldest time.Time
		for _, t := range byName {
			if oldest.IsZero() || t.Before(oldest) {
				oldest = t
			}
		}
		if !oldest.IsZero() {
			ch <- prometheus.MustNewConstMetric(oldestSubmissionDesc, prometheus.GaugeValue,
				float64(oldest.UnixNano())/1e9, kind)
		}
	}
}

var _ apiclient.Observer = (*Metrics)(nil)

// New creates the metrics and registers them with reg (controller-runtime's
// metrics.Registry in the manager).
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		jobs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "video_operator_jobs",
			Help: "Objects by kind, namespace and phase; a namespace's series go when its last object of the kind does.",
		}, []string{"kind", "namespace", "phase"}),
		submissions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "video_operator_submissions_total",
			Help: "Submit calls by kind and result: accepted, refused (no job created) or unknown (outcome unknown; " +
				"a call interrupted by a crash is counted when the next process finds its record).",
		}, []string{"kind", "result"}),
		endings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "video_operator_jobs_ended_total",
			Help: "Jobs seen ending, by kind and result (completed or failed).",
		}, []string{"kind", "result"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "video_operator_service_requests_total",
			Help: "Calls to the video service by endpoint and HTTP status code (0 when no response arrived).",
		}, []string{"endpoint", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "video_operator_service_request_duration_seconds",
			Help:    "Latency of calls to the video service by endpoint.",
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"endpoint"}),
		credits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "video_operator_ai_credits_used_total",
			Help: "AI credits reported used by completed jobs, by kind.",
		}, []string{"kind"}),
		callbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "video_operator_callbacks_total",
			Help: "Job-result callbacks received, by result: accepted, rate_limited (a signed callback refused: " +
				"the service does not retry, the job's fallback poll reads it), unsigned (no valid signature), invalid (unreadable body).",
		}, []string{"result"}),
		statusWrite: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "video_operator_status_write_duration_seconds",
			Help:    "Time the API server takes to answer a status write of the operator.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}),
		answerToWrite: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "video_operator_answer_to_write_seconds",
			Help: "Time from the service's answer that a job ended (a poll or the read a callback asked for) " +
				"to the operator issuing the status write that records it.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
		}),
		budgetUsed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "video_operator_budget_used",
			Help: "What the current period of a namespace's VideoBudget used, by limit (maxRenders and maxPreviews include submissions in flight).",
		}, []string{"namespace", "limit"}),
		budgetLedger: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "video_operator_budget_ledger_unavailable",
			Help: "1 while a namespace's VideoBudget cannot write its ledger in the manager's namespace: nothing more is paid in " +
				"that namespace until it can (the budget's Ready is False, reason LedgerUnavailable); 0 otherwise.",
		}, []string{"namespace"}),
		budgetRemaining: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "video_operator_budget_remaining",
			Help: "What is left in the current period of a namespace's VideoBudget, by limit; only limits that are set.",
		}, []string{"namespace", "limit"}),
		budgetWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "video_operator_budget_writes_total",
			Help: "VideoBudget status writes, by writer (guard: the spend guard's shared writes; controller: the VideoBudget " +
				"controller), cause (the change that made the write happen) and result (written, conflict).",
		}, []string{"writer", "cause", "result"}),
		budgetChanges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "video_operator_budget_write_changes_total",
			Help: "Changes carried by written VideoBudget status writes, by kind (reserve, reserve_ahead, fold, " +
				"charge, give_up, release, uninstall, controller); divided by the writes, " +
				"how well writes are shared.",
		}, []string{"change"}),
		budgetGrants: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "video_operator_budget_grants_total",
			Help: "Renders of guarded namespaces that came to pay, by what they found of their reservation written ahead while " +
				"they waited for their key's call budget (used: paid on it without a budget write; none, unwritten, refused, " +
				"changed: wrote one of their own).",
		}, []string{"result"}),
		stalled: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "video_operator_stalled_objects",
			Help: "Objects whose Stalled condition is True (only a human can unblock them), by kind, namespace and " +
				"reason (the condition's reason, or Other); no series when none is stalled.",
		}, []string{"kind", "namespace", "reason"}),
		phases:       map[string]map[types.NamespacedName]videov1alpha1.Phase{},
		objects:      map[kindNamespace]int{},
		inFlight:     map[string]map[types.NamespacedName]time.Time{},
		states:       map[string]map[types.NamespacedName]objectState{},
		stalledCount: map[stalledKey]int{},
	}
	// The answers alerts and dashboards rate() start at 0, not at their first occurrence: a
	// counter that appears already at 1 shows no increase, and the first 5xx or 429 of a
	// manager's life would be missed (Prometheus's advice: initialise known series).
	for _, ep := range []string{apiclient.EndpointCreateStoryboard, apiclient.EndpointRenderStoryboard,
		apiclient.EndpointRenderProject, apiclient.EndpointGetJob, apiclient.EndpointListBrands} {
		for _, code := range []int{http.StatusOK, http.StatusUnauthorized, http.StatusTooManyRequests,
			http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, 0} {
			m.requests.WithLabelValues(ep, strconv.Itoa(code))
		}
	}
	for _, result := range []string{"accepted", "rate_limited", "unsigned", "invalid"} {
		m.callbacks.WithLabelValues(result)
	}
	for _, result := range []string{"accepted", "refused", "unknown"} {
		for _, kind := range []string{"VideoRender", "VideoStoryboard"} {
			m.submissions.WithLabelValues(kind, result)
		}
	}
	for _, c := range []prometheus.Collector{m.jobs, m.submissions, m.endings, m.requests, m.latency, m.credits,
		m.callbacks, m.statusWrite, m.answerToWrite, m.budgetUsed, m.budgetRemaining, m.budgetLedger, m.budgetWrites, m.budgetChanges, m.budgetGrants, oldestSubmission{m},
		m.stalled, oldestAwaiting{m}} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering metrics: %w", err)
		}
	}
	return m, nil
}

// ObserveRequest implements apiclient.Observer. The endpoint is one of the client's constants.
func (m *Metrics) ObserveRequest(endpoint string, statusCode int, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(endpoint, strconv.Itoa(statusCode)).Inc()
	m.latency.WithLabelValues(endpoint).Observe(d.Seconds())
}

// StatusWritten records one status write: how long the API server took, and, for the write that
// records a job's end, how long the manager took from the service's answer to issuing it.
func (m *Metrics) StatusWritten(sinceAnswer, write time.Duration) {
	if m == nil {
		return
	}
	m.statusWrite.Observe(write.Seconds())
	if sinceAnswer > 0 {
		m.answerToWrite.Observe(sinceAnswer.Seconds())
	}
}

// Callback counts one callback by result: accepted, rate_limited, unsigned or invalid.
func (m *Metrics) Callback(result string) {
	if m != nil {
		m.callbacks.WithLabelValues(result).Inc()
	}
}

// Submitted counts one paid submission of kind by result: accepted, refused or unknown.
func (m *Metrics) Submitted(kind, result string) {
	if m != nil {
		m.submissions.WithLabelValues(kind, result).Inc()
	}
}

// Ended counts one job of kind that ended, by result.
func (m *Metrics) Ended(kind, result string) {
	if m != nil {
		m.endings.WithLabelValues(kind, result).Inc()
	}
}

// CreditsUsed adds the AI credits a job of kind reported.
func (m *Metrics) CreditsUsed(kind string, credits float64) {
	if m != nil && credits > 0 {
		m.credits.WithLabelValues(kind).Add(credits)
	}
}

// ObservePhase keeps the jobs gauge equal to the number of objects in each phase.
func (m *Metrics) ObservePhase(kind string, nn types.NamespacedName, phase videov1alpha1.Phase) {
	if m == nil {
		return
	}
	if phase == "" {
		phase = videov1alpha1.PhasePending
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	byName := m.phases[kind]
	if byName == nil {
		byName = map[types.NamespacedName]videov1alpha1.Phase{}
		m.phases[kind] = byName
	}
	old, seen := byName[nn]
	if seen && old == phase {
		return
	}
	if seen {
		m.jobs.WithLabelValues(kind, nn.Namespace, string(old)).Dec()
	} else {
		m.objects[kindNamespace{kind, nn.Namespace}]++
	}
	byName[nn] = phase
	m.jobs.WithLabelValues(kind, nn.Namespace, string(phase)).Inc()
}

// ObserveSubmission records the object's submission in flight (status.submission as written),
// or its end when sub is nil.
func (m *Metrics) ObserveSubmission(kind string, nn types.NamespacedName, sub *videov1alpha1.Submission) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if sub == nil {
		delete(m.inFlight[kind], nn)
		return
	}
	byName := m.inFlight[kind]
	if byName == nil {
		byName = map[types.NamespacedName]time.Time{}
		m.inFlight[kind] = byName
	}
	byName[nn] = sub.StartedAt.Time
}

// Forget removes a deleted object from the jobs gauge, the submissions in flight, the stalled
// gauge and the approvals awaited.
func (m *Metrics) Forget(kind string, nn types.NamespacedName) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.phases[kind][nn]; ok {
		delete(m.phases[kind], nn)
		k := kindNamespace{kind, nn.Namespace}
		if m.objects[k]--; m.objects[k] > 0 {
			m.jobs.WithLabelValues(kind, nn.Namespace, string(old)).Dec()
		} else {
			// The namespace's last object of the kind: its series go, so that a namespace
			// deleted (or never used again) leaves nothing behind.
			delete(m.objects, k)
			for _, p := range allPhases {
				m.jobs.DeleteLabelValues(kind, nn.Namespace, string(p))
			}
		}
	}
	delete(m.inFlight[kind], nn)
	m.forgetConditions(kind, nn)
}
