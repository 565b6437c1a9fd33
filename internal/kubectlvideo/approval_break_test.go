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

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// An attack on issue 21 ("Render what was reviewed"): what a reviewer is shown must be what is
// paid for. A narration is narrated word for word, so none of it may be hidden from the person
// who approves it.
var _ = Describe("kubectl video preview, attacked", func() {
	It("shows a narration's control characters instead of letting them hide words from the reviewer", func() {
		ns := newNamespace("break-")
		vsb := threeScenes(ns, "hidden", "Hidden")
		Expect(k8sClient.Create(ctx, vsb)).To(Succeed())
		// ESC [8m conceals the text that follows on a terminal; U+202E reverses it; U+200B hides a
		// break between words.
		story := "We ship on Monday.\x1b[8m We also end the free plan.\x1b[0m Thanks\u202e for\u200b watching."
		vsb.Status.Phase = videov1alpha1.PhaseCompleted
		vsb.Status.PreviewedGeneration = vsb.Generation
		vsb.Status.Preview = &videov1alpha1.StoryboardPreview{Generation: vsb.Generation,
			Digest: "sha256:" + strings.Repeat("a", 64),
			Scenes: []videov1alpha1.PreviewScene{{Story: story, Thumbnail: "http://127.0.0.1:1/scene-1.jpg"}}}
		setStatus(vsb)

		r := kubectlVideo(ns, "", "preview", "vsb/hidden")
		Expect(r.err).NotTo(HaveOccurred())
		Expect(r.out).To(ContainSubstring("We also end the free plan."))
		for _, c := range []string{"\x1b", "\u202e", "\u200b"} {
			Expect(r.out).NotTo(ContainSubstring(c), "%q reaches the terminal", c)
		}
		Expect(r.out).To(And(ContainSubstring("U+001B"), ContainSubstring("U+202E"), ContainSubstring("U+200B")),
			"the reviewer sees that the narration holds them")
	})
})
