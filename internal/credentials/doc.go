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
// Package credentials reads the API keys of the service from Secrets in the object's own
// namespace (Store): metadata from the manager's cache, the data from the API server only when
// the Secret's resourceVersion changed. A key that cannot be read is an *Error whose Reason goes
// into the Stalled condition. Keys are never logged; callers identify them by fingerprint.
package credentials
