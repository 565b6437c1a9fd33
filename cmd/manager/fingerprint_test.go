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
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Where the installation's fingerprint secret comes from (docs/backup-restore.md, "Key
// fingerprints"); the manager never fails to start for want of it.
func TestFingerprintKeySource(t *testing.T) {
	ctx := context.Background()
	t.Setenv("POD_NAMESPACE", "")

	t.Run("a Secret in the manager's namespace, created once", func(t *testing.T) {
		c := fake.NewClientBuilder().Build()
		opts := parsed(t, "--service-base-url=http://svc/serviceapis", "--fingerprint-key-namespace=video-operator-system")
		first, err := fingerprintKey(ctx, logr.Discard(), c, c, opts)
		if err != nil || len(first) < 32 {
			t.Fatalf("got %d bytes, %v", len(first), err)
		}
		again, err := fingerprintKey(ctx, logr.Discard(), c, c, opts)
		if err != nil || !bytes.Equal(first, again) {
			t.Fatalf("a restart read another secret (%v)", err)
		}
	})
	t.Run("POD_NAMESPACE names the namespace", func(t *testing.T) {
		t.Setenv("POD_NAMESPACE", "ops")
		c := fake.NewClientBuilder().Build()
		if _, err := fingerprintKey(ctx, logr.Discard(), c, c, parsed(t, "--service-base-url=http://svc/serviceapis")); err != nil {
			t.Fatal(err)
		}
		if managerNamespace() != "ops" {
			t.Fatal("POD_NAMESPACE was not taken")
		}
	})
	t.Run("a file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "key")
		if err := os.WriteFile(f, []byte(strings.Repeat("s", 40)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		key, err := fingerprintKey(ctx, logr.Discard(), nil, nil, parsed(t, "--service-base-url=http://svc/serviceapis", "--fingerprint-key-file="+f))
		if err != nil || string(key) != strings.Repeat("s", 40) {
			t.Fatalf("got %q, %v", key, err)
		}
		short := filepath.Join(t.TempDir(), "short")
		_ = os.WriteFile(short, []byte("short"), 0o600)
		if _, err := fingerprintKey(ctx, logr.Discard(), nil, nil, parsed(t, "--service-base-url=http://svc/serviceapis", "--fingerprint-key-file="+short)); err == nil {
			t.Fatal("a 5-byte file was taken")
		}
	})
	t.Run("out of a cluster, or the Secret forbidden: a secret of the process, no error", func(t *testing.T) {
		if managerNamespace() != "" {
			t.Skip("running in a pod")
		}
		key, err := fingerprintKey(ctx, logr.Discard(), nil, nil, parsed(t, "--service-base-url=http://svc/serviceapis"))
		if err != nil || key != nil {
			t.Fatalf("got %q, %v; want nil, nil", key, err)
		}
		forbidden := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
			Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "x", nil)
			},
		}).Build()
		key, err = fingerprintKey(ctx, logr.Discard(), forbidden, forbidden, parsed(t, "--service-base-url=http://svc/serviceapis", "--fingerprint-key-namespace=ops"))
		if err != nil || key != nil {
			t.Fatalf("got %q, %v; want nil, nil", key, err)
		}
	})
}
