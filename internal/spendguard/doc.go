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

// Package spendguard keeps each namespace's VideoBudget: Guard reserves room before a paid
// submission and releases it when no job was created; every budget write folds what the
// namespace's objects recorded in their own status (a submission's job: the reservation becomes
// usage; its end: the running job's reservation is posted for what it cost, fold.go); the period
// arithmetic (PeriodBounds, RollPeriod) and the limits live beside it; Reconciler keeps a budget's
// status current (period roll-over, interrupted reservations, the facts no guard write carried,
// conditions).
//
// Every write is a status patch with an optimistic lock; a process's writes of one budget take
// turns and are shared (group commit, batch.go): the changes of a namespace queued while one
// write is in flight, or within a short delay for those nobody waits for (reservations written
// ahead for renders waiting for their call budget, grant.go), go in one write, each deciding on
// the budget as the ones before it left it. The ledger is written after each budget write that
// changes it (ledger.go). Every write of the API is made by a caller (a reconcile of a job kind)
// or by the VideoBudget controller's reconcile: a delay's timer only wakes that controller
// (Ledgers.Wake), which writes what is due. The reconcilers of the job kinds
// (internal/controller/spendguard.go) call Guard at the steps of a submission; nothing here
// imports them.
package spendguard
