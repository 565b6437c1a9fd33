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
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/statustxn"
)

// scope is one reconcile of one object: its status transaction, and what the steps learn on
// the way, in the order they learn it. It lives for one reconcile and is never shared; the
// lifecycle itself holds only what outlives a reconcile (clients, caches, the memo).
type scope[T jobObject] struct {
	// tx is the reconcile's change to the object's status; obj is tx.Obj (a rebase replaces it
	// in place) and st its job status.
	tx  *statustxn.Txn[T]
	obj T
	st  *videov1alpha1.JobStatus

	// target is what the current spec asks the service for (step resolve).
	target *target
	// rec is the job record in the object's annotations (step resolve).
	rec jobRecord
	// api and keyID are the service client for the object's API key and the key's fingerprint
	// (useKey, called by each step that calls the service).
	api   apiclient.Interface
	keyID string
	// retry is a value of the retry annotation not handled yet (step answered).
	retry string
	// attempted is whether the current request was sent already (step answered).
	attempted bool
	// attempt is the id of the paid submission being made (submit's gate takeAttempt), and
	// admitted whether the key's circuit let it through (admitSubmission): a trial of the
	// circuit it holds ends with the reconcile when its call is not made.
	attempt  string
	admitted bool
	// recordDue is set once a status that names a job to record is written: the reconcile then
	// copies the record into the annotations (lifecycle.go writeRecordIfDue).
	recordDue bool
}

// newScope begins the reconcile of obj.
func (l *lifecycle[T]) newScope(obj T) *scope[T] {
	tx := statustxn.New(l.client, l.opts.APIReader, obj, l.adapter.newObject, statusValue[T])
	tx.Written = l.opts.Metrics.StatusWritten
	return &scope[T]{tx: tx, obj: tx.Obj, st: tx.Obj.Job()}
}

// stop ends a reconcile with its result and error. Every step returns nil to let the next step
// run, or the stop that ends the reconcile here: it is the one way a step says "stop here".
type stop struct {
	result ctrl.Result
	err    error
}

// stopWith ends the reconcile with res: when to come back, and in which queue.
func stopWith(res ctrl.Result) *stop { return &stop{result: res} }

// stopHere ends the reconcile; a watch (or the requeue a later step chose) brings it back.
func stopHere() *stop { return &stop{} }

// stopAfter ends the reconcile and comes back after d.
func stopAfter(d time.Duration) *stop { return &stop{result: ctrl.Result{RequeueAfter: d}} }

// stopOn ends the reconcile with err: controller-runtime retries it with its backoff.
func stopOn(err error) *stop { return &stop{err: err} }

// stepFunc is one step of a reconcile (Reconcile's steps, submit's gates).
type stepFunc[T jobObject] func(ctx context.Context, s *scope[T]) *stop

// run runs steps in order until one stops.
func run[T jobObject](ctx context.Context, s *scope[T], steps ...stepFunc[T]) *stop {
	for _, step := range steps {
		if end := step(ctx, s); end != nil {
			return end
		}
	}
	return nil
}
