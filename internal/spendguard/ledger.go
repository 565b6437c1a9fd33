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
	"errors"
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
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// The ledger is a namespace's usage and reservations, the state every money decision is made on: a
// ConfigMap no object owns, in the manager's namespace where tenants cannot write (one that could
// delete it would reset its month: docs/architecture.md "Records that outlive a version").
// Decisions are written to it under its resourceVersion before anything is paid on them; the
// VideoBudget's status is a view written after. So a budget deleted or restored, with or without
// status, merges nothing; a second manager by mistake loses its lock and decides again; a ledger that cannot be
// written admits nothing. With no budget, a ledger of the current period keeps its limits until
// the platform deletes it. An older manager's state is migrated once (migrate).

// The Role for the ledgers is config/rbac/ledger_role.yaml, in the manager's namespace; the one
// cluster-wide right is reading the old ledgers, by name, for the migration:
// +kubebuilder:rbac:groups="",resources=configmaps,resourceNames=video-operator-budget-ledger,verbs=get

const (
	// DefaultLedgerNamespace is the manager's namespace of the default install (config/default).
	DefaultLedgerNamespace = "video-operator-system"
	ledgerKey              = "ledger.json"
	// ledgerVersion marks a ledger that is the state, not an older manager's copy.
	ledgerVersion = 2
)

// ledger is what the ConfigMap holds.
type ledger struct {
	Version         int                               `json:"version,omitempty"`
	Period          videov1alpha1.BudgetPeriod        `json:"period,omitempty"`
	PeriodStart     *metav1.Time                      `json:"periodStart,omitempty"`
	PeriodEnd       *metav1.Time                      `json:"periodEnd,omitempty"`
	Used            videov1alpha1.BudgetUsage         `json:"used"`
	Windows         []videov1alpha1.BudgetWindow      `json:"windows,omitempty"`
	Reservations    []videov1alpha1.BudgetReservation `json:"reservations,omitempty"`
	ChargedJobs     []string                          `json:"chargedJobs,omitempty"`
	ChargeCount     int64                             `json:"chargeCount,omitempty"`
	RunningReserved bool                              `json:"runningReserved,omitempty"`
	Seq             int64                             `json:"seq,omitempty"`       // counts the writes: one that went back was restored (load)
	BudgetUID       string                            `json:"budgetUID,omitempty"` // the budget whose status shows it, the last that existed
}

func ledgerOf(b *videov1alpha1.VideoBudget) ledger {
	st := b.Status.DeepCopy()
	return ledger{Version: ledgerVersion, Period: st.Period, PeriodStart: st.PeriodStart, PeriodEnd: st.PeriodEnd, Used: st.Used,
		Windows: st.Windows, Reservations: st.Reservations, ChargedJobs: st.ChargedJobs, ChargeCount: st.ChargeCount,
		RunningReserved: st.RunningReserved, BudgetUID: string(b.UID)}
}

// stored is a ledger as this process read or wrote it, with its ConfigMap's resourceVersion
// (empty: none yet) and uid (one created again is another ledger).
type stored struct {
	l   ledger
	rv  string
	uid types.UID
}

// working is the budget live (nil: none) with l as its status: what a write changes, then shows.
func working(tenant string, live *videov1alpha1.VideoBudget, l *ledger) *videov1alpha1.VideoBudget {
	b := live.DeepCopy()
	if b == nil {
		b = &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: videov1alpha1.VideoBudgetName, UID: types.UID(l.BudgetUID)},
			Spec: videov1alpha1.VideoBudgetSpec{Period: l.Period}}
	}
	b.Status = *(&videov1alpha1.VideoBudgetStatus{Period: l.Period, PeriodStart: l.PeriodStart, PeriodEnd: l.PeriodEnd, Used: l.Used,
		Windows: l.Windows, Reservations: l.Reservations, ChargedJobs: l.ChargedJobs, ChargeCount: l.ChargeCount,
		RunningReserved: l.RunningReserved, LedgerBudgetUID: string(b.UID), Conditions: b.Status.Conditions,
		ObservedGeneration: b.Status.ObservedGeneration}).DeepCopy()
	recountReserved(b)
	return b
}

// next is b's state as the write after from.
func next(b *videov1alpha1.VideoBudget, from *stored) ledger {
	l := ledgerOf(b)
	l.Seq = from.l.Seq + 1
	return l
}

// changed reports whether b's state is not the ledger's it was loaded from.
func changed(b *videov1alpha1.VideoBudget, from *stored) bool {
	l := ledgerOf(b)
	l.Seq = from.l.Seq
	return from.rv == "" || !equality.Semantic.DeepEqual(l, from.l)
}

// Ledgers are the namespaces' ledgers in the manager's namespace.
type Ledgers struct {
	Namespace string // the manager's own namespace

	mu     sync.Mutex
	failed map[string]error                         // namespaces whose last ledger write failed: they admit nothing
	sent   map[string]*stored                       // the latest ledgers this process wrote or was sent (Watch)
	uids   map[types.UID]bool                       // ledger ConfigMaps the watch sent (false) or deleted (true)
	synced func() bool                              // whether the watch sent every ledger (nil: none)
	wake   func(tenant string, after time.Duration) // queues a look at a budget in the VideoBudget controller (Source)
}

// NewLedgers returns the ledgers kept in namespace ns (DefaultLedgerNamespace when empty).
func NewLedgers(ns string) *Ledgers {
	return &Ledgers{Namespace: cmp.Or(ns, DefaultLedgerNamespace), failed: map[string]error{}, sent: map[string]*stored{},
		uids: map[types.UID]bool{}}
}

// Source is the VideoBudget controller's wake-ups (a ledger that starts or stops failing, changes
// that come due, a view not written): its workqueue keeps their delay, and its reconcile writes.
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

func (s *Ledgers) wakeUp(tenant string, after time.Duration) {
	s.mu.Lock()
	wake := s.wake
	s.mu.Unlock()
	if wake != nil {
		wake(tenant, after)
	}
}

// Watch keeps the ledgers the API server sends (inf: an informer of the ConfigMaps labelled
// LabelLedgerNamespace in Namespace) with this process's writes: the copy a grant checks with no
// read (noRoomNow; another manager's writes too); once it has synced, holds needs no read either.
func (s *Ledgers) Watch(inf cache.Informer) error {
	reg, err := inf.AddEventHandler(s.watcher())
	if err == nil {
		s.synced = reg.HasSynced // set up before the manager starts: nothing reads it yet
	}
	return err
}

func (s *Ledgers) watcher() toolscache.ResourceEventHandler {
	observe := func(obj any, gone bool) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok || cm.Namespace != s.Namespace || !strings.HasPrefix(cm.Name, videov1alpha1.LedgerConfigMapPrefix) ||
			gone && cm.Labels[videov1alpha1.LabelLedgerNamespace] == "" { // its label removed: out of the watch, not deleted
			return
		}
		var l ledger // one that cannot be read is an empty copy (load ignores it, and says so)
		if json.Unmarshal([]byte(cm.Data[ledgerKey]), &l) != nil {
			l = ledger{}
		}
		s.send(strings.TrimPrefix(cm.Name, videov1alpha1.LedgerConfigMapPrefix), &stored{l: l, rv: cm.ResourceVersion, uid: cm.UID}, true, gone)
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { observe(obj, false) },
		UpdateFunc: func(_, obj any) { observe(obj, false) },
		DeleteFunc: func(obj any) { observe(obj, true) },
	}
}

// send keeps c, a copy of tenant's ledger this process wrote or its watch sent (watched), unless its
// ConfigMap was deleted (gone: the watch says so) or it is older: of one ConfigMap, an older version,
// or one sent with fewer writes (a restore: load brings it up); of another (the ledger created
// again), one the watch sent before it sent this process's (deleted before its create).
func (s *Ledgers) send(tenant string, c *stored, watched, gone bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.sent[tenant]
	other := cur != nil && cur.uid != c.uid
	_, streamed := s.uids[cmp.Or(cur, c).uid]
	switch {
	case gone:
		if s.uids[c.uid] = true; cur != nil && !other {
			delete(s.sent, tenant)
		}
	case s.uids[c.uid], other && watched && !streamed:
	case cur == nil || other || !watched && newerCopy(c.rv, cur.rv) ||
		watched && (c.l.Seq > cur.l.Seq || c.l.Seq == cur.l.Seq && newerCopy(c.rv, cur.rv)):
		s.sent[tenant] = c
		fallthrough
	default:
		if watched {
			s.uids[c.uid] = false
		}
	}
}

// copyOf is the latest copy of tenant's ledger this process wrote or was sent, or nil.
func (s *Ledgers) copyOf(tenant string) *stored {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent[tenant]
}

// failure is the error of the last write of tenant's ledger when it failed, or nil.
func (s *Ledgers) failure(tenant string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed[tenant]
}

// noteWrite records the outcome of a write of tenant's ledger; a first failure, and the first
// success after, wake the controller, whose view says whether anything is paid.
func (s *Ledgers) noteWrite(tenant string, err error) {
	s.mu.Lock()
	first := (err != nil) == (s.failed[tenant] == nil)
	if err == nil {
		delete(s.failed, tenant)
	} else {
		s.failed[tenant] = err
	}
	s.mu.Unlock()
	if first {
		s.wakeUp(tenant, 0)
	}
}

// writable reports whether tenant's absent ledger could be created (a dry run), and then clears
// its failure: no limits are kept, and nothing waits for a ledger nobody will write.
func (s *Ledgers) writable(ctx context.Context, c client.Client, tenant string) bool {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name(tenant)}}
	if err := c.Create(ctx, cm, client.DryRunAll); err != nil && !apierrors.IsAlreadyExists(err) {
		return false
	}
	s.noteWrite(tenant, nil)
	return true
}

// Name is the name of tenant's ledger.
func (s *Ledgers) Name(tenant string) string { return videov1alpha1.LedgerConfigMapPrefix + tenant }

// errMoved is a ledger write that lost its lock: the writer reads and decides again. errDeleted:
// the ledger was deleted, and this process's copy is no later copy of one created again.
var (
	errMoved   = errors.New("the budget ledger changed since it was read")
	errDeleted = fmt.Errorf("%w: deleted", errMoved)
)

// store writes l over tenant's ledger at resourceVersion rv (empty: creates it).
func (s *Ledgers) store(ctx context.Context, c client.Client, tenant string, l ledger, rv string) error {
	l.Version = ledgerVersion
	raw, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("encoding the budget ledger: %w", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name(tenant)}}
	labels := map[string]string{"app.kubernetes.io/managed-by": "video-operator", videov1alpha1.LabelLedgerNamespace: tenant}
	if rv == "" {
		cm.Labels, cm.Data = labels, map[string]string{ledgerKey: string(raw)}
		err = c.Create(ctx, cm)
	} else { // the labels again: one removed by hand takes the ledger out of the watch (Watch)
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": rv, "labels": labels}, "data": map[string]string{ledgerKey: string(raw)}})
		err = c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch))
	}
	var status apierrors.APIStatus
	switch {
	case rv != "" && apierrors.IsNotFound(err) && errors.As(err, &status) && status.Status().Details != nil &&
		status.Status().Details.Kind == "configmaps": // the ConfigMap, not its namespace
		return errDeleted
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
		return errMoved
	case err != nil:
		err = fmt.Errorf("writing the budget ledger %s/%s: %w", s.Namespace, cm.Name, err)
	}
	if s.noteWrite(tenant, err); err == nil {
		var written ledger // as the ConfigMap holds it (times to the second), so that copies compare
		_ = json.Unmarshal(raw, &written)
		s.send(tenant, &stored{l: written, rv: cm.ResourceVersion, uid: cm.UID}, false, false)
	}
	return err
}

// at is where tenant's ledger is.
func (s *Ledgers) at(tenant string) types.NamespacedName {
	return types.NamespacedName{Namespace: s.Namespace, Name: s.Name(tenant)}
}

// readLedgerAt reads a ledger and where it is; nil when there is none, or it cannot be decoded (a
// ledger edited by hand into nonsense is ignored, and said so).
func readLedgerAt(ctx context.Context, r client.Reader, at types.NamespacedName) (*ledger, stored, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, at, cm); apierrors.IsNotFound(err) {
		return nil, stored{}, nil
	} else if err != nil {
		return nil, stored{}, fmt.Errorf("reading the budget ledger %s: %w", at, err)
	}
	var l ledger
	where := stored{rv: cm.ResourceVersion, uid: cm.UID}
	if err := json.Unmarshal([]byte(cm.Data[ledgerKey]), &l); err != nil {
		logf.FromContext(ctx).Info("Ignoring a budget ledger that cannot be read", "configMap", at.String(), "error", err.Error())
		return nil, where, nil
	}
	return &l, where, nil
}

// load is the namespace's state as a working copy of its budget live (nil: none), and the ledger
// it comes from: known, this process's last copy, unless fresh; else read with r, and migrated
// when an older manager kept it or none is beside a budget. b is nil without budget and ledger.
func (s *Ledgers) load(ctx context.Context, c client.Client, r client.Reader, tenant string, live *videov1alpha1.VideoBudget,
	known *stored, fresh bool, now, started time.Time) (b *videov1alpha1.VideoBudget, from *stored, err error) {
	if known != nil && !fresh && known.l.Version == ledgerVersion { // an older manager's is migrated
		return working(tenant, live, &known.l), known, nil
	}
	l, where, err := readLedgerAt(ctx, r, s.at(tenant))
	if err != nil {
		return nil, nil, err
	}
	from = &where
	switch {
	case where.rv == "" && live == nil:
		return nil, nil, nil
	case where.rv == "" || l == nil || l.Version < ledgerVersion:
		from.l = *cmp.Or(l, &ledger{})
		if known != nil && known.uid == where.uid { // rebuilt: its writes count on, or it looks like a restore (send)
			from.l.Seq = max(from.l.Seq, known.l.Seq)
		}
		b, err = migrate(ctx, c, r, s, tenant, live, l, now, started)
		return b, from, err
	}
	from.l = *l
	// A ledger that went back (restored from a backup, edited by hand) is brought up to this
	// process's later copy of the same ConfigMap (whole), or to the usage its view shows: never
	// less than was decided.
	if known != nil && known.uid == where.uid && known.l.Seq > l.Seq {
		logf.FromContext(ctx).Info("The budget's ledger went back (restored from an older backup, or edited by hand); writing the later copy again",
			"namespace", tenant, "writes", l.Seq, "later", known.l.Seq)
		*l, from.l.Seq = known.l, known.l.Seq // the writes count on from the later copy (send)
	}
	if live != nil && live.Status.LedgerBudgetUID == string(live.UID) {
		if view := ledgerOf(live); laterCopy(&view, l) {
			logf.FromContext(ctx).Info("The budget's ledger holds less than its view (restored from an older backup, or edited by hand); "+
				"taking the view's usage", "namespace", tenant, "renders", l.Used.Renders, "later", view.Used.Renders)
			l.Reservations = nil // they may have been posted since, and would count twice
			w, seq := working(tenant, nil, l), l.Seq
			MergeLedger(w, &view, now)
			*l = ledgerOf(w)
			l.Seq = seq
		}
	}
	return working(tenant, live, l), from, nil
}

// holds reports whether tenant's ledger keeps the limits of a budget deleted in the current
// period, and its end: from this process's copy once the watch has synced, else read.
func (s *Ledgers) holds(ctx context.Context, r client.Reader, tenant string, now time.Time) (bool, time.Time, error) {
	s.mu.Lock()
	c, synced := cmp.Or(s.sent[tenant], &stored{}), s.synced != nil && s.synced()
	_, streamed := s.uids[c.uid] // or this process's write, of a ConfigMap deleted while the watch was down
	s.mu.Unlock()
	l := &c.l
	if !synced || c.uid != "" && !streamed {
		var err error
		if l, _, err = readLedgerAt(ctx, r, s.at(tenant)); err != nil {
			return false, time.Time{}, err
		}
	}
	if l != nil && l.BudgetUID != "" && l.PeriodEnd != nil && now.Before(l.PeriodEnd.Time) {
		return true, l.PeriodEnd.Time, nil
	}
	return false, time.Time{}, nil
}

// MergeLedger merges l, another copy of the namespace's state, into b's status: its charges
// whatever the period, and in the current windows the larger usage. It reports whether b changed.
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
	// l's reservations b does not hold, and those further along than b's (their job counted).
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

// migrate builds the state of a namespace whose ledger an older manager kept (l; nil: none). A
// budget that had merged it kept the state in its status; one that had not merges the two (or the
// oldest managers' ledger, in the tenant's namespace) and rebuilds the reservations in flight.
// Without a budget, l is the state.
func migrate(ctx context.Context, c client.Client, r client.Reader, s *Ledgers, tenant string, live *videov1alpha1.VideoBudget, l *ledger,
	now, started time.Time) (*videov1alpha1.VideoBudget, error) {
	if live == nil {
		if l == nil || l.BudgetUID == "" {
			return nil, nil
		}
		return working(tenant, nil, l), nil
	}
	b := live.DeepCopy()
	RollPeriod(b, now)
	adopted := b.Status.LedgerBudgetUID != string(b.UID)
	if adopted {
		if l == nil {
			var err error
			if l, _, err = readLedgerAt(ctx, r, types.NamespacedName{Namespace: tenant, Name: videov1alpha1.LedgerConfigMapName}); err != nil {
				return nil, err
			}
		}
		// The reservations of a copy certainly earlier are dropped (they may have been posted
		// since); where neither is, each is checked against its object.
		own := ledgerOf(b)
		switch {
		case laterCopy(l, &own):
			b.Status.Reservations = nil
		case laterCopy(&own, l):
			l.Reservations = nil
		}
		if MergeLedger(b, l, now) {
			logf.FromContext(ctx).Info("A VideoBudget took over the period's usage from the ledger an older manager kept",
				"namespace", tenant, "renders", b.Status.Used.Renders, "renderSeconds", b.Status.Used.RenderSeconds)
		}
		if _, err := rebuildReservations(ctx, c, b, true, time.Time{}); err != nil {
			return nil, err
		}
	}
	if err := countRunning(ctx, c, b, adopted, started); err != nil {
		return nil, err
	}
	logf.FromContext(ctx).Info("Writing the budget's ledger, from now on the state its status shows",
		"namespace", tenant, "ledger", s.Namespace+"/"+s.Name(tenant))
	return working(tenant, live, ptr.To(ledgerOf(b))), nil
}

// laterCopy reports whether copy l is certainly later than copy than: more charges, or more
// submissions counted in the same period.
func laterCopy(l, than *ledger) bool {
	switch {
	case l == nil || than == nil:
		return false
	case l.ChargeCount != than.ChargeCount:
		return l.ChargeCount > than.ChargeCount
	case l.Period != than.Period || l.PeriodStart == nil || !l.PeriodStart.Equal(than.PeriodStart):
		return false
	}
	return l.Used.Renders+l.Used.Previews > than.Used.Renders+than.Used.Previews
}

// countRunning rebuilds the reservations of running jobs until runningReserved (an older manager
// kept none; one of b82c5a5..9078577 left "counted:<job>" for a preview's). A job that ended
// since this process started counts too (no reservation holds its end), unless b is adopted.
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
			e := bound.Of(recorded)
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
