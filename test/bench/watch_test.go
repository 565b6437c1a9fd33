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

package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// terminalWatch learns when each VideoRender first becomes terminal (Ready or Stalled for its
// generation) from an informer: one watch stream, not repeated lists, so that observing 10,000
// objects adds no load of its own beyond the events the manager's writes cause anyway.
type terminalWatch struct {
	mu      sync.Mutex
	seen    map[string]seenTerminal // by ns/name
	changed chan struct{}           // signalled (not closed) when seen grows
	// cache is the watch's store: the final list of objects is read from it, not from the API
	// server.
	cache cache.Cache
}

// seenTerminal is the first terminal state of an object and when the watch delivered it.
type seenTerminal struct {
	At    time.Time
	JobID string
	Ready bool
}

func startTerminalWatch(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme) (*terminalWatch, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return nil, err
	}
	inf, err := c.GetInformer(ctx, &videov1alpha1.VideoRender{})
	if err != nil {
		return nil, err
	}
	w := &terminalWatch{seen: map[string]seenTerminal{}, changed: make(chan struct{}, 1), cache: c}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(obj) },
		UpdateFunc: func(_, obj any) { w.observe(obj) },
	}); err != nil {
		return nil, err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the VideoRender informer did not sync")
	}
	return w, nil
}

func (w *terminalWatch) observe(obj any) {
	vr, ok := obj.(*videov1alpha1.VideoRender)
	if !ok {
		return
	}
	ready, stalled := terminalConditions(vr)
	if !ready && !stalled {
		return
	}
	now := time.Now()
	key := vr.Namespace + "/" + vr.Name
	w.mu.Lock()
	if _, done := w.seen[key]; !done {
		w.seen[key] = seenTerminal{At: now, JobID: vr.Status.JobID, Ready: ready}
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
	w.mu.Unlock()
}

// terminalConditions reports Ready and Stalled, each only when True for the object's current
// generation: an older Ready does not say the current spec is done.
func terminalConditions(vr *videov1alpha1.VideoRender) (ready, stalled bool) {
	for _, c := range vr.Status.Conditions {
		if c.ObservedGeneration != vr.Generation || c.Status != metav1.ConditionTrue {
			continue
		}
		switch c.Type {
		case string(videov1alpha1.ConditionReady):
			ready = true
		case string(videov1alpha1.ConditionStalled):
			stalled = true
		}
	}
	return ready, stalled
}

func (w *terminalWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen)
}

func (w *terminalWatch) snapshot() map[string]seenTerminal {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]seenTerminal, len(w.seen))
	for k, v := range w.seen {
		out[k] = v
	}
	return out
}

// waitAll waits until n objects are terminal, calling tick every interval meanwhile; it returns
// false at the deadline.
func (w *terminalWatch) waitAll(ctx context.Context, n int, deadline time.Time, interval time.Duration, tick func()) bool {
	t := time.NewTicker(interval)
	defer t.Stop()
	stop := time.NewTimer(time.Until(deadline))
	defer stop.Stop()
	for w.count() < n {
		select {
		case <-ctx.Done():
			return false
		case <-stop.C:
			return false
		case <-t.C:
			tick()
		case <-w.changed:
		}
	}
	return true
}
