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
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/callback"
	"github.com/videoops/video-operator/internal/callgate"
	"github.com/videoops/video-operator/internal/credentials"
	"github.com/videoops/video-operator/internal/jobmemo"
	"github.com/videoops/video-operator/internal/spendguard"
)

// Reconcilers are the two controllers, sharing one key store, brand cache and submission memo.
type Reconcilers struct {
	Storyboard *VideoStoryboardReconciler
	Render     *VideoRenderReconciler
	// Budget keeps the namespaces' VideoBudgets current (period, interrupted reservations,
	// conditions, metrics).
	Budget *spendguard.Reconciler

	callback *callback.Handler
	// watchNamespaces are the namespaces the Secret watches cover; empty for every namespace.
	watchNamespaces []string
	// secrets are the Secret watches the key store reads metadata from (set up with the manager).
	secrets *credentials.Watches
}

// CallbackHandler returns the handler of the service's callbacks, or nil when Options.Callback
// was not set. It must be served at CallbackPath of Options.Callback.PublicURL.
func (r *Reconcilers) CallbackHandler() *callback.Handler { return r.callback }

// NewReconcilers builds both reconcilers over one shared job lifecycle.
func NewReconcilers(c client.Client, opts Options) (*Reconcilers, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	shared := &sharedState{
		keys:     credentials.NewStore(c, opts.APIReader),
		brands:   newBrandCache(opts.Clock, opts.BrandCacheTTL),
		memo:     jobmemo.New(opts.Clock),
		circuits: callgate.NewCircuits(opts.Clock, opts.BackoffBase, opts.BackoffMax, opts.CallTimeout/5, opts.ServiceRate),
		budgets:  callgate.NewBudgets(opts.Clock, opts.ServiceRate, opts.ServiceBurst, budgetIdle),
	}
	shared.budgets.SetPollShare(opts.PollShare)
	ledgers := spendguard.NewLedgers(opts.LedgerNamespace)
	shared.guard = spendguard.New(c, opts.APIReader, opts.Clock, WriteTimeout, ledgers)
	if cb := opts.Callback; cb != nil {
		shared.callbacks = callback.NewSigner(cb.PublicURL, cb.Key)
		shared.callbackPoll = cb.PollInterval
	}
	render := &VideoRenderReconciler{newLifecycle(c, renderAdapter{client: c}, opts, shared)}
	r := &Reconcilers{
		Storyboard: &VideoStoryboardReconciler{newLifecycle(c, storyboardAdapter{}, opts, shared)},
		Render:     render,
		Budget: spendguard.NewReconciler(spendguard.ReconcilerOptions{Client: c, Reader: opts.APIReader, Clock: opts.Clock,
			Metrics: budgetObserver(opts.Metrics), Grace: SubmitBudget(opts.CallTimeout), Recheck: budgetRecheck(opts.PollMax),
			Retry: opts.BackoffBase / 10, Ledgers: ledgers, Guard: shared.guard,
			Jobs: budgetJobs{render: render.lifecycle}, JobDeadline: max(opts.JobDeadline, 0), JobPoll: opts.PollMax}),
		watchNamespaces: opts.WatchNamespaces,
	}
	if cb := opts.Callback; cb != nil {
		r.Storyboard.wake = make(chan event.GenericEvent, callbackQueue)
		r.Render.wake = make(chan event.GenericEvent, callbackQueue)
		r.callback = callback.NewHandler(callback.HandlerOptions{
			Signer:    shared.callbacks,
			Cache:     c,
			Writer:    c,
			Reader:    opts.APIReader,
			Elected:   cb.Elected,
			Memo:      shared.memo,
			RateLimit: cb.RateLimit,
			Burst:     cb.Burst,
			Observe:   opts.Metrics.Callback,
			Targets: []callback.Target{
				{List: func() client.ObjectList { return &videov1alpha1.VideoStoryboardList{} }, Ch: r.Storyboard.wake},
				{List: func() client.ObjectList { return &videov1alpha1.VideoRenderList{} }, Ch: r.Render.wake},
			},
		})

	}
	return r, nil
}

// sharedState is what both reconcilers share: one key store, one brand cache and one memo of
// submissions, so that a key or a brand list is read once for both kinds.
type sharedState struct {
	keys   *credentials.Store
	brands *brandCache
	memo   *jobmemo.Memo
	// circuits pause the paid submissions of a key after an unknown outcome.
	circuits *callgate.Circuits
	// budgets pace the calls of each key.
	budgets *callgate.Budgets
	// guard is the spend guard of the namespaces' VideoBudgets.
	guard *spendguard.Guard

	callbacks    *callback.Signer
	callbackPoll time.Duration
}

// budgetIdle is how long the call budget of a key nobody uses is kept.
const budgetIdle = 10 * time.Minute

// callbackQueue is how many callbacks may wait for a controller; more wait a little in the
// callback's request (callbackQueueWait), then are dropped, and polling
// picks their jobs up.
const callbackQueue = 4096

// SetupWithManager registers the field indexes and both controllers.
func (r *Reconcilers) SetupWithManager(ctx context.Context, mgr ctrl.Manager, concurrency int) error {
	r.Storyboard.polls.SetWorkers(concurrency)
	r.Render.polls.SetWorkers(concurrency)
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &videov1alpha1.VideoStoryboard{}, credentials.IndexSecretName, func(o client.Object) []string {
		return []string{credentials.RefOrDefault(o.(*videov1alpha1.VideoStoryboard).Spec.APIKeySecretRef).Name}
	}); err != nil {
		return fmt.Errorf("indexing VideoStoryboards by Secret: %w", err)
	}
	if err := idx.IndexField(ctx, &videov1alpha1.VideoRender{}, credentials.IndexSecretName, func(o client.Object) []string {
		return []string{credentials.RefOrDefault(o.(*videov1alpha1.VideoRender).Spec.APIKeySecretRef).Name}
	}); err != nil {
		return fmt.Errorf("indexing VideoRenders by Secret: %w", err)
	}
	if err := idx.IndexField(ctx, &videov1alpha1.VideoRender{}, indexStoryboardRef, func(o client.Object) []string {
		if ref := o.(*videov1alpha1.VideoRender).Spec.StoryboardRef; ref != nil {
			return []string{ref.Name}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing VideoRenders by VideoStoryboard: %w", err)
	}
	if err := indexWaitingForBudget(ctx, mgr); err != nil {
		return err
	}
	if r.callback != nil {
		if err := indexCallbackFields(ctx, mgr); err != nil {
			return err
		}
	}
	// The Secrets are watched apart from the manager's cache, one name at a time, so that a
	// Secret no object names never reaches the manager (credentials.Watches).
	secrets := credentials.NewWatches(credentials.WatchesOptions{
		Config: mgr.GetConfig(), HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		Namespaces: r.watchNamespaces, Transform: CacheTransform,
	})
	if err := mgr.Add(secrets); err != nil {
		return fmt.Errorf("adding the Secret watches: %w", err)
	}
	r.secrets = secrets
	r.Storyboard.keys.ReadMetadataFrom(secrets)
	if err := r.Storyboard.SetupWithManager(mgr, concurrency, secrets); err != nil {
		return fmt.Errorf("setting up the VideoStoryboard controller: %w", err)
	}
	if err := r.Render.SetupWithManager(mgr, concurrency, secrets); err != nil {
		return fmt.Errorf("setting up the VideoRender controller: %w", err)
	}
	if err := watchLedgers(mgr, r.Budget.Ledgers, r.watchNamespaces); err != nil {
		return err
	}
	if err := r.Budget.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the VideoBudget controller: %w", err)
	}
	return nil
}

// watchLedgers sends the budget ledgers to ledgers.Watch from a cache of their own: the
// labelled ConfigMaps of the ledgers' namespace (the manager's Role there lists and watches them),
// of the watched namespaces only when they are listed (managers that share the ledgers' namespace
// hold each other's none), started with the controllers and waited for by nothing: a render pays
// on a reservation written ahead only once the ledger was sent (docs/spend-guard.md).
func watchLedgers(mgr ctrl.Manager, ledgers *spendguard.Ledgers, tenants []string) error {
	op := selection.Exists
	if len(tenants) > 0 {
		op = selection.In
	}
	labelled, err := labels.NewRequirement(videov1alpha1.LabelLedgerNamespace, op, tenants)
	if err != nil {
		return fmt.Errorf("selecting the budget ledgers: %w", err)
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{ledgers.Namespace: {}}, DefaultLabelSelector: labels.NewSelector().Add(*labelled),
		DefaultTransform: CacheTransform})
	if err != nil {
		return fmt.Errorf("making the budget ledgers' cache: %w", err)
	}
	informer, err := c.GetInformer(context.Background(), &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("watching the budget ledgers: %w", err)
	}
	if err := ledgers.Watch(informer); err != nil {
		return fmt.Errorf("watching the budget ledgers: %w", err)
	}
	return mgr.Add(c)
}

// secretObject is the Secret type of the metadata-only watches: the manager holds Secret
// metadata, never Secret data.
func secretObject() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// indexCallbackFields indexes both kinds by job id and by the attempt id of an in-flight
// submission: what a callback names.
func indexCallbackFields(ctx context.Context, mgr ctrl.Manager) error {
	for _, obj := range []client.Object{&videov1alpha1.VideoStoryboard{}, &videov1alpha1.VideoRender{}} {
		status := func(o client.Object) *videov1alpha1.JobStatus {
			if st := videov1alpha1.JobStatusOf(o); st != nil {
				return st
			}
			return &videov1alpha1.JobStatus{}
		}
		if err := mgr.GetFieldIndexer().IndexField(ctx, obj, callback.IndexJobID, func(o client.Object) []string {
			if id := status(o).JobID; id != "" {
				return []string{id}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("indexing by job id: %w", err)
		}
		if err := mgr.GetFieldIndexer().IndexField(ctx, obj, callback.IndexAttemptID, func(o client.Object) []string {
			if sub := status(o).Submission; sub != nil {
				return []string{sub.AttemptID}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("indexing by attempt id: %w", err)
		}
	}
	return nil
}

// itemsOf returns the objects of a list.
func itemsOf(list client.ObjectList) []client.Object {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil
	}
	out := make([]client.Object, 0, len(items))
	for _, it := range items {
		if o, ok := it.(client.Object); ok {
			out = append(out, o)
		}
	}
	return out
}

// listRequests lists objects with opts and returns a request for each.
func listRequests(ctx context.Context, c client.Client, list client.ObjectList, opts ...client.ListOption) []ctrl.Request {
	if err := c.List(ctx, list, opts...); err != nil {
		logf.FromContext(ctx).Error(err, "Listing objects to wake")
		return nil
	}
	items := itemsOf(list)
	reqs := make([]ctrl.Request, 0, len(items))
	for _, o := range items {
		reqs = append(reqs, ctrl.Request{NamespacedName: objectKey(o)})
	}
	return reqs
}

// wakeSource turns the callbacks of a kind into reconcile requests that go before every other
// request waiting in the queue (docs/architecture.md "Scale targets": a callback reaches the status
// within a second even while thousands of routine polls wait).
func (l *lifecycle[T]) wakeSource() source.Source {
	return source.Channel(l.wake, handler.Funcs{
		GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[ctrl.Request]) {
			req := ctrl.Request{NamespacedName: objectKey(e.Object)}
			if pq, ok := q.(priorityqueue.PriorityQueue[ctrl.Request]); ok {
				pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptrTo(priorityWake)}, req)
				return
			}
			q.Add(req)
		},
	})
}

// Priorities in the controllers' queues: a callback's wake-up first, then what users and
// submissions wait for (0, the default of watch events), then routine polls; the initial listing
// after a start comes last (handler.LowPriority).
const (
	priorityWake = 10
	// priorityPollShare is a routine poll within the polls' share of the workers
	// (callgate.WorkShare): it goes before submissions.
	priorityPollShare = 5
	priorityRoutine   = -10
)
