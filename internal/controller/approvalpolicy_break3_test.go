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
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/kubectlvideo"
	"github.com/videoops/video-operator/internal/simulator"
)

// The third review of approval as a permission (docs/approval.md). Each spec failed on commit
// 302692c for the reason its comment gives.
var _ = Describe("Four eyes holds for any user name and keeps a restored Latest render finished", func() {
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

	// Finding 1. Four eyes compares the approver with the author claim split at ", "
	// (`variables.user in variables.claim.split(', ')`), while the controller compares the whole
	// claim with the storyboard's spec-changed-by. A username that itself holds ", " is split
	// into pieces none of which is the user: an X.509 client certificate's CN, an OIDC name
	// claim, an AD display name ("Smith, Alex"). Such an author, bound to the approver role,
	// writes a script and approves its render with kubectl video approve (which copies
	// "Smith, Alex" as the author): the policy finds "Smith, Alex" in neither "Smith" nor "Alex",
	// the controller finds the claim equal to the storyboard's author, and the operator pays for
	// a script nobody but its author reviewed, in a namespace that asked for four eyes. (The same
	// split lets such a user approve a storyboard restored by someone else, "velero, Smith, Alex".)
	It("four eyes: an author whose username holds a comma may not approve his own script", func() {
		start(true)
		const smithName = "Smith, Alex"
		smith := asUser(h.ns, smithName, true)
		sb := storyPreview(h.ns, "script", "Smith script")
		Expect(smith.Create(ctx, sb)).To(Succeed())
		digest := firstPreview(sb).Digest
		Expect(getStoryboard(sb)(Default).Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationSpecChangedBy, smithName))
		vr := refRender(h.ns, "pinned", "script", "")
		Expect(smith.Create(ctx, vr)).To(Succeed())

		By("the author approves his own script with kubectl video approve")
		var out bytes.Buffer
		var err error
		Eventually(func() string {
			// Run again when the manager wrote the render in between (a conflict).
			out.Reset()
			err = kubectlvideo.Approve(ctx, &kubectlvideo.Env{Client: smith, Namespace: h.ns, Out: &out, ErrOut: &out},
				"pinned", kubectlvideo.ApproveOptions{Digest: digest})
			return fmt.Sprint(err)
		}).ShouldNot(ContainSubstring("changed since it was read"))
		Consistently(paidRenders, quiet).Should(BeZero(), func() string {
			return fmt.Sprintf("four eyes: %q wrote the script and approved its render alone (approve said: %s %v); annotations %v; status.approval %s",
				smithName, strings.TrimSpace(out.String()), err, getRender(vr)(Default).Annotations, renderApprovalOf(vr))
		})
	})

	// Finding 4. The restore sentinel holds back a render approved with approval: Latest (the
	// round-2 fix admits such a restore in a four-eyes namespace), but finishedRender refuses to
	// keep any Latest render Ready once its approval waits. docs/approval.md: a restored approval
	// "pays nothing new until an approver approves it again, and a finished render stays Ready".
	// A finished Latest render paid before four eyes, restored by Velero, turns Ready=False
	// AwaitingApproval (Argo CD: Suspended, Flux: not ready) though its video exists and nothing
	// changed; and it cannot be approved again as it is (four eyes refuses Latest).
	It("four eyes: a finished render with approval Latest stays Ready after a restore", func() {
		start(false)
		editor := asUser(h.ns, "erin-editor", false)
		amir := asUser(h.ns, "amir-approver", true)
		sb := storyPreview(h.ns, "script", "Script")
		Expect(editor.Create(ctx, sb)).To(Succeed())
		firstPreview(sb)
		vr := refRender(h.ns, "latest", "script", "approval: Latest")
		Expect(amir.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)
		backup := recordedRender(vr)

		By("four eyes is switched on; Velero restores the render without status")
		fourEyesOn(h.ns)
		Expect(restoreRenderAsAdmin(backup)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.JobID).To(Equal(backup.Status.JobID), "the job is adopted")
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(),
				"the restored render's video exists and nothing changed; conditions %+v", got.Status.Conditions)
		}, within(10*time.Second)).Should(Succeed())
		Consistently(paidRenders, quiet).Should(Equal(1))
	})

	// An approval removed while the policies were not installed (an upgrade that left them out,
	// a reinstall) leaves its stamps on a render without an approval. Once the policies are back,
	// every write of that render was refused as "writing the stamps" (the manager's own finalizer
	// write too, so it could not be deleted): a write that carries stamps the render already had
	// now removes them.
	It("keeps a render whose approval was removed without the policies writable and deletable once they are back", func() {
		start(false)
		editor := asUser(h.ns, "erin-editor", false)
		approver := asUser(h.ns, "amir-approver", true)
		sb := storyPreview(h.ns, "script", "Script")
		Expect(editor.Create(ctx, sb)).To(Succeed())
		digest := firstPreview(sb).Digest
		vr := refRender(h.ns, "pinned", "script", "approvedDigest: "+digest)
		Expect(approver.Create(ctx, vr)).To(Succeed())
		eventuallyReady(vr)

		By("the policies stop applying to the namespace; an editor removes the approval")
		ns := &corev1.Namespace{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: h.ns}, ns)).To(Succeed())
		updateObject(ns, func(o client.Object) {
			l := o.GetLabels()
			delete(l, approvalTestLabel)
			o.SetLabels(l)
		})
		Eventually(func(g Gomega) {
			probe := refRender(h.ns, "", "probe", "approval: Latest")
			probe.GenerateName = "unguarded-"
			g.Expect(editor.Create(ctx, probe)).To(Succeed(), "no policy applies")
			g.Expect(k8sClient.Delete(ctx, probe)).To(Succeed())
		}).Should(Succeed())
		Expect(writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) { cur.Spec.StoryboardRef.ApprovedDigest = "" })).To(Succeed())
		Expect(getRender(vr)(Default).Annotations).To(HaveKey(videov1alpha1.AnnotationApprovedBy), "no policy removed the stamps")

		By("the policies apply again: the render is labelled, its stale stamps go, and it is deleted")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: h.ns}, ns)).To(Succeed())
		setLabel(ns, approvalTestLabel, "true")
		awaitPoliciesIn(h.ns, false)
		Expect(writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) { cur.Labels = with(cur.Labels, "team", "launch") })).To(Succeed())
		Expect(getRender(vr)(Default).Annotations).NotTo(HaveKey(videov1alpha1.AnnotationApprovedBy))
		Expect(writeRender(editor, vr, func(cur *videov1alpha1.VideoRender) {
			cur.Annotations = with(cur.Annotations, videov1alpha1.AnnotationApprovedBy, "amir-approver")
		})).To(MatchError(ContainSubstring("record who approved this render")), "adding a stamp is still refused")
		Expect(editor.Delete(ctx, vr)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, key(vr), &videov1alpha1.VideoRender{})) }).Should(BeTrue())
		Consistently(paidRenders, quiet).Should(Equal(1))
	})
})

// renderApprovalOf prints the render's status.approval for a failure message.
func renderApprovalOf(vr *videov1alpha1.VideoRender) string {
	return fmt.Sprintf("%+v", getRender(vr)(Default).Status.Approval)
}

// fourEyesOn switches four eyes on in namespace ns.
func fourEyesOn(ns string) {
	GinkgoHelper()
	obj := &corev1.Namespace{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: ns}, obj)).To(Succeed())
	setLabel(obj, videov1alpha1.LabelFourEyes, "true")
	awaitPoliciesIn(ns, true)
}

// restoreRenderAsAdmin deletes the render and creates it again from its backup without status,
// as Velero (cluster-admin) does; it returns the create's error.
func restoreRenderAsAdmin(backup *videov1alpha1.VideoRender) error {
	GinkgoHelper()
	Expect(k8sClient.Delete(ctx, backup)).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, key(backup), &videov1alpha1.VideoRender{}))
	}).Should(BeTrue())
	again := backup.DeepCopy()
	again.ResourceVersion, again.UID, again.Generation, again.ManagedFields = "", "", 0, nil
	again.CreationTimestamp = metav1.Time{}
	again.Status = videov1alpha1.VideoRenderStatus{}
	return k8sClient.Create(ctx, again)
}
