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
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

// The older managers the upgrade test replaces with the manager of this tree (docs/architecture.md
// "Records that outlive a version": an upgrade pays nothing). Both must be in the clone's history;
// CI runs on a full clone of main.
const (
	// previousRelease is version 0.1.0 (CHANGELOG.md "## [0.1.0] - 2026-11-25"): the merge of the
	// release branch into main, the first commit of main's history that carries the 0.1.0 section,
	// the chart's version 0.1.0 and the image tag v0.1.0, and the code that section describes
	// ("renders only what a person approved": approvals, the ledger, issues 21 to 24). 80bd38f,
	// which wrote the section, is a commit of the release branch, which forked from 953f389 before
	// approvals existed: it is not the code 0.1.0 shipped.
	previousRelease = "7fd0fa8"
	// beforeApprovals is the last commit of main before approvals (issue 21): its finished
	// storyboardRef renders carry no digest at all, and must stay Ready after the upgrade.
	beforeApprovals = "953f389"
	// roundStart is the manager before the budget became a ledger of pending reservations: a
	// running job kept no reservation under a budget without a seconds or credits limit, and its
	// charge after its render's end was found again only by its mark.
	roundStart = "5a301c3"
	// beforeFold is the last manager whose renders charged their ends themselves (a charge
	// written before the end, or after it with a mark, status.chargeMark) and settled their
	// reservations with writes of their own, before the budget's writes folded what the renders
	// record in their status.
	beforeFold = "b82c5a5"
)

// paidEndpoints are the service's three submit endpoints: every call to one may create a job
// that is charged.
var paidEndpoints = []string{simulator.EndpointCreateStoryboard, simulator.EndpointRenderStoryboard,
	simulator.EndpointRenderProject}

// An upgrade pays nothing. The manager of an older commit runs over objects in every state
// (completed: an inline render, a project render, a storyboardRef render and its storyboard's
// preview; running at the switch; failed because of its spec; awaiting approval, where that
// commit has approvals; stalled SubmissionUnknown), with and without a VideoBudget. It is
// SIGTERMed, the CRDs and the approval policies of this tree are applied over the old ones, as an
// upgrade does, and the manager of this tree starts. Once every object settles: no call to a paid endpoint after the
// switch, and no status regression (Ready stays Ready with its job and outputs; running ends
// Ready with its job; failed and stalled stay so; awaiting stays awaiting; a budget counts no
// submission again and charges only the renders that were running).
//
// The short variant upgrades from the previous release with one object per state in a namespace
// with a budget; the long one from the four commits, three objects per state, with and without a
// budget.
func TestUpgradePaysNothing(t *testing.T) {
	commits := []string{previousRelease}
	if *long {
		commits = append(commits, beforeApprovals, roundStart, beforeFold)
	}
	for _, commit := range commits {
		t.Run(commit, func(t *testing.T) {
			old := buildManagerAt(t, commit)
			budgets := []bool{true}
			if *long {
				budgets = []bool{true, false}
			}
			for _, budget := range budgets {
				name := "budget"
				if !budget {
					name = "no-budget"
				}
				t.Run(name, func(t *testing.T) { upgradeFrom(t, old, budget) })
			}
		})
	}
}

// oldManager is a manager built from an older commit, with that commit's CRDs.
type oldManager struct {
	commit string
	bin    string
	crds   string
	// approvals says whether that commit has approvals (spec.storyboardRef.approvedDigest).
	approvals bool
	// records says whether consent is a record there (approval Pinned by default): a render
	// without approvedDigest waits for an approval, where 0.1.0 approved the current preview.
	records bool
}

// buildManagerAt builds the manager of commit from a detached git worktree of this repository,
// with the shared Go build cache, and copies its CRDs out; the worktree is removed at once.
func buildManagerAt(t *testing.T, commit string) oldManager {
	t.Helper()
	root := gitOutput(t, ".", "rev-parse", "--show-toplevel")
	if _, err := gitRun(root, "cat-file", "-e", commit+"^{commit}"); err != nil {
		t.Fatalf("commit %s is not in this clone's history: the upgrade test builds the manager of that commit "+
			"from a git worktree, so it needs a full clone of main (git fetch --unshallow): %v", commit, err)
	}
	dir := t.TempDir()
	tree := filepath.Join(dir, "src")
	if out, err := gitRun(root, "worktree", "add", "--detach", tree, commit); err != nil {
		t.Fatalf("git worktree add %s: %v\n%s", commit, err, out)
	}
	defer func() {
		if out, err := gitRun(root, "worktree", "remove", "--force", tree); err != nil {
			t.Errorf("removing the worktree of %s: %v\n%s", commit, err, out)
		}
	}()
	m := oldManager{commit: commit, bin: filepath.Join(dir, "manager-"+commit), crds: filepath.Join(dir, "crds")}
	start := time.Now()
	build := exec.CommandContext(t.Context(), "go", "build", "-o", m.bin, "./cmd/manager")
	build.Dir = tree
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager of %s: %v\n%s", commit, err, out)
	}
	t.Logf("built the manager of %s in %s", commit, time.Since(start).Round(time.Millisecond))
	if out, err := exec.CommandContext(t.Context(), "cp", "-r", filepath.Join(tree, "config", "crd", "bases"), m.crds).CombinedOutput(); err != nil {
		t.Fatalf("copying the CRDs of %s: %v\n%s", commit, err, out)
	}
	b, err := os.ReadFile(filepath.Join(m.crds, "video.videoops.io_videorenders.yaml"))
	must(t, err)
	m.approvals = strings.Contains(string(b), "approvedDigest")
	m.records = strings.Contains(string(b), "PreviewAtApproval is retired")
	return m
}

func gitRun(dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(context.Background(), "git", args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

func gitOutput(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitRun(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// installCRDs creates or replaces the three CRDs with the ones in dir, as kubectl apply of an
// installer does.
func installCRDs(t *testing.T, dir string) {
	t.Helper()
	if _, err := envtest.InstallCRDs(restConfig, envtest.CRDInstallOptions{Paths: []string{dir}, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("installing the CRDs of %s: %v", dir, err)
	}
}

// todaysCRDs are the CRDs of this tree, which the suite's API server started with.
var todaysCRDs = filepath.Join("..", "..", "config", "crd", "bases")

// holdClock is the simulator's clock, which the test can stop: jobs created while it is held
// stay in progress, whatever their duration, until it runs again. That is how renders are
// still running at the switch on a machine of any speed.
type holdClock struct {
	mu     sync.Mutex
	held   bool
	at     time.Time     // the service's time while held
	since  time.Time     // the wall time the hold began
	behind time.Duration // total time held so far
}

func (c *holdClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held {
		return c.at
	}
	return time.Now().Add(-c.behind)
}

func (c *holdClock) hold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.since = time.Now()
	c.at = c.since.Add(-c.behind)
	c.held = true
}

func (c *holdClock) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.behind += time.Since(c.since)
	c.held = false
}

// movedRender names a render that rendered its storyboard's first preview, approved by the
// default of 0.1.0 (ref-moved) or by its digest (ref-pinmoved), before the storyboard moved on.
func movedRender(name string) bool {
	return strings.HasPrefix(name, "ref-moved-") || strings.HasPrefix(name, "ref-pinmoved-")
}

// previewDigest is the digest of a storyboard's completed preview.
func (w *world) previewDigest(name string) string {
	w.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(videov1alpha1.GroupVersion.WithKind("VideoStoryboard"))
	must(w.t, k8s.Get(w.t.Context(), client.ObjectKey{Namespace: w.ns, Name: name}, u))
	d, _, _ := unstructured.NestedString(u.Object, "status", "preview", "digest")
	if d == "" {
		w.t.Fatalf("VideoStoryboard %s has no preview digest", name)
	}
	return d
}

// upgradeState is what an object's status says, as far as the upgrade must keep it.
type upgradeState struct {
	Kind, Name string
	// State is Ready, Stalled/<reason> or Reconciling/<reason>.
	State string
	JobID string
	// Message is the message of the condition State names.
	Message string
	// Outputs are a render's status.outputs or a storyboard's status.preview.scenes.
	Outputs any
}

func (s upgradeState) String() string {
	return fmt.Sprintf("%s %s: %s, job %q", s.Kind, s.Name, s.State, s.JobID)
}

// upgradeFrom runs one upgrade: old's manager over objects in every state, then this tree's.
func upgradeFrom(t *testing.T, old oldManager, budget bool) {
	clock := &holdClock{}
	w := newWorld(t, simulator.Options{Clock: clock})
	installCRDs(t, old.crds)
	t.Cleanup(func() { installCRDs(t, todaysCRDs) }) // the other cases run on this tree's CRDs
	if budget {
		createYAML(t, w.ns, `
apiVersion: video.videoops.io/v1alpha1
kind: VideoBudget
metadata: {name: default}
spec: {period: Monthly, maxRenders: 1000, maxRenderSeconds: 360000, maxPreviews: 1000}
`)
	}
	n := size(1, 3)
	oldProc := w.startManagerBinary(old.bin)

	// Completed: inline renders, a project render, storyboards and their storyboardRef renders.
	// A failure the spec causes: a voice the service does not know.
	for i := range n {
		createYAML(t, w.ns, inlineRender(fmt.Sprintf("done-%d", i), ""))
		createYAML(t, w.ns, inlineRender(fmt.Sprintf("failed-%d", i), "NoSuchVoice"))
		createYAML(t, w.ns, storyboard(fmt.Sprintf("sb-done-%d", i), "The storyboard a finished render rendered."))
	}
	for i, p := range simulator.DefaultProjects()[:min(n, len(simulator.DefaultProjects()))] {
		createYAML(t, w.ns, `
apiVersion: video.videoops.io/v1alpha1
kind: VideoRender
metadata: {name: project-`+fmt.Sprint(i)+`}
spec: {projectId: `+p.ID+`}
`)
	}
	if old.approvals {
		for i := range n {
			createYAML(t, w.ns, storyboard(fmt.Sprintf("sb-moved-%d", i), "The first preview, reviewed and rendered."))
			createYAML(t, w.ns, storyboard(fmt.Sprintf("sb-pinned-%d", i), "A preview approved by its digest."))
			createYAML(t, w.ns, storyboard(fmt.Sprintf("sb-pinmoved-%d", i), "The first preview, approved by its digest."))
			// Awaiting approval, never paid: the render is written before its storyboard exists,
			// so under the previous release's default (PreviewAtApproval) the preview completes
			// after the spec was written and waits for an approval.
			createYAML(t, w.ns, refRender(fmt.Sprintf("ref-await-%d", i), fmt.Sprintf("sb-await-%d", i)))
			createYAML(t, w.ns, storyboard(fmt.Sprintf("sb-await-%d", i), "A preview nobody reviewed."))
		}
	}
	w.waitSettled("the storyboards' previews", func(s upgradeState) bool {
		return s.Kind != "VideoStoryboard" || s.State == "Ready"
	})
	if old.approvals {
		// Pinned to the digest of the preview, as kubectl video render and approve write it.
		for i := range n {
			createYAML(t, w.ns, pinnedRender(fmt.Sprintf("ref-pinned-%d", i), fmt.Sprintf("sb-pinned-%d", i), w.previewDigest(fmt.Sprintf("sb-pinned-%d", i))))
			createYAML(t, w.ns, pinnedRender(fmt.Sprintf("ref-pinmoved-%d", i), fmt.Sprintf("sb-pinmoved-%d", i), w.previewDigest(fmt.Sprintf("sb-pinmoved-%d", i))))
		}
		// PreviewAtApproval approves a preview that completed more than its clock-skew allowance
		// (5 s, no flag) before the render's spec was written: a wall-clock wait, nothing to poll.
		time.Sleep(6 * time.Second)
	}
	// Written after the preview completed: approved by the previous release's default; before
	// approvals, rendered because the preview is current.
	for i := range n {
		createYAML(t, w.ns, refRender(fmt.Sprintf("ref-done-%d", i), fmt.Sprintf("sb-done-%d", i)))
		// Where consent is a record, a render without a pin waits for one (ref-done shows it): no
		// render is approved by a default to move on from.
		if old.approvals && !old.records {
			createYAML(t, w.ns, refRender(fmt.Sprintf("ref-moved-%d", i), fmt.Sprintf("sb-moved-%d", i)))
		}
	}
	settledOld := func(s upgradeState) bool {
		return s.State == "Ready" || strings.HasPrefix(s.State, "Stalled/") ||
			s.State == "Reconciling/"+string(videov1alpha1.ReasonAwaitingApproval)
	}
	w.waitSettled("every object of the old manager", func(s upgradeState) bool {
		return settledOld(s) && (!movedRender(s.Name) && !strings.HasPrefix(s.Name, "ref-pinned-") || s.State == "Ready")
	})
	if old.approvals {
		// Rendered, then its storyboard moves on to a preview nobody reviewed: the render waits
		// for an approval again (the previous release shows it Reconciling, issue 28 item 6).
		for i := range n {
			w.editStoryboard(fmt.Sprintf("sb-moved-%d", i), "The second preview, which nobody reviewed.")
			w.editStoryboard(fmt.Sprintf("sb-pinmoved-%d", i), "The second preview, which nobody reviewed.")
		}
		// Where consent is a record, a pin keeps what it rendered: the render stays Ready.
		w.waitSettled("the second previews", func(s upgradeState) bool {
			return settledOld(s) &&
				(!movedRender(s.Name) || s.State == "Reconciling/"+string(videov1alpha1.ReasonAwaitingApproval) || old.records && s.State == "Ready")
		})
	}

	// Stalled SubmissionUnknown: the answer of the paid call is lost after the service created
	// the job (a truncated answer), so the old manager cannot know it paid.
	w.sim.SetFaults(simulator.Faults{TruncatedShare: 1, Endpoints: []string{apiclient.EndpointRenderStoryboard}})
	for i := range n {
		createYAML(t, w.ns, inlineRender(fmt.Sprintf("unknown-%d", i), ""))
	}
	w.waitSettled("the lost answers", func(s upgradeState) bool {
		return !strings.HasPrefix(s.Name, "unknown-") || s.State == "Stalled/"+string(videov1alpha1.ReasonSubmissionUnknown)
	})
	w.sim.SetFaults(simulator.Faults{})

	// Running at the switch: the service's clock stops, so these jobs are in progress until the
	// new manager runs.
	clock.hold()
	for i := range n {
		createYAML(t, w.ns, inlineRender(fmt.Sprintf("running-%d", i), ""))
		createYAML(t, w.ns, storyboard(fmt.Sprintf("sb-running-%d", i), "A preview still being made at the upgrade."))
	}
	w.waitSettled("the running jobs", func(s upgradeState) bool {
		return !strings.Contains(s.Name, "running-") || s.JobID != ""
	})

	// The upgrade: SIGTERM, this tree's CRDs, this tree's manager.
	took := oldProc.kill(t, syscall.SIGTERM, shutdownWithin)
	if oldProc.err != nil {
		t.Errorf("the manager of %s exited with %v after SIGTERM", old.commit, oldProc.err)
	}
	before := w.upgradeStates()
	usedBefore := w.budgetUsed(budget)
	paidBefore := paidCalls(w.sim)
	jobsBefore := len(w.sim.Jobs())
	t.Logf("the manager of %s stopped in %s; %d paid calls; the objects it left:\n%s", old.commit,
		took.Round(time.Millisecond), paidBefore, statesText(before))
	installCRDs(t, todaysCRDs)
	// And its approval policies (docs/approval.md): the pins written before still approve, and
	// no write of the new manager is refused by them.
	installApprovalPolicies(t, w.ns)
	newProc := w.startManagerBinary(managerBin)
	waitFor(t, 30*time.Second, "the new manager's workers", func() bool {
		b, err := os.ReadFile(newProc.log)
		return err == nil && strings.Count(string(b), "Starting workers") >= 2
	})
	clock.release()

	// Settled: what was running is Ready (or failed), nothing is between states. An object that
	// does not settle is reported below as a regression, with what it says.
	if last, settled := w.settle(func(s upgradeState) bool {
		was := before[s.Kind+"/"+s.Name]
		if strings.Contains(s.Name, "running-") {
			return s.State == "Ready" || strings.HasPrefix(s.State, "Stalled/")
		}
		return s.State == was.State || s.State == "Ready" || strings.HasPrefix(s.State, "Stalled/") ||
			s.State == "Reconciling/"+string(videov1alpha1.ReasonAwaitingApproval)
	}); !settled {
		t.Errorf("the objects did not settle within a minute under the new manager:\n%s", statesText(last))
	}
	// A few poll intervals more: a resync that pays would pay now.
	time.Sleep(2 * time.Second)
	after := w.upgradeStates()
	paidAfter := paidCalls(w.sim) - paidBefore

	regressions := upgradeRegressions(before, after)
	if budget {
		// A render's charge rides with a budget write within seconds of its end, which is written
		// first (docs/spend-guard.md "What it costs at scale"): the usage is read once it landed,
		// or after 30 s, and then compared.
		deadline := time.Now().Add(30 * time.Second)
		for len(budgetRegressions(usedBefore, w.budgetUsed(budget), before, w.renderSeconds())) > 0 && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
		}
		usedAfter := w.budgetUsed(budget)
		t.Logf("VideoBudget used before the upgrade %+v, after %+v", usedBefore, usedAfter)
		regressions = append(regressions, budgetRegressions(usedBefore, usedAfter, before, w.renderSeconds())...)
	}
	for _, r := range regressions {
		t.Errorf("status regression after the upgrade from %s: %s", old.commit, r)
	}
	if paidAfter != 0 {
		t.Errorf("the upgrade from %s paid %d calls (by endpoint, before and after: %v)", old.commit, paidAfter, w.sim.Counters().Calls)
		for _, j := range w.sim.Jobs()[jobsBefore:] {
			t.Errorf("  a job created after the switch: %s %s of %s", j.Kind, j.ID, j.Request)
		}
	}
	t.Logf("after the upgrade:\n%s", statesText(after))
	r := upgradeReport{
		Case:        fmt.Sprintf("upgrade from %s (%s), %s", old.commit, upgradeLabel(old.commit), budgetLabel(budget)),
		Objects:     len(after),
		States:      stateCounts(before),
		PaidBefore:  paidBefore,
		PaidAfter:   paidAfter,
		Regressions: len(regressions),
	}
	r.write(t)
	w.expectNoKeyLeak()
}

// budgetUsage is a VideoBudget's status.used, as far as the test reads it.
type budgetUsage struct{ Renders, Previews, RenderSeconds int64 }

// budgetUsed reads the namespace's budget's usage (zero without a budget).
func (w *world) budgetUsed(budget bool) budgetUsage {
	w.t.Helper()
	if !budget {
		return budgetUsage{}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(videov1alpha1.GroupVersion.WithKind("VideoBudget"))
	must(w.t, k8s.Get(w.t.Context(), client.ObjectKey{Namespace: w.ns, Name: "default"}, u))
	// A submission counts once, as used or, while its job is not folded into usage yet, as
	// reserved: an old manager stopped before the write that would have settled it leaves it
	// reserved, and the new one moves it to used.
	var b budgetUsage
	count := func(field string) int64 {
		used, _, _ := unstructured.NestedInt64(u.Object, "status", "used", field)
		reserved, _, _ := unstructured.NestedInt64(u.Object, "status", "reserved", field)
		return used + reserved
	}
	b.Renders, b.Previews = count("renders"), count("previews")
	b.RenderSeconds, _, _ = unstructured.NestedInt64(u.Object, "status", "used", "renderSeconds")
	return b
}

// renderSeconds is each render's status.videoDuration rounded up to a second, as the budget
// charges it.
func (w *world) renderSeconds() map[string]int64 {
	w.t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(videov1alpha1.GroupVersion.WithKind("VideoRenderList"))
	must(w.t, k8s.List(w.t.Context(), list, client.InNamespace(w.ns)))
	out := map[string]int64{}
	for _, u := range list.Items {
		if d, ok, _ := unstructured.NestedString(u.Object, "status", "videoDuration"); ok {
			if dur, err := time.ParseDuration(d); err == nil {
				out[u.GetName()] = int64(math.Ceil(dur.Seconds()))
			}
		}
	}
	return out
}

// budgetRegressions checks the budget across the upgrade: no submission counted again, and the
// only seconds charged are those of the renders that were running at the switch (a completed
// render charged again by the new manager would add its seconds once more).
func budgetRegressions(was, now budgetUsage, before map[string]upgradeState, seconds map[string]int64) []string {
	var out []string
	if now.Renders != was.Renders || now.Previews != was.Previews {
		out = append(out, fmt.Sprintf("VideoBudget default: counted (used or in flight) %d renders and %d previews before the upgrade, %d and %d after",
			was.Renders, was.Previews, now.Renders, now.Previews))
	}
	var running int64
	for _, s := range before {
		if s.Kind == "VideoRender" && strings.Contains(s.Name, "running-") {
			running += seconds[s.Name]
		}
	}
	if now.RenderSeconds-was.RenderSeconds != running {
		out = append(out, fmt.Sprintf("VideoBudget default: used renderSeconds %d before the upgrade and %d after, "+
			"but the renders running at the switch are %d s long", was.RenderSeconds, now.RenderSeconds, running))
	}
	return out
}

func upgradeLabel(commit string) string {
	if commit == previousRelease {
		return "0.1.0"
	}
	return "before approvals"
}

func budgetLabel(budget bool) string {
	if budget {
		return "with a VideoBudget"
	}
	return "without a VideoBudget"
}

// upgradeRegressions compares every object after the upgrade with what the old manager left.
func upgradeRegressions(before, after map[string]upgradeState) []string {
	var out []string
	for key, was := range before {
		now, ok := after[key]
		switch {
		case !ok:
			out = append(out, was.String()+": gone")
		case strings.Contains(was.Name, "running-"):
			// Running at the switch: the same job, completed.
			if now.State != "Ready" || now.JobID != was.JobID {
				out = append(out, fmt.Sprintf("%s, was running: now %s (%q)", was, now, now.Message))
			}
		case was.State == "Ready":
			if !sameOutputs(was.Outputs, now.Outputs) {
				out = append(out, fmt.Sprintf("%s with outputs %v: now %s with outputs %v", was, was.Outputs, now, now.Outputs))
			} else if now.State != "Ready" || now.JobID != was.JobID {
				out = append(out, fmt.Sprintf("%s: now %s (%q), outputs kept", was, now, now.Message))
			}
		case was.State == "Reconciling/"+string(videov1alpha1.ReasonAwaitingApproval):
			// Never paid: still waiting. One whose approved preview was rendered before its
			// storyboard moved on is a finished render, and a finished render stays Ready
			// (docs/architecture.md "What is paid for is what was approved"), with the same job.
			want := was.State
			if was.JobID != "" {
				want = "Ready"
			}
			if now.JobID != was.JobID || now.State != want {
				out = append(out, fmt.Sprintf("%s: now %s, want %s (%q)", was, now, want, now.Message))
			}
		default: // stalled or failed: as it was
			if now.State != was.State || now.JobID != was.JobID {
				out = append(out, fmt.Sprintf("%s: now %s (%q)", was, now, now.Message))
			}
		}
	}
	sort.Strings(out)
	return out
}

// sameOutputs reports whether every output the old manager recorded is still there, unchanged
// (the new manager may add fields).
func sameOutputs(was, now any) bool {
	switch w := was.(type) {
	case map[string]any:
		n, ok := now.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !sameOutputs(v, n[k]) {
				return false
			}
		}
		return true
	case []any:
		n, ok := now.([]any)
		if !ok || len(n) != len(w) {
			return false
		}
		for i := range w {
			if !sameOutputs(w[i], n[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(was, now)
	}
}

func paidCalls(sim *simulator.Server) int {
	n := 0
	for _, e := range paidEndpoints {
		n += sim.Calls(e)
	}
	return n
}

var upgradeKinds = []string{"VideoRender", "VideoStoryboard"}

// upgradeStates reads every render and storyboard of the world, schema-free: the objects were
// written under an older schema.
func (w *world) upgradeStates() map[string]upgradeState {
	w.t.Helper()
	out := map[string]upgradeState{}
	for _, kind := range upgradeKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(videov1alpha1.GroupVersion.WithKind(kind + "List"))
		must(w.t, k8s.List(w.t.Context(), list, client.InNamespace(w.ns)))
		for i := range list.Items {
			s := stateOf(&list.Items[i])
			out[kind+"/"+s.Name] = s
		}
	}
	return out
}

func stateOf(u *unstructured.Unstructured) upgradeState {
	s := upgradeState{Kind: u.GetKind(), Name: u.GetName()}
	s.JobID, _, _ = unstructured.NestedString(u.Object, "status", "jobId")
	if s.Kind == "VideoStoryboard" {
		s.Outputs, _, _ = unstructured.NestedFieldCopy(u.Object, "status", "preview", "scenes")
	} else {
		s.Outputs, _, _ = unstructured.NestedFieldCopy(u.Object, "status", "outputs")
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	byType := map[string]map[string]any{}
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			byType[fmt.Sprint(m["type"])] = m
		}
	}
	current := func(t string) (map[string]any, bool) {
		c, ok := byType[t]
		if !ok || c["status"] != "True" {
			return nil, false
		}
		g, _ := c["observedGeneration"].(int64)
		return c, g == u.GetGeneration()
	}
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	if _, ok := current(string(videov1alpha1.ConditionReady)); ok && phase == string(videov1alpha1.PhaseCompleted) {
		s.State = "Ready"
		return s
	}
	if c, ok := byType[string(videov1alpha1.ConditionStalled)]; ok && c["status"] == "True" {
		s.State, s.Message = fmt.Sprintf("Stalled/%v", c["reason"]), fmt.Sprint(c["message"])
		return s
	}
	for _, t := range []string{string(videov1alpha1.ConditionReconciling), string(videov1alpha1.ConditionReady)} {
		if c, ok := byType[t]; ok {
			s.State, s.Message = fmt.Sprintf("Reconciling/%v", c["reason"]), fmt.Sprint(c["message"])
			return s
		}
	}
	s.State = "Reconciling/(no condition)"
	return s
}

// waitSettled waits until every render and storyboard satisfies ok, or fails the test.
func (w *world) waitSettled(what string, ok func(upgradeState) bool) {
	w.t.Helper()
	if last, settled := w.settle(ok); !settled {
		w.t.Fatalf("timed out waiting for %s:\n%s", what, statesText(last))
	}
}

// settle waits up to a minute until every render and storyboard satisfies ok; it returns the
// last states read and whether they did.
func (w *world) settle(ok func(upgradeState) bool) (map[string]upgradeState, bool) {
	w.t.Helper()
	var last map[string]upgradeState
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		last = w.upgradeStates()
		all := len(last) > 0
		for _, s := range last {
			all = all && ok(s)
		}
		if all {
			return last, true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return last, false
}

func statesText(states map[string]upgradeState) string {
	lines := make([]string, 0, len(states))
	for _, s := range states {
		lines = append(lines, "  "+s.String())
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func stateCounts(states map[string]upgradeState) map[string]int {
	out := map[string]int{}
	for _, s := range states {
		state := s.State
		if strings.Contains(s.Name, "running-") && state != "Ready" {
			state = "running"
		}
		out[state]++
	}
	return out
}

// editStoryboard changes the story of a storyboard's first scene: a new preview.
func (w *world) editStoryboard(name, story string) {
	w.t.Helper()
	waitFor(w.t, 10*time.Second, "editing "+name, func() bool {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(videov1alpha1.GroupVersion.WithKind("VideoStoryboard"))
		if err := k8s.Get(w.t.Context(), client.ObjectKey{Namespace: w.ns, Name: name}, u); err != nil {
			return false
		}
		scenes, _, _ := unstructured.NestedSlice(u.Object, "spec", "scenes")
		scenes[0].(map[string]any)["story"] = story
		must(w.t, unstructured.SetNestedSlice(u.Object, scenes, "spec", "scenes"))
		return k8s.Update(w.t.Context(), u) == nil
	})
}

// createYAML creates an object from YAML with exactly the fields written: an older CRD
// accepts it where a typed object of this tree could carry fields it does not know.
func createYAML(t *testing.T, ns, doc string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	must(t, yaml.Unmarshal([]byte(doc), &u.Object))
	if u.GetAPIVersion() == "" {
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: videov1alpha1.GroupVersion.Group,
			Version: videov1alpha1.GroupVersion.Version, Kind: "VideoRender"})
	}
	u.SetNamespace(ns)
	must(t, k8s.Create(t.Context(), u))
}

// inlineRender is a render of an inline storyboard; speaker, when set, is its voice.
func inlineRender(name, speaker string) string {
	voice := ""
	if speaker != "" {
		voice = "\n    voiceOver: {enabled: true, aiVoices: [{speaker: " + speaker + "}]}"
	}
	return `
apiVersion: video.videoops.io/v1alpha1
kind: VideoRender
metadata: {name: ` + name + `}
spec:
  storyboard:
    videoName: ` + name + voice + `
    scenes:
      - story: A video rendered by one version of the operator and kept by the next.
`
}

func storyboard(name, story string) string {
	return `
apiVersion: video.videoops.io/v1alpha1
kind: VideoStoryboard
metadata: {name: ` + name + `}
spec:
  videoName: ` + name + `
  scenes:
    - story: ` + story + `
`
}

func refRender(name, storyboard string) string {
	return `
apiVersion: video.videoops.io/v1alpha1
kind: VideoRender
metadata: {name: ` + name + `}
spec:
  storyboardRef: {name: ` + storyboard + `}
`
}

func pinnedRender(name, storyboard, digest string) string {
	return `
apiVersion: video.videoops.io/v1alpha1
kind: VideoRender
metadata: {name: ` + name + `}
spec:
  storyboardRef: {name: ` + storyboard + `, approvedDigest: "` + digest + `"}
`
}

// upgradeReport is the upgrade test's row of the suite's report.
type upgradeReport struct {
	Case    string `json:"case"`
	Objects int    `json:"objects"`
	// States counts the objects by the state the old manager left them in.
	States      map[string]int `json:"states"`
	PaidBefore  int            `json:"paidCallsBefore"`
	PaidAfter   int            `json:"paidCallsAfterUpgrade"`
	Regressions int            `json:"regressions"`
}

// String prints the report as one row of docs/reliability.md's upgrade table.
func (r upgradeReport) String() string {
	keys := make([]string, 0, len(r.States))
	for k := range r.States {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.States[k]))
	}
	return fmt.Sprintf("| %s | %d | %s | %d | %d | %d |", r.Case, r.Objects, strings.Join(parts, ", "),
		r.PaidBefore, r.PaidAfter, r.Regressions)
}

func (r upgradeReport) write(t *testing.T) {
	t.Helper()
	t.Logf("%s", r)
	if path := os.Getenv("FAULTS_REPORT"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		must(t, err)
		b, _ := json.Marshal(r)
		_, _ = f.Write(append(b, '\n'))
		_ = f.Close()
	}
}
