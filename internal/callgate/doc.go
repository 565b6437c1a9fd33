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

// Package callgate decides when a call to the service may go, per API key: a GCRA call budget
// that never blocks a worker (Budgets), a circuit that holds paid submissions while the service's
// answers are in doubt (Circuits), per-object exponential backoff with jitter (Backoff), and a
// client wrapper that tells the budget and the circuit what every answer showed (KeyedClient).
//
// Keys are identified by their fingerprint, never the key itself. Nothing here reads or writes
// Kubernetes objects: the reconcilers ask and act on the answers (internal/controller/callgate.go).
package callgate
