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
	"time"

	"k8s.io/apimachinery/pkg/types"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// settle is SettleLater waiting for its write, for the tests. It is a no-op when the reservation
// is gone (the budget controller settled it already).
//
//nolint:unparam // the tests' namespace is always the same
func (g *Guard) settle(ctx context.Context, ns string, uid types.UID, attempt, jobID string) error {
	return g.settleAt(ctx, ns, uid, attempt, jobID, time.Time{})
}

// settleAt is settle for a job recorded at recordedAt.
func (g *Guard) settleAt(ctx context.Context, ns string, uid types.UID, attempt, jobID string, recordedAt time.Time) error {
	err := g.mutateBudget(ctx, ns, ChangeSettle, func(b *videov1alpha1.VideoBudget) bool {
		return settleReservation(b, string(uid), attempt, jobID, recordedAt)
	})
	return ignoreNoBudget(err)
}

// grantedAttempt is grantOf's attempt.
func (g *Guard) grantedAttempt(uid types.UID) string {
	attempt, _ := g.grantOf(uid)
	return attempt
}
