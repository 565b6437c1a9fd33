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

package kubectlvideo

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Issue 21, case 8: kubectl video approve writes the pin from the preview the person looked at,
// with an optimistic lock, and refuses a preview that changed between showing and approving.
var _ = Describe("kubectl video approve", Ordered, func() {
	var vsb *videov1alpha1.VideoStoryboard
	var first string

	BeforeAll(func() {
		vsb = readyStoryboard("approve-me", "Approve me")
		first = vsb.Status.Preview.Digest
		Expect(first).To(HavePrefix("sha256:"))
		vr := fromYAML(&videov1alpha1.VideoRender{}, liveNS, "metadata: {name: approve-it}\nspec: {storyboardRef: {name: approve-me, approval: Pinned}}")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(reconcilingReason(getRenderNamed(liveNS, "approve-it")(g))).To(Equal(string(videov1alpha1.ReasonAwaitingApproval)))
		}).Should(Succeed())
	})

	It("preview prints the digest and the exact approve command; status says which preview the render waits for", func() {
		r := kubectlVideo(liveNS, "", "preview", "vsb/approve-me")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("Preview digest: " + first))
		Expect(r.out).To(ContainSubstring("To approve this preview for vr/approve-it: kubectl video approve vr/approve-it -n " + liveNS + " --digest " + first))

		r = kubectlVideo(liveNS, "", "status", "vr/approve-it")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`Waiting for:\s+approval of preview ` + first + ` of vsb/approve-me \(generation 1\)`))
		Expect(r.out).To(MatchRegexp(`To approve:\s+kubectl video approve vr/approve-it -n ` + liveNS + ` --digest ` + first))
	})

	It("a preview that changes between showing and approving is refused, and nothing is written", func() {
		Eventually(func() error {
			cur := &videov1alpha1.VideoStoryboard{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(vsb), cur); err != nil {
				return err
			}
			story := "A second version nobody reviewed yet."
			cur.Spec.Scenes[0].Story = &story
			return k8sClient.Update(ctx, cur)
		}).Should(Succeed())
		var second string
		Eventually(func(g Gomega) {
			cur := &videov1alpha1.VideoStoryboard{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(vsb), cur)).To(Succeed())
			g.Expect(cur.Status.PreviewedGeneration).To(Equal(int64(2)))
			g.Expect(cur.Status.Preview.Digest).To(HavePrefix("sha256:"))
			second = cur.Status.Preview.Digest
		}).Should(Succeed())
		Expect(second).NotTo(Equal(first))

		r := kubectlVideo(liveNS, "", "approve", "vr/approve-it", "--digest", first)
		Expect(r.err).To(MatchError(And(
			ContainSubstring("the preview of vsb/approve-me changed since it was shown"),
			ContainSubstring("you reviewed "+first), ContainSubstring("its current preview (generation 2) is "+second),
			ContainSubstring("nothing was written"))))
		Expect(getRenderNamed(liveNS, "approve-it")(Default).Spec.StoryboardRef.ApprovedDigest).To(BeEmpty())
		Consistently(func(g Gomega) string { return getRenderNamed(liveNS, "approve-it")(g).Status.JobID }, "300ms").Should(BeEmpty())
	})

	It("an edit of the render between reading and writing is a conflict, not overwritten", func() {
		cur := &videov1alpha1.VideoStoryboard{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(vsb), cur)).To(Succeed())
		// Someone labels the render after the plugin read it: the plugin's write must fail.
		plain, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		racing := interceptor.NewClient(plain, interceptor.Funcs{
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				other := getRenderNamed(liveNS, obj.GetName())(Default)
				other.Labels = map[string]string{"edited": "meanwhile"}
				Expect(k8sClient.Update(ctx, other)).To(Succeed())
				return c.Update(ctx, obj, opts...)
			},
		})
		r := runPlugin(Overrides{Client: racing, Namespace: liveNS}, "", "approve", "vr/approve-it", "--digest", cur.Status.Preview.Digest)
		Expect(r.err).To(MatchError(ContainSubstring("vr/approve-it changed since it was read: nothing was written")))
		got := getRenderNamed(liveNS, "approve-it")(Default)
		Expect(got.Spec.StoryboardRef.ApprovedDigest).To(BeEmpty())
		Expect(got.Labels).To(HaveKeyWithValue("edited", "meanwhile"), "the other edit stands")
	})

	It("approve writes the pin of the preview shown, and the render pays for it once", func() {
		cur := &videov1alpha1.VideoStoryboard{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(vsb), cur)).To(Succeed())
		second := cur.Status.Preview.Digest
		r := kubectlVideo(liveNS, "", "approve", "vr/approve-it", "--digest", second)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("Approved preview " + second + " of vsb/approve-me for vr/approve-it"))
		Eventually(func(g Gomega) {
			got := getRenderNamed(liveNS, "approve-it")(g)
			g.Expect(got.Spec.StoryboardRef.ApprovedDigest).To(Equal(second))
			g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted), "%+v", got.Status.Conditions)
			g.Expect(got.Status.StoryboardDigest).To(Equal(second))
		}).Should(Succeed())
		jobID := getRenderNamed(liveNS, "approve-it")(Default).Status.JobID
		Consistently(func(g Gomega) string { return getRenderNamed(liveNS, "approve-it")(g).Status.JobID }, "300ms").Should(Equal(jobID))

		Expect(r.out).To(ContainSubstring("the approver is not recorded: this cluster has no approval policies"))
		r = kubectlVideo(liveNS, "", "status", "vr/approve-it")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`Approved:\s+` + second + `, approver not recorded`))
		Expect(r.out).To(MatchRegexp(`Rendered:\s+` + second + ` \(.*; approver not recorded`))

		r = kubectlVideo(liveNS, "", "approve", "vr/approve-it", "--digest", second)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("already approves preview " + second))
	})
})

func reconcilingReason(vr *videov1alpha1.VideoRender) string {
	for _, c := range vr.Status.Conditions {
		if c.Type == string(videov1alpha1.ConditionReconciling) {
			return c.Reason
		}
	}
	return ""
}
