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
	"errors"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// countingReader counts the reads of Secret data that reach the API server.
type countingReader struct {
	client.Reader
	n atomic.Int32
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.n.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}

func TestStoreReadsTrimsAndCachesByResourceVersion(t *testing.T) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "video-api-key"},
		Data: map[string][]byte{"apiKey": []byte("  k-123\n"), "empty": []byte(" ")}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(secret).Build()
	reader := &countingReader{Reader: c}
	store := NewStore(c, reader)
	ref := RefOrDefault(nil)

	for range 3 {
		key, err := store.APIKey(t.Context(), "team-a", ref)
		if err != nil || key != "k-123" {
			t.Fatalf("APIKey = %q, %v; want the trimmed key", key, err)
		}
	}
	if n := reader.n.Load(); n != 1 {
		t.Errorf("the Secret's data was read %d times for an unchanged Secret, want 1", n)
	}

	cases := []struct {
		name      string
		namespace string
		ref       videov1alpha1.SecretKeyRef
		want      videov1alpha1.ConditionReason
	}{
		{"missing Secret", "team-b", ref, videov1alpha1.ReasonSecretNotFound},
		{"missing key", "team-a", videov1alpha1.SecretKeyRef{Name: "video-api-key", Key: "other"}, videov1alpha1.ReasonSecretKeyMissing},
		{"blank key", "team-a", videov1alpha1.SecretKeyRef{Name: "video-api-key", Key: "empty"}, videov1alpha1.ReasonSecretKeyMissing},
	}
	for _, tc := range cases {
		_, err := store.APIKey(t.Context(), tc.namespace, tc.ref)
		var ce *Error
		if !errors.As(err, &ce) || ce.Reason != tc.want {
			t.Errorf("%s: error %v, want reason %s", tc.name, err, tc.want)
		}
	}
}
