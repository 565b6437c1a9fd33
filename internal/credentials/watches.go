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

package credentials

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// DefaultWatchedNames is how many distinct Secret names get a watch of their own. Objects name
// one or a few (the default name, video-api-key, serves every namespace); a tenant that names
// more cannot make the manager open a watch per name: past this many, the Secrets of the
// further names are read from one metadata-only watch of every Secret (the older behaviour).
const DefaultWatchedNames = 64

// Watches are the manager's metadata-only watches of the Secrets that video objects name: one
// watch per Secret name, selected on the API server with the field selector metadata.name, so
// that a Secret no object names is never listed, watched or decoded by the manager. A
// metadata-only watch of every Secret (what the manager did before) holds no data, but still
// receives, for every Secret of the cluster, its annotations: kubectl apply keeps the whole
// Secret, data included, in kubectl.kubernetes.io/last-applied-configuration, so 1,000 unrelated
// applied Secrets of 100 KiB were 100 MiB decoded and dropped at every start (docs/operating.md,
// "Memory and Secrets").
//
// A watch starts the first time a Secret name is read (Get), that is when an object first needs
// its key, and runs until the manager stops: names are few and an object naming a Secret may
// need it again at any time. Every watch, present and future, is handed to the functions given
// to OnWatch, which is how the controllers hear of changes to the Secrets their objects name.
type Watches struct {
	opts WatchesOptions

	started chan struct{} // closed by Start

	mu     sync.Mutex
	ctx    context.Context // set by Start; nil before
	byName map[string]cache.Cache
	all    cache.Cache // past opts.MaxNames: every Secret's metadata
	sinks  []func(cache.Cache) error
}

// WatchesOptions configure the Secret watches.
type WatchesOptions struct {
	Config     *rest.Config
	HTTPClient *http.Client // shared with the manager, so that the watches share its connections
	Scheme     *runtime.Scheme
	Mapper     meta.RESTMapper
	// Namespaces the manager watches (--watch-namespaces); empty for every namespace.
	Namespaces []string
	// Transform is applied to each Secret's metadata before it is kept.
	Transform toolscache.TransformFunc
	// MaxNames bounds the watches of their own (DefaultWatchedNames when 0).
	MaxNames int
}

// NewWatches returns the Secret watches; add them to the manager (they are a Runnable that needs
// no leader election) so that they run with it.
func NewWatches(opts WatchesOptions) *Watches {
	if opts.MaxNames <= 0 {
		opts.MaxNames = DefaultWatchedNames
	}
	return &Watches{opts: opts, byName: map[string]cache.Cache{}, started: make(chan struct{})}
}

// secretMetadata is the type every watch holds: a Secret's metadata, never its data.
func secretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

// OnWatch calls add with every watch started so far and every watch started later; add usually
// starts a controller's source on it (source.Kind).
func (w *Watches) OnWatch(add func(cache.Cache) error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sinks = append(w.sinks, add)
	for _, c := range w.caches() {
		if err := add(c); err != nil {
			return err
		}
	}
	return nil
}

// caches lists the watches started so far; w.mu must be held.
func (w *Watches) caches() []cache.Cache {
	out := make([]cache.Cache, 0, len(w.byName)+1)
	for _, c := range w.byName {
		out = append(out, c)
	}
	if w.all != nil {
		out = append(out, w.all)
	}
	return out
}

// Start runs the watches until ctx ends. Watches asked for before Start begin with it.
func (w *Watches) Start(ctx context.Context) error {
	w.mu.Lock()
	if w.ctx != nil {
		w.mu.Unlock()
		return errors.New("the Secret watches were started twice")
	}
	w.ctx = ctx
	for _, c := range w.caches() {
		w.run(c)
	}
	close(w.started)
	w.mu.Unlock()
	<-ctx.Done()
	return nil
}

// NeedLeaderElection is false: a standby manager reads no key, but its watches are ready when it
// leads.
func (w *Watches) NeedLeaderElection() bool { return false }

// run starts c under the watches' context; w.mu must be held and w.ctx set.
func (w *Watches) run(c cache.Cache) {
	ctx := w.ctx
	go func() {
		if err := c.Start(ctx); err != nil {
			logf.FromContext(ctx).Error(err, "A watch of Secrets stopped")
		}
	}()
}

// watchFor returns the watch that holds the Secrets named name, starting it if needed, and
// whether the watches run (Start was called).
func (w *Watches) watchFor(ctx context.Context, name string) (cache.Cache, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.byName[name]; ok {
		return c, w.ctx != nil, nil
	}
	if w.all != nil {
		return w.all, w.ctx != nil, nil
	}
	var selector fields.Selector
	if len(w.byName) < w.opts.MaxNames {
		selector = fields.OneTermEqualSelector("metadata.name", name)
	}
	c, err := w.newCache(selector)
	if err != nil {
		return nil, false, fmt.Errorf("watching Secrets named %q: %w", name, err)
	}
	// The informer exists before the cache starts, so that waiting for the cache's sync waits
	// for it too.
	if _, err := c.GetInformer(ctx, secretMetadata()); err != nil {
		return nil, false, fmt.Errorf("watching Secrets named %q: %w", name, err)
	}
	if selector == nil {
		logf.Log.WithName("secrets").Info("More Secret names are read than get a watch of their own: "+
			"the further names are read from a metadata-only watch of every Secret", "names", len(w.byName))
		w.all = c
	} else {
		logf.Log.WithName("secrets").Info("Watching the Secrets of one name", "name", name, "namespaces", w.opts.Namespaces)
		w.byName[name] = c
	}
	for _, add := range w.sinks {
		if err := add(c); err != nil {
			return nil, false, err
		}
	}
	if w.ctx != nil {
		w.run(c)
	}
	return c, w.ctx != nil, nil
}

// newCache builds a metadata-only cache of Secrets matching selector (every Secret when nil).
func (w *Watches) newCache(selector fields.Selector) (cache.Cache, error) {
	opts := cache.Options{
		HTTPClient:       w.opts.HTTPClient,
		Scheme:           w.opts.Scheme,
		Mapper:           w.opts.Mapper,
		DefaultTransform: w.opts.Transform,
		ByObject:         map[client.Object]cache.ByObject{secretMetadata(): {Field: selector}},
	}
	if len(w.opts.Namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range w.opts.Namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return cache.New(w.opts.Config, opts)
}

// Get reads the metadata of the Secret key into obj (a PartialObjectMetadata of kind Secret)
// from the watch of its name, starting that watch on its first read.
func (w *Watches) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c, running, err := w.watchFor(ctx, key.Name)
	if err != nil {
		return err
	}
	if !running {
		// The manager starts the watches with its other runnables, in goroutines of their own:
		// a read may come a moment before.
		select {
		case <-w.started:
		case <-ctx.Done():
			return &cache.ErrCacheNotStarted{}
		}
	}
	// A watch started by this read has not listed yet; a read before its list would say the
	// Secret does not exist.
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("waiting for the watch of Secrets named %q: %w", key.Name, context.Cause(ctx))
	}
	return c.Get(ctx, key, obj, opts...)
}

// List is not served: the watches are read one Secret at a time.
func (w *Watches) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("the Secret watches are read one Secret at a time (Get)")
}

// Names returns how many Secret names have a watch of their own, and whether the watch of every
// Secret was started.
func (w *Watches) Names() (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byName), w.all != nil
}
