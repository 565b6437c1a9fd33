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
	"encoding/json"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
	"github.com/videoops/video-operator/internal/testutil"
)

// largeRender is a VideoRender whose inline storyboard is a recorded talk with a word-level
// transcript of sentences sentences of ten words each, after 59 story scenes: about 1.4 MB of
// JSON for 2,400 sentences.
func largeRender(ns, name string, sentences int) *unstructured.Unstructured {
	scenes := make([]any, 0, 60)
	for i := range 59 {
		scenes = append(scenes, map[string]any{"story": fmt.Sprintf("Chapter %d of the talk, introduced in one sentence.", i+1)})
	}
	transcript := make([]any, 0, sentences)
	t := 0.0
	for i := range sentences {
		words := make([]any, 0, 10)
		for j := range 10 {
			start := math.Round(t*100) / 100
			words = append(words, map[string]any{"word": fmt.Sprintf("word%d", (i*10+j)%1000), "start_time": start, "end_time": math.Round((t+0.25)*100) / 100})
			t += 0.35
		}
		transcript = append(transcript, map[string]any{"speakerId": int64(i % 3), "words": words})
	}
	scenes = append(scenes, map[string]any{
		"audioUrl": "https://example.com/talks/keynote.mp3", "audioLanguage": "en-US", "transcript": transcript,
	})
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": videov1alpha1.GroupVersion.String(),
		"kind":       "VideoRender",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{"storyboard": map[string]any{
			"videoName": "Keynote with transcript",
			"scenes":    scenes,
		}},
	}}
	return u
}

var _ = Describe("A storyboard near etcd's object size limit", func() {
	It("is applied server-side, submitted once, and its status writes still fit", func() {
		// A 2.3-hour talk renders in about a second here.
		h := newHarness(simulator.Options{TimeScale: 0.0001})
		h.createSecret(testAPIKey)
		h.startManager()

		obj := largeRender(h.ns, "keynote", 2400)
		raw, err := json.Marshal(obj.Object)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("object of %d bytes\n", len(raw))
		Expect(len(raw)).To(BeNumerically(">", 1300*1000), "the object should be near the limit")
		Expect(len(raw)).To(BeNumerically("<", testutil.EtcdObjectLimit-32*1024), "room for metadata and status")

		// Client-side kubectl apply would copy the object into an annotation (at most 256 KiB):
		// large objects are applied server-side.
		Expect(k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj),
			client.FieldOwner("large-object-test"), client.ForceOwnership)).To(Succeed())

		render := &videov1alpha1.VideoRender{}
		render.Namespace, render.Name = h.ns, "keynote"
		Eventually(func(g Gomega) {
			got := getRender(render)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "Ready: %+v", got.Status.Conditions)
			g.Expect(got.Status.Outputs).NotTo(BeNil())
			g.Expect(got.Status.Outputs.VideoURL).NotTo(BeEmpty())
			g.Expect(got.Spec.Storyboard.Scenes).To(HaveLen(60))
			g.Expect(got.Spec.Storyboard.Scenes[59].Transcript).To(HaveLen(2400))
		}, within(60*time.Second)).Should(Succeed())

		jobs := h.jobsNamed("Keynote with transcript")
		Expect(jobs).To(HaveLen(1), "submitted exactly once")
		Expect(len(jobs[0].Request)).To(BeNumerically(">", 1200*1000), "the whole transcript was sent")
	})
})

// denseRender is a VideoRender whose inline storyboard is n of the smallest valid scene,
// {"story":""}: the most list items, and the most rule evaluations at admission, per byte.
func denseRender(ns, name string, n int) *unstructured.Unstructured {
	scenes := make([]any, n)
	for i := range scenes {
		scenes[i] = map[string]any{"story": ""}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": videov1alpha1.GroupVersion.String(),
		"kind":       "VideoRender",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       map[string]any{"storyboard": map[string]any{"videoName": "Dense", "scenes": scenes}},
	}}
}

// The API server evaluates the scene-level CEL rules on every write of the object, status writes
// included, at about 0.2 ms per scene on CI's machine (README, "API limits and sizes"): 10,000
// scenes, ten times the bound the CRD had, keep every write well inside WriteTimeout.
var _ = Describe("A storyboard of 10,000 scenes", func() {
	It("is admitted, checked before submitting and submitted once: scenes have no bound of our own", func() {
		h := newHarness(simulator.Options{TimeScale: 0.0001})
		h.createSecret(testAPIKey)
		h.startManager()

		const n = 10000
		obj := denseRender(h.ns, "dense", n)
		start := time.Now()
		Expect(k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj),
			client.FieldOwner("large-object-test"), client.ForceOwnership)).To(Succeed())
		GinkgoWriter.Printf("%d scenes admitted in %v\n", n, time.Since(start))

		render := &videov1alpha1.VideoRender{}
		render.Namespace, render.Name = h.ns, "dense"
		Eventually(func(g Gomega) {
			got := getRender(render)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "Ready: %+v", got.Status.Conditions)
		}, within(90*time.Second)).Should(Succeed())
		GinkgoWriter.Printf("%d scenes rendered %v after the apply\n", n, time.Since(start))
		jobs := h.jobsNamed("Dense")
		Expect(jobs).To(HaveLen(1), "submitted exactly once")
	})
})

var _ = Describe("An in-flight record the API server does not write in time", func() {
	It("sends nothing, says so in a StatusWriteFailed event, and submits once when a write succeeds", func() {
		h := newHarness(simulator.Options{})
		h.createSecret(testAPIKey)
		var timedOut atomic.Int32
		// The first two in-flight writes outlast WriteTimeout, as on an object whose validation
		// takes the API server longer (README, "Time per write grows with the number of scenes").
		h.intercept = &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, _ := patch.Data(obj)
			if inFlightAttempt(data) != "" && timedOut.Add(1) <= 2 {
				return fmt.Errorf("injected: %w", context.DeadlineExceeded)
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}
		h.startManager()
		vr := storyRender(h.ns, "slow-writes", "Slow writes")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())

		Eventually(func() []string { return h.eventReasons("slow-writes") }, within(30*time.Second)).Should(ContainElement("StatusWriteFailed"))
		render := &videov1alpha1.VideoRender{}
		render.Namespace, render.Name = h.ns, "slow-writes"
		Eventually(func(g Gomega) {
			got := getRender(render)(g)
			g.Expect(readyFor(&got.Status.JobStatus, got.Generation)).To(BeTrue(), "Ready: %+v", got.Status.Conditions)
		}, within(60*time.Second)).Should(Succeed())
		Expect(timedOut.Load()).To(BeNumerically(">=", 3), "the write was tried again after the failures")
		Expect(h.jobsNamed("Slow writes")).To(HaveLen(1), "submitted exactly once")
		Expect(h.sim.Calls(apiclient.EndpointRenderStoryboard)).To(Equal(1), "nothing was sent for the unwritten attempts")
		h.expectNoKeyLeak()
	})
})
