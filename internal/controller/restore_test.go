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

package controller

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
)

// Issue 22, "Never pay twice at the edges of an object's life" (docs/architecture.md "The record
// travels with the object"): restores, no-op edits, key changes and a 409 that proves an earlier
// job. Each case of the "Done when" that concerns the record of a paid job is one spec,
// named after it. The manager runs throughout, as in a cluster: a restore happens under its eyes.
var _ = Describe("The record travels with the object", func() {
	var h *harness

	// settle is long enough for a render that would pay again to have done so: several of the
	// harness's poll intervals (PollMax 60 ms) and backoffs (BackoffMax 200 ms).
	const settle = 1500 * time.Millisecond

	start := func(opts simulator.Options) {
		h = newHarness(opts)
		h.createSecret(testAPIKey)
		h.startManager()
	}
	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak(otherAccountKey)
		}
	})

	// paidCalls counts every call to a paid endpoint, accepted or not.
	paidCalls := func() int {
		return h.sim.Calls(simulator.EndpointCreateStoryboard) + h.sim.Calls(simulator.EndpointRenderStoryboard) +
			h.sim.Calls(simulator.EndpointRenderProject)
	}

	It("a restore without status pays nothing and brings back the original job's outputs", func() {
		start(simulator.Options{})
		vr := storyRender(h.ns, "restored", "Restored")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		before := recordedRender(vr)
		Expect(paidCalls()).To(Equal(1))

		By("deleting it and creating it again from its JSON without status, uid or resourceVersion")
		restoreWithoutStatus(before)

		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.JobID).To(Equal(before.Status.JobID))
			g.Expect(got.Status.Outputs).To(Equal(before.Status.Outputs))
			g.Expect(got.Status.RequestDigest).To(Equal(before.Status.RequestDigest))
		}).Should(Succeed())
		Consistently(paidCalls, settle).Should(Equal(1), "the restored object adopted its job")
		Eventually(func() []string { return h.eventReasons("restored") }).Should(ContainElement("Adopted"))
	})

	It("a restore with status of an object edited once pays nothing and keeps the current outputs", func() {
		start(simulator.Options{})
		vr := storyRender(h.ns, "edited", "Edited")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		updateObject(vr, func(o client.Object) {
			o.(*videov1alpha1.VideoRender).Spec.Storyboard.Scenes[0].Story = ptrTo("The second version. It was paid for too.")
		})
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Generation).To(Equal(int64(2)))
			g.Expect(readyFor(&got.Status.JobStatus, 2)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		before := recordedRender(vr)
		Expect(before.Status.JobGeneration).To(Equal(int64(2)))
		Expect(paidCalls()).To(Equal(2))

		By("restoring it as Velero does: create (generation 1), then write the backed-up status")
		restored := restoreWithoutStatus(before)
		Expect(restored.GetGeneration()).To(Equal(int64(1)))
		writeStatus(restored, before)

		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Generation).To(Equal(int64(1)))
			g.Expect(readyFor(&got.Status.JobStatus, 1)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.JobID).To(Equal(before.Status.JobID))
			g.Expect(got.Status.Outputs).To(Equal(before.Status.Outputs), "the current outputs stay current")
			g.Expect(got.Status.JobGeneration).To(Equal(int64(1)), "the job is the current generation's: its request is")
		}).Should(Succeed())
		Consistently(paidCalls, settle).Should(Equal(2), "no third job")
		Expect(getRender(vr)(Default).Status.Previous).NotTo(BeNil(), "the first job's outputs are still kept")
	})

	It("a storyboardRef render restored with its VideoStoryboard pays nothing", func() {
		start(simulator.Options{})
		sb := storyPreview(h.ns, "reviewed", "Reviewed")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)
		vr := refRender(h.ns, "reviewed-render", "reviewed", "approvedDigest: "+preview.Digest)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		Eventually(func(g Gomega) {
			g.Expect(getStoryboard(sb)(g).GetAnnotations()).To(HaveKey(videov1alpha1.AnnotationJobID))
		}).Should(Succeed())
		sbBefore := getStoryboard(sb)(Default)
		before := recordedRender(vr)
		Expect(paidCalls()).To(Equal(2), "one preview, one render")

		By("restoring both without status, the render first")
		Expect(k8sClient.Delete(ctx, sbBefore)).To(Succeed())
		restoreWithoutStatus(before)
		restoreWithoutStatus(sbBefore)

		Eventually(func(g Gomega) {
			got := getStoryboard(sb)(g)
			g.Expect(got.Status.JobID).To(Equal(sbBefore.Status.JobID))
			g.Expect(got.Status.Preview).NotTo(BeNil())
			g.Expect(got.Status.Preview.Digest).To(Equal(preview.Digest), "the same preview, the same digest")
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.JobID).To(Equal(before.Status.JobID))
			g.Expect(got.Status.Outputs).To(Equal(before.Status.Outputs))
		}).Should(Succeed())
		Consistently(paidCalls, settle).Should(Equal(2), "neither the preview nor the render is paid again")
	})

	It("moving apiKeySecretRef to a Secret with the same key, or writing a default explicitly, pays nothing", func() {
		start(simulator.Options{})
		h.createNamedSecret("rotated", testAPIKey)
		vr := storyRender(h.ns, "same-key", "Same key")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		jobID := getRender(vr)(Default).Status.JobID

		By("moving apiKeySecretRef to another Secret holding the same key")
		setSecretRef(vr, "rotated")
		eventuallyReadyAt(vr, 2, jobID)
		Consistently(paidCalls, settle).Should(Equal(1))
		Eventually(func() []string { return h.eventReasons("same-key") }).Should(ContainElement("RequestUnchanged"))

		By("writing the default narration policy explicitly on a storyboardRef render")
		sb := storyPreview(h.ns, "reviewed", "Reviewed")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)
		ref := refRender(h.ns, "explicit-default", "reviewed", "approvedDigest: "+preview.Digest)
		Expect(k8sClient.Create(ctx, ref)).To(Succeed())
		eventuallyReady(ref)
		Expect(paidCalls()).To(Equal(3), "one render, one preview, one render of the preview")
		refJob := getRender(ref)(Default).Status.JobID
		updateObject(ref, func(o client.Object) {
			o.(*videov1alpha1.VideoRender).Spec.StoryboardRef.Narration = videov1alpha1.NarrationApproved
		})
		eventuallyReadyAt(ref, 2, refJob)
		Consistently(paidCalls, settle).Should(Equal(3))
	})

	It("a key of another account while the job runs stalls with APIKeyChanged, not Failed, and pays nothing", func() {
		start(simulator.Options{APIKeys: []string{testAPIKey, otherAccountKey}, ScopeJobsByKey: true,
			RenderDuration: 20 * time.Minute}) // 2.4 s here
		vr := storyRender(h.ns, "other-account", "Other account")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		var jobID string
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.JobID).NotTo(BeEmpty())
			g.Expect(got.Status.KeyFingerprint).NotTo(BeEmpty())
			jobID = got.Status.JobID
		}).Should(Succeed())

		By("putting another account's key into the Secret")
		setSecretValue(h.ns, videov1alpha1.DefaultAPIKeySecretName, otherAccountKey)
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonAPIKeyChanged)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.Phase).NotTo(Equal(videov1alpha1.PhaseFailed))
			g.Expect(got.Status.Failure).To(BeNil())
			g.Expect(got.Status.JobID).To(Equal(jobID), "the job is kept")
		}).Should(Succeed())
		msg := conditionOf(&getRender(vr)(Default).Status.JobStatus, videov1alpha1.ConditionStalled).Message
		Expect(msg).NotTo(ContainSubstring(videov1alpha1.AnnotationRetry), "no remedy pays again without a confirmation")
		Consistently(paidCalls, settle).Should(Equal(1))

		By("putting the submitting key back: the job is followed to its end")
		setSecretValue(h.ns, videov1alpha1.DefaultAPIKeySecretName, testAPIKey)
		eventuallyReady(vr)
		Expect(getRender(vr)(Default).Status.JobID).To(Equal(jobID))
		Expect(paidCalls()).To(Equal(1))
	})

	It("the 409 after a confirmed project resubmission pays nothing more", func() {
		project := simulator.DefaultProjects()[0].ID
		// The project render's answer is cut: the job exists, its outcome is unknown.
		start(simulator.Options{RenderDuration: time.Hour, // 7.2 s here
			Faults: simulator.Faults{TruncatedShare: 1, Endpoints: []string{apiclient.EndpointRenderProject}}})
		vr := fromYAML(&videov1alpha1.VideoRender{}, h.ns, "metadata: {name: project}\nspec: {projectId: "+project+"}")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		var attempt string
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue(), "%+v", got.Status.Conditions)
			attempt = got.Status.Submission.AttemptID
		}).Should(Succeed())
		Expect(h.sim.Calls(simulator.EndpointRenderProject)).To(Equal(1))

		By("confirming the resubmission: the service answers 409, the project is being rendered")
		h.sim.SetFaults(simulator.Faults{})
		setAnnotation(vr, videov1alpha1.AnnotationConfirmResubmit, attempt)
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonEarlierSubmissionRendering)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		Expect(h.sim.Calls(simulator.EndpointRenderProject)).To(Equal(2), "the confirmed call, answered 409")

		By("the earlier job ends: the project is not rendered a second time")
		Eventually(func() int {
			n := 0
			for _, j := range h.sim.Jobs() {
				if j.ProjectID == project && j.Status == simulator.StatusCompleted {
					n++
				}
			}
			return n
		}, within(30*time.Second)).Should(Equal(1))
		Consistently(func() int { return h.sim.Calls(simulator.EndpointRenderProject) }, settle).Should(Equal(2))
		Expect(h.sim.Jobs()).To(HaveLen(1), "one paid job")
	})
})

// An adversarial review of issue 22 (docs/architecture.md "The record travels with the object"):
// each spec is a way the record of a paid job could pay twice, pay for nothing, or stall an object
// whose request was never paid.
var _ = Describe("The record travels with the object, attacked", func() {
	var h *harness

	const settle = 1500 * time.Millisecond

	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak(otherAccountKey)
		}
	})

	paidCalls := func() int {
		return h.sim.Calls(simulator.EndpointCreateStoryboard) + h.sim.Calls(simulator.EndpointRenderStoryboard) +
			h.sim.Calls(simulator.EndpointRenderProject)
	}

	It("a copy with another request and another account's key pays for its own request instead of stalling on the copied record", func() {
		h = newHarness(simulator.Options{APIKeys: []string{testAPIKey, otherAccountKey}, ScopeJobsByKey: true})
		h.createSecret(testAPIKey)
		h.createNamedSecret("other", otherAccountKey)
		h.startManager()
		original := storyRender(h.ns, "original", "Original")
		Expect(k8sClient.Create(ctx, original)).To(Succeed())
		eventuallyReady(original)
		rec := recordedRender(original)
		Expect(paidCalls()).To(Equal(1))

		By("creating a new render from the original's YAML (annotations included), another story, another account's Secret")
		cp := storyRender(h.ns, "copy", "Copy")
		cp.Spec.Storyboard.Scenes[0].Story = ptrTo("A different video, never paid for. It must be paid once.")
		cp.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "other", Key: videov1alpha1.DefaultAPIKeySecretKey}
		cp.SetAnnotations(rec.GetAnnotations())
		Expect(k8sClient.Create(ctx, cp)).To(Succeed())

		Eventually(func(g Gomega) {
			got := getRender(cp)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.JobID).NotTo(Equal(rec.Status.JobID))
			g.Expect(got.GetAnnotations()).To(HaveKeyWithValue(videov1alpha1.AnnotationJobID, got.Status.JobID),
				"the copied record is replaced by the copy's own")
			g.Expect(got.GetAnnotations()).To(HaveKeyWithValue(videov1alpha1.AnnotationRequestDigest, got.Status.RequestDigest))
		}).Should(Succeed())
		Consistently(paidCalls, settle).Should(Equal(2), "the copy's request is paid once")
	})

	It("a record naming an unknown job of another request does not stall a request that was never paid", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.startManager()
		donor := storyRender(h.ns, "donor", "Donor")
		Expect(k8sClient.Create(ctx, donor)).To(Succeed())
		eventuallyReady(donor)
		digest := recordedRender(donor).Status.RequestDigest

		By("creating a render of another request whose annotations name a job the service does not know")
		vr := storyRender(h.ns, "forged", "Forged")
		vr.SetAnnotations(map[string]string{videov1alpha1.AnnotationJobID: "job-that-does-not-exist",
			videov1alpha1.AnnotationRequestDigest: digest})
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		Consistently(paidCalls, settle).Should(Equal(2))
	})

	It("a restore without status of a render stalled SubmissionUnknown pays nothing without a confirmation", func() {
		// The render's answer is cut: the job exists, its outcome is unknown, and the object
		// stalls until a human confirms, which may take days: a backup taken meanwhile has it.
		h = newHarness(simulator.Options{RenderDuration: time.Hour,
			Faults: simulator.Faults{TruncatedShare: 1, Endpoints: []string{simulator.EndpointRenderStoryboard}}})
		h.createSecret(testAPIKey)
		h.startManager()
		vr := storyRender(h.ns, "unknown", "Unknown")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		Expect(paidCalls()).To(Equal(1))
		h.sim.SetFaults(simulator.Faults{})

		By("restoring it without status, as Velero does by default")
		Consistently(paidCalls, settle).Should(Equal(1))
		restoreWithoutStatus(getRender(vr)(Default))
		Consistently(paidCalls, settle).Should(Equal(1), "the unknown attempt may have created a job: no second one without a confirmation")
		var restored *videov1alpha1.VideoRender
		Eventually(func(g Gomega) {
			restored = getRender(vr)(g)
			g.Expect(stalledWith(&restored.Status.JobStatus, videov1alpha1.ReasonSubmissionUnknown)).To(BeTrue(),
				"the restored object stalls again: %+v", restored.Status.Conditions)
			g.Expect(restored.Annotations).To(HaveKey(videov1alpha1.AnnotationSubmissionUnknown))
		}).Should(Succeed())

		By("a human confirms the resubmission of that attempt: exactly one more paid call")
		attempt := restored.Status.Submission.AttemptID
		Expect(restored.Annotations[videov1alpha1.AnnotationSubmissionUnknown]).To(HavePrefix(attempt + " "))
		patch := client.MergeFrom(restored.DeepCopy())
		restored.Annotations[videov1alpha1.AnnotationConfirmResubmit] = attempt
		Expect(k8sClient.Patch(ctx, restored, patch)).To(Succeed())
		Eventually(paidCalls).Should(Equal(2))
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.JobID).NotTo(BeEmpty())
			g.Expect(got.Annotations).NotTo(HaveKey(videov1alpha1.AnnotationSubmissionUnknown), "the record of the unknown attempt goes with the new job")
		}).Should(Succeed())
		Consistently(paidCalls, settle).Should(Equal(2))
	})
})

var _ = Describe("The record travels with the object, attacked in its restore order", func() {
	var h *harness

	const settle = 1500 * time.Millisecond

	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak()
		}
	})
	paidRenders := func() int { return h.sim.Calls(simulator.EndpointRenderStoryboard) }

	// Velero restores resources in alphabetical order within a priority: videorenders before
	// videostoryboards. A storyboard restored from Git moved on (another spec) is no approval,
	// and the render's finished video stays what it was.
	It("a render restored before its storyboard, which comes back with another spec, stays Ready and pays nothing", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.startManager()
		sb := storyPreview(h.ns, "reorder", "Reorder")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		first := firstPreview(sb)
		vr := refRender(h.ns, "reorder", "reorder", "approvedDigest: "+first.Digest)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		done := recordedRender(vr)
		Eventually(func(g Gomega) {
			g.Expect(getStoryboard(sb)(g).GetAnnotations()).To(HaveKey(videov1alpha1.AnnotationJobID))
		}).Should(Succeed())
		sbBackup := getStoryboard(sb)(Default)
		Expect(paidRenders()).To(Equal(1))

		By("deleting both; restoring the render first, without status")
		Expect(k8sClient.Delete(ctx, sbBackup)).To(Succeed())
		restoreWithoutStatus(done)
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.JobID).To(Equal(done.Status.JobID))
		}).Should(Succeed())
		adoptedAt := getRender(vr)(Default).Status.SubmittedAt.Time
		Eventually(func() time.Time { return time.Now().Truncate(time.Second) }).Should(BeTemporally(">", adoptedAt),
			"the storyboard's restore comes in a later second than the render's")

		By("restoring the storyboard with the spec Git holds now: another story")
		sbBackup.Spec.Scenes[0].Story = ptrTo("The spec in Git moved on after the backup. Nobody reviewed it.")
		restoreWithoutStatus(sbBackup)
		Eventually(func(g Gomega) {
			got := getStoryboard(sb)(g)
			g.Expect(got.Status.Preview).NotTo(BeNil())
			g.Expect(got.Status.Preview.Digest).NotTo(BeEmpty())
			g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted))
		}, within(20*time.Second)).Should(Succeed())
		Consistently(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.JobID).To(Equal(done.Status.JobID))
		}, settle).Should(Succeed())
		Expect(paidRenders()).To(Equal(1))
	})
})

// A storyboard deleted and created again under its name starts again at generation 1: the
// render's record names the storyboard by its uid, so the new content is rendered, once.
var _ = Describe("The record names its storyboard by uid, not by generation", func() {
	var h *harness
	start := keyedWorld(&h)

	It("a VideoStoryboard deleted and created again is rendered again, though its generation is 1 again", func() {
		start(simulator.Options{})
		h.startManager()
		sb := storyPreview(h.ns, "recreated", "Recreated")
		vr := fromYAML(&videov1alpha1.VideoRender{}, h.ns, "metadata: {name: of-recreated}\nspec: {storyboardRef: {name: recreated, approval: Latest}}")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		var firstJob string
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue())
			firstJob = got.Status.JobID
		}).Should(Succeed())

		Expect(k8sClient.Delete(ctx, getStoryboard(sb)(Default))).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(readyFor(&getRender(vr)(g).Status.JobStatus, 1)).To(BeTrue(), "the video exists without its storyboard")
		}, "500ms").Should(Succeed())
		again := storyPreview(h.ns, "recreated", "Recreated")
		again.Spec.Scenes[0].Story = ptrTo("Different content under the same name. It was reviewed anew.")
		Expect(k8sClient.Create(ctx, again)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.JobID).NotTo(Equal(firstJob))
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.StoryboardUID).To(Equal(string(getStoryboard(again)(g).UID)))
		}).Should(Succeed())
		Expect(renderJobs(h.jobsNamed("Recreated"))).To(Equal(2))
	})
})

// otherAccountKey is a key of another account (case 5).
const otherAccountKey = "sk-video-other-account-99c1d2e3"

// recordedRender waits until the render's record (its annotations) is written and returns the
// render as `kubectl get -o json` shows it.
func recordedRender(vr *videov1alpha1.VideoRender) *videov1alpha1.VideoRender {
	GinkgoHelper()
	var out *videov1alpha1.VideoRender
	Eventually(func(g Gomega) {
		out = getRender(vr)(g)
		g.Expect(out.GetAnnotations()).To(HaveKeyWithValue(videov1alpha1.AnnotationJobID, out.Status.JobID))
	}).Should(Succeed())
	return out
}

// restoreWithoutStatus deletes the object and creates it again from its JSON minus status, uid,
// resourceVersion and the other fields the API server sets, as `kubectl get -o json | kubectl
// create -f -` into a new cluster or a Velero restore does. It returns the new object.
func restoreWithoutStatus(backup client.Object) client.Object {
	GinkgoHelper()
	err := k8sClient.Delete(ctx, backup)
	Expect(client.IgnoreNotFound(err)).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, key(backup), backup.DeepCopyObject().(client.Object)))
	}).Should(BeTrue())

	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(backup)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: m}
	gvk, err := k8sClient.GroupVersionKindFor(backup)
	Expect(err).NotTo(HaveOccurred())
	u.SetGroupVersionKind(gvk)
	delete(u.Object, "status")
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	Expect(k8sClient.Create(ctx, u)).To(Succeed())
	return u
}

// writeStatus writes the backed-up status onto the restored object, as Velero does after the
// create.
func writeStatus(restored client.Object, backup *videov1alpha1.VideoRender) {
	GinkgoHelper()
	Eventually(func() error {
		cur := &videov1alpha1.VideoRender{}
		if err := k8sClient.Get(ctx, key(restored), cur); err != nil {
			return err
		}
		cur.Status = *backup.Status.DeepCopy()
		return k8sClient.Status().Update(ctx, cur)
	}).Should(Succeed())
}

// setSecretRef points the render's apiKeySecretRef at Secret name, key apiKey.
func setSecretRef(vr *videov1alpha1.VideoRender, name string) {
	GinkgoHelper()
	updateObject(vr, func(o client.Object) {
		o.(*videov1alpha1.VideoRender).Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{
			Name: name, Key: videov1alpha1.DefaultAPIKeySecretKey}
	})
}

// setSecretValue replaces the API key in a Secret.
func setSecretValue(ns, name, value string) {
	GinkgoHelper()
	Eventually(func() error {
		s := &corev1.Secret{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
			return err
		}
		s.Data = map[string][]byte{videov1alpha1.DefaultAPIKeySecretKey: []byte(value)}
		return k8sClient.Update(ctx, s)
	}).Should(Succeed())
}

// eventuallyReadyAt waits until the render is Ready for generation gen with job jobID.
func eventuallyReadyAt(vr *videov1alpha1.VideoRender, gen int64, jobID string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		got := getRender(vr)(g)
		g.Expect(got.Generation).To(Equal(gen))
		g.Expect(readyFor(&got.Status.JobStatus, gen)).To(BeTrue(), "%+v", got.Status.Conditions)
		g.Expect(got.Status.JobID).To(Equal(jobID))
		g.Expect(got.Status.JobGeneration).To(Equal(gen), "the job is the current generation's: its request is")
	}).Should(Succeed())
}
