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

package faults

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// The spend guard's money promise across process kills: a namespace with a VideoBudget counts
// every job paid exactly once (used.renders) and charges every completed render's seconds
// exactly once (used.renderSeconds), while the manager is SIGKILLed again and again as jobs end:
// between a job's end being seen and its charge, and between the charge and the render's own end
// written (status.chargedJobs makes the charge seen again a no-op). Every render is submitted
// before the first kill, so no kill lands in the SIGKILL window of a paid call: every job is
// recorded in its object and nothing is left unknown.
//
// renders-only is a budget with maxRenders alone: no reservation stands for a running job, and a
// completion's charge relies on the charge finalizer and the charged job ids only.
// with-seconds-limit adds maxRenderSeconds: each running job's reservation keeps its estimate
// until its end is charged.
func TestBudgetSIGKILLWhileRendersEnd(t *testing.T) {
	for _, c := range []struct{ name, spec string }{
		{"renders-only", "{period: Monthly, maxRenders: 100000}"},
		{"with-seconds-limit", "{period: Monthly, maxRenders: 100000, maxRenderSeconds: 10000000}"},
	} {
		t.Run(c.name, func(t *testing.T) { budgetKillLoop(t, c.name, c.spec) })
	}
}

func budgetKillLoop(t *testing.T, name, spec string) {
	n, kills := size(12, 120), size(3, 8)
	// Renders take 0.3 s to 6 s (18 s in the long variant; TimeScale 0.005), drawn per job, so
	// that jobs keep ending through the whole kill loop.
	w := newWorld(t, simulator.Options{RenderDuration: time.Minute, RenderDurationMax: time.Duration(size(20, 60)) * time.Minute})
	createYAML(t, w.ns, `
apiVersion: video.videoops.io/v1alpha1
kind: VideoBudget
metadata: {name: default}
spec: `+spec+`
`)
	// Callbacks: a job's end is seen at once, not at the next poll.
	extra := callbackFlags(t)
	w.startManager(extra...)
	began := time.Now()
	for i := range n {
		createYAML(t, w.ns, guardedRender(i))
	}
	waitFor(t, 90*time.Second, "every render submitted (a job id recorded)", func() bool {
		items, err := w.renders(t.Context())
		must(t, err)
		for i := range items {
			if items[i].Status.JobID == "" {
				return false
			}
		}
		return len(items) == n
	})

	// The kills: each waits until the manager runs its workers, then for a staggered moment, then
	// for a render whose job's end is charged into the budget and not written into the render yet
	// (or, failing that, a job ended at the service whose render's end is not written: the
	// manager is reading or charging it), and kills it there.
	landed, landedCharged, landedPending := 0, 0, 0
	for k := range kills {
		p := w.procs[len(w.procs)-1]
		waitFor(t, 30*time.Second, "the manager's VideoRender workers", func() bool {
			b, err := os.ReadFile(p.log)
			if err != nil {
				return false
			}
			for _, line := range strings.Split(string(b), "\n") {
				if strings.Contains(line, "Starting workers") && strings.Contains(line, `"videorender"`) {
					return true
				}
			}
			return false
		})
		time.Sleep(time.Duration(150+120*(k%4)) * time.Millisecond)
		m := w.awaitKillMoment(4 * time.Second)
		if m.ended > 0 {
			landed++
		}
		if m.charged > 0 {
			landedCharged++
		}
		if m.pending > 0 {
			landedPending++
		}
		p.kill(t, syscall.SIGKILL, 10*time.Second)
		w.startManager(extra...)
	}
	killed := time.Now()
	w.waitTerminal(90 * time.Second)
	ended := time.Now()
	seconds := w.renderSeconds()
	var rendered int64
	for _, s := range seconds {
		rendered += s
	}
	b, settled := w.settledBudget(60*time.Second, 2*time.Second, rendered)
	t.Logf("submitted and killed x%d in %s, every render terminal %s later, the budget settled %s after that (2 s of it quiet)",
		kills, killed.Sub(began).Round(time.Millisecond), ended.Sub(killed).Round(time.Millisecond), time.Since(ended).Round(time.Millisecond))
	if !settled {
		t.Errorf("the VideoBudget did not settle within a minute (reservations left, seconds missing, or usage still changing): used %+v, %d reservations",
			b.Status.Used, len(b.Status.Reservations))
	}
	jobs := w.sim.Jobs()
	used := b.Status.Used
	w.note = fmt.Sprintf("budget: %d renders counted / %d jobs paid, %d s charged / %d s rendered, %d reservations left; "+
		"kills landed with a job ended and its end unwritten: %d of %d (%d after its charge); with an end written and "+
		"not folded into the budget: %d", used.Renders, len(jobs),
		used.RenderSeconds, rendered, len(b.Status.Reservations), landed, kills, landedCharged, landedPending)
	r := w.measure(fmt.Sprintf("SIGKILL x%d while guarded renders end (%s)", kills, name))
	r.expectNoDoubleCharge(w)
	w.expectBillMatchesAudit(r)
	if r.UnknownCallMade+r.UnknownNoCall != 0 || r.Orphans != 0 || r.Ready != n || r.Jobs != n {
		t.Errorf("every render was submitted before the first kill: want one job per render, 0 SubmissionUnknown, 0 orphans "+
			"and every render Ready: %s", r)
	}

	if used.Renders != int64(len(jobs)) {
		t.Errorf("the budget counts %d renders, the service created %d jobs (%+d): every paid job must count exactly once",
			used.Renders, len(jobs), used.Renders-int64(len(jobs)))
	}
	if len(seconds) != r.Ready {
		t.Errorf("%d renders report a videoDuration, %d are Ready: the seconds rendered below are not every render's", len(seconds), r.Ready)
	}
	switch {
	case used.RenderSeconds < rendered:
		t.Errorf("the budget charged %d s, the renders rendered %d s: %d s never charged", used.RenderSeconds, rendered, rendered-used.RenderSeconds)
	case used.RenderSeconds > rendered:
		t.Errorf("the budget charged %d s, the renders rendered %d s: %d s charged more than once", used.RenderSeconds, rendered, used.RenderSeconds-rendered)
	}
	for _, res := range b.Status.Reservations {
		t.Errorf("a reservation left after every render ended: %s %s, attempt %s, job %q, reserved at %s",
			res.Kind, res.Name, res.AttemptID, res.JobID, res.ReservedAt.UTC().Format(time.RFC3339Nano))
	}
	if used.Previews != 0 {
		t.Errorf("the budget counts %d previews; the case submits none", used.Previews)
	}
	if landed+landedPending == 0 {
		t.Errorf("no kill landed while a job had ended and its end or its charge was not written: the case proved nothing")
	}
	if *long && name == "renders-only" && landedPending == 0 {
		t.Errorf("no kill landed between a render's end written and the budget write that folds it: the fold after a restart was never tested")
	}
	w.expectNoKeyLeak()
}

// guardedRender is a render of one story scene whose length varies with i (the service makes
// about 2.5 spoken words a second, so most lengths are not whole seconds): each render charges
// its own number of seconds. Its videoName is its name, so that measure matches its jobs.
func guardedRender(i int) string {
	vocabulary := []string{"a", "guarded", "render", "ends", "while", "its", "manager", "is", "killed"}
	words := make([]string, 8+(i*7)%23)
	for k := range words {
		words[k] = vocabulary[k%len(vocabulary)]
	}
	name := fmt.Sprintf("guarded-%d", i)
	return `
apiVersion: video.videoops.io/v1alpha1
kind: VideoRender
metadata: {name: ` + name + `}
spec:
  storyboard:
    videoName: ` + name + `
    scenes:
      - story: ` + strings.Join(words, " ") + `
`
}

// killMoment is what a kill interrupted, as last read before it: renders whose job had ended at
// the service while their end was not written, and of those the ones already charged into the
// budget (their job id in status.chargedJobs); and renders whose end is written while the
// budget still holds their job's reservation: no budget write has folded it yet (pending).
type killMoment struct{ ended, charged, pending int }

// awaitKillMoment polls the renders and the budget for the moment to kill: a render whose job
// was charged and whose end is not written yet (the manager writes it next), or, after half of
// within without one, a render whose job ended and whose end is not written (being read or
// charged). At within it returns what it last saw.
func (w *world) awaitKillMoment(within time.Duration) killMoment {
	w.t.Helper()
	start := time.Now()
	for {
		items, err := w.renders(w.t.Context())
		must(w.t, err)
		var b videov1alpha1.VideoBudget
		must(w.t, k8s.Get(w.t.Context(), client.ObjectKey{Namespace: w.ns, Name: videov1alpha1.VideoBudgetName}, &b))
		b.Status.Reservations, b.Status.RunningJobs = b.Status.AllReservations(), nil
		var m killMoment
		for i := range items {
			id := items[i].Status.JobID
			if id != "" && items[i].Status.CompletedAt != nil && slices.ContainsFunc(b.Status.Reservations,
				func(r videov1alpha1.BudgetReservation) bool { return r.JobID == id }) {
				m.pending++
			}
			if id == "" || terminal(&items[i]) {
				continue
			}
			if j, ok := w.sim.Job(id); ok && j.Status != simulator.StatusInProgress {
				m.ended++
				if slices.Contains(b.Status.ChargedJobs, id) {
					m.charged++
				}
			}
		}
		waited := time.Since(start)
		if m.pending > 0 || m.charged > 0 || (m.ended > 0 && waited > within/2) || waited > within {
			return m
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settledBudget polls the namespace's VideoBudget until it holds no reservation, has charged at
// least want seconds (a charge written after its render's end rides with a later budget write,
// seconds later) and its usage has not changed for quiet; it returns the last budget read and
// whether it settled so within.
func (w *world) settledBudget(within, quiet time.Duration, want int64) (videov1alpha1.VideoBudget, bool) {
	w.t.Helper()
	var last videov1alpha1.VideoBudget
	var since time.Time
	deadline := time.Now().Add(within)
	for {
		var b videov1alpha1.VideoBudget
		must(w.t, k8s.Get(w.t.Context(), client.ObjectKey{Namespace: w.ns, Name: videov1alpha1.VideoBudgetName}, &b))
		if since.IsZero() || b.Status.Used.Renders != last.Status.Used.Renders ||
			b.Status.Used.RenderSeconds != last.Status.Used.RenderSeconds ||
			b.Status.Used.Previews != last.Status.Used.Previews ||
			len(b.Status.Reservations) != len(last.Status.Reservations) {
			since = time.Now()
		}
		last = b
		if len(b.Status.Reservations) == 0 && b.Status.Used.RenderSeconds >= want && time.Since(since) >= quiet {
			return last, true
		}
		if time.Now().After(deadline) {
			return last, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
