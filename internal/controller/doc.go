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
// # One reconcile, step by step (lifecycle.go Reconcile, then advance)
//
//  1. read: lifecycle.go read (the cache, or the API server for an object marked stale).
//  2. deleted: spendguard.go finishCharge charges the job's end, then lets go of the finalizer.
//  3. a callback another replica received: advance consumes status.callback.
//  4. an in-flight record without a job id: submit.go resolveInFlight adopts the job the memo or
//     a callback names (adoptFromCallback), or stalls SubmissionUnknown; record.go restoredUnknown
//     brings that stall back from the annotations after a restore.
//  5. a running job: poll.go poll reads it (callgate.go budget and share), records it
//     (poll.go recordJob, the adapter's recordJob) and charges its end (spendguard.go
//     chargeCompletion).
//  6. what the spec asks for: the adapter's resolve (videorender_controller.go resolve with
//     approval.go approvedPreview for storyboardRef; videostoryboard_controller.go resolve),
//     a target or a reason to wait.
//  7. a restored object: record.go adoptable and adopt take the job its annotations name.
//  8. already sent: record.go alreadySent compares the request digest (requestDigestOf) with the
//     recorded one; an unchanged request pays nothing (RequestUnchanged).
//  9. submit (submit.go submit), gates first, each of which may end the reconcile:
//     presubmit.go checkBeforeSubmit (rules admission cannot afford), lifecycle.go serviceClient
//     (the key), brands.go checkBrand, the key's circuit and call budget (callgate.go), the
//     spend guard (spendguard.go reserveBudget, last, so that a waiting render writes nothing).
//     Then the paid section, in a straight line under its own deadline: writeInFlight (status,
//     optimistic lock) → call → recordSubmitted and writeJobID → settleBudget.
//  10. the status write: Reconcile commits the transaction (statustxn.Txn.Commit); the side
//     effects of the decision run only after it is persisted.
//
// # Side effects after the status write
//
// Nothing below happens unless the status write succeeded:
//   - events and metrics registered with tx.After (Submitted, Adopted, RequestUnchanged, a stall's
//     Warning, Completed);
//   - the record in the annotations (record.go writeRecord), for objects put in the unrecorded
//     set by recordPending: the job id, the request digest and the key fingerprint travel with
//     the object so that a restore without status adopts its job; in a namespace with a
//     VideoBudget the charge finalizer rides in the same write (spendguard.go holdForCharge);
//   - the versions the write replaced (tx.Superseded), so that a cache still showing them is read
//     fresh (lifecycle.go supersede), and the stale set after a conflict.
//
// # Where each concern lives
//
//	approval.go          what a storyboardRef render may pay for (consent is a record)
//	record.go            "already paid", the record in annotations, adoption after a restore
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
package controller
