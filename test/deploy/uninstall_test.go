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

package deploy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// TestUninstallLeavesNothingStuck is docs/architecture.md "Several managers, install and
// uninstall": "Uninstalling lets go of the operator's finalizers, with what they guard settled,
// before the manager goes." Every render of a namespace with a VideoBudget holds the
// charge finalizer for life; with the operator removed, deleting a render, its namespace or the
// CRDs used to hang. The manager runs as a process over renders in every state (completed,
// running, waiting on the budget, awaiting approval); then the uninstall mode runs as the Helm
// chart's pre-delete hook runs it (--release-finalizers --stop-deployment --leader-elect): it
// scales the manager's Deployment to 0, waits for the manager's lease, settles the budget, and
// lets go. Deleting every object and then the CRDs finishes within a bound, and the running job
// was charged its estimate.
func TestUninstallLeavesNothingStuck(t *testing.T) {
	g := NewWithT(t)
	w := newOperatorWorld(t)
	const (
		ops, tenant = "video-operator-system", "tenant"
		lease       = "video-operator.video.videoops.io"
		deployment  = "video-operator-controller-manager"
	)
	w.namespace(ops, false)
	w.namespace(tenant, true)
	ctx := t.Context()
	create := func(doc string, obj client.Object) {
		t.Helper()
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatal(err)
		}
		obj.SetNamespace(tenant)
		g.Expect(w.c.Create(ctx, obj)).To(Succeed())
	}
	// Two renders fit; the seconds limit keeps each running job's reservation, with its
	// estimate, until its end is charged.
	create(`
metadata: {name: default}
spec: {period: Monthly, maxRenders: 2, maxRenderSeconds: 100000}`, &videov1alpha1.VideoBudget{})
	manager := w.start("--watch-namespaces="+tenant, "--leader-elect", "--leader-election-id="+lease, "--leader-election-namespace="+ops)

	render := func(name string) *videov1alpha1.VideoRender {
		vr := &videov1alpha1.VideoRender{}
		g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: name}, vr)).To(Succeed())
		return vr
	}
	reason := func(name string, cond videov1alpha1.ConditionType) func() string {
		return func() string {
			if c := meta.FindStatusCondition(render(name).Status.Conditions, string(cond)); c != nil && c.Status == metav1.ConditionTrue {
				return c.Reason
			}
			return ""
		}
	}
	advance := func() { w.clock.Advance(time.Hour) }

	// Completed: a render and the preview the approval render names.
	create(`
metadata: {name: preview}
spec:
  videoName: preview
  scenes: [{story: A preview that a person has not approved.}]`, &videov1alpha1.VideoStoryboard{})
	create(`
metadata: {name: completed}
spec:
  storyboard:
    videoName: completed
    scenes: [{story: A render that completed before the uninstall.}]`, &videov1alpha1.VideoRender{})
	g.Eventually(func() bool {
		advance()
		sb := &videov1alpha1.VideoStoryboard{}
		g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "preview"}, sb)).To(Succeed())
		return render("completed").Status.CompletedAt != nil && sb.Status.CompletedAt != nil
	}, 60*time.Second, 250*time.Millisecond).Should(BeTrue(), "the manager's log:\n%s", manager.logs)

	// Running: the clock stands still from here, so its job does not end.
	create(`
metadata: {name: running}
spec:
  storyboard:
    videoName: running
    scenes: [{story: A render whose job is still running when the operator is removed.}]`, &videov1alpha1.VideoRender{})
	g.Eventually(func() string { return render("running").Status.JobID }, 60*time.Second, 100*time.Millisecond).
		ShouldNot(BeEmpty(), "the manager's log:\n%s", manager.logs)
	// Awaiting approval: a person must pin the preview.
	create(`
metadata: {name: awaiting}
spec:
  storyboardRef: {name: preview, approval: Pinned}`, &videov1alpha1.VideoRender{})
	g.Eventually(reason("awaiting", videov1alpha1.ConditionReconciling), 60*time.Second, 100*time.Millisecond).
		Should(Equal(string(videov1alpha1.ReasonAwaitingApproval)))
	// Waiting on the budget: both renders of the period are taken.
	create(`
metadata: {name: waiting}
spec:
  storyboard:
    videoName: waiting
    scenes: [{story: A render the budget has no room for.}]`, &videov1alpha1.VideoRender{})
	g.Eventually(reason("waiting", videov1alpha1.ConditionStalled), 60*time.Second, 100*time.Millisecond).
		Should(Equal(string(videov1alpha1.ReasonBudgetExhausted)))

	var held []string
	for _, name := range []string{"completed", "running", "awaiting", "waiting"} {
		if slices.Contains(render(name).Finalizers, videov1alpha1.FinalizerCharge) {
			held = append(held, name)
		}
	}
	t.Logf("renders holding %s before the uninstall: %v", videov1alpha1.FinalizerCharge, held)
	g.Expect(held).To(ContainElements("completed", "running"), "the renders that reserved budget hold the finalizer")
	runningJob := render("running").Status.JobID
	estimate := bound.Render(render("running")).Seconds
	before := &videov1alpha1.VideoBudget{}
	g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "default"}, before)).To(Succeed())
	t.Logf("budget before: used %+v, %d reservation(s), charged jobs %v", before.Status.Used, len(before.Status.Reservations), before.Status.ChargedJobs)

	// The manager's Deployment, as the chart installs it: the hook scales it to 0 first. envtest
	// runs no controllers, so it has no pods, and the manager process stands for its pod.
	g.Expect(w.c.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ops, Name: deployment},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"control-plane": "controller-manager"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"control-plane": "controller-manager"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "example.com/video-operator:test"}}},
			},
		},
	})).To(Succeed())

	// The uninstall starts while the manager still runs: it must wait for the manager's lease,
	// and let go of nothing meanwhile.
	uninstall := w.start("--release-finalizers", "--stop-deployment="+deployment, "--watch-namespaces="+tenant,
		"--leader-elect", "--leader-election-id="+lease, "--leader-election-namespace="+ops)
	g.Consistently(func() bool {
		return !uninstall.exited() && slices.Contains(render("running").Finalizers, videov1alpha1.FinalizerCharge)
	}, 3*time.Second, 250*time.Millisecond).Should(BeTrue(), "the uninstall did not wait for the running manager:\n%s", uninstall.logs)
	d := &appsv1.Deployment{}
	g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: ops, Name: deployment}, d)).To(Succeed())
	g.Expect(*d.Spec.Replicas).To(BeZero(), "the uninstall scales the manager's Deployment to 0")

	manager.stop(t, 30*time.Second)
	if !uninstall.wait(60 * time.Second) {
		t.Fatalf("the uninstall did not end within 60s of the manager's exit:\n%s", uninstall.logs)
	}
	g.Expect(uninstall.err).NotTo(HaveOccurred(), "the uninstall's log:\n%s", uninstall.logs)
	t.Logf("the uninstall's log:\n%s", uninstall.logs)

	// What the finalizers guarded is settled: the running job is charged its estimate, once, and
	// no reservation is left for a controller that is gone.
	after := &videov1alpha1.VideoBudget{}
	g.Expect(w.c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "default"}, after)).To(Succeed())
	t.Logf("budget after: used %+v, %d reservation(s), charged jobs %v", after.Status.Used, len(after.Status.Reservations), after.Status.ChargedJobs)
	g.Expect(after.Status.Reservations).To(BeEmpty())
	g.Expect(after.Status.ChargedJobs).To(ContainElement(runningJob))
	g.Expect(after.Status.Used.Renders).To(Equal(int64(2)))
	g.Expect(after.Status.Used.RenderSeconds).To(Equal(before.Status.Used.RenderSeconds+estimate),
		"the running render's estimate (%ds) is charged on top of the completed render's seconds", estimate)
	for _, name := range []string{"completed", "running", "awaiting", "waiting"} {
		g.Expect(render(name).Finalizers).NotTo(ContainElement(videov1alpha1.FinalizerCharge), name)
	}

	// The operator is gone: deleting the videos, then the CRDs, ends within a bound.
	start := time.Now()
	for _, obj := range []client.Object{&videov1alpha1.VideoRender{}, &videov1alpha1.VideoStoryboard{}, &videov1alpha1.VideoBudget{}} {
		g.Expect(w.c.DeleteAllOf(ctx, obj, client.InNamespace(tenant))).To(Succeed())
	}
	g.Eventually(func() int {
		var l videov1alpha1.VideoRenderList
		g.Expect(w.c.List(ctx, &l, client.InNamespace(tenant))).To(Succeed())
		return len(l.Items)
	}, 10*time.Second, 100*time.Millisecond).Should(BeZero(), "renders left Terminating")
	var crds apiextensionsv1.CustomResourceDefinitionList
	g.Expect(w.c.List(ctx, &crds)).To(Succeed())
	var names []string
	for i := range crds.Items {
		if strings.HasSuffix(crds.Items[i].Name, "."+videov1alpha1.GroupVersion.Group) {
			names = append(names, crds.Items[i].Name)
			g.Expect(w.c.Delete(ctx, &crds.Items[i])).To(Succeed())
		}
	}
	g.Expect(names).To(HaveLen(3))
	g.Eventually(func() []string {
		var left []string
		for _, n := range names {
			err := w.c.Get(ctx, client.ObjectKey{Name: n}, &apiextensionsv1.CustomResourceDefinition{})
			if !apierrors.IsNotFound(err) {
				left = append(left, fmt.Sprintf("%s (%v)", n, err))
			}
		}
		return left
	}, 30*time.Second, 200*time.Millisecond).Should(BeEmpty(), "CRDs left Terminating")
	t.Logf("deleted every video and the 3 CRDs in %s", time.Since(start).Round(time.Millisecond))
}
