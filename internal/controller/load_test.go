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
	"context"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// writeCounter counts the manager's status writes (patches and updates of the status
// subresource) per object name.
type writeCounter struct {
	mu     sync.Mutex
	writes map[string]int
	// patches are the bodies written, per object, for the failure message.
	patches map[string][]string
}

func countStatusWrites(h *harness) *writeCounter {
	w := &writeCounter{writes: map[string]int{}, patches: map[string][]string{}}
	h.intercept = &interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, _ := patch.Data(obj)
			w.add(sub, obj, string(data))
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			w.add(sub, obj, "(update)")
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}
	return w
}

func (w *writeCounter) add(sub string, obj client.Object, body string) {
	if sub != "status" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes[obj.GetName()]++
	w.patches[obj.GetName()] = append(w.patches[obj.GetName()], body)
}

func (w *writeCounter) bodies(name string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.patches[name], "\n")
}

func (w *writeCounter) of(name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes[name]
}

// DESIGN.md "Load on the cluster": the calm case of a render (no conflict, no fault, no budget)
// costs at most 3 status writes (in-flight record, job id, completion) and at most 1 Event.
var _ = Describe("Load on the cluster", func() {
	calmRender := func(h *harness, w *writeCounter, name string) {
		GinkgoHelper()
		vr := storyRender(h.ns, name, "Calm "+name)
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		Eventually(func(g Gomega) {
			got := getRender(vr)(g)
			g.Expect(got.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted))
			g.Expect(conditionOf(&got.Status.JobStatus, videov1alpha1.ConditionReady).ObservedGeneration).To(Equal(got.Generation))
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		}).Should(Succeed())
		// Events are recorded asynchronously after the write they follow; what comes late is
		// counted too.
		Consistently(func(g Gomega) {
			g.Expect(w.of(name)).To(BeNumerically("<=", 3), "status writes of one render:\n%s", w.bodies(name))
			g.Expect(len(h.eventReasons(name))).To(BeNumerically("<=", 1), "events of one render: %v", h.eventReasons(name))
		}, 2*time.Second).Should(Succeed())
		Expect(w.of(name)).To(Equal(3), "the in-flight record, the job id and the completion are each written")
		Expect(h.jobsNamed("Calm " + name)).To(HaveLen(1))
	}

	It("writes the status of a polled render three times and records at most one event", func() {
		h := newHarness(simulator.Options{})
		w := countStatusWrites(h)
		h.createSecret(testAPIKey)
		h.startManager()
		calmRender(h, w, "calm-polled")
	})

	It("writes the status of a render that calls back three times and records at most one event", func() {
		h := newHarness(simulator.Options{})
		w := countStatusWrites(h)
		h.callbackPoll = time.Hour // only the callback ends the job
		h.createSecret(testAPIKey)
		h.startManager()
		calmRender(h, w, "calm-callback")
	})
})
