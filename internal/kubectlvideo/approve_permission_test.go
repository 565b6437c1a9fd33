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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/testutil"
)

// kubectl video approve asks first (docs/approval.md): a SelfSubjectAccessReview for the verb
// approve on videorenders/approval before it writes. Users are impersonated; the approval policies
// and roles of config/approval are installed as config/default names them, their bindings
// limited to namespaces labelled approvalTestLabel, so the other specs of the suite see the API
// server they were written for.
var _ = Describe("kubectl video approve asks first", Ordered, func() {
	const approvalTestLabel = testutil.ApprovalTestLabel
	var ns, digest string
	var editor, approver client.Client

	// asUser binds user in ns to the roles and returns a client that impersonates them.
	asUser := func(user string, roles ...string) client.Client {
		GinkgoHelper()
		for _, role := range roles {
			Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user + "-" + role},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
				Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
			})).To(Succeed())
		}
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
		cl, err := client.New(c, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() error { return cl.List(ctx, &videov1alpha1.VideoRenderList{}, client.InNamespace(ns)) }).Should(Succeed())
		return cl
	}

	BeforeAll(func() {
		objs, err := testutil.ApprovalManifests("true", "")
		Expect(err).NotTo(HaveOccurred())
		for _, obj := range objs {
			if err := k8sClient.Create(ctx, obj); !apierrors.IsAlreadyExists(err) {
				Expect(err).NotTo(HaveOccurred(), "%s %s", obj.GetKind(), obj.GetName())
			}
		}
		// Four eyes on: there the approval carries the storyboard's author (elsewhere the policy
		// drops it, docs/approval.md).
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "approvers-",
			Labels: map[string]string{approvalTestLabel: "true", videov1alpha1.LabelFourEyes: "true"}}}
		Expect(k8sClient.Create(ctx, n)).To(Succeed())
		ns = n.Name
		editorRoles := []string{"video-operator-videorender-editor-role", "video-operator-videostoryboard-editor-role"}
		editor = asUser("erin-editor", editorRoles...)
		approver = asUser("amir-approver", append(editorRoles, ApproverRole)...)

		By("the editor writes the storyboard, whose preview completed (no manager watches this namespace)")
		// The API server loads new policies within a second or two: a probe's author is stamped
		// once they are in force.
		Eventually(func(g Gomega) {
			probe := threeScenes(ns, "", "Probe")
			probe.GenerateName = "probe-"
			g.Expect(editor.Create(ctx, probe)).To(Succeed())
			g.Expect(probe.Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationSpecChangedBy, "erin-editor"), "the policies are in force")
		}).Should(Succeed())
		vsb := threeScenes(ns, "launch", "Launch")
		Expect(editor.Create(ctx, vsb)).To(Succeed())
		Expect(vsb.Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationSpecChangedBy, "erin-editor"))
		digest = "sha256:" + strings.Repeat("ef", 32)
		vsb.Status.Phase = videov1alpha1.PhaseCompleted
		vsb.Status.PreviewedGeneration = vsb.Generation
		vsb.Status.JobID = "job-preview-1"
		vsb.Status.Preview = &videov1alpha1.StoryboardPreview{Generation: vsb.Generation, Digest: digest, Scenes: []videov1alpha1.PreviewScene{
			{Story: "One", Thumbnail: "http://127.0.0.1:1/1.jpg"}}}
		setStatus(vsb)
		Expect(editor.Create(ctx, fromYAML(&videov1alpha1.VideoRender{}, ns, "metadata: {name: launch}\nspec: {storyboardRef: {name: launch}}"))).To(Succeed())
	})

	It("as an editor: says why, and writes nothing", func() {
		before := getRenderNamed(ns, "launch")(Default)
		r := runPlugin(Overrides{Client: editor, Namespace: ns}, "", "approve", "vr/launch", "--digest", digest)
		Expect(r.err).To(MatchError(And(
			ContainSubstring("you may edit this render but not approve it; ask someone bound to video-operator-videorender-approver"),
			ContainSubstring("approve on videorenders/approval in namespace "+ns), ContainSubstring("nothing was written"))))
		after := getRenderNamed(ns, "launch")(Default)
		Expect(after.ResourceVersion).To(Equal(before.ResourceVersion), "nothing was written")
		Expect(after.Spec.StoryboardRef.ApprovedDigest).To(BeEmpty())

		By("render, which creates a pinned render, asks first too")
		r = runPlugin(Overrides{Client: editor, Namespace: ns}, "", "render", "vsb/launch", "--name", "launch-2", "--yes")
		Expect(r.err).To(MatchError(ContainSubstring("you may edit this render but not approve it")))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "launch-2"}, &videov1alpha1.VideoRender{}))).To(BeTrue())
	})

	It("as an approver: writes the pin with the storyboard's author, and prints who approved which digest", func() {
		r := runPlugin(Overrides{Client: approver, Namespace: ns}, "", "approve", "vr/launch", "--digest", digest)
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("Approved preview " + digest + " of vsb/launch for vr/launch (approved by amir-approver)"))
		got := getRenderNamed(ns, "launch")(Default)
		Expect(got.Spec.StoryboardRef.ApprovedDigest).To(Equal(digest))
		Expect(got.Annotations).To(And(HaveKeyWithValue(videov1alpha1.AnnotationApprovedBy, "amir-approver"),
			HaveKeyWithValue(videov1alpha1.AnnotationApprovedStoryboardAuthor, "erin-editor")))

		r = runPlugin(Overrides{Client: approver, Namespace: ns}, "", "status", "vr/launch")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(MatchRegexp(`Approved:\s+` + digest + `, approved by amir-approver`))
	})
})
