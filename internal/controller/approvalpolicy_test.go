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
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// Approval is a permission with a name (docs/architecture.md "What is paid for is what was
// approved"): the admission policies of config/approval, with users impersonated, against the
// manager and the simulated service.
var _ = Describe("Approval is a permission with a name", func() {
	var h *harness

	const quiet = 900 * time.Millisecond

	// start runs the manager in a namespace the approval policies apply to.
	start := func(fourEyes bool) { h = startApproval(fourEyes) }
	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak()
		}
	})
	paidRenders := func() int { return h.sim.Calls(simulator.EndpointRenderStoryboard) }
	previewed := func(c client.Client, name string) (*videov1alpha1.VideoStoryboard, string) {
		GinkgoHelper()
		sb := storyPreview(h.ns, name, name)
		Expect(c.Create(ctx, sb)).To(Succeed())
		return sb, firstPreview(sb).Digest
	}
	const permission = "needs the permission approve on videorenders/approval (group video.videoops.io) in namespace "

	It("refuses an editor's approvedDigest and approval: Latest, naming the permission and the role, and pays nothing", func() {
		start(false)
		editor := asUser(h.ns, "erin-editor", false)
		_, digest := previewed(editor, "script")

		By("creating a pinned render")
		err := editor.Create(ctx, refRender(h.ns, "pinned", "script", "approvedDigest: "+digest))
		Expect(err).To(MatchError(And(ContainSubstring(permission+h.ns),
			ContainSubstring("erin-editor may edit this render but not approve it; ask someone bound to the ClusterRole "+approverRole))))

		By("creating a render without approval (allowed), then pinning it or setting approval: Latest")
		vr := refRender(h.ns, "waiting", "script", "")
		Expect(editor.Create(ctx, vr)).To(Succeed())
		Expect(writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = digest })).
			To(MatchError(ContainSubstring(permission + h.ns)))
		Expect(writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.Approval = videov1alpha1.ApprovalLatest })).
			To(MatchError(ContainSubstring(permission + h.ns)))
		Expect(editor.Create(ctx, refRender(h.ns, "latest", "script", "approval: Latest"))).To(MatchError(ContainSubstring(permission + h.ns)))

		By("everything else an editor does is allowed: an edit, the retired default, a retry annotation")
		Expect(writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) {
			cur.Spec.StoryboardRef.Approval = videov1alpha1.ApprovalPinned
			cur.Annotations = with(cur.Annotations, videov1alpha1.AnnotationRetry, "1")
		})).To(Succeed())
		Consistently(paidRenders, quiet).Should(BeZero())
	})

	It("accepts an approver's pin and pays exactly once", func() {
		start(false)
		editor := asUser(h.ns, "erin-editor", false)
		approver := asUser(h.ns, "amir-approver", true)
		_, digest := previewed(editor, "script")
		vr := refRender(h.ns, "pinned", "script", "")
		Expect(editor.Create(ctx, vr)).To(Succeed())
		Expect(writeRender(approver, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = digest })).To(Succeed())
		eventuallyReady(vr)
		Consistently(paidRenders, quiet).Should(Equal(1))

		By("the approver is a record: annotations, status, the Submitted event and the audit line name them")
		got := getRender(vr)(Default)
		Expect(got.Annotations).To(And(HaveKeyWithValue(videov1alpha1.AnnotationApprovedBy, "amir-approver"),
			HaveKeyWithValue(videov1alpha1.AnnotationApprovedDigest, digest)))
		Expect(got.Status.Approval).To(Equal(&videov1alpha1.ApprovalRecord{ApprovedBy: "amir-approver", Digest: digest}))
		Eventually(func() []string { return submittedNotes(h, "pinned") }).Should(ContainElement(
			And(ContainSubstring(digest), ContainSubstring("approved by amir-approver"))))
		Expect(h.logs.String()).To(MatchRegexp(`"msg":"Paid submission".*"outcome":"accepted".*"storyboardDigest":"%s".*"approvedBy":"amir-approver"`, digest))
	})

	It("refuses a user who writes the approval stamps or a storyboard's author themselves", func() {
		start(false)
		editor := asUser(h.ns, "erin-editor", false)
		approver := asUser(h.ns, "amir-approver", true)
		sb, digest := previewed(editor, "script")
		Expect(getStoryboard(sb)(Default).Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationSpecChangedBy, "erin-editor"))
		const stamps = "record who approved this render"

		By("an editor stamps a render without approving it, or stamps one as approved by someone else")
		waiting := refRender(h.ns, "waiting", "script", "")
		waiting.Annotations = map[string]string{videov1alpha1.AnnotationApprovedBy: "amir-approver"}
		Expect(editor.Create(ctx, waiting)).To(MatchError(ContainSubstring(stamps)))
		waiting.Annotations = nil
		Expect(editor.Create(ctx, waiting)).To(Succeed())
		for _, k := range []string{videov1alpha1.AnnotationApprovedBy, videov1alpha1.AnnotationApprovedDigest, videov1alpha1.AnnotationApprovedStoryboardAuthor} {
			Expect(writeRender(editor, waiting, func(cur *videov1alpha1.VideoRender) { cur.Annotations = with(cur.Annotations, k, "amir-approver") })).
				To(MatchError(ContainSubstring(stamps)), k)
		}

		By("an approver who forges another name in the approving write is recorded as themselves")
		Expect(writeRender(approver, waiting, func(cur *videov1alpha1.VideoRender) {
			cur.Spec.StoryboardRef.ApprovedDigest = digest
			cur.Annotations = with(cur.Annotations, videov1alpha1.AnnotationApprovedBy, "the-boss")
		})).To(Succeed())
		Expect(getRender(waiting)(Default).Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationApprovedBy, "amir-approver"))

		By("nobody changes the stamps of an approval afterwards, not even the approver; a write without them keeps them")
		for _, c := range []client.Client{editor, approver} {
			Expect(writeRender(c, waiting, func(cur *videov1alpha1.VideoRender) { cur.Annotations[videov1alpha1.AnnotationApprovedBy] = "the-boss" })).
				To(MatchError(ContainSubstring(stamps)))
			Expect(writeRender(c, waiting, func(cur *videov1alpha1.VideoRender) { delete(cur.Annotations, videov1alpha1.AnnotationApprovedBy) })).
				To(Succeed())
			Expect(getRender(waiting)(Default).Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationApprovedBy, "amir-approver"))
		}

		By("nobody writes a storyboard's author by hand")
		Expect(updateStoryboard(editor, sb, func(cur *videov1alpha1.VideoStoryboard) {
			cur.Annotations[videov1alpha1.AnnotationSpecChangedBy] = "someone-else"
		})).To(MatchError(ContainSubstring("may not write or change it")))
		Expect(updateStoryboard(approver, sb, func(cur *videov1alpha1.VideoStoryboard) {
			cur.Spec.VideoName = "Edited by the approver"
			cur.Annotations[videov1alpha1.AnnotationSpecChangedBy] = "erin-editor"
		})).To(Succeed())
		Expect(getStoryboard(sb)(Default).Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationSpecChangedBy, "amir-approver"),
			"the spec's last author is who changed it, whatever they wrote")
	})

	It("four eyes: refuses the storyboard's last author as approver, pays for another approver once, and never for a false author", func() {
		start(true)
		alex := asUser(h.ns, "alex-author", true)
		amir := asUser(h.ns, "amir-approver", true)
		sb, _ := previewed(asUser(h.ns, "erin-editor", false), "script")
		By("alex, an approver, changes the storyboard's spec: alex is its last author")
		Expect(updateStoryboard(alex, sb, func(cur *videov1alpha1.VideoStoryboard) {
			cur.Spec.Scenes[0].Story = ptr.To("Alex rewrote the script.")
		})).To(Succeed())
		digest := previewOfGeneration(sb, 2).Digest
		Expect(getStoryboard(sb)(Default).Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationSpecChangedBy, "alex-author"))
		vr := refRender(h.ns, "pinned", "script", "")
		Expect(alex.Create(ctx, vr)).To(Succeed())
		approve := func(c client.Client, author string) error {
			return writeRender(c, vr, func(cur *videov1alpha1.VideoRender) {
				cur.Spec.StoryboardRef.ApprovedDigest = digest
				cur.Annotations = with(cur.Annotations, videov1alpha1.AnnotationApprovedStoryboardAuthor, author)
			})
		}

		By("the author approves: refused, naming both users and who may approve instead")
		Expect(approve(alex, "alex-author")).To(MatchError(And(ContainSubstring("four eyes in namespace "+h.ns),
			ContainSubstring("alex-author last changed the content of VideoStoryboard script, so the approver alex-author"),
			ContainSubstring("ask another user bound to the ClusterRole "+approverRole))))
		By("without naming the author, or with approval: Latest: refused")
		Expect(writeRender(alex, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = digest })).
			To(MatchError(ContainSubstring("annotation video.videoops.io/approved-storyboard-author")))
		Expect(writeRender(amir, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.Approval = videov1alpha1.ApprovalLatest })).
			To(MatchError(ContainSubstring("approval: Latest renders every preview unreviewed and cannot be approved there")))

		By("the author approves naming someone else: admitted, but the controller pays nothing and says why")
		Expect(approve(alex, "erin-editor")).To(Succeed())
		Eventually(func(g Gomega) {
			rec := conditionOf(&getRender(vr)(g).Status.JobStatus, videov1alpha1.ConditionReconciling)
			g.Expect(rec.Reason).To(Equal(string(videov1alpha1.ReasonAwaitingApproval)))
			g.Expect(rec.Message).To(And(ContainSubstring("the approval by alex-author names erin-editor as the last author"),
				ContainSubstring("alex-author changed it last"), ContainSubstring("an approver other than alex-author")))
		}).Should(Succeed())
		Consistently(paidRenders, quiet).Should(BeZero())

		By("another approver approves: paid once, recorded as theirs")
		Expect(writeRender(amir, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = "" })).To(Succeed())
		Expect(approve(amir, "alex-author")).To(Succeed())
		eventuallyReady(vr)
		Consistently(paidRenders, quiet).Should(Equal(1))
		Expect(getRender(vr)(Default).Status.Approval).To(Equal(&videov1alpha1.ApprovalRecord{ApprovedBy: "amir-approver", Digest: digest}))
	})

	It("keeps a render approved before the policies paid once and Ready, and says its approver is not recorded", func() {
		installApprovalPolicies()
		h = newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		h.startManager()
		By("before the upgrade: a pin written without the policies")
		sb := storyPreview(h.ns, "script", "script")
		Expect(k8sClient.Create(ctx, sb)).To(Succeed())
		digest := firstPreview(sb).Digest
		vr := refRender(h.ns, "pinned", "script", "approvedDigest: "+digest)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		Expect(paidRenders()).To(Equal(1))
		got := getRender(vr)(Default)
		Expect(got.Annotations).NotTo(HaveKey(videov1alpha1.AnnotationApprovedBy))
		Expect(got.Status.Approval).To(Equal(&videov1alpha1.ApprovalRecord{Digest: digest}))
		Eventually(func() []string { return submittedNotes(h, "pinned") }).Should(ContainElement(ContainSubstring("approved by (not recorded)")))
		Expect(h.logs.String()).To(MatchRegexp(`"msg":"Paid submission".*"storyboardDigest":"%s".*"approvedBy":"\(not recorded\)"`, digest))

		By("the policies now apply to the namespace; an editor edits the render")
		ns := &corev1.Namespace{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: h.ns}, ns)).To(Succeed())
		setLabel(ns, approvalTestLabel, "true")
		awaitPoliciesIn(h.ns, false)
		editor := asUser(h.ns, "erin-editor", false)
		Eventually(func() error {
			return writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) { cur.Labels = with(cur.Labels, "team", "launch") })
		}).Should(Succeed())
		Expect(writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) {
			cur.Spec.StoryboardRef.Narration = videov1alpha1.NarrationApproved
		})).To(Succeed())
		eventuallyReady(vr)
		Consistently(paidRenders, quiet).Should(Equal(1), "the pin written before still approves, and nothing is paid again")
	})

	It("lets an editor remove an approval, and pays nothing for it", func() {
		start(false)
		editor := asUser(h.ns, "erin-editor", false)
		approver := asUser(h.ns, "amir-approver", true)
		sb, first := previewed(editor, "script")
		vr := refRender(h.ns, "pinned", "script", "approvedDigest: "+first)
		Expect(approver.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		Expect(paidRenders()).To(Equal(1))

		By("the storyboard is edited; an editor removes the pin, then the approver's Latest is removed too")
		editPreviewStory(sb, "A second script nobody approved.")
		previewOfGeneration(sb, 2)
		Expect(writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = "" })).To(Succeed())
		Expect(writeRender(approver, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.Approval = videov1alpha1.ApprovalLatest })).To(Succeed())
		Expect(writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.Approval = "" })).To(Succeed())
		Expect(paidRenders()).To(BeNumerically("<=", 2), "Latest rendered preview 2 at most once")
		paid := paidRenders()
		Consistently(paidRenders, quiet).Should(Equal(paid), "removing an approval pays nothing")
	})
})

// submittedNotes returns the notes of the Submitted events about the named render.
func submittedNotes(h *harness, name string) []string {
	GinkgoHelper()
	var events eventsv1.EventList
	Expect(k8sClient.List(ctx, &events, client.InNamespace(h.ns))).To(Succeed())
	var out []string
	for _, e := range events.Items {
		if e.Regarding.Name == name && e.Reason == eventSubmitted {
			out = append(out, e.Note)
		}
	}
	return out
}
