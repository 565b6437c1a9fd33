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
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The ledger: a VideoBudget's status is deleted with the budget (a GitOps replace or prune, a
// restore without status), so its usage, reservations and charged job ids are also kept in a
// ConfigMap no object owns, in the manager's namespace where tenants cannot write (a record a
// tenant could delete would reset its month: docs/architecture.md "Records that outlive a
// version"). It is written after every budget write that changes it, so it is never ahead of what
// was decided; a failed write is made good by the next (each is the whole snapshot). A budget that
// has not merged it merges it before its first decision and rebuilds the reservations in flight
// from the objects. While no budget exists, a ledger of the current period keeps its limits: a
// replace releases nothing; deleting the ledger is how the platform removes them.
//
// Migration: older managers kept the ledger in the tenant's namespace (LedgerConfigMapName). A
// budget taking over where the manager's namespace holds none merges that one; a budget that took
// over long ago has its ledger written at the controller's first look; the old one is never read
// again.

// The Role for the ledgers is config/rbac/ledger_role.yaml, in the manager's namespace; the one
// cluster-wide right is reading the old ledgers, by name, for the migration:
// +kubebuilder:rbac:groups="",resources=configmaps,resourceNames=video-operator-budget-ledger,verbs=get

const (
	// DefaultLedgerNamespace is the manager's namespace of the default install (config/default).
	DefaultLedgerNamespace = "video-operator-system"
	// ledgerKey is the ConfigMap's data key holding the ledger as JSON.
	ledgerKey = "ledger.json"
	// freeTTL is how long a free answer (holds) stands; this process's writes forget it sooner.
	freeTTL = 30 * time.Second
	// maxReplaced bounds the replaced budgets remembered per namespace.
	maxReplaced = 8
	// maxGone bounds the changes kept apart for a deleted budget's later copies (keepGone).
	maxGone = 64
	// maxFree bounds the namespaces whose free ledger is remembered.
	maxFree = 10_000
)

// ledger is what the ConfigMap holds: a copy of a budget's status.
type ledger struct {
	Period      videov1alpha1.BudgetPeriod   `json:"period,omitempty"`
	PeriodStart *metav1.Time                 `json:"periodStart,omitempty"`
	PeriodEnd   *metav1.Time                 `json:"periodEnd,omitempty"`
	Used        videov1alpha1.BudgetUsage    `json:"used"`
	Windows     []videov1alpha1.BudgetWindow `json:"windows,omitempty"`
	// Reservations are copied with the usage they are consistent with: a budget created again
	// takes over an unfolded job's instead of admitting another render in its room.
	Reservations []videov1alpha1.BudgetReservation `json:"reservations,omitempty"`
	ChargedJobs  []string                          `json:"chargedJobs,omitempty"`
	ChargeCount  int64                             `json:"chargeCount,omitempty"`
	BudgetUID    string                            `json:"budgetUID,omitempty"`
	// BudgetRV is the resourceVersion of the budget's copy: another manager's later copy shows.
	BudgetRV string `json:"budgetResourceVersion,omitempty"`
}

func ledgerOf(b *videov1alpha1.VideoBudget) ledger {
	st := &b.Status
	return ledger{Period: st.Period, PeriodStart: st.PeriodStart, PeriodEnd: st.PeriodEnd, Used: st.Used, Windows: st.Windows,
		Reservations: st.Reservations, ChargedJobs: st.ChargedJobs, ChargeCount: st.ChargeCount, BudgetUID: string(b.UID), BudgetRV: b.ResourceVersion}
}

// ledgerChanged reports whether a budget write changes what the ledger keeps.
func ledgerChanged(before, after *videov1alpha1.VideoBudget) bool {
	return !equality.Semantic.DeepEqual(ledgerOf(before), ledgerOf(after))
}

// Ledgers are the namespaces' ledgers in the manager's namespace.
type Ledgers struct {
	// Namespace is the manager's own namespace.
	Namespace string
	// known are the namespaces whose ledger this process wrote or saw (ensure).
	known sync.Map

	mu      sync.Mutex
	tenants map[string]*tenantLedger
	// free are the namespaces whose ledger holds no limits, until when that answer stands (holds).
	free map[string]time.Time
	// wrote are the namespaces whose ledger this process wrote; failed, those whose last write
	// failed: they admit nothing (fail closed).
	wrote  map[string]bool
	failed map[string]error
	// wake asks the VideoBudget controller to look at a namespace's budget after a delay (Source);
	// nil while none listens.
	wake func(tenant string, after time.Duration)
}

// NewLedgers returns the ledgers kept in namespace ns (DefaultLedgerNamespace when empty).
func NewLedgers(ns string) *Ledgers {
	return &Ledgers{Namespace: cmp.Or(ns, DefaultLedgerNamespace), tenants: map[string]*tenantLedger{},
		free: map[string]time.Time{}, wrote: map[string]bool{}, failed: map[string]error{}}
}

// Source is the VideoBudget controller's source of wake-ups: a ledger write that starts failing,
// changes queued that come due (batch.go). A wake-up is a request in the controller's workqueue,
// which keeps its delay: a timer never writes, the reconcile does.
func (s *Ledgers) Source() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.wake = func(tenant string, after time.Duration) {
			q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: tenant, Name: videov1alpha1.VideoBudgetName}}, after)
		}
		return nil
	})
}

// wakeUp asks the VideoBudget controller, when one listens, to look at tenant's budget after a
// delay.
func (s *Ledgers) wakeUp(tenant string, after time.Duration) {
	s.mu.Lock()
	wake := s.wake
	s.mu.Unlock()
	if wake != nil {
		wake(tenant, after)
	}
}

// failure is the error of the last write of tenant's ledger when it failed, or nil.
func (s *Ledgers) failure(tenant string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed[tenant]
}

// confirmed reports whether this process wrote tenant's ledger and its last write succeeded.
func (s *Ledgers) confirmed(tenant string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wrote[tenant] && s.failed[tenant] == nil
}

// noteWrite records the outcome of a write of tenant's ledger; a first failure wakes the
// VideoBudget controller, so that its status says why nothing is paid.
func (s *Ledgers) noteWrite(tenant string, err error) {
	s.mu.Lock()
	first := err != nil && s.failed[tenant] == nil
	if err == nil {
		delete(s.failed, tenant)
		s.wrote[tenant] = true
	} else {
		s.failed[tenant] = err
	}
	s.mu.Unlock()
	if first {
		s.wakeUp(tenant, 0)
	}
}

// tenantLedger is one namespace's ledger as this process writes it: written through (a 10 s
// cadence lost its interval of usage in a kill and a replace: 28 of 1,000 simulation seeds).
type tenantLedger struct {
	// pending is the copy whose write failed, held back for the next write or read of the
	// ledger: nil when the ledger is current.
	pending *videov1alpha1.VideoBudget
	client  client.Client
	// written is the copy this process last wrote (before gone's changes); an older copy of the
	// same budget is not written over it.
	written *videov1alpha1.VideoBudget
	// gone are the changes made to budget goneUID after it was deleted (keepInLedger): each later
	// copy of it gets them, until another budget's copy (which took them over) is written.
	gone    []func(*videov1alpha1.VideoBudget) bool
	goneUID types.UID
	// final is the last state of the budget deleted last, from its delete event (lastState).
	final *videov1alpha1.VideoBudget
	// replaced are the budgets whose ledger a later budget took over in this process (tookOver).
	replaced []types.UID
	// adopted are the budgets that took the ledger over in this process (tookOver): this process
	// knows what each replaced.
	adopted []types.UID
	// io orders this process's writes of the ledger before the reads that decide on it
	// (TestABudgetTakingOverReadsTheLedgerCopyInFlight); a channel, so a wait heeds its context.
	// Taken before Ledgers.mu, which guards the other fields; pending and written change with
	// both held, so io alone reads them.
	io chan struct{}
}

func (lc *tenantLedger) unlock() { <-lc.io }

// tenantOfLocked is tenant's ledger state, created on first use; s.mu is held.
func (s *Ledgers) tenantOfLocked(tenant string) *tenantLedger {
	if s.tenants[tenant] == nil {
		s.tenants[tenant] = &tenantLedger{io: make(chan struct{}, 1)}
	}
	return s.tenants[tenant]
}

// turn takes the io of tenant's ledger state, created when create (a write) and else nil when
// this process never wrote the ledger; the caller unlocks it.
func (s *Ledgers) turn(ctx context.Context, tenant string, create bool) (*tenantLedger, error) {
	s.mu.Lock()
	lc := s.tenants[tenant]
	if create {
		lc = s.tenantOfLocked(tenant)
	}
	s.mu.Unlock()
	if lc == nil {
		return nil, nil
	}
	select {
	case lc.io <- struct{}{}:
		return lc, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the namespace's ledger write on its way: %w", ctx.Err())
	}
}

// dropSuperseded drops the copy held back for tenant's ledger when the ledger holds a later one
// (another manager over the namespace by mistake wrote it since): of the same budget at a later
// version, or of another budget that is not one the held copy's replaced: the namespace's budget
// now, or any, when the held copy's took the ledger over in this process (which knows what it
// replaced; one that took it over in a process before may have replaced the ledger's); lc.io is held.
func (s *Ledgers) dropSuperseded(ctx context.Context, r client.Reader, lc *tenantLedger, tenant string) error {
	s.mu.Lock()
	held := lc.pending
	s.mu.Unlock()
	if held == nil {
		return nil
	}
	l, _, err := s.read(ctx, r, tenant)
	if err != nil || l == nil || l.BudgetUID == "" {
		return err
	}
	s.mu.Lock()
	other := l.BudgetUID != string(held.UID) && !slices.Contains(lc.replaced, types.UID(l.BudgetUID))
	later := l.BudgetUID == string(held.UID) && newerCopy(l.BudgetRV, held.ResourceVersion) || other && slices.Contains(lc.adopted, held.UID)
	s.mu.Unlock()
	if other && !later {
		var now videov1alpha1.VideoBudget
		if err := readBudget(ctx, r, tenant, &now); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading VideoBudget %s/%s: %w", tenant, videov1alpha1.VideoBudgetName, err)
		}
		later = string(now.UID) == l.BudgetUID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if later && lc.pending == held {
		lc.pending = nil
	}
	return nil
}

// olderCopy reports whether b is a copy of the same budget as than at an older resourceVersion:
// the newer holds every change of the older (optimistic locks), and two writers may reach the
// ledger in the other order (versions that go back: docs/spend-guard.md, "Restoring etcd").
func olderCopy(b, than *videov1alpha1.VideoBudget) bool {
	return b != nil && than != nil && b.UID == than.UID && newerCopy(than.ResourceVersion, b.ResourceVersion)
}

// flushPending writes the copy of tenant's ledger held back after a failed write.
func (s *Ledgers) flushPending(ctx context.Context, tenant string) error {
	lc, err := s.turn(ctx, tenant, false)
	if lc == nil {
		return err
	}
	defer lc.unlock()
	return s.writeLocked(ctx, nil, nil, lc)
}

// keepAhead runs when tenant's budget is deleted: a copy held back is written, and the last copy
// written again when the ledger holds less of it (restored from an older backup, edited by hand).
// The deleted budget's last state (lastState) is such a copy, also over the copy of the budget it
// took over when its own copies failed, unless a later budget exists. A ledger that is gone stays
// gone: that is how the platform removes the limits.
func (s *Ledgers) keepAhead(ctx context.Context, c client.Client, r client.Reader, tenant string) error {
	lc, err := s.turn(ctx, tenant, false)
	if lc == nil {
		return err
	}
	defer lc.unlock()
	if gone, err := s.removedLocked(ctx, r, lc, tenant); gone || err != nil {
		return err
	}
	if err := s.dropSuperseded(ctx, r, lc, tenant); err != nil {
		return err
	}
	if err := s.writeLocked(ctx, nil, nil, lc); err != nil {
		return err
	}
	s.mu.Lock()
	last, final := lc.written, lc.final
	if final != nil && (last == nil || last.UID != final.UID || !olderCopy(final, last)) {
		last = final // this process wrote no later copy of it
	}
	s.mu.Unlock()
	if last == nil {
		return nil
	}
	// Read after the flush: the copy held back may have brought it up to date.
	l, found, err := s.read(ctx, r, tenant)
	if err != nil || !found {
		if err == nil {
			s.forgetFinal(lc, final) // the ledger deleted on purpose: its budget's state goes too
		}
		return err
	}
	if !behind(l, ledgerOf(last)) && (last != final || !s.finalSupersedes(ctx, r, tenant, final, l)) {
		s.forgetFinal(lc, final)
		return nil
	}
	logf.FromContext(ctx).Info("The budget's ledger holds less than its budget did; writing it again",
		"namespace", tenant, "ledger", s.Namespace+"/"+s.Name(tenant), "renders", l.Used.Renders, "written", last.Status.Used.Renders)
	if err := s.writeLocked(ctx, c, last, lc); err != nil {
		return err
	}
	s.forgetFinal(lc, final)
	return nil
}

// finalSupersedes reports whether the deleted budget final's copy supersedes ledger l of another
// budget: final took l over (its own copies failed since), and no later budget exists.
func (s *Ledgers) finalSupersedes(ctx context.Context, r client.Reader, tenant string, final *videov1alpha1.VideoBudget, l *ledger) bool {
	want := ledgerOf(final)
	if final.Status.LedgerBudgetUID != string(final.UID) || l.BudgetUID == string(final.UID) ||
		!behind(&ledger{BudgetUID: want.BudgetUID, PeriodStart: l.PeriodStart, Used: l.Used, ChargeCount: l.ChargeCount}, want) {
		return false // the ledger holds as much: another budget's, maybe later
	}
	return apierrors.IsNotFound(readBudget(ctx, r, tenant, &videov1alpha1.VideoBudget{}))
}

// finalCopy is the last state of tenant's budget deleted last, as a ledger, until a later
// budget's copy is written; nil when there is none, or that budget had not taken the ledger over.
func (s *Ledgers) finalCopy(tenant string) *ledger {
	s.mu.Lock()
	defer s.mu.Unlock()
	lc := s.tenants[tenant]
	if lc == nil || lc.final == nil || lc.final.Status.LedgerBudgetUID != string(lc.final.UID) {
		return nil
	}
	l := ledgerOf(lc.final)
	return &l
}

// forgetFinal drops final, the deleted budget's last state, once the ledger holds it.
func (s *Ledgers) forgetFinal(lc *tenantLedger, final *videov1alpha1.VideoBudget) {
	s.mu.Lock()
	if lc.final == final {
		lc.final = nil
	}
	s.mu.Unlock()
}

// removed reports whether tenant's ledger, which this process wrote, is gone (the limits
// removed): what is held back for it is dropped, so that no later copy creates it again.
func (s *Ledgers) removed(ctx context.Context, r client.Reader, tenant string) (bool, error) {
	lc, err := s.turn(ctx, tenant, false)
	if lc == nil {
		return false, err
	}
	defer lc.unlock()
	return s.removedLocked(ctx, r, lc, tenant)
}

// removedLocked is removed with lc.io held.
func (s *Ledgers) removedLocked(ctx context.Context, r client.Reader, lc *tenantLedger, tenant string) (bool, error) {
	if lc.written == nil {
		return false, nil
	}
	if _, found, err := s.read(ctx, r, tenant); err != nil || found {
		return false, err
	}
	s.mu.Lock()
	lc.pending, lc.written, lc.gone, lc.goneUID, lc.final = nil, nil, nil, "", nil
	delete(s.failed, tenant) // nothing is held for it any more: the namespace is not limited
	s.mu.Unlock()
	logf.FromContext(ctx).Info("The budget's ledger was deleted with its budget: the namespace's limits are removed",
		"namespace", tenant)
	return true, nil
}

// behind reports whether ledger l is an older copy of the same budget's usage than want: no
// count larger, and the charge count or a count of the same period smaller.
func behind(l *ledger, want ledger) bool {
	if l == nil || l.BudgetUID != want.BudgetUID || l.ChargeCount > want.ChargeCount {
		return false
	}
	if l.PeriodStart == nil || !l.PeriodStart.Equal(want.PeriodStart) {
		return l.ChargeCount < want.ChargeCount
	}
	u, w := l.Used, want.Used
	if u.Renders > w.Renders || u.RenderSeconds > w.RenderSeconds || u.Previews > w.Previews {
		return false
	}
	return l.ChargeCount < want.ChargeCount || u.Renders < w.Renders || u.RenderSeconds < w.RenderSeconds || u.Previews < w.Previews
}

// readCurrent reads tenant's ledger after this process's writes on their way and the copy held
// back; one that cannot be written is returned as unwritten, for the caller to decide on too.
// skip, when set, may answer "no ledger" without reading.
func (s *Ledgers) readCurrent(ctx context.Context, r client.Reader, tenant string, skip func() bool) (l, unwritten *ledger, found bool, err error) {
	lc, err := s.turn(ctx, tenant, false)
	if err != nil {
		return nil, nil, false, err
	}
	if lc != nil {
		defer lc.unlock()
		if err := s.dropSuperseded(ctx, r, lc, tenant); err != nil {
			return nil, nil, false, err
		}
		if s.writeLocked(ctx, nil, nil, lc) != nil { // only a copy held back fails, and stays held
			s.mu.Lock()
			cp := ledgerOf(s.withGoneLocked(lc, lc.pending))
			s.mu.Unlock()
			unwritten = &cp
		}
	}
	if skip != nil && skip() {
		return nil, unwritten, false, nil
	}
	l, found, err = s.read(ctx, r, tenant)
	return l, unwritten, found, err
}

// withGoneLocked is b with gone's changes; s.mu is held.
func (s *Ledgers) withGoneLocked(lc *tenantLedger, b *videov1alpha1.VideoBudget) *videov1alpha1.VideoBudget {
	if lc.goneUID != b.UID || len(lc.gone) == 0 {
		return b
	}
	out := b.DeepCopy()
	for _, change := range lc.gone {
		change(out)
		recountReserved(out)
	}
	return out
}

// Name is the name of tenant's ledger.
func (s *Ledgers) Name(tenant string) string { return videov1alpha1.LedgerConfigMapPrefix + tenant }

// patchThrough writes b's status over base (patchBudgetStatus) and, when that changes what the
// ledger keeps (or b just took it over), then b's copy to the ledger, holding the ledger's turn
// across both: a budget taking the ledger over (readCurrent) waits for the copy of a write already
// on the API server, which a replace between the two lost. err is the budget write's, lerr the
// copy's.
func (s *Ledgers) patchThrough(ctx context.Context, c client.Client, b, base *videov1alpha1.VideoBudget, adopted bool) (err, lerr error) {
	if !adopted && !ledgerChanged(base, b) {
		return patchBudgetStatus(ctx, c, b, base), nil
	}
	lc, err := s.turn(ctx, b.Namespace, true)
	if err != nil {
		return err, nil
	}
	defer lc.unlock()
	if err := patchBudgetStatus(ctx, c, b, base); err != nil {
		return err, nil
	}
	return nil, s.writeLocked(ctx, c, b, lc)
}

// write writes the budget's usage to its namespace's ledger, after any write of it on its way.
func (s *Ledgers) write(ctx context.Context, c client.Client, b *videov1alpha1.VideoBudget) error {
	lc, err := s.turn(ctx, b.Namespace, true)
	if lc == nil {
		return err
	}
	defer lc.unlock()
	return s.writeLocked(ctx, c, b, lc)
}

// writeLocked is write with lc.io held; b nil writes the copy held back, if any. A copy older than
// the one held back is replaced by it; one older than the one written last is not written (the
// last outcome stands); gone's changes are applied; a copy whose write fails is held back, unless
// a newer one is.
func (s *Ledgers) writeLocked(ctx context.Context, c client.Client, b *videov1alpha1.VideoBudget, lc *tenantLedger) error {
	s.mu.Lock()
	if b == nil || b == lc.pending || olderCopy(b, lc.pending) {
		b, c = lc.pending, lc.client
	}
	if b == nil {
		s.mu.Unlock()
		return nil
	}
	heldBack := lc.pending
	stale, failed := olderCopy(b, lc.written), s.failed[b.Namespace]
	out := s.withGoneLocked(lc, b)
	s.mu.Unlock()
	if stale {
		return failed
	}
	raw, err := json.Marshal(ledgerOf(out))
	var patch []byte
	if err == nil {
		patch, err = json.Marshal(map[string]any{"data": map[string]string{ledgerKey: string(raw)}})
	}
	if err != nil {
		return fmt.Errorf("encoding the budget ledger: %w", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name(b.Namespace)}}
	if err = c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch)); apierrors.IsNotFound(err) {
		cm.Labels = map[string]string{"app.kubernetes.io/managed-by": "video-operator", videov1alpha1.LabelLedgerNamespace: b.Namespace}
		cm.Data = map[string]string{ledgerKey: string(raw)}
		// Another write may create it meanwhile: this one's copy goes over it.
		if err = c.Create(ctx, cm); apierrors.IsAlreadyExists(err) {
			err = c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch))
		}
	}
	s.mu.Lock()
	switch {
	case err != nil:
		if lc.pending != b && lc.supersedes(b, lc.pending) {
			lc.pending, lc.client = b.DeepCopy(), c
		}
	default:
		if lc.pending == b || (lc.pending == heldBack && lc.supersedes(b, heldBack)) {
			lc.pending = nil
		}
		if lc.final != nil && lc.final.UID != b.UID && b.Status.LedgerBudgetUID == string(b.UID) {
			lc.final = nil // a later budget's copy, which took it over
		}
		lc.written = b.DeepCopy()
		if lc.goneUID != "" && lc.goneUID != b.UID {
			// Another budget's copy: it took the ledger over, with the changes made meanwhile.
			lc.gone, lc.goneUID = nil, ""
		}
	}
	s.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("writing the budget ledger %s/%s: %w", s.Namespace, cm.Name, err)
	} else {
		s.known.Store(b.Namespace, true)
		s.forgetFree(b.Namespace)
	}
	s.noteWrite(b.Namespace, err)
	return err
}

// supersedes reports whether copy b holds what copy held does: held is nil, an older copy, or a
// copy of a budget replaced in this process (and b's is not); s.mu is held.
func (lc *tenantLedger) supersedes(b, held *videov1alpha1.VideoBudget) bool {
	return held == nil || olderCopy(held, b) ||
		(held.UID != b.UID && slices.Contains(lc.replaced, held.UID) && !slices.Contains(lc.replaced, b.UID))
}

// tookOver records that budget b took over the ledger of the budgets in from, so that a late
// copy of theirs held back is not written over it (supersedes).
func (s *Ledgers) tookOver(b *videov1alpha1.VideoBudget, from ...*ledger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lc := s.tenantOfLocked(b.Namespace)
	for _, l := range from {
		if l != nil && l.BudgetUID != "" && l.BudgetUID != string(b.UID) && !slices.Contains(lc.replaced, types.UID(l.BudgetUID)) {
			lc.replaced = append(lc.replaced, types.UID(l.BudgetUID))
		}
	}
	if n := len(lc.replaced); n > maxReplaced {
		lc.replaced = slices.Clone(lc.replaced[n-maxReplaced:])
	}
	if lc.adopted = append(lc.adopted, b.UID); len(lc.adopted) > maxReplaced {
		lc.adopted = slices.Clone(lc.adopted[1:])
	}
}

// keepGone records changes made to the deleted budget last for each later copy of it, and
// returns the newest copy of it this process knows.
func (s *Ledgers) keepGone(last *videov1alpha1.VideoBudget, changes []func(*videov1alpha1.VideoBudget) bool, now time.Time) *videov1alpha1.VideoBudget {
	s.mu.Lock()
	defer s.mu.Unlock()
	lc := s.tenantOfLocked(last.Namespace)
	if lc.goneUID != last.UID {
		lc.gone, lc.goneUID = nil, last.UID
	}
	lc.gone = append(lc.gone, changes...)
	newest := last
	for _, c := range []*videov1alpha1.VideoBudget{lc.pending, lc.written} {
		if olderCopy(newest, c) {
			newest = c
		}
	}
	if len(lc.gone) > maxGone {
		// Folded into one merge, so that each write does not apply them all again; now is the
		// fold's: every copy of the deleted budget is of a period no later.
		folded := ledgerOf(s.withGoneLocked(lc, newest))
		lc.gone = []func(*videov1alpha1.VideoBudget) bool{func(b *videov1alpha1.VideoBudget) bool {
			return MergeLedger(b, &folded, now)
		}}
	}
	return newest
}

// lastCopy is the budget tenant's ledger is a copy of, with what this process could not write
// yet; nil when there is no ledger, or it names no budget.
func (s *Ledgers) lastCopy(ctx context.Context, r client.Reader, tenant string) (*videov1alpha1.VideoBudget, error) {
	l, unwritten, found, err := s.readCurrent(ctx, r, tenant, nil)
	if l = cmp.Or(unwritten, l); err != nil || !found || l == nil || l.BudgetUID == "" {
		return nil, err
	}
	b := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: videov1alpha1.VideoBudgetName, UID: types.UID(l.BudgetUID),
		ResourceVersion: l.BudgetRV},
		Spec: videov1alpha1.VideoBudgetSpec{Period: l.Period}}
	b.Status = videov1alpha1.VideoBudgetStatus{Period: l.Period, PeriodStart: l.PeriodStart, PeriodEnd: l.PeriodEnd, Used: l.Used,
		Windows: l.Windows, Reservations: l.Reservations, ChargedJobs: l.ChargedJobs, ChargeCount: l.ChargeCount, LedgerBudgetUID: l.BudgetUID}
	return b, nil
}

// lastState keeps b, a deleted budget's last state, for the look at its deletion (keepAhead).
func (s *Ledgers) lastState(b *videov1alpha1.VideoBudget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lc := s.tenantOfLocked(b.Namespace); !slices.Contains(lc.replaced, b.UID) {
		lc.final = b // a budget that took its ledger over since holds what it had
	}
}

// laterThanWritten reports whether b is a later copy of its budget than the one this process
// wrote last: another manager wrote it, without the changes kept for the deleted budget here.
func (s *Ledgers) laterThanWritten(tenant string, b *videov1alpha1.VideoBudget) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	lc := s.tenants[tenant]
	return lc == nil || lc.written == nil || olderCopy(lc.written, b)
}

// replacedBy reports whether a budget took over the ledger of budget uid in this process.
func (s *Ledgers) replacedBy(tenant string, uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	lc := s.tenants[tenant]
	return lc != nil && slices.Contains(lc.replaced, uid)
}

// forgetFree drops the answer that tenant's ledger holds no limits.
func (s *Ledgers) forgetFree(tenant string) {
	s.mu.Lock()
	delete(s.free, tenant)
	s.mu.Unlock()
}

// read reads tenant's ledger; found is whether the ConfigMap exists.
func (s *Ledgers) read(ctx context.Context, r client.Reader, tenant string) (l *ledger, found bool, err error) {
	return readLedgerAt(ctx, r, types.NamespacedName{Namespace: s.Namespace, Name: s.Name(tenant)})
}

// readLedgerAt reads a ledger; nil when there is none, or it cannot be decoded (a ledger edited
// by hand into nonsense is ignored, and said so).
func readLedgerAt(ctx context.Context, r client.Reader, at types.NamespacedName) (*ledger, bool, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, at, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("reading the budget ledger %s: %w", at, err)
	}
	var l ledger
	if err := json.Unmarshal([]byte(cm.Data[ledgerKey]), &l); err != nil {
		logf.FromContext(ctx).Info("Ignoring a budget ledger that cannot be read", "configMap", at.String(), "error", err.Error())
		return nil, true, nil
	}
	return &l, true, nil
}

// holds reports whether tenant's ledger keeps the limits of a budget deleted in the current
// period, and the period's end. Every paid submission without a budget asks: a free answer is
// kept for freeTTL, so that unguarded renders do not each cost an API read (issue 30).
func (s *Ledgers) holds(ctx context.Context, r client.Reader, tenant string, now time.Time) (bool, time.Time, error) {
	cached := false
	l, unwritten, _, err := s.readCurrent(ctx, r, tenant, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		cached = time.Now().Before(s.free[tenant])
		return cached
	})
	if cached || err != nil {
		return false, time.Time{}, err
	}
	l = cmp.Or(unwritten, l) // what this process could not write yet stands for the ledger
	if l != nil && l.BudgetUID != "" && l.PeriodEnd != nil && now.Before(l.PeriodEnd.Time) {
		return true, l.PeriodEnd.Time, nil
	}
	s.mu.Lock()
	if len(s.free) >= maxFree {
		clear(s.free)
	}
	s.free[tenant] = time.Now().Add(freeTTL)
	s.mu.Unlock()
	return false, time.Time{}, nil
}

// ensure writes the ledger of a budget that took over long ago when the manager's namespace has
// none yet (the migration from the tenant's namespace): once per namespace and process.
func (s *Ledgers) ensure(ctx context.Context, c client.Client, r client.Reader, b *videov1alpha1.VideoBudget) error {
	if _, ok := s.known.Load(b.Namespace); ok || b.UID == "" || b.Status.LedgerBudgetUID != string(b.UID) {
		return nil
	}
	l, found, err := s.read(ctx, r, b.Namespace)
	switch {
	case err != nil:
		return err
	case !found:
		logf.FromContext(ctx).Info("Writing the budget's ledger in the manager's namespace (migrated from the namespace's own)",
			"namespace", b.Namespace, "ledger", s.Namespace+"/"+s.Name(b.Namespace))
	case !behind(l, ledgerOf(b)):
		s.known.Store(b.Namespace, true)
		return nil
	default:
		// Restored from an older backup, or edited by hand, while no manager ran: a budget
		// created again would take less over than this one used.
		s.known.Store(b.Namespace, true)
		logf.FromContext(ctx).Info("The budget's ledger holds less than the budget; writing it again",
			"namespace", b.Namespace, "ledger", s.Namespace+"/"+s.Name(b.Namespace),
			"renders", l.Used.Renders, "budgetRenders", b.Status.Used.Renders)
	}
	return s.write(ctx, c, b)
}

// MergeLedger merges l, an earlier budget's ledger, into b's status: the charged job ids and
// count whatever the period, the current windows' usage each count the larger. It reports
// whether b changed.
func MergeLedger(b *videov1alpha1.VideoBudget, l *ledger, now time.Time) bool {
	if l == nil {
		return false
	}
	before := b.Status.DeepCopy()
	b.Status.ChargeCount = max(b.Status.ChargeCount, l.ChargeCount)
	for _, id := range l.ChargedJobs {
		if !charged(b, id) {
			b.Status.ChargedJobs = append(b.Status.ChargedJobs, id)
		}
	}
	if n := len(b.Status.ChargedJobs); n > maxChargedJobs {
		b.Status.ChargedJobs = slices.Clone(b.Status.ChargedJobs[n-maxChargedJobs:])
	}
	RollPeriod(b, now)
	current := l.PeriodEnd != nil && now.Before(l.PeriodEnd.Time)
	// An older manager's ledger (no windows): its usage counts in every window.
	older := current && len(l.Windows) == 0
	if older || current && l.Period == b.Status.Period && l.PeriodStart != nil && l.PeriodStart.Equal(b.Status.PeriodStart) {
		maxInto(&b.Status.Used, l.Used)
	}
	if older {
		for i := range b.Status.Windows {
			maxInto(&b.Status.Windows[i].Used, l.Used)
		}
	}
	for _, lw := range l.Windows {
		switch w := window(b, lw.Period); {
		case w.Start.Time.Equal(lw.Start.Time):
			maxInto(&w.Used, lw.Used)
		case w.Start.Before(&lw.Start):
			// Rolled by a clock ahead of this manager's (windows never roll back).
			w.Start, w.Used = lw.Start, *lw.Used.DeepCopy()
		}
	}
	w := window(b, b.Status.Period)
	maxInto(&b.Status.Used, w.Used)
	// The earlier budget's reservations this one does not hold, whatever the period, and those
	// further along than this one's (their job recorded, and counted).
	held := map[string]int{}
	for i, r := range b.Status.Reservations {
		held[r.UID+"/"+r.AttemptID] = i
	}
	for _, r := range l.Reservations {
		i, ok := held[r.UID+"/"+r.AttemptID]
		switch {
		case !ok && len(b.Status.Reservations) < maxReservations:
			b.Status.Reservations = append(b.Status.Reservations, r)
		case ok && r.JobID != "" && b.Status.Reservations[i].JobID == "":
			b.Status.Reservations[i] = r
		}
	}
	maxInto(&w.Used, b.Status.Used)
	return !equality.Semantic.DeepEqual(*before, b.Status)
}

// adoptLedger brings a budget that has not merged the namespace's ledger (or, migrating, the old
// one in the namespace) up to it, and rebuilds the reservations in flight and of running jobs
// from the objects. It reports whether b changed.
func adoptLedger(ctx context.Context, c client.Client, reader client.Reader, s *Ledgers, b *videov1alpha1.VideoBudget, now time.Time) (bool, error) {
	if b.UID == "" || b.Status.LedgerBudgetUID == string(b.UID) {
		return false, nil
	}
	l, unwritten, found, err := s.readCurrent(ctx, reader, b.Namespace, nil)
	if err != nil {
		return false, err
	}
	// The budget deleted last, as its delete event left it, may be ahead of the ledger (its last
	// copies failed): it is a copy too.
	final := s.finalCopy(b.Namespace)
	if !found {
		final = nil // the ledger deleted on purpose: the limits were removed
	}
	// A restored status, the ledger, a copy held back and the deleted budget's last state are
	// copies, any may be the older: a copy's reservations are dropped when another is certainly
	// later (they may have been folded since, and would count twice); all are kept where none is
	// (each is checked against its object).
	own := ledgerOf(b)
	copies := []*ledger{&own, unwritten, final, l}
	for _, cp := range copies {
		if cp != nil && slices.ContainsFunc(copies, func(o *ledger) bool { return laterCopy(o, cp) }) {
			cp.Reservations = nil
		}
	}
	b.Status.Reservations = own.Reservations
	// A copy this process could not write is taken over too (nothing is admitted meanwhile).
	MergeLedger(b, unwritten, now)
	MergeLedger(b, final, now)
	s.tookOver(b, l, unwritten, final)
	if !found {
		legacy := types.NamespacedName{Namespace: b.Namespace, Name: videov1alpha1.LedgerConfigMapName}
		if l, _, err = readLedgerAt(ctx, reader, legacy); err != nil {
			return false, err
		}
	}
	if MergeLedger(b, l, now) {
		logf.FromContext(ctx).Info("A new VideoBudget took over the period's usage from the namespace's ledger",
			"namespace", b.Namespace, "renders", b.Status.Used.Renders, "renderSeconds", b.Status.Used.RenderSeconds, "migrated", !found)
	}
	if _, err := rebuildReservations(ctx, c, b, true, time.Time{}); err != nil {
		return false, err
	}
	b.Status.LedgerBudgetUID = string(b.UID)
	return true, nil
}

// laterCopy reports whether copy l is certainly later than copy than: more charges, or more
// submissions counted in the same period.
func laterCopy(l, than *ledger) bool {
	switch {
	case l == nil || than == nil:
		return false
	case l.ChargeCount != than.ChargeCount:
		return l.ChargeCount > than.ChargeCount
	case l.PeriodStart == nil || !l.PeriodStart.Equal(than.PeriodStart):
		return false
	}
	return l.Used.Renders+l.Used.Previews > than.Used.Renders+than.Used.Previews
}

// countRunning rebuilds the reservations of running jobs until status.runningReserved (an older
// manager kept none), and once more where a manager of b82c5a5..9078577 (unreleased) left
// "counted:<job>" entries in chargedJobs: it kept none for a preview's running job. A job that
// ended since this process started counts too (an end written before the budget's first look has
// no reservation to be folded into), unless b just took the ledger over: the budget it replaced
// folded those.
func countRunning(ctx context.Context, c client.Client, b *videov1alpha1.VideoBudget, adopted bool, started time.Time) (err error) {
	counted := func(id string) bool { return strings.HasPrefix(id, "counted:") }
	if b.Status.RunningReserved && !slices.ContainsFunc(b.Status.ChargedJobs, counted) {
		return nil
	}
	endedSince := started
	if adopted {
		endedSince = time.Time{}
	}
	if b.Status.RunningReserved, err = rebuildReservations(ctx, c, b, false, endedSince); err == nil {
		b.Status.ChargedJobs = slices.DeleteFunc(b.Status.ChargedJobs, counted)
	}
	return err
}

// rebuildReservations adds a reservation for each object whose job runs and is not charged, and,
// with inFlight, for each whose submission is in flight. An older manager's render reservation
// (no estimate) gets its render's. complete is false when maxReservations left some out.
func rebuildReservations(ctx context.Context, c client.Client, b *videov1alpha1.VideoBudget, inFlight bool, endedSince time.Time) (complete bool, err error) {
	objs, holders, err := listHolders(ctx, c, b.Namespace)
	if err != nil {
		return false, err
	}
	held := map[string]bool{}
	for _, r := range b.Status.Reservations {
		held[r.UID] = true
	}
	complete = true
	for _, obj := range objs {
		if held[string(obj.GetUID())] {
			continue
		}
		if len(b.Status.Reservations) >= maxReservations {
			complete = false
			continue
		}
		st := videov1alpha1.JobStatusOf(obj)
		kind, est := estimateOf(obj)
		// What the submission recorded: a storyboardRef's request may have moved on since.
		var recorded *videov1alpha1.BudgetEstimate
		var r videov1alpha1.BudgetReservation
		switch {
		case st.Submission != nil && inFlight:
			r, recorded = reservationOf(kind, obj, st.Submission.AttemptID, st.Submission.StartedAt, est), st.Submission.BudgetEstimate
		case st.Submission == nil && st.JobID != "" && st.SubmittedAt != nil && !charged(b, st.JobID) &&
			(st.CompletedAt == nil || !endedSince.IsZero() && !st.CompletedAt.Time.Before(endedSince)):
			r, recorded = reservationOf(kind, obj, "rebuilt", *st.SubmittedAt, est), st.BudgetEstimate
			r.JobID = st.JobID
		default:
			continue
		}
		if recorded != nil && kind != kindStoryboard {
			e := EstimateOf(recorded)
			r.EstimatedSeconds, r.AICredits, r.Unbounded, r.UnreportedCredits = e.Seconds, e.Credits, e.Unbounded, e.Unreported
		}
		b.Status.Reservations = append(b.Status.Reservations, r)
	}
	for i := range b.Status.Reservations {
		if r := &b.Status.Reservations[i]; r.Kind != kindStoryboard && r.EstimatedSeconds <= 0 && holders[r.UID] != nil {
			fillEstimate(r, holders[r.UID])
		}
	}
	return complete, nil
}

// EstimateRender is the estimate the render's submission recorded, or, for an older manager's
// job, one from its inline request, or the safe default (storyboardRef and project renders).
func EstimateRender(vr *videov1alpha1.VideoRender) Estimate {
	if r := vr.Status.BudgetEstimate; r != nil {
		return EstimateOf(r)
	}
	return EstimateFor(vr.Spec.Storyboard)
}
