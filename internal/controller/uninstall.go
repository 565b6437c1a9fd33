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

package controller

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
	"github.com/videoops/video-operator/internal/spendguard"
)

// UninstallReport counts what ReleaseFinalizers did.
type UninstallReport struct {
	// Released are the objects whose finalizer was removed.
	Released int
	// Estimated are running jobs charged their estimate.
	Estimated int
	// Folded are the jobs and ends objects recorded that no budget write had folded, charged from their
	// render's status.
	Folded int
	// Charged and ReleasedReservations are the budgets' reservations counted as used and given back.
	Charged, ReleasedReservations int
}

// ReleaseFinalizers is the first step of an uninstall (docs/architecture.md "Several managers,
// install and uninstall": the operator's finalizers are let go, with what they guard settled,
// before the manager goes). With no manager running over namespaces (all of them when empty) it
//  1. charges each running job of a render that holds the charge finalizer its estimate: with the
//     operator gone nobody reads its end (finishCharge would have waited for it);
//  2. settles every reservation of each namespace's VideoBudget (spendguard.SettleAll);
//  3. removes the charge finalizer from every render, so that deleting a render, its namespace
//     or the CRDs no longer waits for a controller that is not there.
//
// It is idempotent: run again after a failure, it charges nothing twice (charges are keyed by
// job id) and finds fewer finalizers. c must read from the API server, not a cache.
func ReleaseFinalizers(ctx context.Context, c client.Client, namespaces []string, ledgerNamespace string) (UninstallReport, error) {
	log := logf.FromContext(ctx)
	var rep UninstallReport
	// The charges go to the ledger the manager keeps, in its own namespace.
	guard := spendguard.New(c, c, clock.RealClock{}, WriteTimeout, spendguard.NewLedgers(ledgerNamespace))
	scopes := namespaces
	if len(scopes) == 0 {
		scopes = []string{""}
	}
	var renders []videov1alpha1.VideoRender
	budgetNamespaces := map[string]bool{}
	for _, ns := range scopes {
		var list videov1alpha1.VideoRenderList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return rep, fmt.Errorf("listing VideoRenders%s: %w", inNamespace(ns), err)
		}
		renders = append(renders, list.Items...)
		var budgets videov1alpha1.VideoBudgetList
		if err := c.List(ctx, &budgets, client.InNamespace(ns)); err != nil {
			return rep, fmt.Errorf("listing VideoBudgets%s: %w", inNamespace(ns), err)
		}
		for _, b := range budgets.Items {
			if b.Name == videov1alpha1.VideoBudgetName {
				budgetNamespaces[b.Namespace] = true
			}
		}
	}

	for i := range renders {
		vr := &renders[i]
		st := &vr.Status.JobStatus
		if !controllerutil.ContainsFinalizer(vr, videov1alpha1.FinalizerCharge) || st.JobID == "" || st.CompletedAt != nil {
			continue
		}
		if err := guard.Charge(ctx, vr.Namespace, givenUp(spendguard.ChargeOf(vr), bound.Render(vr))); err != nil {
			return rep, fmt.Errorf("charging the estimate of job %s of VideoRender %s/%s: %w", st.JobID, vr.Namespace, vr.Name, err)
		}
		log.Info("Charged the estimate of a running job whose end will not be read", "namespace", vr.Namespace, "name", vr.Name, "jobID", st.JobID)
		rep.Estimated++
	}

	nss := make([]string, 0, len(budgetNamespaces))
	for ns := range budgetNamespaces {
		nss = append(nss, ns)
	}
	slices.Sort(nss)
	for _, ns := range nss {
		s, err := guard.SettleAll(ctx, ns)
		if err != nil {
			return rep, fmt.Errorf("settling the VideoBudget of namespace %s: %w", ns, err)
		}
		rep.Charged += s.Charged
		rep.ReleasedReservations += s.Released
		rep.Estimated += s.Estimated
		rep.Folded += s.Folded
	}

	for i := range renders {
		vr := &renders[i]
		if !controllerutil.ContainsFinalizer(vr, videov1alpha1.FinalizerCharge) {
			continue
		}
		if err := removeFinalizer(ctx, c, vr); err != nil {
			return rep, err
		}
		log.Info("Released the finalizer", "namespace", vr.Namespace, "name", vr.Name, "finalizer", videov1alpha1.FinalizerCharge)
		rep.Released++
	}
	return rep, nil
}

// removeFinalizer removes the charge finalizer with an optimistic lock, reading the object again
// after a conflict (someone edited it meanwhile).
func removeFinalizer(ctx context.Context, c client.Client, vr *videov1alpha1.VideoRender) error {
	for range 8 {
		base := vr.DeepCopy()
		controllerutil.RemoveFinalizer(vr, videov1alpha1.FinalizerCharge)
		err := c.Patch(ctx, vr, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err):
			if err := c.Get(ctx, client.ObjectKeyFromObject(vr), vr); err != nil {
				if apierrors.IsNotFound(err) {
					return nil
				}
				return fmt.Errorf("reading VideoRender %s/%s: %w", vr.Namespace, vr.Name, err)
			}
			if !controllerutil.ContainsFinalizer(vr, videov1alpha1.FinalizerCharge) {
				return nil
			}
		default:
			return fmt.Errorf("removing finalizer %s from VideoRender %s/%s: %w", videov1alpha1.FinalizerCharge, vr.Namespace, vr.Name, err)
		}
	}
	return fmt.Errorf("removing finalizer %s from VideoRender %s/%s: the object kept changing", videov1alpha1.FinalizerCharge, vr.Namespace, vr.Name)
}

func inNamespace(ns string) string {
	if ns == "" {
		return ""
	}
	return " in namespace " + ns
}
