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

// Package controller holds the reconcilers of VideoStoryboard and VideoRender: one job lifecycle
// (lifecycle[T]) that both kinds share, and the glue to the mechanisms that live in packages of
// their own (call gate, spend guard, callbacks, status transaction, credentials). This page is
// the map: read it before the code.
//
// # The states of an object
//
//	           spec written
//	                │
//	                ▼
//	┌───────── Pending ◀──────────────────────────────┐
//	│  waits: AwaitingApproval, WaitingForPreview,    │ a new request
//	│  BudgetExhausted, RateLimited (Reconciling)     │ (spec edit, retry)
//	│               │ every gate passed               │
//	│               ▼                                 │
//	│         Submitting ── outcome unknown ──▶ Stalled SubmissionUnknown
//	│   (in-flight record written, paid call)         │   (a person confirms)
//	│               │ job id                          │
//	│               ▼                                 │
//	│          InProgress ── job failed ──▶ Failed (Stalled) ──┘
//	│    (poll, or callback then read)                │
//	│               │ job completed, charged          │
//	│               ▼                                 │
//	└──────────▶ Completed (Ready) ───────────────────┘
//	 (a finished storyboardRef render stays Ready when its storyboard moves on)
//
// Stalled is also reached without a job: a Secret or key missing or refused, an invalid request,
// a storyboard that cannot be rendered as approved (NarrationIncomplete, BriefSettingsNotCarried).
//
// # One reconcile, step by step
//
// lifecycle.go Reconcile reads the object (lifecycle.go read: the cache, or the API server for an
// object marked stale); a deleted one is handed to spendguard.go finishCharge, which charges a
// running job's end (or waits until the budget folded the end its status records) and lets go of
// the finalizer. Otherwise the reconcile is one scope (step.go: the
// status transaction and what the steps learn, in order) and these steps, each a
// func(ctx, *scope) *stop that returns nil to go on or the stop that ends the reconcile (step.go
// stop: the one way to say "stop here"):
//
//  1. consumeCallback (lifecycle.go): a callback another replica received, in status.callback.
//  2. resolveInFlight (submit.go): an in-flight record without a job id. It adopts the job the
//     memo or a callback names (adoptFromCallback), clears an attempt known to have created
//     nothing, or stalls SubmissionUnknown; record.go restoredUnknown brings that stall back from
//     the annotations after a restore.
//  3. poll (poll.go): a running job is read (the key's call budget and the polls' share decide
//     when) and recorded (poll.go recordJob, then the adapter's recordJob): a render's end in its
//     status is what the budget folds (internal/spendguard fold.go), while its running job's
//     reservation holds its room; a preview's end records its credits the same way.
//  4. resolve (lifecycle.go): what the spec asks for, from the adapter's resolve
//     (videorender_controller.go resolve with approval.go approvedPreview for storyboardRef;
//     videostoryboard_controller.go resolve): a target, or a reason to wait. A restored object
//     that waits adopts the job its record names (record.go adopt) and is resolved again.
//  5. waitIfAsked (lifecycle.go): the reason to wait is said (AwaitingApproval,
//     WaitingForPreview, ...); a finished job the adapter vouches for stays Ready.
//  6. adoptRecorded (lifecycle.go, record.go adoptable and adopt): annotations that name a job
//     status does not know (a restore) are adopted, not paid for.
//  7. answered (lifecycle.go): record.go alreadySent compares the request digest
//     (requestDigestOf) with the recorded one. An unchanged request pays nothing
//     (RequestUnchanged): a completed job is Ready (completed), a failed one stalls until the
//     spec changes or a retry is asked for.
//  8. submit (submit.go): gates first, in order, none of which pays and each of which may end
//     the reconcile: presubmit.go checkBeforeSubmit (rules admission cannot afford),
//     lifecycle.go useKey (the key), brands.go checkBrand, notShuttingDown, takeAttempt,
//     circuitLets and callBudgetSlot (the key's circuit and call budget, callgate.go),
//     callgate.go admitSubmission (a free check of an idle key), spendguard.go reserveBudget
//     (last, so that a waiting render writes nothing). Then pay, in a straight line under its
//     own deadline: writeInFlight (status, optimistic lock) → callService (the paid call) →
//     accepted (recordSubmitted, writeJobID), or refusedCall, or unknownOutcome.
//
// Then lifecycle.go commit writes the status once (statustxn.Txn.Commit), with
// observedGeneration when a decision about the spec was reached, and writeRecordIfDue copies the
// job's record into the annotations when a step asked for it (recordPending).
//
// # Side effects after the status write
//
// Nothing below happens unless the status write succeeded:
//   - events and metrics registered with tx.After (Submitted, Adopted, RequestUnchanged, a stall's
//     Warning, Completed, the end of a job's polls);
//   - the record in the annotations (lifecycle.go writeRecordIfDue, record.go writeRecord), when
//     a step called recordPending (accepted, an adoption, a stall on an unknown outcome, a
//     record found missing): the job id, the request digest and the key fingerprint travel with
//     the object so that a restore without status adopts its job; in a namespace with a
//     VideoBudget the charge finalizer rides in the same write (spendguard.go holdForCharge). A
//     record that was due but not written (its write failed, or the closing status write did
//     after writeJobID had written the job id) is written by the next reconcile (the unrecorded
//     set);
//   - the versions the write replaced (tx.Superseded), so that a cache still showing them is read
//     fresh (lifecycle.go supersede), and the stale set after a conflict (afterReconcile).
//
// A write that fails discards the decisions and these effects; what must be redone soon is
// queued with tx.OnFail (a job read as ended is read again first).
//
// # Where each concern lives
//
//	approval.go          what a storyboardRef render may pay for (consent is a record)
//	record.go            "already paid", the record in annotations, adoption after a restore
//	step.go              a reconcile's scope, and stop: how a step ends the reconcile
//	submit.go            the paid call and the in-flight record
//	poll.go              reading a running job, failures and their messages
//	spendguard.go        reservations, charges and the charge finalizer (internal/spendguard)
//	callgate.go          the per-key call budget and circuit (internal/callgate)
//	callback.go          callback options (internal/callback)
//	clearance.go         refreshing a clearance code before it expires
//	progress.go          holding back progress-only status writes
//	presubmit.go, brands.go  checks before paying
//	conditions.go        Ready, Reconciling and Stalled
//	setup.go, options.go wiring and options
//
// The kinds differ only through kindAdapter (lifecycle.go: what the spec asks for, how a job maps
// into status, replaceOutputs, carryOutputs, and termsOf: how the kind pays and who reviews);
// where each keeps its fields is api/v1alpha1 JobObject.
package controller
