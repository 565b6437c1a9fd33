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

// Package callback receives the service's job-result callbacks: Signer signs each submission's
// callback URL (an HMAC of the attempt id) and the proof carried in webhookInput, and Handler
// serves the callbacks, checks them, and wakes the objects they are about. A callback is never
// trusted for data: the reconciler reads the job from the service with the object's own key.
// A replica that does not lead writes the callback into the object's status.callback, which wakes
// the leader (Recorded is the predicate for that update).
package callback
