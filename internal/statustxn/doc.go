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

// Package statustxn is one reconcile's change to one object's status (Txn): decisions are made
// in memory on Obj and reach the API server only through Commit, a merge patch conditional on the
// resourceVersion they were based on; the side effects of a decision (After) run only once it is
// written, and a write that fails discards the decisions and their effects (docs/architecture.md
// "Never pay twice": a failed locked write changes nothing on the server).
package statustxn
