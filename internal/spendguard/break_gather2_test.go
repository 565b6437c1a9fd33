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

package spendguard

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// ageReservations makes every reservation of the harness's budget d old.
func ageReservations(t *testing.T, h *batchHarness, d time.Duration) {
	t.Helper()
	b := h.budget(t)
	for i := range b.Status.Reservations {
		b.Status.Reservations[i].ReservedAt = metav1.NewTime(time.Now().Add(-d))
	}
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}
}

// holds reports whether the harness's budget holds a reservation of vr's attempt.
func holds(t *testing.T, h *batchHarness, vr *videov1alpha1.VideoRender, attempt string) bool {
	t.Helper()
	for _, r := range h.budget(t).Status.Reservations {
		if r.UID == string(vr.UID) && r.AttemptID == attempt {
			return true
		}
	}
	return false
}

// break-gather2: a render pays on its reservation written ahead, then its in-flight write fails
// (a person edited the render at that moment): the attempt reached no service, and the render
// stalls at an earlier gate. Its reservation is released once older than the controller's grace,
// as one reserved the ordinary way: nothing in this process's memory protects it (a taken grant
// once did, for ten minutes, telling every other render of the namespace BudgetExhausted).
func TestBreakGather2TakenGrantWhoseInFlightWriteFailedHoldsItsReservationTenMinutes(t *testing.T) {
	vr := batchRender(1)
	other := batchRender(2)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr, other)
	// Back after its second, it pays on its grant: the last gate passed.
	if d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}}); err != nil || d.Wait {
		t.Fatalf("the render comes back to pay: %+v %v", d, err)
	}
	// Its in-flight write fails (nothing is sent) and the render stalls before a new attempt.
	// Two minutes later (grace is one minute in reconcileOnce), its status shows no submission.
	ageReservations(t, h, 2*time.Minute)
	reconcileBudget(t, h, 1)
	if holds(t, h, vr, "a1") {
		t.Errorf("two minutes after an attempt that was never sent (its in-flight write failed), its reservation is still held: " +
			"a reservation older than grace whose render shows no such attempt is released")
	}
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: other, Attempt: "b1", Est: bound.Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Wait {
		t.Errorf("another render is refused (%s) for a render that is in flight nowhere", d.Message)
	}
}

// break-gather2: a gathered render whose key is then paused (a 429 with Retry-After up to an hour)
// asks again for that wait and stalls. Asking again does not move its reservation written ahead:
// it is released once older than the controller's grace, and the render, back an hour later,
// reserves again (a re-ask once extended the protection for the whole pause, holding maxRenders
// for a render that sent nothing).
func TestBreakGather2ReAskedGrantProtectsAStalledRendersReservationPastGrantTTL(t *testing.T) {
	vr := batchRender(1)
	other := batchRender(2)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr, other)
	// Back after its second, its key is paused by a 429 with Retry-After of an hour: callBudgetSlot
	// asks again, for that wait.
	if d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}, CallIn: time.Hour}); err != nil || !d.Budgeted {
		t.Fatalf("asking again for the call budget's wait: %+v %v", d, err)
	}
	// It then stalls and never comes back. Eleven minutes later:
	const age = 11 * time.Minute
	ageReservations(t, h, age)
	reconcileBudget(t, h, 1)
	if holds(t, h, vr, "a1") {
		t.Errorf("%s after its gather, the reservation of a render that never came back to pay is still held", age)
	}
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: other, Attempt: "b1", Est: bound.Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Wait {
		t.Errorf("another render is refused (%s) for a render that is in flight nowhere", d.Message)
	}
}

// break-gather2: the first review's fix decides again when the budget's spec changed in the
// window (generation), but that is not the only thing the ordinary path decides on at pay time.
// When the namespace's ledger cannot be written (the manager's Role lost its ConfigMap rights,
// its namespace is being deleted), reserveChange refuses everything: "nothing more is paid in
// this namespace until it can" (fail closed: a budget replaced meanwhile would take its usage
// over from there). A gathered render whose reservation was written just before the ledger
// failed comes back within its window and pays on the old decision (takeGrant looks at the
// budget's UID, generation and reservation only); the same render reserving the ordinary way
// is refused. Every render gathered or waiting for its call budget (payAt up to an hour away)
// at the moment of the failure pays.
//
// Fix: takeGrant refuses (decides again the ordinary way) while g.ledgers.failure(ns) != nil; more
// generally, re-check in takeGrant every input of reserveChange that is not a budget status
// count (ledger failure; exhausted() on the cached budget is cheap too).
func TestBreakGather2LedgerFailureInTheWindowIsNotDecidedAgain(t *testing.T) {
	vr := batchRender(1)
	ordinary := batchRender(2)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](5)}, vr, ordinary)

	// The namespace's ledger cannot be written from now on (the Role lost its ConfigMap rights).
	forbidden := errors.New(`configmaps is forbidden: User "system:serviceaccount:ops:video-operator" cannot patch resource "configmaps"`)
	h.g.client = interceptor.NewClient(h.g.client.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				return forbidden
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				return forbidden
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	h.g.ledgers.noteWrite("team-a", forbidden)

	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: ordinary, Attempt: "b1", Est: bound.Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Wait || !strings.Contains(d.Message, "ledger") {
		t.Fatalf("control: the ordinary path admits while the ledger cannot be written: %+v", d)
	}
	d, err = h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Wait {
		t.Errorf("the ledger cannot be written (nothing more is paid in the namespace), yet the gathered render is admitted on its grant (%+v); "+
			"the ordinary path refuses it", d)
	}
}

// break-gather2: aheadLead says a render waiting for its key's call budget has its reservation
// queued only 3 s before its call, "short enough that the budget, which every write sends whole,
// does not carry the reservations of every render queued behind the call budget of a burst".
// The gather breaks that bound. Free only peeks and nobody takes a slot while gathering, so every
// render of a burst that reconciles within the first window gathers and has its reservation
// written at once; at the end of the window they all come back together, one takes the key's
// slot and the others wait for theirs (Urgent), asking reserveAhead again, which now keeps the
// written reservation (and protects it) for the whole wait. The budget then carries the
// reservation of every gathered render queued behind its key, for as long as the queue takes to
// drain: at N=10,000 and 10 calls/s, up to maxReservations (1,000) reservations for up to ~17
// minutes, written whole with every budget write and watched by every watcher, status.reserved
// counting 1,000 renders "in flight" that wait for their slot, and the 1,001st render told
// BudgetExhausted ("the most the VideoBudget tracks") while nothing is in flight. Renders that
// wait from the start (not gathered) have none written.
//
// Fixed: the gather books the render's call slot at the end of its window or behind the key's
// queue (callgate UrgentAfter), and queues its reservation for that call, aheadLead before it
// when it is far; the spec now asks the guard as gatherReservation does.
func TestBreakGather2GatheredBurstCarriesEveryReservationQueuedBehindItsCallBudget(t *testing.T) {
	const n = 30
	var gathered, waiting []*videov1alpha1.VideoRender
	var objs []client.Object
	for i := range n {
		gathered = append(gathered, batchRender(100+i))
		waiting = append(waiting, batchRender(200+i))
		objs = append(objs, gathered[i], waiting[i])
	}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1000)}, objs...)
	close(h.hold)
	h.pump(t)
	// The burst, as gatherReservation now asks: each gathered render books its key's slot at the
	// end of its window or behind the key's queue (callgate UrgentAfter: 1 s, then one call
	// every 10 s) and queues its reservation for that call; the same number of renders, arriving
	// once the key is busy, wait for their slot from the start.
	for i, vr := range gathered {
		wait := max(time.Duration(i)*10*time.Second, time.Second)
		if d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}, CallIn: wait}); err != nil || !d.Budgeted {
			t.Fatalf("gather: %+v %v", d, err)
		}
		if d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: waiting[i], Attempt: "w1", Est: bound.Estimate{Seconds: 10}, CallIn: wait + 10*time.Second}); err != nil || !d.Budgeted {
			t.Fatalf("waiting for the call budget: %+v %v", d, err)
		}
	}
	time.Sleep(3 * time.Second) // every write queued by now is done
	var ofGathered, ofWaiting int
	for _, r := range h.budget(t).Status.Reservations {
		switch {
		case strings.HasPrefix(r.Name, "r1"):
			ofGathered++
		case strings.HasPrefix(r.Name, "r2"):
			ofWaiting++
		}
	}
	if ofWaiting != 0 {
		t.Fatalf("control: %d reservations of renders whose call is 10 s or more away were written (aheadLead is 3 s)", ofWaiting)
	}
	if ofGathered > 1 { // the first, whose call comes at the end of its window
		t.Errorf("the budget carries %d reservations of gathered renders whose call is 10 s to 5 min away (renders waiting alike: %d); "+
			"aheadLead bounds them to the renders calling within 3 s", ofGathered, ofWaiting)
	}
}
