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
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// samplesDir holds the samples that pay nothing (the namespace's VideoBudget); paidSamplesDir,
// opt-in, one sample per use of the service, each a paid render or preview. No sample is a
// Secret: applying them never overwrites a namespace's API key.
var (
	samplesDir     = filepath.Join("..", "..", "config", "samples")
	paidSamplesDir = filepath.Join(samplesDir, "paid")
)

// sampleFiles lists the sample manifests of dirs (every YAML file but the kustomization), by
// default of both directories.
func sampleFiles(dirs ...string) []string {
	GinkgoHelper()
	if len(dirs) == 0 {
		dirs = []string{samplesDir, paidSamplesDir}
	}
	var samples []string
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		for _, f := range files {
			if filepath.Base(f) != "kustomization.yaml" {
				samples = append(samples, f)
			}
		}
	}
	Expect(samples).NotTo(BeEmpty())
	return samples
}

// decodeSamples reads every document of a sample file.
func decodeSamples(path string) []*unstructured.Unstructured {
	GinkgoHelper()
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	var objs []*unstructured.Unstructured
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			break
		}
		Expect(err).NotTo(HaveOccurred())
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		js, err := yaml.YAMLToJSON(doc)
		Expect(err).NotTo(HaveOccurred(), "%s is not YAML", path)
		u := &unstructured.Unstructured{}
		Expect(u.UnmarshalJSON(js)).To(Succeed(), "%s does not decode", path)
		objs = append(objs, u)
	}
	return objs
}

// kubectlRunner is envtest's kubectl wrapper, whose type lives in an internal package.
type kubectlRunner interface {
	Run(args ...string) (stdout, stderr io.Reader, err error)
}

// runKubectl runs the envtest kubectl as a cluster admin and returns its stdout; stderr goes into
// the failure message.
func runKubectl(kubectl kubectlRunner, args ...string) string {
	GinkgoHelper()
	stdout, stderr, err := kubectl.Run(args...)
	out, _ := io.ReadAll(stdout)
	errOut, _ := io.ReadAll(stderr)
	Expect(err).NotTo(HaveOccurred(), "kubectl %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out, errOut)
	return string(out)
}

var _ = Describe("The samples in config/samples", func() {
	It("are all listed in their directory's kustomization", func() {
		for _, dir := range []string{samplesDir, paidSamplesDir} {
			data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
			Expect(err).NotTo(HaveOccurred())
			var k struct {
				Resources []string `json:"resources"`
			}
			Expect(yaml.Unmarshal(data, &k)).To(Succeed())
			var names []string
			for _, f := range sampleFiles(dir) {
				names = append(names, filepath.Base(f))
			}
			Expect(k.Resources).To(ConsistOf(names), "%s/kustomization.yaml", dir)
		}
	})

	// A tenant applying config/samples/ once had its real key overwritten by a placeholder and
	// paid for every sample: what pays is in paid/ only, and nothing writes a Secret.
	It("pay nothing and write no Secret outside paid/", func() {
		for _, f := range sampleFiles() {
			for _, obj := range decodeSamples(f) {
				Expect(obj.GetKind()).NotTo(Equal("Secret"), "sample %s", f)
				if obj.GetKind() == "VideoRender" || obj.GetKind() == "VideoStoryboard" {
					Expect(filepath.Dir(f)).To(Equal(paidSamplesDir), "sample %s pays: it belongs in paid/", f)
				}
			}
		}
	})

	It("are accepted by the API server as they are", func() {
		ns := newNamespace()
		kinds := map[string]int{}
		for _, f := range sampleFiles() {
			for _, obj := range decodeSamples(f) {
				obj.SetNamespace(ns)
				Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "sample %s", filepath.Base(f))
				kinds[obj.GetKind()]++
			}
		}
		Expect(kinds).To(HaveKeyWithValue("VideoBudget", 1))
		Expect(kinds).To(HaveKey("VideoStoryboard"))
		Expect(kinds).To(HaveKey("VideoRender"))
	})

	It("pass the pre-submit check and the simulator's validation alike", func() {
		requests := 0
		for _, f := range sampleFiles() {
			for _, obj := range decodeSamples(f) {
				if requestOf(obj) == nil {
					continue
				}
				requests++
				Expect(operatorPresubmit(obj)).To(BeEmpty(), "sample %s", filepath.Base(f))
				expectSimulatorAgrees(obj, true)
			}
		}
		Expect(requests).To(BeNumerically(">", 5))
	})

	Context("with kubectl", func() {
		var kubectl kubectlRunner

		BeforeEach(func() {
			user, err := testEnv.AddUser(envtest.User{Name: "sample-admin", Groups: []string{"system:masters"}}, nil)
			Expect(err).NotTo(HaveOccurred())
			kubectl, err = user.Kubectl()
			Expect(err).NotTo(HaveOccurred())
		})

		// "kubectl apply -f config/samples/" would also read kustomization.yaml, which is not an
		// object, so the directory is applied with -k and each file with -f.
		DescribeTable("applies every sample with --dry-run=server",
			func(source func() []string, dirs []string) {
				ns := newNamespace()
				out := runKubectl(kubectl, append([]string{"apply", "--dry-run=server", "-n", ns}, source()...)...)
				for _, f := range sampleFiles(dirs...) {
					for _, obj := range decodeSamples(f) {
						gvk := obj.GroupVersionKind()
						resource := strings.ToLower(gvk.Kind)
						if gvk.Group != "" {
							resource += "." + gvk.Group
						}
						Expect(out).To(ContainSubstring("%s/%s created (server dry run)", resource, obj.GetName()))
					}
				}
			},
			Entry("as a kustomization (-k config/samples/)", func() []string { return []string{"-k", samplesDir} }, []string{samplesDir}),
			Entry("as a kustomization (-k config/samples/paid/)", func() []string { return []string{"-k", paidSamplesDir} }, []string{paidSamplesDir}),
			Entry("file by file (-f)", func() []string {
				var args []string
				for _, f := range sampleFiles() {
					args = append(args, "-f", f)
				}
				return args
			}, []string{samplesDir, paidSamplesDir}),
		)

		It("explains the aiVisual field with its documentation", func() {
			out := runKubectl(kubectl, "explain", "videorender.spec.storyboard.scenes.background.aiVisual")
			Expect(out).To(ContainSubstring("aiVisual generates the background with an AI model"))
			Expect(out).To(MatchRegexp(`model\s+<string> -required-`))
			Expect(out).To(ContainSubstring("Video models: pixverse5.5, veo3.1_fast, veo3.1"))
			Expect(out).To(ContainSubstring("videoDuration is the clip length"))
		})

		It("lists both kinds under the videos category", func() {
			ns := newNamespace()
			for _, name := range []string{
				"video_v1alpha1_videostoryboard_ai_script.yaml",
				"video_v1alpha1_videorender_reviewed_storyboard.yaml",
			} {
				for _, obj := range decodeSamples(filepath.Join(paidSamplesDir, name)) {
					obj.SetNamespace(ns)
					Expect(k8sClient.Create(ctx, obj)).To(Succeed())
				}
			}
			out := runKubectl(kubectl, "get", "videos", "-n", ns, "-o", "name")
			Expect(strings.Fields(out)).To(ConsistOf(
				"videostoryboard.video.videoops.io/ai-script",
				"videorender.video.videoops.io/ai-script",
			))
			wide := runKubectl(kubectl, "get", "vr", "-n", ns, "-o", "wide")
			Expect(strings.Fields(strings.SplitN(wide, "\n", 2)[0])).To(Equal(
				[]string{"NAME", "PHASE", "PROGRESS", "VIDEO", "JOB", "ID", "REASON", "AGE"}))
		})
	})
})

// "kubectl apply -k config/samples/" with a real key once submitted about ten paid renders and
// two previews at once. The paid samples are opt-in now (config/samples/paid/), and the
// VideoBudget of config/samples/ has limits of 0, so applying them all, with a key the service
// accepts, pays for nothing: every object waits and the service creates no job.
var _ = Describe("Applying every sample at once", func() {
	It("pays for nothing: the samples' VideoBudget allows no render and no preview", func() {
		h := newHarness(simulator.Options{})
		// The key the samples read, which a reader creates (no sample writes it).
		h.createSecret(testAPIKey)
		jobs := 0
		for _, f := range sampleFiles() {
			for _, obj := range decodeSamples(f) {
				obj.SetNamespace(h.ns)
				if obj.GetKind() == "VideoRender" || obj.GetKind() == "VideoStoryboard" {
					jobs++
				}
				Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "sample %s", filepath.Base(f))
			}
		}
		Expect(jobs).To(BeNumerically(">", 10))
		h.startManager()

		Eventually(func(g Gomega) {
			var renders videov1alpha1.VideoRenderList
			var boards videov1alpha1.VideoStoryboardList
			g.Expect(k8sClient.List(ctx, &renders, client.InNamespace(h.ns))).To(Succeed())
			g.Expect(k8sClient.List(ctx, &boards, client.InNamespace(h.ns))).To(Succeed())
			// Objects that stop before the budget is asked, by name and reason.
			other := map[string]string{}
			check := func(name string, st *videov1alpha1.JobStatus) {
				g.Expect(st.ObservedGeneration).To(BeNumerically(">", 0), "%s has not been reconciled", name)
				g.Expect(st.JobID).To(BeEmpty(), "%s has a job", name)
				if !isStalledWith(st, videov1alpha1.ReasonBudgetExhausted) {
					if c := condition(st, videov1alpha1.ConditionReady); c != nil {
						other[name] = c.Reason
					}
				}
			}
			for i := range renders.Items {
				check(renders.Items[i].Name, &renders.Items[i].Status.JobStatus)
			}
			for i := range boards.Items {
				check(boards.Items[i].Name, &boards.Items[i].Status.JobStatus)
			}
			// The render of a reviewed storyboard waits for its preview, which waits for the
			// budget; the brand sample names a brand the simulated account does not have, which a
			// free read finds before anything is paid. Every other sample waits for the budget.
			g.Expect(other).To(Equal(map[string]string{
				"ai-script":          string(videov1alpha1.ReasonWaitingForPreview),
				"brand-destinations": string(videov1alpha1.ReasonBrandNotFound),
			}))
		}).WithTimeout(within(30 * time.Second)).Should(Succeed())
		Consistently(func() int { return h.sim.Submissions(testAPIKey) }).WithTimeout(2 * time.Second).Should(BeZero())
	})
})
