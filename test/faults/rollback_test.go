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
// as the trap of a removed operator and docs/release.md does not mention for a rollback.
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
