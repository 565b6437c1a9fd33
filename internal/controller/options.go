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
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/credentials"
	"github.com/videoops/video-operator/internal/metrics"
)

// Defaults of the "Limits" table of the interface document: poll every 10 to 30 seconds.
const (
	DefaultPollMin       = 10 * time.Second
	DefaultPollMax       = 30 * time.Second
	DefaultBackoffBase   = 5 * time.Second
	DefaultBackoffMax    = 5 * time.Minute
	DefaultBrandCacheTTL = 5 * time.Minute
	// DefaultJobDeadline is how long a job may run before the controller stops waiting for it.
	// Renders take minutes (an AI design step adds 1 to 3); a job running for hours is stuck.
	DefaultJobDeadline = 6 * time.Hour
	// DefaultServiceCallTimeout bounds every call to the service, on top of the HTTP client's own.
	DefaultServiceCallTimeout = 30 * time.Second
	// DefaultPollShare is the part of each API key's rate, and of the reconciles, kept for the
	// reads of running jobs while submissions are queued (docs/architecture.md "Load on the cluster").
	// At 0.35 a burst of 10,000 renders polled every 2-6 s still sees each end within one poll
	// interval (p99 5.5 s; 17.8 s at 0.25) for about 4% fewer submissions per second
	// (docs/benchmarks.md "Completion to status"); at the 10-30 s the service asks for,
	// the reads need far less and the rest goes to submissions.
	DefaultPollShare = 0.35
	// DefaultProgressInterval is how often a running job's progress may reach its status: each
	// write costs the API server the object's validation, and a render takes minutes.
	DefaultProgressInterval = time.Minute
	// DefaultBudgetGather is the manager's Options.BudgetGather: a second before a paid render
	// that runs for minutes, so that a namespace submitting a render every second or faster
	// writes its budget about once for all of them (docs/benchmarks.md "Writes per render by kind").
	DefaultBudgetGather = time.Second
	// WriteTimeout bounds one status write around a paid call (the in-flight record, the job id).
	WriteTimeout = 10 * time.Second
)

// SubmitBudget bounds one submission, from the in-flight write to the job-id write, given the
// timeout of a call to the service. It runs to its end even when the manager shuts down.
func SubmitBudget(callTimeout time.Duration) time.Duration { return callTimeout + 2*WriteTimeout }

// ShutdownBudget is the least graceful-shutdown time that lets every submission in flight end
// with its outcome written (the job id, a refusal, or an unknown outcome, which the reconcile
// writes last): the manager's GracefulShutdownTimeout must be at least this, and a Deployment's
// terminationGracePeriodSeconds longer still.
func ShutdownBudget(callTimeout time.Duration) time.Duration {
	return SubmitBudget(callTimeout) + WriteTimeout + 5*time.Second
}

// Options configure the job lifecycle shared by both reconcilers.
type Options struct {
	// ClientFactory makes a service client for an API key; tests inject fakes.
	ClientFactory apiclient.Factory
	// APIReader reads Secrets straight from the API server, so that the manager's cache holds
	// only Secret metadata and never the data of every Secret in the cluster.
	APIReader client.Reader
	// Recorder emits Kubernetes events.
	Recorder recorder.EventRecorder
	// WatchNamespaces are the namespaces the manager's cache covers (--watch-namespaces); empty
	// for every namespace. The watches of the Secrets its objects name cover the same.
	WatchNamespaces []string
	// LedgerNamespace is the manager's own namespace, where the namespaces' budget ledgers live,
	// out of tenants' reach (docs/spend-guard.md). Empty means spendguard.DefaultLedgerNamespace.
	LedgerNamespace string
	// Clock is the time source; tests use a fake one.
	Clock clock.Clock

	// PollMin and PollMax bound the jittered delay between two reads of a running job.
	PollMin, PollMax time.Duration
	// BackoffBase and BackoffMax bound the exponential delay after a 429, a 5xx or a network error.
	BackoffBase, BackoffMax time.Duration
	// BrandCacheTTL is how long the list of an account's brands is reused.
	BrandCacheTTL time.Duration
	// CallTimeout bounds each call to the service.
	CallTimeout time.Duration
	// ServiceRate and ServiceBurst are the call budget of each API key: calls per second, and
	// calls at once. Zero means apiclient.DefaultRateLimit and apiclient.DefaultBurst.
	ServiceRate  float64
	ServiceBurst int
	// JobDeadline is how long after its submission a job that has not ended is given up: it is
	// recorded as failed (JOB_DEADLINE_EXCEEDED) and the object stalls, so that a spec change or
	// a retry can submit a new job. Negative disables it; zero means DefaultJobDeadline.
	JobDeadline time.Duration
	// Audit receives one line per paid submission and its outcome, never sampled (see
	// NewAuditLogger); the default is the global logger named "audit".
	Audit logr.Logger
	// Metrics receives the lifecycle's measurements; nil records nothing.
	Metrics *metrics.Metrics
	// InternalErrorIsRefusal takes the service's documented 500 body ({error: {code:
	// INTERNAL_ERROR}}) on a submission as proof that no job was created, and submits again
	// later. The interface document does not promise that: with it set, a 500 that did create a
	// job is paid twice. Off by default: such a submission stalls with SubmissionUnknown.
	InternalErrorIsRefusal bool
	// PollShare is the part (up to callgate.MaxPollShare) of each key's rate and of each
	// controller's reconciles guaranteed to the reads of running jobs while submissions are
	// queued. Zero means DefaultPollShare; negative turns the share off (polls wait for the
	// submissions queued before them).
	PollShare float64
	// ProgressInterval is the least time between two writes of a running job's progress (the
	// submission's and the completion's writes are never held back). Zero means
	// DefaultProgressInterval; negative writes every progress read.
	ProgressInterval time.Duration
	// BudgetGather, when positive, is how long a render of a namespace with a VideoBudget may
	// wait before its paid call so that its reservation shares one budget write with those of
	// the namespace's other renders ready meanwhile (gatherReservation). Zero writes each
	// reservation at once, alone unless others wait at that moment; the manager sets
	// DefaultBudgetGather.
	BudgetGather time.Duration
	// Callback, when set, makes requests carry the operator's callback URL (when the spec names
	// no webhook of its own) and serves the callbacks; see CallbackHandler.
	Callback *CallbackOptions
	// FingerprintKey is the installation's secret that keys the fingerprints of API keys kept
	// in status and annotations (credentials.Fingerprinter), at least 32 bytes. Nil keys them
	// with a random secret of this process, which another process does not recognise: for tests.
	FingerprintKey []byte
}

func (o *Options) setDefaults() error {
	if o.ClientFactory == nil {
		return fmt.Errorf("controller options: ClientFactory is required")
	}
	if o.APIReader == nil {
		return fmt.Errorf("controller options: APIReader is required")
	}
	if o.Recorder == nil {
		return fmt.Errorf("controller options: Recorder is required")
	}
	if o.FingerprintKey == nil {
		o.FingerprintKey = credentials.RandomFingerprintKey()
	}
	if _, err := credentials.NewFingerprinter(o.FingerprintKey); err != nil {
		return fmt.Errorf("controller options: %w", err)
	}
	if _, ok := o.Recorder.(boundedRecorder); !ok {
		o.Recorder = boundedRecorder{o.Recorder}
	}
	if o.Audit.GetSink() == nil {
		o.Audit = logf.Log.WithName("audit")
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.PollMin <= 0 {
		o.PollMin = DefaultPollMin
	}
	if o.PollMax < o.PollMin {
		o.PollMax = max(o.PollMin, DefaultPollMax)
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = DefaultBackoffBase
	}
	if o.BackoffMax < o.BackoffBase {
		o.BackoffMax = max(o.BackoffBase, DefaultBackoffMax)
	}
	if o.BrandCacheTTL <= 0 {
		o.BrandCacheTTL = DefaultBrandCacheTTL
	}
	if o.PollShare == 0 {
		o.PollShare = DefaultPollShare
	}
	if o.ProgressInterval == 0 {
		o.ProgressInterval = DefaultProgressInterval
	}
	if o.JobDeadline == 0 {
		o.JobDeadline = DefaultJobDeadline
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultServiceCallTimeout
	}
	if o.ServiceRate <= 0 {
		o.ServiceRate = float64(apiclient.DefaultRateLimit)
	}
	if o.ServiceBurst < 1 {
		o.ServiceBurst = apiclient.DefaultBurst
	}
	if o.Callback != nil {
		return o.Callback.validate()
	}
	return nil
}
