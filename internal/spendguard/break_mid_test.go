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
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// Break-mid: limits and estimates changing mid-flight, and races between goroutines the seeded
// simulation (one step at a time) cannot produce.

// veoDeck is a request whose slides a veo model animates: AI credits that no job answer reports.
func veoDeck() *videov1alpha1.StoryboardRequest {
	veo := videov1alpha1.SlideAnimationModel("veo3.1")
	return &videov1alpha1.StoryboardRequest{VideoName: "deck", Scenes: []videov1alpha1.Scene{{
		PPTURL: ptr.To("https://x/deck.pptx"), PPTSlideAnimation: &videov1alpha1.PPTSlideAnimation{Enabled: ptr.To(true), Model: &veo},
	}}}
}

// reconcileWith runs the VideoBudget controller r once over the harness's budget.
func reconcileWith(t *testing.T, r *Reconciler) ctrl.Result {
	t.Helper()
	res, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// break-mid (credits reported and unreported): a render whose slides a veo model animates consumes
// AI credits no job answer reports; docs/spend-guard.md promises that such renders are counted in
// status.used.unreportedCreditRenders and that the budget's CreditsUnaccounted condition says
// used.aiCredits leaves them out. Every charge path of the render itself passes the flag
// (its end folded from its status, finishCharge, givenUp), but the budget's reservation did not
// keep it (BudgetReservation and its running-job line keep only AICredits and Unbounded): when the
// render is gone without its finalizer (deleted before its record, or stripped) the VideoBudget
// controller reads the job's end and charges it as reported-only (heldForEnd: chargeJob(..., false)).
// The budget then says every credit of the period is in used.aiCredits.
func TestBreakMidAGoneRendersVeoJobIsCountedAsUnreportedCredits(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxAICredits: ptr.To(resource.MustParse("100"))})
	close(h.hold)
	est := bound.For(veoDeck())
	if !est.Unreported || !est.Credits {
		t.Fatalf("control: a veo deck's estimate %+v should say unreported credits", est)
	}
	vr := batchRender(0)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", est, nil); err != nil || d.Wait {
		t.Fatalf("the render: %+v, %v", d, err)
	}
	recordFolded(t, h, vr, "job-veo")
	// The render is gone (finalizer stripped, deleted); its job ends: 40 s, no credits reported.
	if err := h.server.Delete(t.Context(), vr); err != nil {
		t.Fatal(err)
	}
	jobs := &fakeJobs{ends: map[string]*JobEnd{"job-veo": {Completed: true, Seconds: 40}}}
	clk := clocktesting.NewFakeClock(time.Now().Add(2 * time.Minute))
	_, reconcile := goneJobsController(t, h, clk, jobs, 24*time.Hour)
	reconcile()
	reconcile()
	b := h.budget(t)
	if len(b.Status.Reservations) != 0 || b.Status.Used.RenderSeconds != 40 {
		t.Fatalf("control: the gone render's job should be charged its 40 s: reservations %+v, used %+v", b.Status.Reservations, b.Status.Used)
	}
	if b.Status.Used.UnreportedCreditRenders != 1 {
		t.Errorf("a render that animated its slides with veo was charged with used.unreportedCreditRenders %d, want 1: "+
			"the reservation does not keep the unreported flag", b.Status.Used.UnreportedCreditRenders)
	}
	if c := meta.FindStatusCondition(b.Status.Conditions, string(videov1alpha1.ConditionCreditsUnaccounted)); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("CreditsUnaccounted is %+v after a veo render was paid: the budget says used.aiCredits holds every credit", c)
	}
}

// avatarVideo is a story read by an AI voice, with an AI avatar presenting it.
func avatarVideo() *videov1alpha1.StoryboardRequest {
	return &videov1alpha1.StoryboardRequest{VideoName: "presenter",
		VoiceOver: &videov1alpha1.VoiceOver{Enabled: true, AIVoices: []videov1alpha1.AIVoice{{Speaker: "Matthew"}}},
		Avatar:    &videov1alpha1.Avatar{AvatarID: "av-1"},
		Scenes:    []videov1alpha1.Scene{{Story: ptr.To("Hello and welcome to our quarterly update.")}}}
}

// break-mid (estimates that are wrong): the service's interface says "AI credits are one currency
// for AI image generation, AI video generation and AI avatars" (and its credit ledger names "AI
// avatar" as a source), while a job answer reports aiCreditsUsed "only when the video includes
// scenes with aiVisual". A render with an AI avatar therefore consumes credits no answer reports,
// like veo slides. bound.For looks only for aiVisual, veo slides and payloadUrl
// (internal/bound), so an avatar render is estimated to consume none: under maxAICredits twenty
// of them run at once (the "one at a time" rule does not hold them) and, charged, none is counted
// in used.unreportedCreditRenders.
func TestBreakMidAvatarRendersConsumeCreditsButRunTogetherUnderMaxAICredits(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxAICredits: ptr.To(resource.MustParse("10"))})
	close(h.hold)
	est := bound.For(avatarVideo())
	admitted := 0
	for i := range 5 {
		d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", est, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Wait {
			admitted++
		}
	}
	if admitted != 1 {
		t.Errorf("%d renders with an AI avatar admitted at once under maxAICredits 10 (estimate %+v): "+
			"renders that may consume credits must run one at a time", admitted, est)
	}
	if !est.Unreported {
		t.Errorf("an avatar render's estimate %+v does not say it consumes credits no job answer reports: "+
			"charged, it is not counted in used.unreportedCreditRenders and CreditsUnaccounted stays absent", est)
	}
}

// break-mid (estimates that are wrong): templateId is "template (or existing project) id"
// (interface, StoryboardRequest), so a render with templateId may render the content of an
// existing project, which the operator does not see. A project render is estimated on the safe
// side (Credits: "its content is not known to the operator"), and payloadUrl too, but a request
// with templateId is only made Unbounded (internal/bound): under maxAICredits, renders of a
// stored project passed as templateId run all at once, each consuming what its AI scenes cost.
func TestBreakMidTemplateRendersOfAProjectRunTogetherUnderMaxAICredits(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxAICredits: ptr.To(resource.MustParse("10"))})
	close(h.hold)
	est := bound.For(&videov1alpha1.StoryboardRequest{VideoName: "from-project", TemplateID: ptr.To("3f1c9a2e-project")})
	if project := bound.For(nil); !project.Credits {
		t.Fatalf("control: a project render is estimated %+v", project)
	}
	admitted := 0
	for i := range 5 {
		d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", est, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Wait {
			admitted++
		}
	}
	if admitted != 1 {
		t.Errorf("%d renders of an existing project (templateId) admitted at once under maxAICredits 10 (estimate %+v): "+
			"a render whose content the operator does not see may consume credits and must run alone", admitted, est)
	}
}

// break-mid (credits): docs/spend-guard.md counts the credits a preview reports toward
// maxAICredits ("Credits of previews count toward maxAICredits"). Once maxAICredits is reached,
// nothing that may consume credits is to be paid; but exhausted() checks only maxPreviews for a
// preview (limits.go:209-213) and a preview's estimate is always zero, so previews, with aiVisual
// scenes whose answers report credits, are paid without end past the limit.
func TestBreakMidPreviewsArePaidPastAReachedMaxAICredits(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxAICredits: ptr.To(resource.MustParse("10"))})
	close(h.hold)
	// A preview that reported 10 credits reached the limit.
	if err := h.g.Charge(t.Context(), "team-a", JobCharge{JobID: "preview-0", Credits: ptr.To(resource.MustParse("10"))}); err != nil {
		t.Fatal(err)
	}
	b := h.budget(t)
	if b.Status.Used.AICredits == nil || b.Status.Used.AICredits.Cmp(resource.MustParse("10")) != 0 {
		t.Fatalf("control: used %+v", b.Status.Used)
	}
	// A render waits: the limit is reached.
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(0), "a", "", bound.Estimate{Seconds: 10, Credits: true}, nil); err != nil || !d.Wait {
		t.Fatalf("control: a render that may consume credits admitted past maxAICredits: %+v %v", d, err)
	}
	// Previews with an AI background: their answers report the credits they consume.
	est := bound.Preview(&videov1alpha1.StoryboardRequest{VideoName: "ai", Scenes: []videov1alpha1.Scene{
		{Story: ptr.To("word"), Background: &videov1alpha1.Background{AIVisual: &videov1alpha1.AIVisual{Model: "flux-schnell"}}}}})
	paid := 0
	for i := range 3 {
		sb := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprintf("sb-%d", i))}}
		d, err := h.g.reserve(t.Context(), kindStoryboard, sb, "a", "", est, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Wait {
			paid++
		}
	}
	if paid != 0 {
		t.Errorf("%d previews admitted with maxAICredits 10 reached by previews' credits: their credits pass the limit without bound", paid)
	}
	// A preview that consumes no credits is not held back by maxAICredits.
	plain := &videov1alpha1.VideoStoryboard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "plain", UID: "sb-plain"}}
	if d, err := h.g.reserve(t.Context(), kindStoryboard, plain,
		"a", "", bound.Preview(&videov1alpha1.StoryboardRequest{VideoName: "plain", Scenes: []videov1alpha1.Scene{{Story: ptr.To("word")}}}), nil); err != nil || d.Wait {
		t.Errorf("a preview without AI visuals waits on a reached maxAICredits: %+v %v", d, err)
	}
}

// break-mid (two managers by mistake over one API server): a render's reservation written ahead
// (a grant) is kept only by the VideoBudget controller of the process that wrote it. The other
// manager's controller sees a reservation older than grace with no submission and releases it.
// takeGrant then counts the reservation held because its write landed on this budget
// (grant.go:279, held := written == b.UID) although the cache shows it gone, and the render pays
// with no reservation at all: under maxRenders 1 the other manager admits a second render in the
// room, and the fold of the first render's recorded job finds no reservation to count (its job is
// never counted).
func TestBreakMidASecondManagersReleaseIsPaidOnByTheGrantHolder(t *testing.T) {
	vr := batchRender(1)
	other := batchRender(2)
	h := gatheredHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)}, vr, other)
	reservedLongAgo(t, h) // the render waits for its key's call budget, longer than the grace

	// The second manager: its own guard and VideoBudget controller over the same API server.
	g2 := New(h.server, h.server, clocktesting.NewFakeClock(time.Now()), 10*time.Second, NewLedgers("ops"))
	r2 := NewReconciler(ReconcilerOptions{Client: h.server, Reader: h.server, Clock: clocktesting.NewFakeClock(time.Now()),
		Grace: time.Minute, Recheck: time.Hour, Retry: time.Second, Ledgers: g2.ledgers, Guard: g2})
	reconcileWith(t, r2)
	if holdsUnsent(t, h, vr) {
		t.Fatal("control: the second manager's controller did not release the reservation it does not know")
	}

	paid := 0
	d, err := h.g.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: vr, Attempt: "a1", Est: bound.Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Wait {
		paid++
		if !holdsUnsent(t, h, vr) {
			t.Errorf("render 1 is admitted to pay while the budget holds no reservation for it")
		}
	}
	d2, err := g2.Reserve(t.Context(), Submission{Kind: "VideoRender", Obj: other, Attempt: "b1", Est: bound.Estimate{Seconds: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !d2.Wait {
		paid++
	}
	if paid > 1 {
		t.Errorf("%d renders paid under maxRenders 1 (budget %+v)", paid, h.budget(t).Status.Reservations)
	}
	// Every paid render is counted once its job id is recorded: its manager's next budget write
	// folds it.
	if !d.Wait {
		recordJob(t, h, vr, "job-1", h.g.clock.Now())
		opsFold(t, h.g)
	}
	if !d2.Wait {
		recordJob(t, h, other, "job-2", g2.clock.Now())
		opsFold(t, g2)
	}
	if b := h.budget(t); b.Status.Used.Renders != int64(paid) {
		t.Errorf("%d render(s) paid, used.renders %d: a render paid without a reservation is never counted", paid, b.Status.Used.Renders)
	}
}

// break-mid (a count landing just after a roll-over): a render is counted "when its job id is
// recorded" (docs/spend-guard.md, "Usage is a function of the charges and the period"; RollPeriod:
// reservations "count in the period their job is recorded in"). The fold that counts it rides
// with a later budget write (the next guard write, or the controller's once the record is foldAge
// old). Were it counted in whatever period that write falls in, a render whose job was recorded
// at 23:59:58 on the last day of a month would be counted in the next month: that month would
// read "1 of 1 renders used" with no render submitted in it, and its first render wait a whole
// month.
func TestBreakMidARenderRecordedBeforeTheRollOverIsCountedInTheNextPeriod(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](1)})
	close(h.hold)
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 31, 23, 59, 57, 0, time.UTC))
	h.g.clock = clk
	vr := batchRender(0)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
		t.Fatalf("the December render: %+v %v", d, err)
	}
	// Its job is recorded in December (23:59:58); the fold rides with the next write, after
	// midnight.
	recordJob(t, h, vr, "job-dec", time.Date(2026, 12, 31, 23, 59, 58, 0, time.UTC))
	clk.SetTime(time.Date(2027, 1, 1, 0, 0, 2, 0, time.UTC))
	opsFold(t, h.g)
	b := h.budget(t)
	if len(b.Status.Reservations) != 1 || b.Status.Reservations[0].JobID != "job-dec" {
		t.Fatalf("control: the write after midnight should fold the December job: reservations %+v", b.Status.Reservations)
	}
	if b.Status.PeriodStart == nil || b.Status.PeriodStart.Month() != time.January {
		t.Fatalf("control: the budget's period %v", b.Status.PeriodStart)
	}
	if b.Status.Used.Renders != 0 {
		t.Errorf("January used.renders = %d though no render was submitted in January (the one counted was recorded on 31 December)",
			b.Status.Used.Renders)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(1), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || d.Wait {
		t.Errorf("January's first render waits under maxRenders 1: %+v %v", d, err)
	}
}

// Held: concurrent reservations from many goroutines of one namespace while maxRenders is lowered
// mid-burst never admit more than the limit in force when each was decided, and at most one
// render without upper bound is admitted under maxRenderSeconds. Run with -race.
func TestBreakMidConcurrentReservesWhileTheLimitIsLoweredStayWithinIt(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](8), MaxRenderSeconds: ptr.To[int64](100000)})
	close(h.hold)
	h.pump(t)
	const n = 40
	var mu sync.Mutex
	var admittedUnbounded int
	var admitted []int
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			est := bound.Estimate{Seconds: 10, Unbounded: i%2 == 0}
			for {
				d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(i), "a", "", est, nil)
				if err == ErrBusy {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				if !d.Wait {
					mu.Lock()
					admitted = append(admitted, i)
					if est.Unbounded {
						admittedUnbounded++
					}
					mu.Unlock()
				}
				return
			}
		}()
	}
	close(start)
	// The limit is lowered to 3 mid-burst ("stop paying").
	setSpec(t, h, func(s *videov1alpha1.VideoBudgetSpec) { s.MaxRenders = ptr.To[int64](3) })
	wg.Wait()
	b := h.budget(t)
	if len(admitted) > 8 || int64(len(b.Status.Reservations)) != int64(len(admitted)) {
		t.Errorf("%d admitted, %d reservations", len(admitted), len(b.Status.Reservations))
	}
	if admittedUnbounded > 1 {
		t.Errorf("%d renders without upper bound admitted at once under maxRenderSeconds", admittedUnbounded)
	}
	// After the lowering, nothing more is admitted.
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(n+1), "a", "", bound.Estimate{Seconds: 10}, nil); err != nil || (!d.Wait && len(admitted) >= 3) {
		t.Errorf("a render admitted after maxRenders was lowered to 3 with %d admitted: %+v %v", len(admitted), d, err)
	}
}

// setSpec changes the harness's budget's spec (generation moves).
// A write of its status that lands meanwhile makes it read the budget again (a person's kubectl
// edit does the same).
func setSpec(t *testing.T, h *batchHarness, edit func(*videov1alpha1.VideoBudgetSpec)) {
	t.Helper()
	for {
		b := h.budget(t)
		edit(&b.Spec)
		b.Generation++
		err := h.server.Update(t.Context(), b)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
}

// Held: Monthly, then Weekly, the week rolls over (inside the month), a job that started in the
// previous week ends just after the roll-over, then Monthly again: the month's usage never goes
// down and holds every charge; the new week starts from what was charged in it.
func TestBreakMidPeriodChangesAroundAWeeklyRollOverKeepTheMonthsUsage(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](100000)})
	close(h.hold)
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 8, 23, 59, 50, 0, time.UTC)) // a Sunday
	h.g.clock = clk
	pay := func(i int, secs int64) {
		t.Helper()
		vr := batchRender(i)
		if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: secs}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v %v", i, d, err)
		}
		recordFolded(t, h, vr, fmt.Sprintf("job-%d", i))
	}
	// The job's end, recorded now, folded by the next write.
	charge := func(i int, secs int64) {
		t.Helper()
		endFolded(t, h, batchRender(i), secs)
	}
	month := func() int64 {
		b := h.budget(t)
		return window(b, videov1alpha1.BudgetPeriodMonthly).Used.RenderSeconds
	}
	pay(0, 100)
	charge(0, 100)
	pay(1, 100) // runs over the week's end
	last := month()
	setSpec(t, h, func(s *videov1alpha1.VideoBudgetSpec) { s.Period = videov1alpha1.BudgetPeriodWeekly })
	pay(2, 10)
	if got := h.budget(t).Status.Used.RenderSeconds; got != 100 {
		t.Errorf("weekly usage %d s after the change, want the week's 100 s", got)
	}
	clk.SetTime(time.Date(2026, 11, 9, 0, 0, 5, 0, time.UTC)) // Monday: a new week, the same month
	charge(1, 70)                                             // started last week, ends now
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 70 || b.Status.PeriodStart.Day() != 9 {
		t.Errorf("the new week's usage %d s from %v, want 70 s from 9 November", b.Status.Used.RenderSeconds, b.Status.PeriodStart)
	}
	if m := month(); m < last || m != 170 {
		t.Errorf("the month's usage went from %d s to %d s, want 170 s", last, m)
	}
	setSpec(t, h, func(s *videov1alpha1.VideoBudgetSpec) { s.Period = videov1alpha1.BudgetPeriodMonthly })
	charge(2, 10)
	if got := h.budget(t).Status.Used.RenderSeconds; got != 180 {
		t.Errorf("monthly usage %d s after Weekly and back, want every charge of November: 180 s", got)
	}
}

// Held: maxRenderSeconds removed while a render without upper bound runs, a second one admitted
// meanwhile (nothing limits it), then the limit added again: both still hold their reservations
// (with their flags), so a third one waits until they end, and the sum of what they cost is
// charged.
func TestBreakMidASecondsLimitRemovedAndAddedAgainStillHoldsUnboundedRendersOneAtATime(t *testing.T) {
	// The renders exist; each records its job once paid, which a budget write folds.
	var objs []client.Object
	for i := range 4 {
		objs = append(objs, batchRender(i))
	}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](600)}, objs...)
	close(h.hold)
	blog := bound.Estimate{Seconds: bound.DefaultSceneSeconds, Unbounded: true}
	pay := func(i int) Decision {
		t.Helper()
		vr := batchRender(i)
		d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", blog, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Wait {
			recordFolded(t, h, vr, fmt.Sprintf("job-%d", i))
		}
		return d
	}
	if d := pay(0); d.Wait {
		t.Fatalf("the first: %+v", d)
	}
	if d := pay(1); !d.Wait {
		t.Fatalf("control: a second render without upper bound admitted beside the first: %+v", d)
	}
	setSpec(t, h, func(s *videov1alpha1.VideoBudgetSpec) { s.MaxRenderSeconds = nil })
	if d := pay(1); d.Wait {
		t.Fatalf("without a seconds limit the second render waits: %+v", d)
	}
	setSpec(t, h, func(s *videov1alpha1.VideoBudgetSpec) { s.MaxRenderSeconds = ptr.To[int64](600) })
	reconcileBudget(t, h, 1)
	if b := h.budget(t); b.Status.Reserved.UnboundedRenders != 2 {
		t.Errorf("reserved.unboundedRenders %d with two such renders running, want 2", b.Status.Reserved.UnboundedRenders)
	}
	if d := pay(2); !d.Wait {
		t.Errorf("a third render without upper bound admitted while two run under maxRenderSeconds: %+v", d)
	}
	for i, secs := range []int64{450, 300} {
		endFolded(t, h, batchRender(i), secs)
	}
	if b := h.budget(t); b.Status.Used.RenderSeconds != 750 || b.Status.Reserved.UnboundedRenders != 0 {
		t.Errorf("used %d s, reserved %+v after both ended, want 750 s and nothing reserved", b.Status.Used.RenderSeconds, b.Status.Reserved)
	}
	if d := pay(3); !d.Wait {
		t.Errorf("a render admitted with 750 s used of 600: %+v", d)
	}
}

// Held: many goroutines of one namespace reserve and, once admitted, record their job and then
// its end in their render's status, at once, with the limit raised mid-burst; the namespace's
// budget writes (the other renders' reservations) fold what was recorded before them, and the
// VideoBudget controller what none carried: every admitted render is counted once, every end is
// posted once, no reservation is left behind, and no more renders are admitted than the limit in
// force. Run with -race.
func TestBreakMidConcurrentReservesRecordsAndEndsCountEachRenderOnce(t *testing.T) {
	const n = 24
	var objs []client.Object
	for i := range n {
		objs = append(objs, batchRender(i))
	}
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](6), MaxRenderSeconds: ptr.To[int64](1_000_000)}, objs...)
	close(h.hold)
	h.pump(t)
	var mu sync.Mutex
	admitted := map[int]bool{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			vr := batchRender(i)
			for try := 0; ; try++ {
				d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 10}, nil)
				if errors.Is(err, ErrBusy) && try < 50 {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				if d.Wait {
					return
				}
				break
			}
			mu.Lock()
			admitted[i] = true
			mu.Unlock()
			// Its job, then its end (7 s), each in a status write of its own; nothing tells the
			// budget.
			at := h.g.clock.Now()
			record := func(edit func(st *videov1alpha1.VideoRenderStatus)) error {
				cur := &videov1alpha1.VideoRender{}
				if err := h.server.Get(t.Context(), client.ObjectKeyFromObject(vr), cur); err != nil {
					return err
				}
				edit(&cur.Status)
				return h.server.Update(t.Context(), cur)
			}
			if err := record(func(st *videov1alpha1.VideoRenderStatus) {
				st.JobID, st.SubmittedAt = fmt.Sprintf("job-%d", i), &metav1.Time{Time: at}
			}); err != nil {
				t.Error(err)
				return
			}
			if err := record(func(st *videov1alpha1.VideoRenderStatus) {
				st.CompletedAt, st.VideoDuration = &metav1.Time{Time: at}, &metav1.Duration{Duration: 7 * time.Second}
			}); err != nil {
				t.Error(err)
			}
		}()
	}
	close(start)
	setSpec(t, h, func(s *videov1alpha1.VideoBudgetSpec) { s.MaxRenders = ptr.To[int64](9) })
	wg.Wait()
	// What no guard write carried, the VideoBudget controller folds once it is foldAge old.
	clk := clocktesting.NewFakeClock(time.Now().Add(foldAge))
	reconcileWith(t, opsController(h, h.g, clk, nil))
	b := h.budget(t)
	got := int64(len(admitted))
	if got > 9 || got < 6 {
		t.Errorf("%d renders admitted under maxRenders 6, then 9", got)
	}
	if b.Status.Used.Renders != got || b.Status.Used.RenderSeconds != 7*got || len(b.Status.Reservations) != 0 || b.Status.ChargeCount != got {
		t.Errorf("%d admitted: used %+v, charge count %d, reservations %+v; want each counted and charged once, none left",
			got, b.Status.Used, b.Status.ChargeCount, b.Status.Reservations)
	}
}

// The seconds of a job that ended on 31 December count in December, though its fold lands after
// midnight (the end its render's status records rides with a later write): January's usage holds
// only what ended in January.
func TestAChargeLandingAfterTheRollOverCountsInThePeriodItsJobEndedIn(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](1000)})
	close(h.hold)
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC))
	h.g.clock = clk
	for i, job := range []string{"job-dec", "job-jan"} {
		vr := batchRender(i)
		if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 100}, nil); err != nil || d.Wait {
			t.Fatalf("render %d: %+v %v", i, d, err)
		}
		recordFolded(t, h, vr, job)
	}
	// job-dec ends at 23:59:58 and job-jan at 00:00:02; the write that folds both comes after
	// midnight.
	recordEnd(t, h, batchRender(0), 90, time.Date(2026, 12, 31, 23, 59, 58, 0, time.UTC))
	clk.SetTime(time.Date(2027, 1, 1, 0, 0, 2, 0, time.UTC))
	recordEnd(t, h, batchRender(1), 40, clk.Now())
	opsFold(t, h.g)
	b := h.budget(t)
	if b.Status.PeriodStart == nil || b.Status.PeriodStart.Month() != time.January {
		t.Fatalf("control: the budget's period %v", b.Status.PeriodStart)
	}
	if b.Status.Used.RenderSeconds != 40 || len(b.Status.Reservations) != 0 {
		t.Errorf("January used %d s with %d reservations left; want the 40 s of the job that ended in January, none left",
			b.Status.Used.RenderSeconds, len(b.Status.Reservations))
	}
}
