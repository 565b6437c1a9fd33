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
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The manager's memory must not grow with Secrets its objects do not name (docs/operating.md,
// "Memory and Secrets"). 1,000 unrelated Secrets of 100 KiB are 100 MiB of data; written with
// `kubectl apply` (or a GitOps tool that applies client-side) each carries that data a second
// time in its last-applied annotation, which is metadata: a metadata-only watch of every Secret
// still receives it.
const (
	unrelatedSecrets     = 1000
	unrelatedSecretBytes = 100 << 10
	// A manager that watched the metadata of every Secret decoded their annotations, dropping
	// them as it went: its peak RSS was 9.3 MiB higher with them (docs/operating.md). One that
	// cached the Secrets whole would hold 100 MiB more.
	unrelatedSecretsMaxGrowth = 5 << 20
)

// memoryRun is what one manager process used to complete one render.
type memoryRun struct {
	rss, peak int64 // VmRSS when the render completed, VmHWM (the peak) over the run
}

// procMemory reads VmRSS and VmHWM of pid from /proc, in bytes.
func procMemory(t *testing.T, pid int) memoryRun {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the manager's memory: %v", err)
	}
	var m memoryRun
	for _, line := range strings.Split(string(status), "\n") {
		field, value, ok := strings.Cut(line, ":")
		if !ok || (field != "VmRSS" && field != "VmHWM") {
			continue
		}
		kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			t.Fatalf("%s of /proc/%d/status: %v", field, pid, err)
		}
		if field == "VmRSS" {
			m.rss = kib << 10
		} else {
			m.peak = kib << 10
		}
	}
	if m.rss == 0 || m.peak == 0 {
		t.Fatalf("/proc/%d/status has no VmRSS or VmHWM:\n%s", pid, status)
	}
	return m
}

// runOneRender starts a manager, has it complete one render in namespace tenant, and returns its
// memory at that point; the manager is stopped before it returns.
func (w *operatorWorld) runOneRender(g Gomega, tenant, name string) (memoryRun, string) {
	w.t.Helper()
	p := w.start()
	vr := &videov1alpha1.VideoRender{}
	g.Expect(yaml.UnmarshalStrict([]byte(`
metadata: {name: `+name+`}
spec:
  storyboard:
    videoName: `+name+`
    scenes: [{story: "One render, so that the manager has read its API key and followed a job."}]`), vr)).To(Succeed())
	vr.Namespace = tenant
	g.Expect(w.c.Create(w.t.Context(), vr)).To(Succeed())
	g.Eventually(func() videov1alpha1.Phase {
		w.clock.Advance(time.Hour)
		got := &videov1alpha1.VideoRender{}
		g.Expect(w.c.Get(w.t.Context(), client.ObjectKeyFromObject(vr), got)).To(Succeed())
		return got.Status.Phase
	}, 3*time.Minute, 250*time.Millisecond).Should(Equal(videov1alpha1.PhaseCompleted), "manager logs:\n%s", p.logs)
	m := procMemory(w.t, p.cmd.Process.Pid)
	p.stop(w.t, 30*time.Second)
	return m, p.logs.String()
}

// createUnrelatedSecrets writes n Secrets of size bytes in namespaces no video object uses, as
// `kubectl apply` writes them: the data, and the last-applied annotation holding it again.
func (w *operatorWorld) createUnrelatedSecrets(g Gomega, n, size int) {
	w.t.Helper()
	const perNamespace = 100
	for i := 0; i < n/perNamespace; i++ {
		w.namespace(fmt.Sprintf("unrelated-%d", i), false)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				s := &corev1.Secret{
					TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
					ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("unrelated-%d", i/perNamespace), Name: fmt.Sprintf("unrelated-%d", i)},
					Data:       map[string][]byte{"blob": bytes.Repeat([]byte{byte('a' + i%26)}, size)},
				}
				applied, err := json.Marshal(s)
				if err != nil {
					errs <- err
					continue
				}
				s.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(applied)}
				if err := w.c.Create(w.t.Context(), s); err != nil {
					errs <- fmt.Errorf("creating Secret %s/%s: %w", s.Namespace, s.Name, err)
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}
}

// TestManagerMemoryIgnoresUnrelatedSecrets runs the manager as its own process twice against one
// API server, each time until it completed a render: before and after 1,000 Secrets of 100 KiB
// that no video object names were written. The second run's peak RSS may not exceed the first's
// by more than unrelatedSecretsMaxGrowth: a manager that lists, watches or decodes every Secret
// of the cluster (even metadata only, even to drop it) receives the 100 MiB in the
// last-applied annotations and fails this. Its logs name the one watch of Secrets it started:
// the render's Secret name.
func TestManagerMemoryIgnoresUnrelatedSecrets(t *testing.T) {
	g := NewWithT(t)
	w := newOperatorWorld(t)
	w.namespace("tenant", true)

	quiet, _ := w.runOneRender(g, "tenant", "quiet")
	w.createUnrelatedSecrets(g, unrelatedSecrets, unrelatedSecretBytes)
	crowded, logs := w.runOneRender(g, "tenant", "crowded")

	// The one name the render names is watched, and nothing wider.
	g.Expect(logs).To(ContainSubstring(`"msg":"Watching the Secrets of one name","name":"` + videov1alpha1.DefaultAPIKeySecretName + `"`))
	g.Expect(strings.Count(logs, `"msg":"Watching the Secrets of one name"`)).To(Equal(1), logs)
	g.Expect(logs).NotTo(ContainSubstring("metadata-only watch of every Secret"))

	mib := func(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	t.Logf("manager RSS at the render's completion: %s without, %s with %d unrelated Secrets of %d KiB; peak %s without, %s with",
		mib(quiet.rss), mib(crowded.rss), unrelatedSecrets, unrelatedSecretBytes>>10, mib(quiet.peak), mib(crowded.peak))
	g.Expect(crowded.peak-quiet.peak).To(BeNumerically("<", unrelatedSecretsMaxGrowth),
		"the manager's peak RSS grew by %s with %d unrelated Secrets", mib(crowded.peak-quiet.peak), unrelatedSecrets)
}
