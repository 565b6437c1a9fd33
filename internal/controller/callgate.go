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

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/callgate"
	"github.com/videoops/video-operator/internal/statustxn"
)

// budgetWait requeues a paid submission for the slot it holds in the key's budget. A wait longer
// than the shortest poll interval is said in Reconciling (in words that do not change while it
// waits, so that the status is written once); a shorter one changes nothing.
func (l *lifecycle[T]) budgetWait(tx *statustxn.Txn[T], wait time.Duration) ctrl.Result {
	if wait > l.opts.PollMin {
		st := tx.Obj.Job()
		if st.JobID == "" || st.CompletedAt != nil {
			st.Phase = videov1alpha1.PhasePending
		}
		setOutcome(st, tx.Obj.GetGeneration(), outcomeReconciling, videov1alpha1.ReasonCallBudget, fmt.Sprintf(
			"The submission waits for its slot in this API key's call budget of %g calls/s; it is sent once, when the slot comes",
			l.opts.ServiceRate))
		return ctrl.Result{RequeueAfter: wait}
	}
	return later(tx, wait)
}

// admitSubmission is submit's gate that decides whether the paid submission may go now. When the key has
// no recent answer, or its circuit is open, it checks the service with the brand list first (the
// caller holds a budget slot for one call: the check uses it, and the submission comes back for
// its own); any answer that shows the service up (a 2xx, or a 4xx other than 429 and 408) lets
// the submission through. Waiting objects consume nothing.
func (l *lifecycle[T]) admitSubmission(ctx context.Context, s *scope[T]) *stop {
	tx, keyID := s.tx, s.keyID
	switch l.circuits.Admit(keyID, s.attempt) {
	case callgate.AdmitProbe:
		callCtx, cancel := l.callContext(ctx)
		_, err := s.api.ListVideoBrands(callCtx)
		cancel()
		if !callgate.ServiceAnswers(err) {
			retryIn := l.backoff.Next(objectKey(tx.Obj), apiclient.RetryAfter(err))
			l.circuits.ProbeFailed(keyID, retryIn)
			return stopWith(l.paused(tx, "the service answered "+describeAnswer(err)+" to a check made before paying", retryIn))
		}
		logf.FromContext(ctx).V(1).Info("The service answered a check; the paid submission follows")
		l.circuits.Probed(keyID)
		return stopWith(later(tx, time.Millisecond))
	case callgate.AdmitWait:
		// A check or a trial of the key is under way: its answer decides, in a moment.
		return stopWith(later(tx, l.backoff.Short()))
	}
	s.admitted = true
	return nil
}

// paused says, in Reconciling, why the object's paid submission waits.
func (l *lifecycle[T]) paused(tx *statustxn.Txn[T], why string, retryIn time.Duration) ctrl.Result {
	st := tx.Obj.Job()
	if st.JobID == "" || st.CompletedAt != nil {
		st.Phase = videov1alpha1.PhasePending
	}
	setOutcome(st, tx.Obj.GetGeneration(), outcomeReconciling, videov1alpha1.ReasonServiceUnavailable,
		"Paid submissions of this API key are paused: "+why+"; retrying with backoff")
	return ctrl.Result{RequeueAfter: retryIn}
}

func objectKey(obj client.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}
