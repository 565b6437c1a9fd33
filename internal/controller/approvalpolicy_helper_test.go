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
	"regexp"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
	"github.com/videoops/video-operator/internal/testutil"
)

// The approval policies of config/approval, installed as config/default installs them (the
// video-operator- name prefix), for the specs of approvalpolicy_test.go. Policies are
// cluster-wide: so that the other specs of this package see the API server they were written
// for, the test copies of the bindings match only namespaces labelled approvalTestLabel
// (newApprovalNamespace); nothing else in them differs from what is shipped.
const (
	approvalTestLabel = testutil.ApprovalTestLabel
	installPrefix     = "video-operator-"
	approverRole      = installPrefix + "videorender-approver"
)

var installApprovalOnce sync.Once

// installApprovalPolicies installs config/approval and the user roles of config/rbac once, and
// waits until the API server enforces the policies.
func installApprovalPolicies() {
	GinkgoHelper()
	installApprovalOnce.Do(func() {
		objs, err := testutil.ApprovalManifests("true", "")
		Expect(err).NotTo(HaveOccurred())
		for _, obj := range objs {
			if err := k8sClient.Create(ctx, obj); !apierrors.IsAlreadyExists(err) {
				Expect(err).NotTo(HaveOccurred(), "%s %s", obj.GetKind(), obj.GetName())
			}
		}
		By("waiting until the API server enforces the approval policies")
		ns := newApprovalNamespace(false)
		editor := asUser(ns, "probe-editor", false)
		approver := asUser(ns, "probe-approver", true)
		digest := "sha256:" + strings.Repeat("a", 64)
		Eventually(func(g Gomega) {
			// A new name each time: one admitted before the policies were in force stays.
			vr := refRender(ns, "", "probe", "approvedDigest: "+digest)
			vr.GenerateName = "refused-"
			g.Expect(editor.Create(ctx, vr)).To(MatchError(ContainSubstring("approve on videorenders/approval")))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			vr := refRender(ns, "", "probe", "approval: Latest")
			vr.GenerateName = "stamped-"
			g.Expect(approver.Create(ctx, vr)).To(Succeed())
			g.Expect(vr.Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationApprovedBy, "probe-approver"))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			sb := storyPreview(ns, "", "Probe")
			sb.GenerateName = "stamped-"
			g.Expect(approver.Create(ctx, sb)).To(Succeed())
			g.Expect(sb.Annotations).To(HaveKeyWithValue(videov1alpha1.AnnotationSpecChangedBy, "probe-approver"))
		}).Should(Succeed())
	})
}

// awaitPoliciesIn waits until the API server applies the approval policies in namespace ns, just
// labelled: its admission plugins read namespaces from a cache, which learns a label a moment
// after it is written. With fourEyes, until it refuses approval: Latest there as four eyes does.
func awaitPoliciesIn(ns string, fourEyes bool) {
	GinkgoHelper()
	probe := func(c client.Client, extra, want string) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			// A new name each time: one admitted before the policies applied stays.
			vr := refRender(ns, "", "probe", extra)
			vr.GenerateName = "probe-"
			g.Expect(c.Create(ctx, vr)).To(MatchError(ContainSubstring(want)))
		}).Should(Succeed())
	}
	probe(asUser(ns, "probe-editor", false), "approval: Latest", "approve on videorenders/approval")
	if fourEyes {
		probe(asUser(ns, "probe-approver", true), "approval: Latest", "asks for four eyes")
	}
}

// newApprovalNamespace creates a namespace the test policies apply to, with four eyes on or off.
func newApprovalNamespace(fourEyes bool) string {
	GinkgoHelper()
	labels := map[string]string{approvalTestLabel: "true"}
	if fourEyes {
		labels[videov1alpha1.LabelFourEyes] = "true"
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "approval-", Labels: labels}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// asUser is a client that acts as user (impersonation), bound in namespace ns to the editor roles
// of renders and storyboards and, when approver, to the approver role. A user's bindings add up
// across calls.
func asUser(ns, user string, approver bool) client.Client {
	GinkgoHelper()
	// The bindings' names are made of the user's: a user name need not be an object name (a
	// certificate's CN "Smith, Alex").
	slug := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(user), "-"), "-")
	roles := []string{installPrefix + "videorender-editor-role", installPrefix + "videostoryboard-editor-role"}
	if approver {
		roles = append(roles, approverRole)
	}
	for _, role := range roles {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: slug + "-" + strings.TrimPrefix(role, installPrefix)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		if err := k8sClient.Create(ctx, rb); !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}
	}
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	cl, err := client.New(c, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	// RBAC is cached by the API server's authorizer only briefly; wait until the binding counts.
	Eventually(func() error {
		return cl.List(ctx, &videov1alpha1.VideoRenderList{}, client.InNamespace(ns))
	}).Should(Succeed())
	return client.WithFieldValidation(cl, metav1.FieldValidationStrict)
}

// startApproval starts a harness whose namespace the approval policies apply to (four eyes on or
// off), with the API key Secret and the manager running.
func startApproval(fourEyes bool) *harness {
	GinkgoHelper()
	installApprovalPolicies()
	h := newHarness(simulator.Options{})
	ns := &corev1.Namespace{}
	Expect(k8sClient.Get(ctx, client.ObjectKey{Name: h.ns}, ns)).To(Succeed())
	setLabel(ns, approvalTestLabel, "true")
	if fourEyes {
		setLabel(ns, videov1alpha1.LabelFourEyes, "true")
	}
	awaitPoliciesIn(h.ns, fourEyes)
	h.createSecret(testAPIKey)
	h.startManager()
	return h
}

// writeRender reads the render as c and updates it with change, again on a conflict (the manager
// writes the render's metadata too); it returns any other error.
func writeRender(c client.Client, vr *videov1alpha1.VideoRender, change func(*videov1alpha1.VideoRender)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &videov1alpha1.VideoRender{}
		if err := c.Get(ctx, key(vr), cur); err != nil {
			return err
		}
		change(cur)
		return c.Update(ctx, cur)
	})
}

// updateStoryboard reads the storyboard as c and updates it with change, again on a conflict.
func updateStoryboard(c client.Client, sb *videov1alpha1.VideoStoryboard, change func(*videov1alpha1.VideoStoryboard)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &videov1alpha1.VideoStoryboard{}
		if err := c.Get(ctx, key(sb), cur); err != nil {
			return err
		}
		change(cur)
		return c.Update(ctx, cur)
	})
}
