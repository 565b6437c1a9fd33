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
	"bytes"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/kubectlvideo"
	"github.com/videoops/video-operator/internal/simulator"
)

// The review of approval as a permission (docs/approval.md): ways for a user without approve on
// videorenders/approval to make the operator pay, to have the record name an approver who did not
// approve what was paid, or to get around four eyes, and ordinary operations (a replace from a
// file, a restore, a key rotation) the policies must not break. Each spec failed on the policies
// that approved only the pin.
var _ = Describe("Approval covers what a render pays for", func() {
	var h *harness

	const quiet = 2 * time.Second

	// start runs the manager in a namespace the approval policies apply to.
	start := func(fourEyes bool) { h = startApproval(fourEyes) }
	AfterEach(func() {
		if h != nil {
			h.expectNoKeyLeak()
		}
	})
	paidRenders := func() int { return h.sim.Calls(simulator.EndpointRenderStoryboard) }

	// Finding 1. The policy looks at storyboardRef only. An author (the render editor role, as
	// docs/approval.md's role table binds authors) turns a render an approver approved into an
	// inline storyboard of their own: not an "approving" write, the stamps are unchanged, so the
	// policy admits it, and the operator pays for a script nobody reviewed on an object that still
	// says approved-by amir.
	It("refuses an editor who turns an approved render into an inline storyboard, and pays nothing for it", func() {
		start(false)
		editor := asUser(h.ns, "erin-editor", false)
		approver := asUser(h.ns, "amir-approver", true)
		sb := storyPreview(h.ns, "script", "Reviewed")
		Expect(editor.Create(ctx, sb)).To(Succeed())
		digest := firstPreview(sb).Digest
		vr := refRender(h.ns, "launch", "script", "")
		Expect(editor.Create(ctx, vr)).To(Succeed())
		Expect(writeRender(approver, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = digest })).To(Succeed())
		eventuallyReady(vr)
		Expect(paidRenders()).To(Equal(1))

		By("the editor, without approve, swaps in an unreviewed inline script")
		err := writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) {
			cur.Spec.StoryboardRef = nil
			cur.Spec.Storyboard = storyRender(h.ns, "x", "Never reviewed").Spec.Storyboard
		})
		Expect(err).To(MatchError(ContainSubstring("approve on videorenders/approval")))
		Consistently(paidRenders, quiet).Should(Equal(1),
			"erin-editor has no approve permission, yet the operator paid for a script nobody approved (admitted: %v)", err)
	})

	// Finding 2. The narration of a brief is part of what the approver reviewed (docs/approval.md
	// "Brief mode"), but the policy does not treat spec.storyboardRef.narration as part of the
	// approval: an editor switches an approved brief to Regenerate, the operator pays a second
	// job whose narration nobody reviewed, and the Submitted event says amir approved it.
	It("refuses an editor who switches an approved brief's narration to Regenerate, and pays nothing again", func() {
		start(false)
		editor := asUser(h.ns, "erin-editor", false)
		approver := asUser(h.ns, "amir-approver", true)
		sb := briefStoryboard(h.ns, "brief", "Tides")
		Expect(editor.Create(ctx, sb)).To(Succeed())
		digest := firstPreview(sb).Digest
		vr := refRender(h.ns, "tides", "brief", "")
		Expect(editor.Create(ctx, vr)).To(Succeed())
		Expect(writeRender(approver, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = digest })).To(Succeed())
		eventuallyReady(vr)
		Expect(paidRenders()).To(Equal(1))

		By("the editor, without approve, asks the AI to write the narration anew")
		err := writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) {
			cur.Spec.StoryboardRef.Narration = videov1alpha1.NarrationRegenerate
		})
		Expect(err).To(MatchError(ContainSubstring("approve on videorenders/approval")))
		Consistently(paidRenders, quiet).Should(Equal(1),
			"erin-editor made the operator pay for a narration nobody reviewed (admitted: %v); Submitted notes: %v", err, submittedNotes(h, "tides"))
	})

	// Finding 3. approval: Latest is stamped as "amir approved Latest", not "amir approved Latest
	// of storyboard reviewed": changing storyboardRef.name keeps the approval unchanged, so it is
	// not an approving write, and an editor points an approved Latest render at a storyboard of
	// their own. The operator pays for it, and status.approval, the Submitted event and the audit
	// line name amir as its approver.
	It("refuses an editor who points an approved Latest render at another storyboard, and pays nothing for it", func() {
		start(false)
		editor := asUser(h.ns, "erin-editor", false)
		approver := asUser(h.ns, "amir-approver", true)
		reviewed := storyPreview(h.ns, "reviewed", "Reviewed")
		Expect(approver.Create(ctx, reviewed)).To(Succeed())
		firstPreview(reviewed)
		vr := refRender(h.ns, "auto", "reviewed", "approval: Latest")
		Expect(approver.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		Expect(paidRenders()).To(Equal(1))

		By("the editor writes another storyboard and points the render at it")
		other := storyPreview(h.ns, "erins", "Erins own")
		Expect(editor.Create(ctx, other)).To(Succeed())
		firstPreview(other)
		err := writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.Name = "erins" })
		Expect(err).To(MatchError(ContainSubstring("approve on videorenders/approval")))
		Consistently(paidRenders, quiet).Should(Equal(1),
			"amir approved Latest of storyboard reviewed, erin-editor got storyboard erins paid (admitted: %v); status.approval %+v; Submitted notes: %v",
			err, getRender(vr)(Default).Status.Approval, submittedNotes(h, "auto"))
	})

	// Finding 4. Four eyes is "not the user who last changed the spec", and any change of the spec
	// moves that stamp, including one that changes nothing a reviewer sees: a key rotation
	// (apiKeySecretRef, which the preview digest does not even cover) by the platform or an
	// editor makes them the "author" of alex's script, and alex approves his own script alone.
	It("four eyes: a key rotation by an editor leaves the script's author its author, who may not approve it", func() {
		start(true)
		alex := asUser(h.ns, "alex-author", true)
		editor := asUser(h.ns, "erin-editor", false)
		h.createNamedSecret("rotated-key", testAPIKey)
		sb := storyPreview(h.ns, "script", "Alex script")
		sb.Spec.Scenes[0].Story = ptr.To("Alex wrote every word of this script. Nobody else read it.")
		Expect(alex.Create(ctx, sb)).To(Succeed())
		firstPreview(sb)
		Expect(getStoryboard(sb)(Default).Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationSpecChangedBy, "alex-author"))

		By("an editor rotates the API key of the storyboard: the words are still alex's")
		Expect(updateStoryboard(editor, sb, func(cur *videov1alpha1.VideoStoryboard) {
			cur.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "rotated-key", Key: videov1alpha1.DefaultAPIKeySecretKey}
		})).To(Succeed())
		digest := previewOfGeneration(sb, 2).Digest
		got := getStoryboard(sb)(Default)
		Expect(*got.Spec.Scenes[0].Story).To(ContainSubstring("Alex wrote every word"))

		By("alex approves his own script, naming the key rotator as its author")
		vr := refRender(h.ns, "pinned", "script", "")
		Expect(alex.Create(ctx, vr)).To(Succeed())
		err := writeRender(alex, vr, func(cur *videov1alpha1.VideoRender) {
			cur.Spec.StoryboardRef.ApprovedDigest = digest
			cur.Annotations = with(cur.Annotations, videov1alpha1.AnnotationApprovedStoryboardAuthor, got.Annotations[videov1alpha1.AnnotationSpecChangedBy])
		})
		Expect(got.Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationSpecChangedBy, "alex-author"), "a key rotation is not authoring")
		Expect(err).To(MatchError(ContainSubstring("four eyes")))
		Consistently(paidRenders, quiet).Should(BeZero(),
			"four eyes: alex-author wrote the script and approved it alone (admitted: %v); status.approval %+v", err, getRender(vr)(Default).Status.Approval)
	})

	// Finding 5. The stamps can never be removed, and removing an approval keeps them: a render
	// whose approval an editor removed (as docs/approval.md allows) carries approved-by and
	// approved-digest without an approval. Restoring it (Velero, `kubectl get -o json | kubectl
	// create`, a GitOps re-create from an export), even as cluster-admin, is a create that
	// "writes the stamps without an approval", which the validating policy refuses: the backup
	// cannot be restored.
	It("removes the record with the approval, so a render whose approval was removed is restored, and pays nothing", func() {
		start(false)
		editor := asUser(h.ns, "erin-editor", false)
		approver := asUser(h.ns, "amir-approver", true)
		sb := storyPreview(h.ns, "script", "Reviewed")
		Expect(editor.Create(ctx, sb)).To(Succeed())
		digest := firstPreview(sb).Digest
		vr := refRender(h.ns, "launch", "script", "approvedDigest: "+digest)
		Expect(approver.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		Expect(writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = "" })).To(Succeed())
		backup := getRender(vr)(Default)
		for _, k := range []string{videov1alpha1.AnnotationApprovedBy, videov1alpha1.AnnotationApprovedDigest, videov1alpha1.AnnotationApprovedStoryboardAuthor} {
			Expect(backup.Annotations).NotTo(HaveKey(k), "removing the approval removes its record")
		}

		By("restoring the backup as cluster-admin (restoreWithoutStatus, as Velero does)")
		restoreWithoutStatus(backup)
		Consistently(paidRenders, quiet).Should(Equal(1))
	})

	// Finding 6. A restore of a finished render is an approving write by the restorer
	// (docs/approval.md): its stamps name the restoring account, which needs the approver role
	// and vouches for the backup. The API server cannot tell a backup from a forgery, so it does
	// not keep the backup's stamps (a forged approved-by would name someone who approved
	// nothing); and the restorer approved nothing that was paid, so status.approval of the
	// adopted job names nobody rather than the restorer.
	It("does not name the restoring account as the approver of what was paid before a restore", func() {
		start(false)
		editor := asUser(h.ns, "erin-editor", false)
		approver := asUser(h.ns, "amir-approver", true)
		sb := storyPreview(h.ns, "script", "Reviewed")
		Expect(editor.Create(ctx, sb)).To(Succeed())
		digest := firstPreview(sb).Digest
		vr := refRender(h.ns, "launch", "script", "approvedDigest: "+digest)
		Expect(approver.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		backup := recordedRender(vr)
		Expect(backup.Status.Approval).To(Equal(&videov1alpha1.ApprovalRecord{ApprovedBy: "amir-approver", Digest: digest}))

		restoreWithoutStatus(backup)
		eventuallyReady(vr)
		Consistently(paidRenders, quiet).Should(Equal(1))
		got := getRender(vr)(Default)
		Expect(got.Annotations[videov1alpha1.AnnotationApprovedBy]).NotTo(Or(BeEmpty(), Equal("amir-approver")),
			"the restore is an approval by the restoring account")
		Expect(got.Status.Approval).To(Equal(&videov1alpha1.ApprovalRecord{Digest: digest}),
			"the render was paid on amir's approval, which the restored object cannot prove; the restorer approved nothing that was paid")
	})

	// Finding 7. A write an author legitimately makes is refused: replacing an object from their
	// own file (`kubectl replace -f`, Argo CD's Replace=true, a pipeline that Updates from a
	// template with the live resourceVersion) with a label added and the spec unchanged. The file
	// does not hold the annotations the policies stamped, so the write "removes" them, which the
	// validating policies refuse, on every storyboard and on every render ever approved.
	It("lets an editor replace a storyboard and an approved render from their files, keeping the records", func() {
		start(false)
		editor := asUser(h.ns, "erin-editor", false)
		approver := asUser(h.ns, "amir-approver", true)
		sb := storyPreview(h.ns, "script", "Reviewed")
		Expect(editor.Create(ctx, sb)).To(Succeed())
		digest := firstPreview(sb).Digest
		vr := refRender(h.ns, "launch", "script", "")
		Expect(editor.Create(ctx, vr)).To(Succeed())
		Expect(writeRender(approver, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = digest })).To(Succeed())
		eventuallyReady(vr)

		By("kubectl replace -f storyboard.yaml, a label added")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			file := storyPreview(h.ns, "script", "Reviewed")
			file.Labels = map[string]string{"team": "launch"}
			file.ResourceVersion = getStoryboard(sb)(Default).ResourceVersion
			return editor.Update(ctx, file)
		})).To(Succeed(), "the editor's replace of the storyboard from their file")

		By("kubectl replace -f render.yaml (the pin in Git), a label added")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			file := refRender(h.ns, "launch", "script", "approvedDigest: "+digest)
			file.Labels = map[string]string{"team": "launch"}
			live := getRender(vr)(Default)
			file.ResourceVersion, file.Finalizers = live.ResourceVersion, live.Finalizers
			return editor.Update(ctx, file)
		})).To(Succeed(), "the editor's replace of the render from their file")

		By("the records stay: who wrote the storyboard, who approved the render")
		Expect(getStoryboard(sb)(Default).Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationSpecChangedBy, "erin-editor"))
		Expect(getRender(vr)(Default).Annotations).To(SatisfyAll(
			HaveKeyWithValue(videov1alpha1.AnnotationApprovedBy, "amir-approver"),
			HaveKeyWithValue(videov1alpha1.AnnotationApprovedDigest, digest)))
		Consistently(paidRenders, quiet).Should(Equal(1))
	})

	// An inline storyboard or a projectId is paid as written: writing it is approving it, or an
	// editor who may not approve a reviewed preview would pay for an unreviewed script instead.
	It("refuses an editor's inline or project render, pays an approver's once and names them; four eyes refuses inline", func() {
		start(false)
		editor := asUser(h.ns, "erin-editor", false)
		approver := asUser(h.ns, "amir-approver", true)
		Expect(editor.Create(ctx, storyRender(h.ns, "erins", "Never reviewed"))).
			To(MatchError(ContainSubstring("approve on videorenders/approval")))
		project := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "project"},
			Spec: videov1alpha1.VideoRenderSpec{ProjectID: new("p-1")}}
		Expect(editor.Create(ctx, project)).To(MatchError(ContainSubstring("approve on videorenders/approval")))

		vr := storyRender(h.ns, "amirs", "Written by the approver")
		Expect(approver.Create(ctx, vr)).To(Succeed())
		Expect(vr.Annotations).To(SatisfyAll(HaveKeyWithValue(videov1alpha1.AnnotationApprovedBy, "amir-approver"),
			HaveKeyWithValue(videov1alpha1.AnnotationApprovedDigest, videov1alpha1.ApprovedInline)))
		eventuallyReady(vr)
		Expect(getRender(vr)(Default).Status.Approval).To(Equal(&videov1alpha1.ApprovalRecord{ApprovedBy: "amir-approver"}))
		Eventually(func() []string { return submittedNotes(h, "amirs") }).Should(ContainElement(ContainSubstring("approved by amir-approver")))

		By("an editor changes the inline script: a new paid request, refused; a label is not")
		Expect(writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.Storyboard.VideoName = "Changed by erin" })).
			To(MatchError(ContainSubstring("approve on videorenders/approval")))
		Expect(writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) { cur.Labels = with(cur.Labels, "team", "launch") })).To(Succeed())
		Consistently(paidRenders, quiet).Should(Equal(1))

		By("four eyes: the writer of an inline script is its author")
		ns := &corev1.Namespace{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: h.ns}, ns)).To(Succeed())
		setLabel(ns, videov1alpha1.LabelFourEyes, "true")
		awaitPoliciesIn(h.ns, true)
		Expect(approver.Create(ctx, storyRender(h.ns, "amirs-second", "Also by the approver"))).
			To(MatchError(ContainSubstring("asks for four eyes")))
		Expect(paidRenders()).To(Equal(1))
	})

	// Finding 8. Four eyes is opt-in per namespace, but the controller's half of it is not: in a
	// namespace without the label, an approval written as kubectl video approve writes it (with
	// the storyboard's author) stops paying when anyone else touches the storyboard's spec
	// without changing its preview, such as a key rotation (apiKeySecretRef, not in the digest):
	// the render waits, AwaitingApproval, and the approver must approve the very same preview
	// again.
	It("without four eyes, pays an approval of the same preview after a key rotation of the storyboard", func() {
		start(false)
		alex := asUser(h.ns, "alex-author", false)
		editor := asUser(h.ns, "erin-editor", false)
		approver := asUser(h.ns, "amir-approver", true)
		h.createNamedSecret("rotated-key", testAPIKey)
		sb := storyPreview(h.ns, "script", "Launch")
		Expect(alex.Create(ctx, sb)).To(Succeed())
		digest := firstPreview(sb).Digest
		vr := refRender(h.ns, "pinned", "script", "")
		Expect(alex.Create(ctx, vr)).To(Succeed())

		By("with the manager down, amir approves as kubectl video approve does, and erin rotates the storyboard's key")
		h.stopManager()
		Expect(writeRender(approver, vr, func(cur *videov1alpha1.VideoRender) {
			cur.Spec.StoryboardRef.ApprovedDigest = digest
			cur.Annotations = with(cur.Annotations, videov1alpha1.AnnotationApprovedStoryboardAuthor, "alex-author")
		})).To(Succeed())
		Expect(updateStoryboard(editor, sb, func(cur *videov1alpha1.VideoStoryboard) {
			cur.Spec.APIKeySecretRef = &videov1alpha1.SecretKeyRef{Name: "rotated-key", Key: videov1alpha1.DefaultAPIKeySecretKey}
		})).To(Succeed())
		h.startManager()
		Expect(previewOfGeneration(sb, 2).Digest).To(Equal(digest), "the key rotation keeps the preview amir approved")
		Eventually(func(g Gomega) {
			g.Expect(conditionOf(&getRender(vr)(g).Status.JobStatus, videov1alpha1.ConditionReconciling).Reason).NotTo(BeEmpty())
		}).Should(Succeed())

		By("amir runs the command the render's message gives, if it waits")
		var out bytes.Buffer
		err := kubectlvideo.Approve(ctx, &kubectlvideo.Env{Client: approver, Namespace: h.ns, Out: &out, ErrOut: &out},
			"pinned", kubectlvideo.ApproveOptions{Digest: digest})
		Eventually(paidRenders, within(10*time.Second)).Should(Equal(1), func() string {
			return "amir approved this very preview in a namespace without four eyes; the render says: " +
				conditionOf(&getRender(vr)(Default).Status.JobStatus, videov1alpha1.ConditionReconciling).Message +
				"; kubectl video approve --digest " + digest + " then said: " + out.String() + fmt.Sprint(err)
		})
	})
})
