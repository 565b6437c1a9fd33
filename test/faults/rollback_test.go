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

package faults

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// TestDocumentedRollbackLetsVideosBeDeleted: this tree's manager puts the finalizer
// video.videoops.io/charge on every VideoRender of a namespace with a VideoBudget. The manager of
// 0.1.0 has no finalizers at all, so after docs/release.md's rollback (the older manager, the
// CRDs kept) nothing removes it: `kubectl delete videorender`, a namespace's deletion and a GitOps
// prune hang in Terminating for as long as the rollback lasts, which docs/uninstall.md describes
// as the trap of a removed operator and docs/release.md did not mention for a rollback. Its
// "Back to 0.1.0" now lets go of them first with this tree's manager (--release-finalizers), as
// the test does before it starts the 0.1.0 manager.
func TestDocumentedRollbackLetsVideosBeDeleted(t *testing.T) {
	old := buildManagerAt(t, previousRelease)
	w := newWorld(t, simulator.Options{})
	createYAML(t, w.ns, `
apiVersion: video.videoops.io/v1alpha1
kind: VideoBudget
metadata: {name: default}
spec: {period: Monthly, maxRenders: 1000, maxRenderSeconds: 360000, maxPreviews: 1000}
`)
	current := w.startManager()
	createYAML(t, w.ns, inlineRender("done", ""))
	w.waitSettled("the render of this release", func(s upgradeState) bool { return s.State == "Ready" })
	current.kill(t, syscall.SIGTERM, shutdownWithin)

	// docs/release.md "Back to 0.1.0", step 1, before the 0.1.0 chart: the manager of the version
	// left behind, in its uninstall mode over the release's namespaces, lets go of its finalizers
	// (here the manager process is already stopped, as --stop-deployment stops its Deployment).
	page, err := os.ReadFile(filepath.Join(gitOutput(t, ".", "rev-parse", "--show-toplevel"), "docs", "release.md"))
	must(t, err)
	_, back, _ := strings.Cut(string(page), "\n#### Back to 0.1.0\n")
	step, helm := strings.Index(back, "manager --release-finalizers"), strings.Index(back, "helm upgrade $RELEASE video-operator-0.1.0.tgz")
	if step < 0 || helm < 0 || step > helm {
		t.Fatalf("docs/release.md \"Back to 0.1.0\" no longer lets go of the finalizers with --release-finalizers before the 0.1.0 chart; this test follows it")
	}
	held := &videov1alpha1.VideoRender{}
	must(t, k8s.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: "done"}, held))
	if !slices.Contains(held.Finalizers, videov1alpha1.FinalizerCharge) {
		t.Fatalf("the render of this release holds no %s (%v): the check below tests nothing", videov1alpha1.FinalizerCharge, held.Finalizers)
	}
	uninstall := w.startManager("--release-finalizers", "--leader-elect",
		"--leader-election-id=video-operator.video.videoops.io", "--leader-election-namespace="+w.ns)
	select {
	case <-uninstall.done:
		if uninstall.err != nil {
			b, _ := os.ReadFile(uninstall.log)
			t.Fatalf("the uninstall mode failed: %v\n%s", uninstall.err, b)
		}
	case <-time.After(60 * time.Second):
		b, _ := os.ReadFile(uninstall.log)
		t.Fatalf("the uninstall mode did not end within 60 s:\n%s", b)
	}

	oldProc := w.startManagerBinary(old.bin)
	waitFor(t, 30*time.Second, "the 0.1.0 manager's workers", func() bool {
		b, err := os.ReadFile(oldProc.log)
		return err == nil && strings.Count(string(b), "Starting workers") >= 2
	})
	vr := &videov1alpha1.VideoRender{}
	must(t, k8s.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: "done"}, vr))
	t.Logf("finalizers before the delete: %v", vr.Finalizers)
	must(t, k8s.Delete(t.Context(), vr))
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		err := k8s.Get(t.Context(), client.ObjectKey{Namespace: w.ns, Name: "done"}, vr)
		if apierrors.IsNotFound(err) {
			return
		}
		must(t, err)
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("after the documented rollback to 0.1.0, a deleted VideoRender is still Terminating 30 s later, finalizers %v", vr.Finalizers)
}
