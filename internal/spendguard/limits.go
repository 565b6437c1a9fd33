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
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// kindStoryboard is the Kind of previews in reservations; every other kind is a render.
const kindStoryboard = "VideoStoryboard"

// PeriodBounds returns the UTC period of kind p that contains now.
func PeriodBounds(p videov1alpha1.BudgetPeriod, now time.Time) (start, end time.Time) {
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	switch p {
	case videov1alpha1.BudgetPeriodDaily:
		return day, day.AddDate(0, 0, 1)
	case videov1alpha1.BudgetPeriodWeekly:
		// Weeks start on Monday (ISO 8601).
		start := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
		return start, start.AddDate(0, 0, 7)
	default:
		start := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	}
}

// periodOf is spec.period with its default.
func periodOf(b *videov1alpha1.VideoBudget) videov1alpha1.BudgetPeriod {
	return cmp.Or(b.Spec.Period, videov1alpha1.BudgetPeriodMonthly)
}

// periods are the kinds of period, each with a usage window in the budget's status.
var periods = []videov1alpha1.BudgetPeriod{videov1alpha1.BudgetPeriodDaily, videov1alpha1.BudgetPeriodWeekly, videov1alpha1.BudgetPeriodMonthly}

// RollPeriod brings the budget's status to the period that contains now. A period's usage is its
// window's, so changing spec.period never lowers it below what was charged in that period.
func RollPeriod(b *videov1alpha1.VideoBudget, now time.Time) {
	p := periodOf(b)
	st := &b.Status
	rollWindows(b, now)
	if st.PeriodEnd != nil && st.PeriodStart != nil && st.Period == p && now.Before(st.PeriodEnd.Time) {
		return
	}
	start, end := PeriodBounds(p, now)
	w := window(b, p)
	if w.Start.After(start) {
		// Rolled by a clock ahead of this manager's: the period is its window's, whose usage it takes.
		start, end = PeriodBounds(p, w.Start.Time)
	}
	st.Used = *w.Used.DeepCopy()
	st.Period = p
	st.PeriodStart = &metav1.Time{Time: start}
	st.PeriodEnd = &metav1.Time{Time: end}
}

// rollWindows moves each usage window to the one that contains now, never back (a clock behind).
// Windows new to an old budget start at its period's usage.
func rollWindows(b *videov1alpha1.VideoBudget, now time.Time) {
	st := &b.Status
	carried := videov1alpha1.BudgetUsage{}
	if len(st.Windows) == 0 && st.PeriodEnd != nil && now.Before(st.PeriodEnd.Time) {
		carried = st.Used
	}
	for _, p := range periods {
		start, _ := PeriodBounds(p, now)
		w := window(b, p)
		if w.Start.IsZero() {
			w.Start, w.Used = metav1.Time{Time: start}, *carried.DeepCopy()
			continue
		}
		if w.Start.Time.Before(start) {
			w.Start, w.Used = metav1.Time{Time: start}, videov1alpha1.BudgetUsage{}
		}
	}
	// Charges an older release made after a rollback are in used, not in the windows: what the
	// period's window (of the same span) lacks is added to every window, on the safe side.
	if st.Period == "" || st.PeriodEnd == nil || !now.Before(st.PeriodEnd.Time) {
		return
	}
	if pw := window(b, st.Period); st.PeriodStart.Equal(&pw.Start) {
		if d, short := deficit(st.Used, pw.Used); short {
			for i := range st.Windows {
				addTo(&st.Windows[i].Used, d)
			}
		}
	}
}

// deficit is what want counts beyond got, and whether it counts anything beyond it.
func deficit(want, got videov1alpha1.BudgetUsage) (videov1alpha1.BudgetUsage, bool) {
	d := videov1alpha1.BudgetUsage{
		Renders: max(want.Renders-got.Renders, 0), RenderSeconds: max(want.RenderSeconds-got.RenderSeconds, 0),
		Previews: max(want.Previews-got.Previews, 0), UnreportedCreditRenders: max(want.UnreportedCreditRenders-got.UnreportedCreditRenders, 0),
	}
	if want.AICredits != nil {
		c := want.AICredits.DeepCopy()
		if got.AICredits != nil {
			c.Sub(*got.AICredits)
		}
		if c.Sign() > 0 {
			d.AICredits = &c
		}
	}
	return d, d != (videov1alpha1.BudgetUsage{}) || d.AICredits != nil
}

// window is the budget's usage window of kind p, added when missing (zero start).
func window(b *videov1alpha1.VideoBudget, p videov1alpha1.BudgetPeriod) *videov1alpha1.BudgetWindow {
	for i := range b.Status.Windows {
		if b.Status.Windows[i].Period == p {
			return &b.Status.Windows[i]
		}
	}
	b.Status.Windows = append(b.Status.Windows, videov1alpha1.BudgetWindow{Period: p})
	return &b.Status.Windows[len(b.Status.Windows)-1]
}

// addUsageAt adds d, usage that belongs to time at (zero: now), to the period's usage and to each
// usage window, the one place usage grows: not to a period or window that starts after at (a
// roll-over since), nor to a period that ends before it (a clock ahead).
func addUsageAt(b *videov1alpha1.VideoBudget, d videov1alpha1.BudgetUsage, at time.Time) {
	now := at.IsZero()
	if !now {
		rollWindows(b, at) // recorded by a clock ahead of this manager's: it counts in its window
	}
	if st, end := b.Status.PeriodStart, b.Status.PeriodEnd; now || (st == nil || !at.Before(st.Time)) && (end == nil || at.Before(end.Time)) {
		addTo(&b.Status.Used, d)
	}
	for i := range b.Status.Windows {
		if w := &b.Status.Windows[i]; now || !at.Before(w.Start.Time) {
			addTo(&w.Used, d)
		}
	}
}

func addTo(u *videov1alpha1.BudgetUsage, d videov1alpha1.BudgetUsage) {
	u.Renders += d.Renders
	u.RenderSeconds += d.RenderSeconds
	u.Previews += d.Previews
	u.UnreportedCreditRenders += d.UnreportedCreditRenders
	if d.AICredits != nil && !d.AICredits.IsZero() {
		sum := d.AICredits.DeepCopy()
		if u.AICredits != nil {
			sum.Add(*u.AICredits)
		}
		u.AICredits = &sum
	}
}

// maxInto keeps in u the larger of each of its counts and o's.
func maxInto(u *videov1alpha1.BudgetUsage, o videov1alpha1.BudgetUsage) {
	u.Renders = max(u.Renders, o.Renders)
	u.RenderSeconds = max(u.RenderSeconds, o.RenderSeconds)
	u.Previews = max(u.Previews, o.Previews)
	u.UnreportedCreditRenders = max(u.UnreportedCreditRenders, o.UnreportedCreditRenders)
	if o.AICredits != nil && (u.AICredits == nil || o.AICredits.Cmp(*u.AICredits) > 0) {
		q := o.AICredits.DeepCopy()
		u.AICredits = &q
	}
}

// recountReserved keeps status.reserved equal to the reservations.
func recountReserved(b *videov1alpha1.VideoBudget) {
	var r videov1alpha1.BudgetReserved
	for _, res := range b.Status.Reservations {
		switch {
		case res.JobID != "": // running: counted when its job was folded
		case res.Kind == kindStoryboard:
			r.Previews++
		default:
			r.Renders++
		}
		r.RenderSeconds += res.EstimatedSeconds // a preview's is zero: counted, not timed
		if res.AICredits {
			r.AICreditRenders++
		}
		if res.Unbounded {
			r.UnboundedRenders++
		}
	}
	b.Status.Reserved = r
}

// exhausted reports the first limit that leaves no room for one more submission of kind, counting
// reservations in flight. Jobs whose cost is known only at their end (credits under maxAICredits, no
// bound under maxRenderSeconds) run one at a time, so a burst goes at most one job beyond.
func exhausted(b *videov1alpha1.VideoBudget, kind string, est bound.Estimate) (videov1alpha1.BudgetLimit, string, bool) {
	preview := kind == kindStoryboard
	for _, l := range reachedLimits(b) {
		// A preview that may consume credits waits on maxAICredits too.
		if (l.limit == videov1alpha1.BudgetLimitPreviews) == preview || (preview && est.Credits && l.limit == videov1alpha1.BudgetLimitAICredits) {
			return l.limit, l.message, true
		}
	}
	if est.Credits && b.Spec.MaxAICredits != nil && b.Status.Reserved.AICreditRenders > 0 {
		return videov1alpha1.BudgetLimitAICredits, fmt.Sprintf(
			"maxAICredits is set and %d render(s) or preview(s) that may consume AI credits are in flight or running; "+
				"their credits are known only when they end, so renders and previews that may consume credits run one at a time",
			b.Status.Reserved.AICreditRenders), true
	}
	if kind != kindStoryboard && est.Unbounded && b.Spec.MaxRenderSeconds != nil && b.Status.Reserved.UnboundedRenders > 0 {
		return videov1alpha1.BudgetLimitRenderSeconds, fmt.Sprintf(
			"maxRenderSeconds is set and %d render(s) whose length no field of the request bounds are in flight or running; "+
				"their length is known only when they end, so such renders run one at a time "+
				"(a render is bounded when each scene is a story read by an AI voice or a brief with duration: "+
				"not an external voice, an audio or video source, a blog, a deck or a template)",
			b.Status.Reserved.UnboundedRenders), true
	}
	return "", "", false
}

// reachedLimit is one limit with no room left.
type reachedLimit struct {
	limit   videov1alpha1.BudgetLimit
	reason  videov1alpha1.ConditionReason
	message string
}

// conditionMessage is the limit's sentence in the Exhausted condition. It names no count that moves
// while the limit stays reached, so the budget is not rewritten at every submission.
func (l reachedLimit) conditionMessage(b *videov1alpha1.VideoBudget) string {
	s := &b.Spec
	switch l.limit {
	case videov1alpha1.BudgetLimitRenders:
		return fmt.Sprintf("maxRenders reached: the %d renders of the period are used or in flight", *s.MaxRenders)
	case videov1alpha1.BudgetLimitRenderSeconds:
		return fmt.Sprintf("maxRenderSeconds reached: the %d seconds of video of the period are used or estimated for renders in flight or running", *s.MaxRenderSeconds)
	case videov1alpha1.BudgetLimitPreviews:
		return fmt.Sprintf("maxPreviews reached: the %d previews of the period are used or in flight", *s.MaxPreviews)
	}
	return l.message
}

// reachedLimits lists the limits with no room left, renders first.
func reachedLimits(b *videov1alpha1.VideoBudget) []reachedLimit {
	s, st := &b.Spec, &b.Status
	var out []reachedLimit
	if s.MaxRenders != nil && st.Used.Renders+st.Reserved.Renders >= *s.MaxRenders {
		out = append(out, reachedLimit{videov1alpha1.BudgetLimitRenders, videov1alpha1.ReasonMaxRendersReached,
			fmt.Sprintf("maxRenders reached: %d of %d renders used (%d of them in flight)",
				st.Used.Renders+st.Reserved.Renders, *s.MaxRenders, st.Reserved.Renders)})
	}
	if s.MaxRenderSeconds != nil && st.Used.RenderSeconds+st.Reserved.RenderSeconds >= *s.MaxRenderSeconds {
		out = append(out, reachedLimit{videov1alpha1.BudgetLimitRenderSeconds, videov1alpha1.ReasonMaxRenderSecondsReached,
			fmt.Sprintf("maxRenderSeconds reached: %d of %d seconds of video used (%d of them estimated for renders in flight or running)",
				st.Used.RenderSeconds+st.Reserved.RenderSeconds, *s.MaxRenderSeconds, st.Reserved.RenderSeconds)})
	}
	if s.MaxAICredits != nil {
		used := resource.Quantity{}
		if st.Used.AICredits != nil {
			used = *st.Used.AICredits
		}
		if used.Cmp(*s.MaxAICredits) >= 0 {
			out = append(out, reachedLimit{videov1alpha1.BudgetLimitAICredits, videov1alpha1.ReasonMaxAICreditsReached,
				fmt.Sprintf("maxAICredits reached: %s of %s AI credits used", used.String(), s.MaxAICredits.String())})
		}
	}
	if s.MaxPreviews != nil && st.Used.Previews+st.Reserved.Previews >= *s.MaxPreviews {
		out = append(out, reachedLimit{videov1alpha1.BudgetLimitPreviews, videov1alpha1.ReasonMaxPreviewsReached,
			fmt.Sprintf("maxPreviews reached: %d of %d previews used (%d of them in flight)",
				st.Used.Previews+st.Reserved.Previews, *s.MaxPreviews, st.Reserved.Previews)})
	}
	return out
}
