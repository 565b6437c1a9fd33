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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Settlement counts what SettleAll did to one budget.
type Settlement struct {
	// Charged are reservations counted as used: their submission may have been sent.
	Charged int
	// Released are reservations given back: their attempt was certainly never sent.
	Released int
	// Estimated are running jobs charged their estimate: their end will not be read.
	Estimated int
	// Folded are the jobs and ends objects recorded that no budget write had folded yet.
	Folded int
}

// SettleAll settles every reservation of the namespace's budget for an uninstall, with no
// manager running (docs/architecture.md "Several managers, install and uninstall"), on the safe
// side:
//   - a running job's reservation, or a job recorded since its reservation that has not ended,
//     is charged its estimate: nobody will read its end;
//   - a reservation whose object is gone, or whose object still holds that attempt in flight
//     (its outcome unknown), is charged: it may have been sent;
//   - a reservation whose object recorded a job since is counted as used;
//   - any other was never sent (the in-flight record precedes the paid call) and is released.
//
// What the objects recorded is folded first, as by every budget write.
func (g *Guard) SettleAll(ctx context.Context, ns string) (Settlement, error) {
	var s Settlement
	var readErr error
	var renders videov1alpha1.VideoRenderList
	if err := g.reader.List(ctx, &renders, client.InNamespace(ns)); err != nil {
		return s, fmt.Errorf("listing the VideoRenders of namespace %s: %w", ns, err)
	}
	statusOf := make(map[string]*videov1alpha1.JobStatus, len(renders.Items))
	for i := range renders.Items {
		statusOf[string(renders.Items[i].UID)] = &renders.Items[i].Status.JobStatus
	}
	// The write below folds them; counted here first, on a copy.
	folded, err := g.unfoldedFacts(ctx, ns)
	if err != nil {
		return s, err
	}
	err = g.mutateBudget(ctx, ns, ChangeUninstall, func(b *videov1alpha1.VideoBudget) bool {
		s, readErr = Settlement{Folded: folded}, nil
		if len(b.Status.Reservations) == 0 {
			return false
		}
		for _, res := range b.Status.Reservations {
			if res.JobID != "" {
				if st := statusOf[res.UID]; st != nil && failedJob(st, res) {
					// A failed job is charged nothing.
					continue
				}
				if !charged(b, res.JobID) {
					chargeJobAt(b, res.JobID, res.EstimatedSeconds, nil, res.UnreportedCredits, time.Time{})
					s.Estimated++
				}
				continue
			}
			var obj client.Object = &videov1alpha1.VideoRender{}
			if res.Kind == kindStoryboard {
				obj = &videov1alpha1.VideoStoryboard{}
			}
			err := g.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: res.Name}, obj)
			if err != nil && !apierrors.IsNotFound(err) {
				readErr = fmt.Errorf("reading %s %s/%s of a budget reservation: %w", res.Kind, ns, res.Name, err)
				return false
			}
			gone := apierrors.IsNotFound(err) || string(obj.GetUID()) != res.UID
			var st *videov1alpha1.JobStatus
			if !gone {
				st = videov1alpha1.JobStatusOf(obj)
			}
			switch {
			case gone || (st.Submission != nil && st.Submission.AttemptID == res.AttemptID):
				countUsed(b, res, res.ReservedAt.Time)
				addUsageAt(b, estimateUsage(res), res.ReservedAt.Time)
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
		b.Status.Reservations = nil
		return true
	})
	if readErr != nil {
		return s, readErr
	}
	if err == nil {
		// No controller runs after an uninstall to write a copy held back.
		err = g.ledgers.flushPending(ctx, ns)
	}
	return s, err
}

// unfoldedFacts counts the facts the namespace's objects recorded that its budget, as the API
// server has it, has not folded yet.
func (g *Guard) unfoldedFacts(ctx context.Context, ns string) (int, error) {
	var b videov1alpha1.VideoBudget
	if err := readBudget(ctx, g.reader, ns, &b); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("reading VideoBudget %s/%s: %w", ns, videov1alpha1.VideoBudgetName, err)
	}
	n, _, err := foldRecorded(ctx, g.reader, &b, g.clock.Now(), 0)
	return n, err
}
