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

package spendguard

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// write makes tenant's ledger hold b's status as the state (a spec's setup: a manager wrote it).
func (s *Ledgers) write(ctx context.Context, c client.Client, b *videov1alpha1.VideoBudget) error {
	l, rv, err := s.read(ctx, c, b.Namespace)
	if err != nil {
		return err
	}
	next := ledgerOf(b)
	if l != nil {
		next.Seq = l.Seq + 1
	}
	err = s.store(ctx, c, b.Namespace, next, rv)
	return err
}

// adoptLedger gives b the state its first write would decide on (load).
func adoptLedger(ctx context.Context, c client.Client, r client.Reader, s *Ledgers, b *videov1alpha1.VideoBudget, now time.Time) error {
	got, _, err := s.load(ctx, c, r, b.Namespace, b, nil, true, now, time.Time{})
	if err != nil || got == nil {
		return err
	}
	RollPeriod(got, now)
	b.Status = got.Status
	return nil
}

// writeOlderLedger writes b's status to its namespace's ledger as an older manager did after
// each budget write: a copy, without a version.
func writeOlderLedger(t *testing.T, c client.Client, b *videov1alpha1.VideoBudget) {
	t.Helper()
	l := ledgerOf(b)
	l.Version = 0
	raw, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: videov1alpha1.LedgerConfigMapPrefix + b.Namespace}}
	patch, _ := json.Marshal(map[string]any{"data": map[string]string{ledgerKey: string(raw)}})
	err = c.Patch(t.Context(), cm, client.RawPatch(types.MergePatchType, patch))
	if apierrors.IsNotFound(err) {
		cm.Data = map[string]string{ledgerKey: string(raw)}
		err = c.Create(t.Context(), cm)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// setState writes b's status where the namespace's state is: its ledger once one is written (the
// status then shows it too), else the budget's status (an older manager's state, or a budget no
// write has looked at: the first write migrates it). The guard's copy of the ledger is that write.
func (h *batchHarness) setState(t *testing.T, b *videov1alpha1.VideoBudget) error {
	t.Helper()
	if err := h.server.Status().Update(t.Context(), b); err != nil {
		return err
	}
	l, rv, err := h.g.ledgers.read(t.Context(), h.server, b.Namespace)
	if err != nil || l == nil || l.Version < ledgerVersion {
		return err
	}
	next := ledgerOf(b)
	next.Seq = l.Seq + 1
	if err := h.g.ledgers.store(t.Context(), h.server, b.Namespace, next, rv); err != nil {
		return err
	}
	return nil
}

// read reads tenant's ledger and its resourceVersion (empty when there is none).
func (s *Ledgers) read(ctx context.Context, r client.Reader, tenant string) (*ledger, string, error) {
	l, at, err := readLedgerAt(ctx, r, s.at(tenant))
	return l, at.rv, err
}

// withUIDs gives each ConfigMap created in c a uid of its own, as an API server does and the fake
// does not: a ledger deleted and created again is another ConfigMap (Ledgers.send).
func withUIDs(c client.WithWatch) client.WithWatch {
	var n atomic.Int64
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok && obj.GetUID() == "" {
				obj.SetUID(types.UID(fmt.Sprintf("configmap-%d", n.Add(1))))
			}
			return c.Create(ctx, obj, opts...)
		},
	})
}
