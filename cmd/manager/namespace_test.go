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
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/videoops/video-operator/internal/spendguard"
)

// inPod makes the test run as in a pod whose service account's namespace file holds content, or
// out of a pod when content is "": the file is then missing.
func inPod(t *testing.T, content string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "namespace")
	if content != "" {
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := serviceAccountNamespace
	serviceAccountNamespace = f
	t.Cleanup(func() { serviceAccountNamespace = old })
}

// The manager's own namespace, which --budget-ledger-namespace and --fingerprint-key-namespace
// both default to, and what each does when there is none.
func TestManagerNamespace(t *testing.T) {
	const url = "--service-base-url=http://svc/serviceapis"

	t.Run("POD_NAMESPACE, before the service account's", func(t *testing.T) {
		t.Setenv("POD_NAMESPACE", "ops")
		inPod(t, "team-a\n")
		if got := managerNamespace(); got != "ops" {
			t.Fatalf("managerNamespace() = %q, want ops", got)
		}
		opts := parsed(t, url)
		if opts.ledgerNamespace != "ops" || opts.fingerprintKeyNamespace != "ops" {
			t.Fatalf("defaults: ledger %q, fingerprint %q; want ops for both", opts.ledgerNamespace, opts.fingerprintKeyNamespace)
		}
		if got := ledgerNamespace(opts.ledgerNamespace); got != "ops" {
			t.Fatalf("ledgers in %q, want ops", got)
		}
	})

	t.Run("the service account's namespace without POD_NAMESPACE", func(t *testing.T) {
		t.Setenv("POD_NAMESPACE", "")
		inPod(t, "team-a\n")
		if got := managerNamespace(); got != "team-a" {
			t.Fatalf("managerNamespace() = %q, want team-a", got)
		}
		opts := parsed(t, url)
		if opts.ledgerNamespace != "team-a" || opts.fingerprintKeyNamespace != "team-a" {
			t.Fatalf("defaults: ledger %q, fingerprint %q; want team-a for both", opts.ledgerNamespace, opts.fingerprintKeyNamespace)
		}
		c := fake.NewClientBuilder().Build()
		if _, err := fingerprintKey(context.Background(), logr.Discard(), c, c, opts); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: DefaultFingerprintKeySecret}, &corev1.Secret{}); err != nil {
			t.Fatalf("the fingerprint secret is not in team-a: %v", err)
		}
	})

	t.Run("neither: the ledgers in the default namespace, fingerprints keyed by the process", func(t *testing.T) {
		t.Setenv("POD_NAMESPACE", "")
		inPod(t, "")
		if got := managerNamespace(); got != "" {
			t.Fatalf("managerNamespace() = %q out of a pod, want empty", got)
		}
		opts := parsed(t, url)
		if got := ledgerNamespace(opts.ledgerNamespace); got != spendguard.DefaultLedgerNamespace {
			t.Fatalf("ledgers in %q, want %s", got, spendguard.DefaultLedgerNamespace)
		}
		// No client: a manager that does not know its namespace calls no API server for the secret.
		key, err := fingerprintKey(context.Background(), logr.Discard(), nil, nil, opts)
		if err != nil || key != nil {
			t.Fatalf("got %q, %v; want nil, nil", key, err)
		}
	})

	t.Run("an empty flag given explicitly falls back as before", func(t *testing.T) {
		t.Setenv("POD_NAMESPACE", "ops")
		inPod(t, "team-a\n")
		opts := parsed(t, url, "--budget-ledger-namespace=", "--fingerprint-key-namespace=")
		if got := ledgerNamespace(opts.ledgerNamespace); got != "team-a" {
			t.Fatalf("ledgers in %q, want the service account's team-a", got)
		}
		c := fake.NewClientBuilder().Build()
		if _, err := fingerprintKey(context.Background(), logr.Discard(), c, c, opts); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ops", Name: DefaultFingerprintKeySecret}, &corev1.Secret{}); err != nil {
			t.Fatalf("the fingerprint secret is not in POD_NAMESPACE's ops: %v", err)
		}
	})
}
