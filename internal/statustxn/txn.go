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

package statustxn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Txn is one reconcile's change to one object's status. Decisions are made on obj in
// memory; they reach the server only through commit, which is conditional on the
// resourceVersion of the object they were based on. So a decision taken from a stale cache, or
// by a process that lost the lease, never lands: the API server refuses it with a conflict.
//
// What a decision causes besides the status (events, metrics) is queued with after and happens
// only once the decision is written, so a write that fails causes nothing and a decision that
// is taken again is not counted twice.
type Txn[T client.Object] struct {
	client client.Client
	// reader reads the object from the API server, uncached, to learn the outcome of a write
	// whose answer was lost.
	reader client.Reader
	// newObject and status are the kind's: an empty object, and the whole status of one.
	newObject func() T
	status    func(T) any
	// Obj is the object being decided on.
	Obj T
	// Base is the object as the server last had it, as far as this reconcile knows.
	Base T
	// effects run once the status they follow from is written.
	effects []func()
	// aborted is set by a failed write: the decisions of this reconcile are void, and nothing
	// more is written by it.
	aborted bool
	// Answered is when the service's answer that ended the job arrived; written, when set, is
	// told how long the manager took from it to issuing the write, and how long the API server
	// took to answer the write (docs/architecture.md "Scale targets" measures them apart).
	Answered time.Time
	Written  func(sinceAnswer, write time.Duration)
	// Undecided is set when the reconcile ends before deciding anything about the current spec
	// (it waits for a slot of the call budget, or comes back after a check of the service):
	// observedGeneration must then not move, or kstatus and Argo CD would take an older Ready
	// for the new spec.
	Undecided bool
	// Conflicted is set when a write was refused because the object changed since it was read.
	Conflicted bool
	// Superseded are the resourceVersions this transaction's writes replaced: a cache that still
	// shows one of them is behind this process's own writes.
	Superseded []string
	// failed run if a write fails (see onFail).
	failed []func()
}

// ErrAborted is returned by commit after an earlier write of the same reconcile failed.
var ErrAborted = errors.New("an earlier status write of this reconcile failed; its decisions were discarded")

// New begins the transaction of one reconcile on obj. c writes the status; reader (nil: none)
// reads the object from the API server after a write whose answer was lost. newObject returns an
// empty object of the kind, and status the whole status of one, to tell what changed.
func New[T client.Object](c client.Client, reader client.Reader, obj T, newObject func() T, status func(T) any) *Txn[T] {
	return &Txn[T]{client: c, reader: reader, newObject: newObject, status: status, Obj: obj, Base: obj.DeepCopyObject().(T)}
}

// After queues a side effect of the decision being made; it runs after the next successful
// Commit.
func (t *Txn[T]) After(f func()) { t.effects = append(t.effects, f) }

// Changed reports whether the status in memory differs from the server's.
func (t *Txn[T]) Changed() bool {
	return !equality.Semantic.DeepEqual(t.status(t.Base), t.status(t.Obj))
}

// Commit writes the status, when it changed, with the base's resourceVersion as a precondition
// (a merge patch with an optimistic lock), then runs the queued effects. When the answer to the
// write is lost (a timeout, a 5xx), a fresh read tells whether it landed. When the write did not
// land, or that cannot be told, obj goes back to base, the effects are dropped and the
// transaction is aborted: an unknown write outcome is never followed by a second, unconditional
// write.
func (t *Txn[T]) Commit(ctx context.Context) error {
	if t.aborted {
		return ErrAborted
	}
	if t.Changed() {
		patch := &statusPatch{from: t.status(t.Base), to: t.status(t.Obj), resourceVersion: t.Base.GetResourceVersion()}
		issued := time.Now()
		err := t.client.Status().Patch(ctx, t.Obj, patch)
		if t.Written != nil {
			var sinceAnswer time.Duration
			if !t.Answered.IsZero() {
				sinceAnswer = issued.Sub(t.Answered)
				t.Answered = time.Time{}
			}
			t.Written(sinceAnswer, time.Since(issued))
		}
		if err != nil {
			fresh, landed := t.landed(ctx, err)
			if !landed {
				t.Conflicted = t.Conflicted || apierrors.IsConflict(err)
				t.Abort()
				return err
			}
			// Only the resourceVersion is taken from the fresh read: the spec may have changed
			// meanwhile, and the decisions of this reconcile belong to the spec they were
			// taken for.
			t.Obj.SetResourceVersion(fresh.GetResourceVersion())
		}
		t.Superseded = append(t.Superseded, t.Base.GetResourceVersion())
		t.Base = t.Obj.DeepCopyObject().(T)
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
func (t *Txn[T]) landed(ctx context.Context, writeErr error) (T, bool) {
	var zero T
	if t.reader == nil || refusedWrite(writeErr) {
		return zero, false
	}
	// Within the caller's own deadline: the submission budget must cover this read.
	fresh := t.newObject()
	if err := t.reader.Get(ctx, client.ObjectKeyFromObject(t.Obj), fresh); err != nil {
		return zero, false
	}
	return fresh, sameJSON(t.status(t.Obj), t.status(fresh))
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

// Abort discards the decisions in memory and their effects.
func (t *Txn[T]) Abort() {
	overwrite(t.Obj, t.Base)
	t.effects = nil
	t.aborted = true
	failed := t.failed
	t.failed = nil
	for _, f := range failed {
		f()
	}
}

// OnFail queues f to run if a write of this reconcile fails: what the failed decisions need
// redone soon (a job read as ended is read again first).
func (t *Txn[T]) OnFail(f func()) { t.failed = append(t.failed, f) }

// Rebase starts the transaction again from a fresh read of the object: decisions made so far
// are discarded, and later commits are conditional on the fresh resourceVersion.
func (t *Txn[T]) Rebase(fresh T) {
	overwrite(t.Obj, fresh)
	t.Base = fresh.DeepCopyObject().(T)
	t.effects = nil
	t.aborted = false
}

// overwrite makes *dst a deep copy of *src. Both kinds are pointers to structs, and callers
// hold dst, so it is replaced in place.
func overwrite[T client.Object](dst, src T) {
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src.DeepCopyObject()).Elem())
}

// Aborted reports whether a write of this transaction failed: its decisions were discarded.
func (t *Txn[T]) Aborted() bool { return t.aborted }

// statusPatch is the merge patch of the status alone, with the base's resourceVersion as a
// precondition: what client.MergeFromWithOptimisticLock sends for a status write, computed
// without encoding and diffing the spec (a large render's spec is most of the object, and the
// status subresource ignores all but the status; docs/benchmarks.md "Renders people write").
type statusPatch struct {
	from, to        any // the status read and the status to write
	resourceVersion string
}

func (p *statusPatch) Type() types.PatchType { return types.MergePatchType }

func (p *statusPatch) Data(client.Object) ([]byte, error) {
	if p.resourceVersion == "" {
		return nil, errors.New("the status write has no resourceVersion to hold it to")
	}
	original, err := json.Marshal(map[string]any{"status": p.from})
	if err != nil {
		return nil, fmt.Errorf("encoding the status read: %w", err)
	}
	modified, err := json.Marshal(map[string]any{"metadata": map[string]string{"resourceVersion": p.resourceVersion}, "status": p.to})
	if err != nil {
		return nil, fmt.Errorf("encoding the status written: %w", err)
	}
	patch, err := jsonpatch.CreateMergePatch(original, modified)
	if err != nil {
		return nil, fmt.Errorf("computing the status patch: %w", err)
	}
	return patch, nil
}
