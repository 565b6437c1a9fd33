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
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Key fingerprints (docs/architecture.md "Records that outlive a version"): the fingerprint of the
// API key that submitted a job is kept in status and in an annotation, which tenants read. A bare
// hash of the key would be an offline oracle for guessing a weak key, and would show which
// namespaces share an account; so a fingerprint is an HMAC-SHA256 of the key with a secret of the
// installation, which only the manager reads.

// FingerprintPrefix starts every keyed fingerprint; a fingerprint without it is the bare SHA-256
// form that versions before keyed fingerprints recorded.
const FingerprintPrefix = "hmac-sha256:"

// MinFingerprintKey is the shortest installation secret accepted, in bytes.
const MinFingerprintKey = 32

// FingerprintKeyField is the data key of the installation secret in its Secret.
const FingerprintKeyField = "key"

// Fingerprinter fingerprints API keys with the installation's secret.
type Fingerprinter struct {
	secret []byte
}

// NewFingerprinter returns a Fingerprinter keyed with secret, at least MinFingerprintKey bytes.
func NewFingerprinter(secret []byte) (*Fingerprinter, error) {
	if len(secret) < MinFingerprintKey {
		return nil, fmt.Errorf("the key fingerprint secret has %d bytes, fewer than %d", len(secret), MinFingerprintKey)
	}
	return &Fingerprinter{secret: append([]byte(nil), secret...)}, nil
}

// RandomFingerprintKey is a secret of this process alone: fingerprints keyed with it are not
// recognised by another process, so it is only for tests and a manager that could neither read
// nor create its installation secret.
func RandomFingerprintKey() []byte {
	b := make([]byte, MinFingerprintKey)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return b
}

// Of is the keyed fingerprint of key: the prefix and the first 16 bytes of HMAC-SHA256(secret,
// label || key), in hex (44 characters, within status.keyFingerprint's 64).
func (f *Fingerprinter) Of(key string) string {
	m := hmac.New(sha256.New, f.secret)
	m.Write([]byte("video-operator api key fingerprint\x00"))
	m.Write([]byte(key))
	return FingerprintPrefix + hex.EncodeToString(m.Sum(nil)[:16])
}

// Recognises reports whether recorded, a fingerprint in a record, names key: the keyed form of
// this installation, or the bare form of versions before keyed fingerprints (a job submitted
// under it with the same key is the same key, not a key change).
func (f *Fingerprinter) Recognises(recorded, key string) bool {
	if recorded == "" {
		return false
	}
	if strings.HasPrefix(recorded, FingerprintPrefix) {
		return hmac.Equal([]byte(recorded), []byte(f.Of(key)))
	}
	return hmac.Equal([]byte(recorded), []byte(BareFingerprint(key)))
}

// BareFingerprint is the unkeyed fingerprint that versions before keyed fingerprints recorded:
// the first 16 bytes of SHA-256(key), in hex. It is only compared with, never written.
func BareFingerprint(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

// EnsureFingerprintKey returns the installation secret held in data key "key" of Secret
// namespace/name, creating the Secret with a random secret when it does not exist. Several
// replicas starting at once create it once: the one whose create loses reads the winner's.
// reader should read from the API server (not a cache the Secret may be outside of).
func EnsureFingerprintKey(ctx context.Context, reader client.Reader, writer client.Writer, namespace, name string) ([]byte, error) {
	for range 2 {
		var s corev1.Secret
		err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &s)
		if err == nil {
			key := s.Data[FingerprintKeyField]
			if len(key) < MinFingerprintKey {
				return nil, fmt.Errorf("the key fingerprint Secret %s/%s holds no key of at least %d bytes in data key %q", namespace, name, MinFingerprintKey, FingerprintKeyField)
			}
			return key, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading the key fingerprint Secret %s/%s: %w", namespace, name, err)
		}
		key := make([]byte, 48)
		_, _ = rand.Read(key)
		s = corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{
				"app.kubernetes.io/name": "video-operator", "app.kubernetes.io/component": "key-fingerprint"}},
			Type:      corev1.SecretTypeOpaque,
			Immutable: ptrTrue(),
			Data:      map[string][]byte{FingerprintKeyField: key},
		}
		err = writer.Create(ctx, &s)
		if err == nil {
			return key, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating the key fingerprint Secret %s/%s: %w", namespace, name, err)
		}
	}
	return nil, fmt.Errorf("the key fingerprint Secret %s/%s was created and is gone again", namespace, name)
}

func ptrTrue() *bool {
	t := true
	return &t
}
