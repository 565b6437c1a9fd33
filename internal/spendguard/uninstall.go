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
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Settlement counts what SettleAll did to one budget.
type Settlement struct {
	Charged   int // reservations counted as used: their submission may have been sent
	Released  int // reservations given back: their attempt was certainly never sent
	Estimated int // running jobs charged their estimate: their end will not be read
	Folded    int // jobs and ends objects recorded that no write had folded yet
}

// SettleAll settles every reservation of the namespace for an uninstall (docs/architecture.md
// "Several managers, install and uninstall"): no manager will later, so each is decided now, on the
// safe side. A render's job not ended is charged its estimate; a reservation whose object is gone
// or in flight is charged; one whose object recorded a job since is used; any other is released.
func (g *Guard) SettleAll(ctx context.Context, ns string) (Settlement, error) {
	var s Settlement
	var readErr error
	_, holders, err := listHolders(ctx, g.reader, ns)
	if err != nil {
		return s, err
	}
	// The facts the write below folds, counted here on a copy: no manager folds them meanwhile.
	var folded int
	var cur videov1alpha1.VideoBudget
	if err := readBudget(ctx, g.reader, ns, &cur); err == nil {
		if folded, _, err = foldRecorded(ctx, g.reader, &cur, g.clock.Now(), 0); err != nil {
			return s, err
		}
	} else if !apierrors.IsNotFound(err) {
		return s, fmt.Errorf("reading VideoBudget %s/%s: %w", ns, videov1alpha1.VideoBudgetName, err)
	}
	err = g.mutateBudget(ctx, ns, ChangeUninstall, func(b *videov1alpha1.VideoBudget) bool {
		s, readErr = Settlement{Folded: folded}, nil
		if len(b.Status.Reservations) == 0 {
			return false
		}
		var kept []videov1alpha1.BudgetReservation
		for _, res := range b.Status.Reservations {
			if res.JobID != "" && res.Kind == kindStoryboard {
				// Kept: its preview writes the end after a reinstall (a preview has no estimate).
				kept = append(kept, res)
				continue
			}
			if res.JobID != "" {
				// A job whose failure was recorded before its change reached the ledger costs nothing.
				if h := holders[res.UID]; (h == nil || !failedJob(videov1alpha1.JobStatusOf(h), res)) && !charged(b, res.JobID) {
					chargeJobAt(b, res.JobID, res.EstimatedSeconds, nil, res.UnreportedCredits, time.Time{})
					s.Estimated++
				}
				continue
			}
			obj := newHolder(res.Kind)
			gone, err := readHolder(ctx, g.reader, ns, res, obj)
			if err != nil {
				readErr = err
				return false
			}
			st := videov1alpha1.JobStatusOf(obj)
			switch {
			case gone || (st.Submission != nil && st.Submission.AttemptID == res.AttemptID):
				chargeReserved(b, res)
				s.Charged++
			case recordedSince(st, res):
				countUsed(b, res, st.SubmittedAt.Time)
				s.Charged++
				if res.Kind != kindStoryboard && st.CompletedAt == nil && !charged(b, st.JobID) {
					chargeJobAt(b, st.JobID, res.EstimatedSeconds, nil, res.UnreportedCredits, time.Time{})
					s.Estimated++
				}
			default:
				s.Released++
			}
		}
		logf.FromContext(ctx).Info("Settling the budget's reservations for an uninstall", "namespace", ns,
			"charged", s.Charged, "released", s.Released, "estimated", s.Estimated, "folded", s.Folded)
		b.Status.Reservations = kept
		return true
	})
	if readErr != nil {
		return s, readErr
	}
	return s, err
}
