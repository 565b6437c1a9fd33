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

package main

import (
	"os"
	"strings"
)

// serviceAccountNamespace is where a pod finds its own namespace; a variable so that a test can
// stand in for a pod.
var serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// managerNamespace is the namespace the manager runs in, the default of both
// --budget-ledger-namespace and --fingerprint-key-namespace, so that the ledgers and the
// fingerprint secret stay together: POD_NAMESPACE, which the install sets through the downward
// API, else the pod's own. Out of a cluster it is "", and each flag's user has its fallback.
func managerNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return podNamespace()
}

// podNamespace is the namespace of the pod's service account, "" out of a pod.
func podNamespace() string {
	b, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
