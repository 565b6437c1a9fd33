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
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// circuits pauses the paid submissions of an API key after one of them had an unknown outcome
// (a 5xx, a timeout, an unreadable answer): the service may be failing, and each further paid
// call could be one more job nobody can identify. A cheap read that succeeds (the brand list)
// closes the circuit, so an outage costs at most the calls already in flight (DESIGN.md "Never
// pay twice"). Keys are identified by their fingerprint, never the key.
type circuits struct {
	mu   sync.Mutex
	open map[string]bool
}

func newCircuits() *circuits { return &circuits{open: map[string]bool{}} }

func (c *circuits) trip(keyID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open[keyID] = true
}

func (c *circuits) isOpen(keyID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open[keyID]
}

func (c *circuits) reset(keyID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.open, keyID)
}

// circuitClosed reports whether a paid submission of the key may go ahead. With the circuit
// open it probes the service with the brand list: a success closes the circuit; a failure keeps
// the object waiting, with nothing sent and nothing consumed.
func (l *lifecycle[T]) circuitClosed(ctx context.Context, tx *statusTxn[T], api apiclient.Interface, keyID string) (bool, ctrl.Result, error) {
	if !l.circuits.isOpen(keyID) {
		return true, ctrl.Result{}, nil
	}
	callCtx, cancel := l.callContext(ctx)
	_, err := api.ListVideoBrands(callCtx)
	cancel()
	if err == nil {
		logf.FromContext(ctx).Info("The service answers again; paid submissions of this API key resume")
		l.circuits.reset(keyID)
		return true, ctrl.Result{}, nil
	}
	if apiclient.IsUnauthorized(err) {
		l.unauthorized(tx)
		return false, ctrl.Result{}, nil
	}
	st := l.adapter.jobStatus(tx.obj)
	st.Phase = videov1alpha1.PhasePending
	delay := l.backoff.next(objectKey(tx.obj), apiclient.RetryAfter(err))
	setOutcome(st, tx.obj.GetGeneration(), outcomeReconciling, videov1alpha1.ReasonServiceUnavailable,
		"Paid submissions of this API key are paused: an earlier submission's outcome is unknown and the service answered "+
			describeAnswer(err)+" to a check; retrying with backoff")
	return false, ctrl.Result{RequeueAfter: delay}, nil
}
