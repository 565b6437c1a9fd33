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
)

// ageReservations makes every reservation of the harness's budget d old.
func ageReservations(t *testing.T, h *batchHarness, d time.Duration) {
	t.Helper()
	b := h.budget(t)
	for i := range b.Status.Reservations {
		b.Status.Reservations[i].ReservedAt = metav1.NewTime(time.Now().Add(-d))
	}
	if err := h.server.Status().Update(t.Context(), b); err != nil {
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

// break-gather2: a taken grant protects its reservation from the VideoBudget controller's "never
// sent" release for grantTTL (10 min) from the take, whatever happens to the attempt afterwards.
// The render takes its grant (reserveBudget, the last gate), then its in-flight write fails
// (writeInFlight: a conflict because a person edited the render at that moment, or any other
// error: "the call is not made"). The attempt certainly reached no service. If the render does not
// come back to a new attempt (the edit made it stall at an earlier gate: its storyboardRef now
// names an unapproved preview, its Secret was rotated away, ...), the reservation of the unsent
// attempt stays for ten minutes: status.reserved says a render is in flight that is not, and
// with maxRenders reached every other render of the namespace is told BudgetExhausted. The same
// render reserving the ordinary way (no gather) has its reservation released once it is older
// than grace (a submission's time) and its object shows no submission of that attempt. The
// stated reason for 10 min ("its in-flight record may reach the cache late") does not hold: a
// reservation older than grace is checked against the object read from the API server
// (settleInterrupted reads it with r.reader), and the in-flight write is bounded by WriteTimeout.
//
// Fix: protect a taken grant only for the in-flight write's time (WriteTimeout and a margin), or
// until the object shows the attempt; better, when writeInFlight fails the controller tells the
// guard (or releases the attempt: it certainly created no job), which ends the protection.
func TestBreakGather2TakenGrantWhoseInFlightWriteFailedHoldsItsReservationTenMinutes(t *testing.T) {
	vr := batchRender(1)
	other := batchRender(2)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr, other)
	// Back after its second, it pays on its grant: the last gate passed.
	if d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: Estimate{Seconds: 10}}); err != nil || d.Wait {
		t.Fatalf("the render comes back to pay: %+v %v", d, err)
	}
	// Its in-flight write fails (nothing is sent) and the render stalls before a new attempt.
	// Two minutes later (grace is one minute in reconcileOnce), its status shows no submission.
	ageReservations(t, h, 2*time.Minute)
	h.g.grants.mu.Lock()
	gr := h.g.grants.byUID[vr.UID]
	gr.takenAt = gr.takenAt.Add(-2 * time.Minute)
	gr.asked, gr.payAt, gr.due = gr.asked.Add(-2*time.Minute), gr.payAt.Add(-2*time.Minute), gr.due.Add(-2*time.Minute)
	h.g.grants.mu.Unlock()
	reconcileBudget(t, h, 1)
	if holds(t, h, vr, "a1") {
		t.Errorf("two minutes after an attempt that was never sent (its in-flight write failed), its reservation is still held: " +
			"the taken grant protects it for grantTTL (10 min); reserved the ordinary way it is released past grace")
	}
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: other, Attempt: "b1", Est: Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Wait {
		t.Errorf("another render is refused (%s) for a render that is in flight nowhere", d.Message)
	}
}

// break-gather2: the first review's fix bounds the protection of an untaken grant by its wait
// and grantSlack ("a render that never comes back has its reservation released once its wait and
// grantSlack are over"), but the wait is no longer bounded. Before the gather, granted() was
// capped at asked+grantTTL (10 min), and a render waiting long for its key's call budget had its
// reservation queued only aheadLead (3 s) before its call (reserveAhead's AfterFunc). Now the
// gather writes the reservation at once, and callBudgetSlot asking again for the same attempt
// only moves payAt/due later: a key paused by a 429 (Retry-After up to an hour, maxRetryAfter)
// makes the gathered reservation held, and protected, for the whole pause, and, since sweepLocked
// keeps what protects, the grant lives as long. A render that asked and then stalls (edited while
// it waits: it comes back early, stops at an earlier gate and never comes back) holds maxRenders
// for up to an hour per re-ask, past the old 10-minute cap; a render of the namespace on another,
// working key is told BudgetExhausted all that time, and status.reserved counts a render that
// sends nothing. (Even a render that does not stall now holds its reservation through the whole
// pause, where before it was written 3 s before its call: the budget carries the reservations of
// every gathered render queued behind its key, which aheadLead was meant to prevent.)
//
// Fix: when asked again with a wait longer than aheadLead, do not extend the written
// reservation's protection: hand it back (its protection ends, the controller or the next write
// replaces it) and queue it again aheadLead before the call, as for a render that waits from the
// start; at the least, keep the grantTTL cap from asked on protects().
func TestBreakGather2ReAskedGrantProtectsAStalledRendersReservationPastGrantTTL(t *testing.T) {
	vr := batchRender(1)
	other := batchRender(2)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr, other)
	// Back after its second, its key is paused by a 429 with Retry-After of an hour: callBudgetSlot
	// asks again, for that wait.
	if d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: Estimate{Seconds: 10}, CallIn: time.Hour}); err != nil || !d.Budgeted {
		t.Fatalf("asking again for the call budget's wait: %+v %v", d, err)
	}
	// It then stalls and never comes back. Eleven minutes later:
	const age = 11 * time.Minute
	ageReservations(t, h, age)
	h.g.grants.mu.Lock()
	gr := h.g.grants.byUID[vr.UID]
	gr.asked, gr.payAt, gr.due = gr.asked.Add(-age), gr.payAt.Add(-age), gr.due.Add(-age)
	h.g.grants.mu.Unlock()
	reconcileBudget(t, h, 1)
	if holds(t, h, vr, "a1") {
		t.Errorf("%s after its gather, past grantTTL, the reservation of a render that never came back to pay is still held "+
			"(protected until its extended due, %s from now)", age, time.Until(gr.due).Round(time.Minute))
	}
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: other, Attempt: "b1", Est: Estimate{Seconds: 10}})
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

	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: ordinary, Attempt: "b1", Est: Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Wait || !strings.Contains(d.Message, "ledger") {
		t.Fatalf("control: the ordinary path admits while the ledger cannot be written: %+v", d)
	}
	d, err = h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: Estimate{Seconds: 10}})
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
		if d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: Estimate{Seconds: 10}, CallIn: wait}); err != nil || !d.Budgeted {
			t.Fatalf("gather: %+v %v", d, err)
		}
		if d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: waiting[i], Attempt: "w1", Est: Estimate{Seconds: 10}, CallIn: wait + 10*time.Second}); err != nil || !d.Budgeted {
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
