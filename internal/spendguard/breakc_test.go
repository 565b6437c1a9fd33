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
	"testing"
	"time"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// A helper's review (breakc) of 9afbf33..4c1fc68 found a fact dated after the period's end counted
// in its usage (C2); fixed. (Its C1, a held-back ledger copy dropped, went with the copies: the
// ledger is the state.)

// C2. Single manager. addUsageAt now rolls the windows forward to the fact's time, while the
// period's usage still counts a fact at or after the period's start, with no bound at its end.
// A fact dated after the period's end therefore counts in this period's used AND, through the
// window rolled ahead, in the next period's (RollPeriod takes used from the window).
//
// The one future-dated fact of a single manager: a reservation written ahead (grant.go) has the
// time its render pays at (payAt, up to the call budget's wait ahead) as reservedAt, and
// chargeReserved counts it at reservedAt. SettleAll (uninstall) charges the reservation of a
// render deleted while it waited for its call budget, at once: at 23:59:58 the render's
// reservation for 00:00:03 is charged. Daily period, maxRenders 1: the render is counted in the
// day that ends and again in the day that starts, whose first render then waits. On 9afbf33 it
// counted once (the day's windows took it; the roll reset them).
func TestBreakCAReservationChargedAheadOfAPeriodsEndCountsInOnePeriod(t *testing.T) {
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	now := day.Add(24*time.Hour - 2*time.Second) // 23:59:58
	b := &videov1alpha1.VideoBudget{Spec: videov1alpha1.VideoBudgetSpec{Period: videov1alpha1.BudgetPeriodDaily}}
	RollPeriod(b, now)
	res := videov1alpha1.BudgetReservation{Kind: "VideoRender", UID: "uid-0", Name: "r0", AttemptID: "a",
		EstimatedSeconds: 10}
	res.ReservedAt.Time = day.Add(24*time.Hour + 3*time.Second) // its payAt, after midnight
	chargeReserved(b, res)
	first := b.Status.Used.Renders
	RollPeriod(b, day.Add(24*time.Hour+10*time.Second))
	second := b.Status.Used.Renders
	if first+second != 1 {
		t.Errorf("one render charged at 23:59:58 for 00:00:03 counts %d in the day that ends and %d in the day that starts: "+
			"counted twice (a window rolled ahead by addUsageAt, used not bounded by the period's end)", first, second)
	}
}
