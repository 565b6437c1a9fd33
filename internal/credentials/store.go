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
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// IndexSecretName indexes both kinds by the name of the Secret their API key comes from, so that
// a change to a Secret wakes exactly the objects of its namespace that use it.
const IndexSecretName = ".spec.apiKeySecretRef.name" //nolint:gosec // a field index name, not a credential

// RefOrDefault applies the documented defaults when apiKeySecretRef is omitted. The CRD
// defaults it too; this covers objects written before the default existed.
func RefOrDefault(ref *videov1alpha1.SecretKeyRef) videov1alpha1.SecretKeyRef {
	out := videov1alpha1.SecretKeyRef{Name: videov1alpha1.DefaultAPIKeySecretName, Key: videov1alpha1.DefaultAPIKeySecretKey}
	if ref != nil {
		if ref.Name != "" {
			out.Name = ref.Name
		}
		if ref.Key != "" {
			out.Key = ref.Key
		}
	}
	return out
}

// Error says why no API key could be read; its reason goes into the Stalled condition.
type Error struct {
	// Reason goes into the Stalled condition.
	Reason  videov1alpha1.ConditionReason
	Message string
}

func (e *Error) Error() string { return e.Message }

// Store reads API keys from Secrets. The manager watches only the metadata of the Secrets its
// objects name (Watches); the data is read straight from the API server, and only when the
// Secret's resourceVersion changed, so the key is neither held for every Secret of the cluster
// nor read on every poll. The keys it read are kept, by Secret, until the Secret changes or is
// deleted: at most one entry per Secret an object names.
type Store struct {
	cache  client.Reader // Secret metadata only: the manager's Secret watches
	reader client.Reader // the API server, uncached

	mu   sync.Mutex
	keys map[types.NamespacedName]cachedKey
}

type cachedKey struct {
	resourceVersion string
	data            map[string]string // only the keys that were asked for
}

// NewStore returns a store reading Secret metadata from cache (the manager's metadata-only
// cache) and Secret data from reader (the API server, uncached).
func NewStore(cache, reader client.Reader) *Store {
	return &Store{cache: cache, reader: reader, keys: map[types.NamespacedName]cachedKey{}}
}

// ReadMetadataFrom has the store read Secret metadata from r (the manager's Secret watches)
// instead of the reader given to NewStore. It is called before the manager starts.
func (s *Store) ReadMetadataFrom(r client.Reader) {
	s.cache = r
}

// APIKey returns the trimmed API key named by ref in namespace, or a *Error.
func (s *Store) APIKey(ctx context.Context, namespace string, ref videov1alpha1.SecretKeyRef) (string, error) {
	nn := types.NamespacedName{Namespace: namespace, Name: ref.Name}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := s.cache.Get(ctx, nn, meta); err != nil {
		if apierrors.IsNotFound(err) {
			return "", &Error{Reason: videov1alpha1.ReasonSecretNotFound,
				Message: fmt.Sprintf("Secret %q with the API key was not found in namespace %q", ref.Name, namespace)}
		}
		return "", fmt.Errorf("reading metadata of Secret %s: %w", nn, err)
	}

	s.mu.Lock()
	cached, ok := s.keys[nn]
	s.mu.Unlock()
	if ok && cached.resourceVersion == meta.ResourceVersion {
		if v, found := cached.data[ref.Key]; found {
			return checkKey(v, ref, namespace)
		}
	}

	var secret corev1.Secret
	if err := s.reader.Get(ctx, nn, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return "", &Error{Reason: videov1alpha1.ReasonSecretNotFound,
				Message: fmt.Sprintf("Secret %q with the API key was not found in namespace %q", ref.Name, namespace)}
		}
		return "", fmt.Errorf("reading Secret %s: %w", nn, err)
	}
	raw, found := secret.Data[ref.Key]
	value := strings.TrimSpace(string(raw))

	s.mu.Lock()
	entry := s.keys[nn]
	if entry.resourceVersion != secret.ResourceVersion {
		entry = cachedKey{resourceVersion: secret.ResourceVersion, data: map[string]string{}}
	}
	if found {
		entry.data[ref.Key] = value
	}
	s.keys[nn] = entry
	s.mu.Unlock()

	if !found {
		return "", &Error{Reason: videov1alpha1.ReasonSecretKeyMissing,
			Message: fmt.Sprintf("Secret %q in namespace %q has no key %q", ref.Name, namespace, ref.Key)}
	}
	return checkKey(value, ref, namespace)
}

// Forget drops what is known of a Secret, for example when it is deleted.
func (s *Store) Forget(nn types.NamespacedName) {
	s.mu.Lock()
	delete(s.keys, nn)
	s.mu.Unlock()
}

func checkKey(v string, ref videov1alpha1.SecretKeyRef, namespace string) (string, error) {
	if v == "" {
		return "", &Error{Reason: videov1alpha1.ReasonSecretKeyMissing,
			Message: fmt.Sprintf("key %q of Secret %q in namespace %q is empty", ref.Key, ref.Name, namespace)}
	}
	return v, nil
}
