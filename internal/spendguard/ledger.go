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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The ledger: a VideoBudget's status is deleted with the budget (a GitOps replace or prune,
// kubectl replace --force, a restore without status), so the period's usage is also kept in a
// ConfigMap of the namespace (LedgerConfigMapName) that no object owns: nothing garbage-collects
// it with the budget. It is a copy of status.used and status.chargedJobs with the period they
// belong to, written after every budget write that changes them (a render's count when its job
// id is recorded, its seconds and credits when it ends: two writes per render, in namespaces with
// a budget only). A budget that has not merged it yet (its status names another budget's uid, or
// none) merges it before its first decision: the same period keeps the larger of each count and
// the union of the charged job ids; the reservations of submissions in flight and of running
// jobs are rebuilt from the objects of the namespace (read from the cache).
//
// The ledger is the safe side of the budget, never ahead of what was decided: it is written after
// the budget, so a budget deleted between the two writes loses at most that one change. A ledger
// write that fails is logged and made good by the next one (each write is the whole snapshot).

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;create;patch

// ledgerKey is the ConfigMap's data key holding the ledger as JSON.
const ledgerKey = "ledger.json"

// ledger is what the ConfigMap holds.
type ledger struct {
	Period      videov1alpha1.BudgetPeriod `json:"period,omitempty"`
	PeriodStart *metav1.Time               `json:"periodStart,omitempty"`
	PeriodEnd   *metav1.Time               `json:"periodEnd,omitempty"`
	Used        videov1alpha1.BudgetUsage  `json:"used"`
	ChargedJobs []string                   `json:"chargedJobs,omitempty"`
	// BudgetUID is the budget whose status this copies.
	BudgetUID string `json:"budgetUID,omitempty"`
}

func ledgerOf(b *videov1alpha1.VideoBudget) ledger {
	return ledger{Period: b.Status.Period, PeriodStart: b.Status.PeriodStart, PeriodEnd: b.Status.PeriodEnd,
		Used: b.Status.Used, ChargedJobs: b.Status.ChargedJobs, BudgetUID: string(b.UID)}
}

// ledgerChanged reports whether a budget write changes what the ledger keeps.
func ledgerChanged(before, after *videov1alpha1.VideoBudget) bool {
	return !equality.Semantic.DeepEqual(ledgerOf(before), ledgerOf(after))
}

// writeLedger writes the budget's usage to the namespace's ledger.
func writeLedger(ctx context.Context, c client.Client, b *videov1alpha1.VideoBudget) error {
	raw, err := json.Marshal(ledgerOf(b))
	if err != nil {
		return fmt.Errorf("encoding the budget ledger: %w", err)
	}
	patch, err := json.Marshal(map[string]any{"data": map[string]string{ledgerKey: string(raw)}})
	if err != nil {
		return fmt.Errorf("encoding the budget ledger: %w", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: videov1alpha1.LedgerConfigMapName}}
	err = c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch))
	if apierrors.IsNotFound(err) {
		cm.Labels = map[string]string{"app.kubernetes.io/managed-by": "video-operator"}
		cm.Data = map[string]string{ledgerKey: string(raw)}
		err = c.Create(ctx, cm)
	}
	if err != nil {
		return fmt.Errorf("writing the budget ledger %s/%s: %w", b.Namespace, videov1alpha1.LedgerConfigMapName, err)
	}
	return nil
}

// readLedger reads the namespace's ledger; nil when there is none (or it cannot be decoded:
// a ledger edited by hand into nonsense is ignored, and said so).
func readLedger(ctx context.Context, r client.Reader, ns string) (*ledger, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: videov1alpha1.LedgerConfigMapName}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the budget ledger %s/%s: %w", ns, videov1alpha1.LedgerConfigMapName, err)
	}
	var l ledger
	if err := json.Unmarshal([]byte(cm.Data[ledgerKey]), &l); err != nil {
		logf.FromContext(ctx).Info("Ignoring a budget ledger that cannot be read", "namespace", ns, "error", err.Error())
		return nil, nil
	}
	return &l, nil
}

// MergeLedger merges l, the ledger of an earlier budget, into b's status when l's period has
// not ended at now: each count keeps the larger value and the charged job ids are joined. It
// reports whether b changed.
func MergeLedger(b *videov1alpha1.VideoBudget, l *ledger, now time.Time) bool {
	if l == nil || l.PeriodEnd == nil || !now.Before(l.PeriodEnd.Time) {
		return false
	}
	before := b.Status.DeepCopy()
	u, lu := &b.Status.Used, l.Used
	u.Renders = max(u.Renders, lu.Renders)
	u.RenderSeconds = max(u.RenderSeconds, lu.RenderSeconds)
	u.Previews = max(u.Previews, lu.Previews)
	u.UnreportedCreditRenders = max(u.UnreportedCreditRenders, lu.UnreportedCreditRenders)
	if lu.AICredits != nil && (u.AICredits == nil || lu.AICredits.Cmp(*u.AICredits) > 0) {
		q := lu.AICredits.DeepCopy()
		u.AICredits = &q
	}
	for _, id := range l.ChargedJobs {
		if !charged(b, id) {
			b.Status.ChargedJobs = append(b.Status.ChargedJobs, id)
		}
	}
	if n := len(b.Status.ChargedJobs); n > maxChargedJobs {
		b.Status.ChargedJobs = append([]string(nil), b.Status.ChargedJobs[n-maxChargedJobs:]...)
	}
	return !equality.Semantic.DeepEqual(*before, b.Status)
}

// adoptLedger brings a budget that has not merged the namespace's ledger up to it, and rebuilds
// the reservations of the submissions in flight and the running jobs from the objects (c lists
// them from the cache). It reports whether b changed; it is a no-op for a budget that merged it.
func adoptLedger(ctx context.Context, c client.Client, reader client.Reader, b *videov1alpha1.VideoBudget, now time.Time) (bool, error) {
	if b.UID == "" || b.Status.LedgerBudgetUID == string(b.UID) {
		return false, nil
	}
	l, err := readLedger(ctx, reader, b.Namespace)
	if err != nil {
		return false, err
	}
	if MergeLedger(b, l, now) {
		logf.FromContext(ctx).Info("A new VideoBudget took over the period's usage from the namespace's ledger",
			"namespace", b.Namespace, "renders", b.Status.Used.Renders, "renderSeconds", b.Status.Used.RenderSeconds)
	}
	if err := rebuildReservations(ctx, c, b); err != nil {
		return false, err
	}
	b.Status.LedgerBudgetUID = string(b.UID)
	return true, nil
}

// rebuildReservations adds the reservations a replaced budget held: one for each object whose
// submission is in flight, and, while the budget limits seconds or credits, one for each render
// whose job runs.
func rebuildReservations(ctx context.Context, c client.Client, b *videov1alpha1.VideoBudget) error {
	held := map[string]bool{}
	for _, r := range b.Status.Reservations {
		held[r.UID] = true
	}
	var renders videov1alpha1.VideoRenderList
	var previews videov1alpha1.VideoStoryboardList
	for _, list := range []client.ObjectList{&renders, &previews} {
		if err := c.List(ctx, list, client.InNamespace(b.Namespace)); err != nil {
			return fmt.Errorf("listing the objects of namespace %s to rebuild its budget's reservations: %w", b.Namespace, err)
		}
	}
	add := func(kind string, obj client.Object, est Estimate) {
		st := videov1alpha1.JobStatusOf(obj)
		if held[string(obj.GetUID())] || len(b.Status.Reservations) >= maxReservations {
			return
		}
		r := videov1alpha1.BudgetReservation{Kind: kind, Name: obj.GetName(), UID: string(obj.GetUID())}
		switch {
		case st.Submission != nil:
			r.AttemptID, r.ReservedAt = st.Submission.AttemptID, st.Submission.StartedAt
		case kind != kindStoryboard && st.JobID != "" && st.CompletedAt == nil && st.SubmittedAt != nil && limitsLength(b):
			r.AttemptID, r.ReservedAt, r.JobID = "rebuilt", *st.SubmittedAt, st.JobID
		default:
			return
		}
		if kind != kindStoryboard {
			r.EstimatedSeconds, r.AICredits = est.Seconds, est.Credits
		}
		b.Status.Reservations = append(b.Status.Reservations, r)
	}
	for i := range renders.Items {
		add("VideoRender", &renders.Items[i], EstimateRender(&renders.Items[i]))
	}
	for i := range previews.Items {
		add(kindStoryboard, &previews.Items[i], Estimate{})
	}
	return nil
}

// EstimateRender estimates a render from its spec: its inline request, or the defaults for a
// storyboardRef render (whose request lives in another object) and a project render.
func EstimateRender(vr *videov1alpha1.VideoRender) Estimate {
	if vr.Spec.Storyboard != nil {
		return EstimateRequest(vr.Spec.Storyboard)
	}
	if vr.Spec.ProjectID != nil {
		return EstimateRequest(nil)
	}
	return Estimate{Seconds: DefaultSceneSeconds}
}
