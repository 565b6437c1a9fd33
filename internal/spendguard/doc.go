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

// Package spendguard keeps each namespace's spend under its VideoBudget: a ledger of pending and
// posted costs (docs/spend-guard.md):
//   - ledger.go: the namespace's state, a ConfigMap no tenant can write, written under its own
//     optimistic lock before anything is paid on it; the budget's status is its view; the latest
//     copy this process wrote or its watch sent is what it writes over and what grants check;
//   - verbs.go, guard.go: Guard reserves the worst case before a paid submission, releases what no
//     job used, and charges what no status records;
//   - fold.go: every write folds what the objects recorded in their own status (a job: the
//     reservation becomes usage; its end: the reservation is posted for what it cost);
//   - batch.go, grant.go: a namespace's changes share one ledger write (group commit), then the
//     view's; reservations are written ahead for renders waiting for their call budget;
//   - limits.go: the period arithmetic and the limits (a request's bound is internal/bound);
//   - reconciler.go: the VideoBudget controller (roll-over, interrupted reservations, jobs of gone
//     objects, the view and its conditions); observe.go: what both tell the metrics.
//
// Every write of the API is a reconcile's or its caller's: a change due later is a request in the
// VideoBudget controller's workqueue (Ledgers.Source). The job kinds' reconcilers
// (internal/controller/spendguard.go) call Guard; nothing here imports them.
package spendguard
