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

package credentials

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const apiKey = "sk-video-fingerprint-test-0001"

func mustFingerprinter(t *testing.T, secret string) *Fingerprinter {
	t.Helper()
	f, err := NewFingerprinter([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// docs/architecture.md "Records that outlive a version": a key fingerprint is keyed (HMAC), never a
// bare hash of the key.
func TestTheFingerprintIsKeyed(t *testing.T) {
	a := mustFingerprinter(t, strings.Repeat("a", 32))
	b := mustFingerprinter(t, strings.Repeat("b", 32))
	got := a.Of(apiKey)
	if !strings.HasPrefix(got, FingerprintPrefix) || len(got) != len(FingerprintPrefix)+32 || len(got) > 64 {
		t.Fatalf("fingerprint %q: want %s and 32 hex digits, within 64 characters", got, FingerprintPrefix)
	}
	if got != a.Of(apiKey) {
		t.Fatal("the same key has two fingerprints")
	}
	if got == b.Of(apiKey) {
		t.Fatal("two installation secrets give the same fingerprint: it is not keyed")
	}
	if strings.Contains(got, BareFingerprint(apiKey)) || got == a.Of(apiKey+"x") {
		t.Fatal("the fingerprint holds the bare hash, or two keys share one")
	}
	if _, err := NewFingerprinter([]byte("short")); err == nil {
		t.Fatal("a secret of 5 bytes was accepted")
	}
}

// An old bare fingerprint of the same key is recognised (not a key change); another key's, or a
// keyed fingerprint of another installation, is not.
func TestOldFingerprintsAreRecognised(t *testing.T) {
	f := mustFingerprinter(t, strings.Repeat("a", 32))
	other := mustFingerprinter(t, strings.Repeat("b", 32))
	// The value main (before keyed fingerprints, brands.go fingerprint) recorded for apiKey: the
	// first 16 bytes of its SHA-256, in hex.
	const bare = "ba9cd0ddbb363ec7abc5c8958bfd1304" // printf %s "$key" | sha256sum | cut -c1-32
	if BareFingerprint(apiKey) != bare {
		t.Fatalf("BareFingerprint(%q) = %s, the form earlier versions recorded is %s", apiKey, BareFingerprint(apiKey), bare)
	}
	cases := []struct {
		name     string
		recorded string
		want     bool
	}{
		{"the keyed fingerprint of the key", f.Of(apiKey), true},
		{"the bare fingerprint an earlier version recorded for the key", bare, true},
		{"the bare fingerprint of another key", BareFingerprint("sk-video-other"), false},
		{"the keyed fingerprint of another key", f.Of("sk-video-other"), false},
		{"the keyed fingerprint of the key under another installation's secret", other.Of(apiKey), false},
		{"none", "", false},
	}
	for _, c := range cases {
		if got := f.Recognises(c.recorded, apiKey); got != c.want {
			t.Errorf("%s: Recognises = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTheInstallationSecretIsCreatedOnce(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	first, err := EnsureFingerprintKey(ctx, c, c, "video-operator-system", "video-operator-fingerprint-key")
	if err != nil {
		t.Fatal(err)
	}
	if len(first) < MinFingerprintKey {
		t.Fatalf("created a secret of %d bytes", len(first))
	}
	again, err := EnsureFingerprintKey(ctx, c, c, "video-operator-system", "video-operator-fingerprint-key")
	if err != nil || !bytes.Equal(first, again) {
		t.Fatalf("a second start read another secret (%v)", err)
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: "video-operator-system", Name: "video-operator-fingerprint-key"}, &s); err != nil {
		t.Fatal(err)
	}
	if s.Immutable == nil || !*s.Immutable {
		t.Fatal("the Secret is not immutable: an update could change every fingerprint")
	}
}

// Two replicas starting at once: the one whose create loses takes the winner's secret.
func TestARaceToCreateTheSecretKeepsOne(t *testing.T) {
	ctx := context.Background()
	winner := bytes.Repeat([]byte("w"), 48)
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			s := obj.(*corev1.Secret)
			won := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name}, Data: map[string][]byte{FingerprintKeyField: winner}}
			if err := cl.Create(ctx, won); err != nil {
				return err
			}
			return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, s.Name)
		},
	}).Build()
	got, err := EnsureFingerprintKey(ctx, c, c, "ns", "fp")
	if err != nil || !bytes.Equal(got, winner) {
		t.Fatalf("got %q, %v; want the winner's secret", got, err)
	}
}

func TestATooShortSecretIsRefused(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "fp"},
		Data: map[string][]byte{FingerprintKeyField: []byte("short")}}).Build()
	if _, err := EnsureFingerprintKey(ctx, c, c, "ns", "fp"); err == nil {
		t.Fatal("a 5-byte secret was taken")
	}
}
