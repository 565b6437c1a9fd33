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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// TestTwoManagersSideBySide is docs/architecture.md "Several managers, install and uninstall":
// "several managers run side by side, each over its own namespaces (`--watch-namespaces`) with its
// own leader-election lease". Two manager processes in one namespace, as two Helm releases
// run them (the chart derives --leader-election-id from the release), each watching its own
// tenant namespace: both hold their own Lease and both complete the render of their namespace.
// With the one fixed id of earlier charts the second never led and its tenants were never served.
func TestTwoManagersSideBySide(t *testing.T) {
	g := NewWithT(t)
	w := newOperatorWorld(t)
	const ops = "video-operator-system"
	w.namespace(ops, false)
	managers := map[string]string{ // tenant namespace: lease, as releases tenants-a and tenants-b derive them
		"team-a": "tenants-a-video-operator.video.videoops.io",
		"team-b": "tenants-b-video-operator.video.videoops.io",
	}
	procs := map[string]*proc{}
	for ns, lease := range managers {
		w.namespace(ns, true)
		procs[ns] = w.start("--watch-namespaces="+ns, "--leader-elect", "--leader-election-id="+lease, "--leader-election-namespace="+ops)
	}
	for ns := range managers {
		vr := &videov1alpha1.VideoRender{}
		g.Expect(yaml.UnmarshalStrict([]byte(`
metadata: {name: video}
spec:
  storyboard:
    videoName: `+ns+`
    scenes: [{story: A video of one tenant made by the manager of that tenant.}]`), vr)).To(Succeed())
		vr.Namespace = ns
		g.Expect(w.c.Create(t.Context(), vr)).To(Succeed())
	}
	completed := func(ns string) bool {
		vr := &videov1alpha1.VideoRender{}
		g.Expect(w.c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "video"}, vr)).To(Succeed())
		return vr.Status.Phase == videov1alpha1.PhaseCompleted
	}
	g.Eventually(func() []string {
		w.clock.Advance(time.Hour)
		var done []string
		for ns := range managers {
			if completed(ns) {
				done = append(done, ns)
			}
		}
		return done
	}, 90*time.Second, 250*time.Millisecond).Should(ConsistOf("team-a", "team-b"),
		"team-a's manager:\n%s\nteam-b's manager:\n%s", procs["team-a"].logs, procs["team-b"].logs)

	holders := map[string]bool{}
	for ns, lease := range managers {
		l := &coordinationv1.Lease{}
		g.Expect(w.c.Get(t.Context(), client.ObjectKey{Namespace: ops, Name: lease}, l)).To(Succeed())
		g.Expect(l.Spec.HolderIdentity).NotTo(BeNil())
		holder := *l.Spec.HolderIdentity
		t.Logf("Lease %s/%s held by %s; VideoRender %s/video Completed", ops, lease, holder, ns)
		holders[holder] = true
	}
	g.Expect(holders).To(HaveLen(2), "each manager holds its own Lease")
	// Each job was submitted once, by the manager of its namespace.
	g.Expect(w.sim.Submissions(apiKey)).To(Equal(2))
}
