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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/credentials"
	"github.com/videoops/video-operator/internal/requestdigest"
	"github.com/videoops/video-operator/internal/simulator"
)

// Issue 28, "Digests are versioned and pinned" (docs/architecture.md "Records that outlive a
// version"): an object whose records were written by a manager before digests carried a version
// (version 1: no digestVersion in status, no request-digest-version annotation, version 1 values)
// is recognised by the new manager, which pays nothing and leaves it Ready. The records are put in
// that form while the manager is stopped, as an upgrade finds them.
var _ = Describe("Records that outlive a version", func() {
	var h *harness
	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak(otherAccountKey)
		}
	})

	// settle is long enough for a render that would pay again to have done so (restore_test.go).
	const settle = 1500 * time.Millisecond

	paidCalls := func() int {
		return h.sim.Calls(simulator.EndpointCreateStoryboard) + h.sim.Calls(simulator.EndpointRenderStoryboard) +
			h.sim.Calls(simulator.EndpointRenderProject)
	}
	readyWithJob := func(vr *videov1alpha1.VideoRender, jobID string) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.JobID).To(Equal(jobID))
		}).Should(Succeed())
	}

	It("a completed render whose status and annotations hold a version 1 request digest pays nothing and stays Ready, also restored without status", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.startManager()
		vr := storyRender(h.ns, "older", "Older")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		done := recordedRender(vr)
		Expect(paidCalls()).To(Equal(1))
		Expect(done.Status.DigestVersion).To(Equal(int32(requestdigest.Version)))
		Expect(done.GetAnnotations()).To(HaveKeyWithValue(videov1alpha1.AnnotationRequestDigestVersion, "2"))

		// The digest the controller takes is of spec.storyboard: the version 1 value of the same
		// body is what a manager before digest versions recorded.
		current, err := requestdigest.Of(requestdigest.Render, done.Spec.Storyboard)
		Expect(err).NotTo(HaveOccurred())
		Expect(done.Status.RequestDigest).To(Equal(current))
		v1, err := requestdigest.OfV1(requestdigest.Render, done.Spec.Storyboard)
		Expect(err).NotTo(HaveOccurred())
		Expect(v1).NotTo(Equal(current))

		By("stopping the manager and leaving the render as a manager of digest version 1 wrote it")
		h.stopManager()
		rewriteAsVersion1(done, v1, "")
		h.startManager()

		By("a spec edit that changes nothing of the request (a label) and the resync")
		setLabel(vr, "team", "video")
		Consistently(paidCalls, settle).Should(Equal(1), "the version 1 record is recognised")
		readyWithJob(vr, done.Status.JobID)
		got := getRender(vr)(Default)
		Expect(got.Status.RequestDigest).To(Equal(v1), "the record is kept as written: a manager rolled back still recognises it")
		Expect(got.Status.DigestVersion).To(BeZero())

		By("restoring it without status: the version 1 record in the annotations is adopted")
		restoreWithoutStatus(getRender(vr)(Default))
		readyWithJob(vr, done.Status.JobID)
		Consistently(paidCalls, settle).Should(Equal(1), "the restored object adopted its job")
		Expect(getRender(vr)(Default).Status.Outputs).To(Equal(done.Status.Outputs))
	})

	It("a storyboardRef render pinned to a version 1 preview digest in Git pays nothing, also when both are restored without status", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.startManager()
		sb := storyPreview(h.ns, "reviewed", "Reviewed")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		preview := firstPreview(sb)
		Expect(preview.DigestVersion).To(Equal(int32(requestdigest.Version)))
		Expect(preview.DigestV1).NotTo(BeEmpty())
		Expect(preview.DigestV1).NotTo(Equal(preview.Digest))
		Eventually(func(g Gomega) {
			g.Expect(getStoryboard(sb)(g).GetAnnotations()).To(HaveKey(videov1alpha1.AnnotationJobID))
		}).Should(Succeed())

		By("leaving the storyboard's preview and record as a manager of digest version 1 wrote them")
		h.stopManager()
		sbDone := getStoryboard(sb)(Default)
		sbV1, err := requestdigest.OfV1(requestdigest.Preview, &sbDone.Spec.StoryboardRequest)
		Expect(err).NotTo(HaveOccurred())
		rewriteStoryboardAsVersion1(sbDone, sbV1)
		h.startManager()

		By("pinning the version 1 preview digest, as Git written before the upgrade does")
		vr := refRender(h.ns, "reviewed-render", "reviewed", "approvedDigest: "+preview.DigestV1)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		done := recordedRender(vr)
		Expect(paidCalls()).To(Equal(2), "one preview, one render of the version 1 pin")
		Expect(done.Status.StoryboardDigest).To(Equal(preview.DigestV1), "the preview as its status named it")

		By("leaving the render's record as a manager of digest version 1 wrote it")
		h.stopManager()
		pinned := ptr.Deref(done.Status.NarrationPinned, false)
		v1, err := requestdigest.OfApprovedV1(preview.DigestV1, pinned)
		Expect(err).NotTo(HaveOccurred())
		rewriteAsVersion1(done, v1, preview.DigestV1)
		h.startManager()
		setLabel(vr, "team", "video")
		Consistently(paidCalls, settle).Should(Equal(2))
		readyWithJob(vr, done.Status.JobID)

		By("restoring both without status: the storyboard computes its preview's digest anew, in version 2")
		sbBefore := getStoryboard(sb)(Default)
		before := getRender(vr)(Default)
		Expect(k8sClient.Delete(ctx, sbBefore)).To(Succeed())
		restoreWithoutStatus(before)
		restoreWithoutStatus(sbBefore)
		Eventually(func(g Gomega) {
			got := getStoryboard(sb)(g)
			g.Expect(got.Status.JobID).To(Equal(sbBefore.Status.JobID), "the preview job is adopted from its version 1 record")
			g.Expect(got.Status.Preview).NotTo(BeNil())
			g.Expect(got.Status.Preview.Digest).To(Equal(preview.Digest))
			g.Expect(got.Status.Preview.DigestV1).To(Equal(preview.DigestV1))
		}).Should(Succeed())
		readyWithJob(vr, done.Status.JobID)
		Consistently(paidCalls, settle).Should(Equal(2), "neither the preview nor the render is paid again")
		Expect(getRender(vr)(Default).Status.Outputs).To(Equal(done.Status.Outputs))
	})

	// "Records out of tenants' reach": fingerprints are keyed now (hmac-sha256:...), and the bare
	// SHA-256 fingerprint an earlier version recorded still names the same key.
	It("a render whose records hold an earlier version's bare key fingerprint stays Ready with the same key and pays nothing; a job unknown to that key is not taken for a key change", func() {
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.startManager()
		vr := storyRender(h.ns, "bare", "Bare")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		done := recordedRender(vr)
		Expect(done.Status.KeyFingerprint).To(HavePrefix(credentials.FingerprintPrefix), "new records are keyed")
		Expect(done.Status.KeyFingerprint).NotTo(ContainSubstring(credentials.BareFingerprint(testAPIKey)))
		Expect(done.GetAnnotations()).To(HaveKeyWithValue(videov1alpha1.AnnotationKeyFingerprint, done.Status.KeyFingerprint))

		By("stopping the manager and leaving the bare fingerprint an earlier version recorded")
		h.stopManager()
		rewriteFingerprint(done, credentials.BareFingerprint(testAPIKey))
		h.startManager()
		setLabel(vr, "team", "video")
		Consistently(paidCalls, settle).Should(Equal(1))
		readyWithJob(vr, done.Status.JobID)

		By("restoring it without status: its job is adopted with the same key")
		restoreWithoutStatus(getRender(vr)(Default))
		readyWithJob(vr, done.Status.JobID)
		Consistently(paidCalls, settle).Should(Equal(1))

		By("a record written under the bare fingerprint of this key, naming a job the service does not know")
		lost := storyRender(h.ns, "lost", "Lost")
		lost.SetAnnotations(map[string]string{videov1alpha1.AnnotationJobID: "00000000-0000-4000-8000-000000000000",
			videov1alpha1.AnnotationKeyFingerprint: credentials.BareFingerprint(testAPIKey)})
		Expect(k8sClient.Create(ctx, lost)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(lost)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonAdoptedJobNotFound)).To(BeTrue(),
				"the same key, so the job is unknown, not submitted with another key: %+v", got.Status.Conditions)
		}).Should(Succeed())
		Consistently(paidCalls, settle).Should(Equal(1))
	})

	It("a render whose records hold an earlier version's bare key fingerprint stalls as a key change when the Secret holds another account's key", func() {
		h = newHarness(simulator.Options{APIKeys: []string{testAPIKey, otherAccountKey}, ScopeJobsByKey: true})
		h.createSecret(testAPIKey)
		h.startManager()
		vr := storyRender(h.ns, "bare-other", "Bare other")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		done := recordedRender(vr)

		By("leaving the bare fingerprint, putting another account's key into the Secret and restoring without status")
		h.stopManager()
		rewriteFingerprint(done, credentials.BareFingerprint(testAPIKey))
		setSecretValue(h.ns, videov1alpha1.DefaultAPIKeySecretName, otherAccountKey)
		h.startManager()
		restoreWithoutStatus(getRender(vr)(Default))
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(stalledWith(&got.Status.JobStatus, videov1alpha1.ReasonAPIKeyChanged)).To(BeTrue(), "%+v", got.Status.Conditions)
		}).Should(Succeed())
		Consistently(paidCalls, settle).Should(Equal(1))
	})
})

// rewriteFingerprint leaves a render's key fingerprint (status and annotation) as fp.
func rewriteFingerprint(vr *videov1alpha1.VideoRender, fp string) {
	GinkgoHelper()
	updateObject(vr, func(o client.Object) {
		o.SetAnnotations(with(o.GetAnnotations(), videov1alpha1.AnnotationKeyFingerprint, fp))
	})
	Eventually(func() error {
		cur := &videov1alpha1.VideoRender{}
		if err := k8sClient.Get(ctx, key(vr), cur); err != nil {
			return err
		}
		cur.Status.KeyFingerprint = fp
		return k8sClient.Status().Update(ctx, cur)
	}).Should(Succeed())
}

// rewriteAsVersion1 leaves a render's record (status and annotations) as a manager before digest
// versions wrote it: request digest v1, no version; storyboardDigest, when given, the version 1
// preview digest.
func rewriteAsVersion1(vr *videov1alpha1.VideoRender, v1, storyboardDigest string) {
	GinkgoHelper()
	updateObject(vr, func(o client.Object) {
		ann := o.GetAnnotations()
		ann[videov1alpha1.AnnotationRequestDigest] = v1
		delete(ann, videov1alpha1.AnnotationRequestDigestVersion)
		o.SetAnnotations(ann)
	})
	Eventually(func() error {
		cur := &videov1alpha1.VideoRender{}
		if err := k8sClient.Get(ctx, key(vr), cur); err != nil {
			return err
		}
		cur.Status.RequestDigest, cur.Status.DigestVersion = v1, 0
		if storyboardDigest != "" {
			cur.Status.StoryboardDigest = storyboardDigest
		}
		return k8sClient.Status().Update(ctx, cur)
	}).Should(Succeed())
}

// rewriteStoryboardAsVersion1 leaves a storyboard's preview and record as a manager before digest
// versions wrote them: the preview's digest is its version 1 digest, with no version and no
// digestV1, and the request digest of the preview job is v1.
func rewriteStoryboardAsVersion1(sb *videov1alpha1.VideoStoryboard, v1 string) {
	GinkgoHelper()
	updateObject(sb, func(o client.Object) {
		ann := o.GetAnnotations()
		ann[videov1alpha1.AnnotationRequestDigest] = v1
		delete(ann, videov1alpha1.AnnotationRequestDigestVersion)
		o.SetAnnotations(ann)
	})
	Eventually(func() error {
		cur := &videov1alpha1.VideoStoryboard{}
		if err := k8sClient.Get(ctx, key(sb), cur); err != nil {
			return err
		}
		cur.Status.RequestDigest, cur.Status.DigestVersion = v1, 0
		p := cur.Status.Preview
		p.Digest, p.DigestVersion, p.DigestV1 = p.DigestV1, 0, ""
		return k8sClient.Status().Update(ctx, cur)
	}).Should(Succeed())
}
