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
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// realDecodeHarness is newBatchHarness whose budget status patches answer as a real API client
// does. controller-runtime's typed client ends Patch with Do(ctx).Into(obj), and apimachinery's
// JSON serializer unmarshals the answer INTO the object passed, without zeroing it
// (runtime.UseOrCreateObject returns `into`; sigs.k8s.io/json decodes a JSON array element by
// element into the slice's existing elements, and leaves a field the answer omits as it was).
// The fake client zeroes the object first (fake/client.go zero(obj)), which hides what the
// answer leaves behind in the object the caller passed.
func realDecodeHarness(t *testing.T, spec videov1alpha1.VideoBudgetSpec, objs ...client.Object) *batchHarness {
	t.Helper()
	h := newBatchHarness(t, spec, objs...)
	close(h.hold)
	scheme := h.server.Scheme()
	ser := k8sjson.NewSerializerWithOptions(k8sjson.DefaultMetaFactory, scheme, scheme, k8sjson.SerializerOptions{})
	c := interceptor.NewClient(h.server.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			b, ok := obj.(*videov1alpha1.VideoBudget)
			if !ok {
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			}
			h.writes.Add(1)
			data, err := patch.Data(obj)
			if err != nil {
				return err
			}
			answer := &videov1alpha1.VideoBudget{ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: b.Name}}
			if err := c.SubResource(sub).Patch(ctx, answer, client.RawPatch(patch.Type(), data), opts...); err != nil {
				return err
			}
			answer.APIVersion, answer.Kind = videov1alpha1.GroupVersion.String(), "VideoBudget"
			raw, err := json.Marshal(answer)
			if err != nil {
				return err
			}
			// What the REST client does with the response body: decode into the caller's object.
			_, _, err = ser.Decode(raw, nil, obj)
			return err
		},
	})
	h.g = New(c, c, clocktesting.NewFakeClock(time.Now()), 10*time.Second, NewLedgers("ops"))
	return h
}

// Scenario: the upgrade. A budget written by the previous manager keeps its running jobs as
// objects in status.reservations. The new manager's first write that changes neither list (here
// the AI credits of a preview; equally a period roll-over or a condition) sends neither list, as
// designed, and the API server answers with the running jobs as objects; patchBudgetStatus
// decodes that answer into its compacted copy, whose runningJobs (the same jobs, as lines) the
// answer does not mention and so stay. Expanded, every running job is there twice, and that copy
// is the guard's next starting point (slot.latest; the controller's copy goes there too through
// Guard.wrote). The next reservation writes both lists whole: every running job is now stored
// twice. Money and status: status.reserved counts each running job's estimate twice (the budget
// says 65 s reserved for 35 s of renders and refuses renders it has room for), kubectl video
// budget lists each job twice, and the 1000-reservation bound is reached at 500.
func TestBreak37rUpgradedBudgetsRunningJobsAreDoubledByAnUnrelatedWrite(t *testing.T) {
	h := realDecodeHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](1000)})
	b := h.budget(t)
	b.Status.Reservations = []videov1alpha1.BudgetReservation{runningReservation(1), runningReservation(2)} // 10 s and 20 s
	b.Status.RunningReserved = true
	recountReserved(b)
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}

	// A write that changes neither list: a preview's AI credits.
	credits := resource.MustParse("1")
	if err := h.g.Charge(t.Context(), "team-a", JobCharge{JobID: "preview-job", Credits: &credits}); err != nil {
		t.Fatal(err)
	}
	// The next render's reservation.
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(5), "a", "", bound.Estimate{Seconds: 5}, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v, %v", d, err)
	}

	got := h.budget(t)
	jobs := map[string]int{}
	for _, r := range got.Status.Reservations {
		if r.JobID != "" {
			jobs[r.JobID]++
		}
	}
	if len(got.Status.Reservations) != 3 || jobs["job-1"] != 1 || jobs["job-2"] != 1 || got.Status.Reserved.RenderSeconds != 35 {
		t.Fatalf("want job-1, job-2 and render 5's submission once each, 35 s reserved; stored: runningJobs %q, %d reservations (jobs %v), reserved %d s",
			got.Status.RunningJobs, len(got.Status.Reservations), jobs, got.Status.Reserved.RenderSeconds)
	}
}

// Scenario: the same upgrade, where the previous manager's list holds a running job with another
// Secret's key (it stays an object) after one with the default key (it becomes a line). The
// compacted copy's reservations are [the keyed job]; the answer's are [default-key job, keyed
// job], decoded element by element into that slice: the default-key job's element is the keyed
// job's struct with the answer's fields written over it, and the answer has no apiKeySecretRef
// for it, so it keeps team-key. The next list write stores job-1 with team-key. Money: once
// job-1's render is gone (finalizer stripped), the VideoBudget controller reads job-1's end with
// the wrong account's key; a service that does not know the job there makes it charge job-1's
// estimate, not what the job cost.
func TestBreak37rUpgradedBudgetsRunningJobTakesAnotherJobsKey(t *testing.T) {
	h := realDecodeHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](1000)})
	b := h.budget(t)
	keyed := runningReservation(3)
	keyed.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "team-key", Key: "k"}
	b.Status.Reservations = []videov1alpha1.BudgetReservation{runningReservation(1), keyed}
	b.Status.RunningReserved = true
	recountReserved(b)
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}
	credits := resource.MustParse("1")
	if err := h.g.Charge(t.Context(), "team-a", JobCharge{JobID: "preview-job", Credits: &credits}); err != nil {
		t.Fatal(err)
	}
	if d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(5), "a", "", bound.Estimate{Seconds: 5}, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v, %v", d, err)
	}
	for _, r := range h.budget(t).Status.Reservations {
		if r.JobID == "job-1" && r.APIKeySecretRef != nil {
			t.Fatalf("job-1 (the default key) is stored with %s's key: %+v", r.APIKeySecretRef.Name, r)
		}
	}
}

// crdCheckedHarness is newBatchHarness whose budget status patches are refused as the API server
// refuses them under the CRD (config/crd/bases/video.videoops.io_videobudgets.yaml): each object
// of status.reservations requires kind, name (minLength 1), uid (minLength 1), attemptId and
// reservedAt; jobId is at most 100 characters.
func crdCheckedHarness(t *testing.T, spec videov1alpha1.VideoBudgetSpec, objs ...client.Object) *batchHarness {
	t.Helper()
	h := newBatchHarness(t, spec, objs...)
	close(h.hold)
	h.onWrite = nil
	c := interceptor.NewClient(h.server.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*videov1alpha1.VideoBudget); ok {
				h.writes.Add(1)
				data, err := patch.Data(obj)
				if err != nil {
					return err
				}
				var p struct {
					Status struct {
						Reservations []map[string]any `json:"reservations"`
					} `json:"status"`
				}
				if err := json.Unmarshal(data, &p); err != nil {
					return err
				}
				var errs field.ErrorList
				for i, r := range p.Status.Reservations {
					at := field.NewPath("status", "reservations").Index(i)
					for _, f := range []string{"kind", "name", "uid", "attemptId", "reservedAt"} {
						if v, ok := r[f]; !ok || v == nil || v == "" {
							errs = append(errs, field.Required(at.Child(f), ""))
						}
					}
					if id, _ := r["jobId"].(string); len(id) > 100 {
						errs = append(errs, field.TooLong(at.Child("jobId"), id, 100))
					}
				}
				if len(errs) > 0 {
					return apierrors.NewInvalid(videov1alpha1.GroupVersion.WithKind("VideoBudget").GroupKind(), obj.GetName(), errs)
				}
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	h.g = New(c, c, clocktesting.NewFakeClock(time.Now()), 10*time.Second, NewLedgers("ops"))
	return h
}

// Scenario: a line of status.runningJobs that cannot be read (commit 0e02e09's own case, "written
// by hand: job-9"), whose job still runs. AllReservations turns it into a reservation with no
// name, no uid and no reservedAt; CompactRunningJobs cannot make it a line again (RunningJobLine
// wants a name and a uid), so every write that sends the lists sends it as an object of
// status.reservations, which the CRD refuses (name, uid and reservedAt are required). Status and
// stall: while that job runs (or, its end unreadable, until --job-deadline, forever with none),
// no render of the namespace could reserve, and no fold or charge that moves a reservation could
// be written: the namespace would stall, each of its renders failing at the budget write.
func TestBreak37rAnUnreadableLineMakesEveryReservationWriteInvalid(t *testing.T) {
	h := crdCheckedHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenders: ptr.To[int64](10)})
	b := h.budget(t)
	b.Status.RunningJobs = []string{"written by hand: job-9"}
	if err := h.setState(t, b); err != nil {
		t.Fatal(err)
	}
	d, err := h.g.reserve(t.Context(), "VideoRender", batchRender(5), "a", "", bound.Estimate{Seconds: 5}, nil)
	if err != nil || d.Wait {
		t.Fatalf("a namespace with room for 9 more renders refuses one: %+v, %v", d, err)
	}
}

// The documented rollback (docs/release.md "Rolling back": roll the manager back, keep the
// CRDs) past the release that keeps running jobs as lines: the older manager's type has no
// runningJobs, so it does not charge the jobs running at the rollback (it finds no pending
// reservation for them; CHANGELOG.md says so and to let running jobs end first). What holds:
// its writes, merge patches that never name runningJobs, leave the lines on the API server, and
// this manager, rolled forward, folds the end each of those renders recorded once, what the job
// cost.
func TestBreak37rARollForwardChargesTheJobsRunningAtARollback(t *testing.T) {
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](1000)})
	close(h.hold)
	vr := batchRender(1)
	if d, err := h.g.reserve(t.Context(), "VideoRender", vr, "a", "", bound.Estimate{Seconds: 30}, nil); err != nil || d.Wait {
		t.Fatalf("reserve: %+v, %v", d, err)
	}
	recordFolded(t, h, vr, "job-1")
	// The older manager's write: a merge patch of the fields its type has (another render's
	// reservation), which does not name runningJobs.
	var old videov1alpha1.VideoBudget
	if err := h.server.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: videov1alpha1.VideoBudgetName}, &old); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"status":{"reservations":[{"kind":"VideoRender","name":"r2","uid":"uid-2","attemptId":"b","reservedAt":"2026-11-27T10:00:00Z","estimatedSeconds":30}]}}`)
	if err := h.server.Status().Patch(t.Context(), &old, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	if len(old.Status.RunningJobs) != 1 {
		t.Fatalf("the older manager's write dropped job-1's line: %+v", old.Status)
	}
	old.Status.ExpandRunningJobs()
	writeOlderLedger(t, h.server, &old) // its copy of the budget, after the write
	// job-1 ends (400 s), recorded in its render's status. Rolled forward: the newer manager's
	// writes fold it into job-1's line, once however many come.
	recordEnd(t, h, vr, 400, h.g.clock.Now())
	g := New(h.server, h.server, clocktesting.NewFakeClock(time.Now()), 10*time.Second, NewLedgers("ops"))
	opsFold(t, g)
	opsFold(t, g)
	b := h.budget(t)
	if b.Status.Used.RenderSeconds != 400 || len(b.Status.Reservations) != 1 || b.Status.Reservations[0].UID != "uid-2" {
		t.Fatalf("want job-1 charged 400 s once and render 2's reservation kept: used %d s, reservations %+v", b.Status.Used.RenderSeconds, b.Status.Reservations)
	}
}
