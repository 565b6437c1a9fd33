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

package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// budgetResult is the spend guard's account of a -bench.budget run, read once every object is
// terminal: each namespace's VideoBudget against the jobs the service created for it.
type budgetResult struct {
	Budgets int `json:"budgets"`
	// ExpectedRenders is N: every render fits its namespace's maxRenders exactly.
	ExpectedRenders int64 `json:"expectedRenders"`
	// PaidRenders are the jobs the service created, UsedRenders what the budgets counted.
	PaidRenders int64 `json:"paidRenders"`
	UsedRenders int64 `json:"usedRenders"`
	// RenderedSeconds are the renders' seconds (each status.videoDuration rounded up), UsedSeconds
	// what the budgets charged.
	RenderedSeconds int64 `json:"renderedSeconds"`
	UsedSeconds     int64 `json:"usedSeconds"`
	// SettleSeconds is how long after the last render's end the budgets took to hold every
	// charge (charges ride with a later budget write, docs/spend-guard.md).
	SettleSeconds float64 `json:"settleSeconds"`
	// ReservedAtEnd and ReservationsAtEnd are what the budgets still held as in flight.
	ReservedAtEnd     int64 `json:"reservedAtEnd"`
	ReservationsAtEnd int   `json:"reservationsAtEnd"`
	// Mismatched names each namespace whose account differs from what was paid there.
	Mismatched []string `json:"mismatched,omitempty"`
	// StatusWrites are the manager's PATCH and PUT of videobudgets/status.
	StatusWrites int `json:"statusWrites"`
}

// rendersIn is how many of the N renders namespace i gets (render j goes to j mod namespaces).
func rendersIn(i int) int64 {
	return int64((*flagN - i + *flagNamespaces - 1) / *flagNamespaces)
}

// createBudget gives namespace ns a VideoBudget with room for exactly renders renders: one
// render counted twice leaves the last one waiting, and the run never ends.
func (s *scaleRun) createBudget(ns string, renders int64) {
	must(s.b, s.k8s.Create(s.b.Context(), &videov1alpha1.VideoBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: videov1alpha1.VideoBudgetName},
		Spec:       videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To(renders)},
	}))
}

// renderedSeconds sums each namespace's renders' seconds as a budget charges them. It reads the
// watch's cache, which saw every render terminal before the run ended: a List from the API server
// (2,000 renders, 9 MB of JSON) would be counted in the guarded run's API server CPU, not in the
// unguarded one's.
func (s *scaleRun) renderedSeconds() map[string]int64 {
	var list videov1alpha1.VideoRenderList
	if err := s.watch.cache.List(s.b.Context(), &list, client.InNamespace("")); err != nil {
		s.b.Errorf("listing the VideoRenders: %v", err)
		return nil
	}
	out := map[string]int64{}
	for i := range list.Items {
		if d := list.Items[i].Status.VideoDuration; d != nil {
			out[list.Items[i].Namespace] += int64(math.Ceil(d.Seconds()))
		}
	}
	return out
}

// settleBudgets waits, before anything is measured, until every budget holds the seconds of its
// namespace's renders and no reservation (at most budgetSettle): the renders' ends are folded
// by a later budget write, and those writes belong to the run.
func (s *scaleRun) settleBudgets() {
	if !*flagBudget {
		return
	}
	s.settledIn = -1
	want := s.renderedSeconds()
	start := time.Now()
	for time.Since(start) < budgetSettle {
		var list videov1alpha1.VideoBudgetList
		if err := s.k8s.List(s.b.Context(), &list, client.InNamespace("")); err != nil {
			s.b.Errorf("listing the VideoBudgets: %v", err)
			return
		}
		settled := true
		for _, vb := range list.Items {
			if vb.Status.Used.RenderSeconds != want[vb.Namespace] || len(vb.Status.AllReservations()) != 0 {
				settled = false
			}
		}
		if settled {
			s.settledIn = time.Since(start)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// budgetSettle bounds settleBudgets: ends are folded within a few seconds.
const budgetSettle = 20 * time.Second

// measureBudgets compares each namespace's VideoBudget with the jobs paid for its renders, and
// with their seconds.
func (s *scaleRun) measureBudgets(r *result) {
	if !*flagBudget {
		return
	}
	bu := &budgetResult{ExpectedRenders: int64(*flagN), SettleSeconds: s.settledIn.Seconds()}
	seconds := s.renderedSeconds()
	paid := map[string]int64{}
	for _, j := range s.sim.Jobs() {
		name := videoName(j.Request)
		i, err := strconv.Atoi(strings.TrimPrefix(name, "r-"))
		if err != nil {
			continue // not one of the run's objects: counted as an orphan elsewhere
		}
		paid[namespaceName(i%*flagNamespaces)]++
	}
	var list videov1alpha1.VideoBudgetList
	if err := s.k8s.List(s.b.Context(), &list, client.InNamespace("")); err != nil {
		s.b.Errorf("listing the VideoBudgets: %v", err)
		return
	}
	for _, vb := range list.Items {
		bu.Budgets++
		used, reserved := vb.Status.Used.Renders, vb.Status.Reserved.Renders
		bu.UsedRenders += used
		bu.PaidRenders += paid[vb.Namespace]
		bu.ReservedAtEnd += reserved
		bu.ReservationsAtEnd += len(vb.Status.AllReservations())
		bu.UsedSeconds += vb.Status.Used.RenderSeconds
		bu.RenderedSeconds += seconds[vb.Namespace]
		if used != paid[vb.Namespace] || reserved != 0 || len(vb.Status.AllReservations()) != 0 || vb.Status.Used.RenderSeconds != seconds[vb.Namespace] {
			bu.Mismatched = append(bu.Mismatched, fmt.Sprintf("%s: used %d, reserved %d (%d reservations), paid %d; %d s charged, %d s rendered",
				vb.Namespace, used, reserved, len(vb.Status.Reservations), paid[vb.Namespace], vb.Status.Used.RenderSeconds, seconds[vb.Namespace]))
		}
	}
	if bu.Budgets != *flagNamespaces {
		bu.Mismatched = append(bu.Mismatched, fmt.Sprintf("%d VideoBudgets, want %d", bu.Budgets, *flagNamespaces))
	}
	_, perObject, _ := s.proxy.counts()
	for key, n := range perObject {
		if strings.HasPrefix(key, "videobudgets ") {
			bu.StatusWrites += n
		}
	}
	r.Budget = bu
}
