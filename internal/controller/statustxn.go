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
	"encoding/json"
	"errors"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// statusTxn is one reconcile's change to one object's status. Decisions are made on obj in
// memory; they reach the server only through commit, which is conditional on the
// resourceVersion of the object they were based on. So a decision taken from a stale cache, or
// by a process that lost the lease, never lands: the API server refuses it with a conflict.
//
// What a decision causes besides the status (events, metrics) is queued with after and happens
// only once the decision is written, so a write that fails causes nothing and a decision that
// is taken again is not counted twice.
type statusTxn[T client.Object] struct {
	client client.Client
	// reader reads the object from the API server, uncached, to learn the outcome of a write
	// whose answer was lost.
	reader  client.Reader
	adapter kindAdapter[T]
	// obj is the object being decided on.
	obj T
	// base is the object as the server last had it, as far as this reconcile knows.
	base T
	// effects run once the status they follow from is written.
	effects []func()
	// aborted is set by a failed write: the decisions of this reconcile are void, and nothing
	// more is written by it.
	aborted bool
	// answered is when the service's answer that ended the job arrived; written, when set, is
	// told how long the manager took from it to issuing the write, and how long the API server
	// took to answer the write (DESIGN.md "Scale targets" measures them apart).
	answered time.Time
	written  func(sinceAnswer, write time.Duration)
	// undecided is set when the reconcile ends before deciding anything about the current spec
	// (it waits for a slot of the call budget, or comes back after a check of the service):
	// observedGeneration must then not move, or kstatus and Argo CD would take an older Ready
	// for the new spec.
	undecided bool
	// conflicted is set when a write was refused because the object changed since it was read.
	conflicted bool
	// failed run if a write fails (see onFail).
	failed []func()
}

// errTxnAborted is returned by commit after an earlier write of the same reconcile failed.
var errTxnAborted = errors.New("an earlier status write of this reconcile failed; its decisions were discarded")

func newStatusTxn[T client.Object](c client.Client, reader client.Reader, adapter kindAdapter[T], obj T) *statusTxn[T] {
	return &statusTxn[T]{client: c, reader: reader, adapter: adapter, obj: obj, base: obj.DeepCopyObject().(T)}
}

// after queues a side effect of the decision being made; it runs after the next successful
// commit.
func (t *statusTxn[T]) after(f func()) { t.effects = append(t.effects, f) }

// changed reports whether the status in memory differs from the server's.
func (t *statusTxn[T]) changed() bool {
	return !equality.Semantic.DeepEqual(t.adapter.status(t.base), t.adapter.status(t.obj))
}

// commit writes the status, when it changed, with the base's resourceVersion as a precondition
// (a merge patch with an optimistic lock), then runs the queued effects. When the answer to the
// write is lost (a timeout, a 5xx), a fresh read tells whether it landed. When the write did not
// land, or that cannot be told, obj goes back to base, the effects are dropped and the
// transaction is aborted: an unknown write outcome is never followed by a second, unconditional
// write.
func (t *statusTxn[T]) commit(ctx context.Context) error {
	if t.aborted {
		return errTxnAborted
	}
	if t.changed() {
		patch := client.MergeFromWithOptions(t.base, client.MergeFromWithOptimisticLock{})
		issued := time.Now()
		err := t.client.Status().Patch(ctx, t.obj, patch)
		if t.written != nil {
			var sinceAnswer time.Duration
			if !t.answered.IsZero() {
				sinceAnswer = issued.Sub(t.answered)
				t.answered = time.Time{}
			}
			t.written(sinceAnswer, time.Since(issued))
		}
		if err != nil {
			fresh, landed := t.landed(ctx, err)
			if !landed {
				t.conflicted = t.conflicted || apierrors.IsConflict(err)
				t.abort()
				return err
			}
			// Only the resourceVersion is taken from the fresh read: the spec may have changed
			// meanwhile, and the decisions of this reconcile belong to the spec they were
			// taken for.
			t.obj.SetResourceVersion(fresh.GetResourceVersion())
		}
		t.base = t.obj.DeepCopyObject().(T)
	}
	effects := t.effects
	t.effects = nil
	for _, f := range effects {
		f()
	}
	return nil
}

// landed reads the object again after a write that failed without a clear refusal, and
// reports whether the server holds exactly the status that was written (and returns it).
func (t *statusTxn[T]) landed(ctx context.Context, writeErr error) (T, bool) {
	var zero T
	if t.reader == nil || refusedWrite(writeErr) {
		return zero, false
	}
	// Within the caller's own deadline: the submission budget must cover this read.
	fresh := t.adapter.newObject()
	if err := t.reader.Get(ctx, client.ObjectKeyFromObject(t.obj), fresh); err != nil {
		return zero, false
	}
	return fresh, sameJSON(t.adapter.status(t.obj), t.adapter.status(fresh))
}

// sameJSON compares two values as the API server stores them: times in seconds, and free-form
// JSON (render parameters, a raw preview) with its keys in any order.
func sameJSON(a, b any) bool {
	var x, y any
	for _, p := range []struct {
		in  any
		out *any
	}{{a, &x}, {b, &y}} {
		raw, err := json.Marshal(p.in)
		if err != nil || json.Unmarshal(raw, p.out) != nil {
			return false
		}
	}
	return reflect.DeepEqual(x, y)
}

// refusedWrite reports an error by which the API server refused a write: nothing of it landed.
func refusedWrite(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsInvalid(err) || apierrors.IsNotFound(err) ||
		apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) || apierrors.IsUnauthorized(err) ||
		apierrors.IsRequestEntityTooLargeError(err)
}

// abort discards the decisions in memory and their effects.
func (t *statusTxn[T]) abort() {
	overwrite(t.obj, t.base)
	t.effects = nil
	t.aborted = true
	failed := t.failed
	t.failed = nil
	for _, f := range failed {
		f()
	}
}

// onFail queues f to run if a write of this reconcile fails: what the failed decisions need
// redone soon (a job read as ended is read again first).
func (t *statusTxn[T]) onFail(f func()) { t.failed = append(t.failed, f) }

// rebase starts the transaction again from a fresh read of the object: decisions made so far
// are discarded, and later commits are conditional on the fresh resourceVersion.
func (t *statusTxn[T]) rebase(fresh T) {
	overwrite(t.obj, fresh)
	t.base = fresh.DeepCopyObject().(T)
	t.effects = nil
	t.aborted = false
}

// overwrite makes *dst a deep copy of *src. Both kinds are pointers to structs, and callers
// hold dst, so it is replaced in place.
func overwrite[T client.Object](dst, src T) {
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src.DeepCopyObject()).Elem())
}
