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
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// The real binary, with a kubeconfig written from envtest's, proves that the kubeconfig flags
// work as kubectl's (-n, --context, --kubeconfig, $KUBECONFIG) and that kubectl finds the plugin
// on the PATH as `kubectl video`.
var _ = Describe("the kubectl-video binary", Ordered, func() {
	var bin, kubeconfig string

	BeforeAll(func() {
		dir := GinkgoT().TempDir()
		bin = filepath.Join(dir, "kubectl-video")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/kubectl-video")
		build.Dir = filepath.Join("..", "..")
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "building the plugin: %s", out)

		user, err := testEnv.AddUser(envtest.User{Name: "plugin-user", Groups: []string{"system:masters"}}, nil)
		Expect(err).NotTo(HaveOccurred())
		raw, err := user.KubeConfig()
		Expect(err).NotTo(HaveOccurred())
		kubeconfig = filepath.Join(dir, "kubeconfig")
		Expect(os.WriteFile(kubeconfig, raw, 0o600)).To(Succeed())
		readyStoryboard("from-binary", "From the binary")
	})

	runIn := func(stdin string, env []string, name string, args ...string) (string, string, error) {
		GinkgoHelper()
		c, cancelRun := context.WithTimeout(ctx, time.Minute)
		defer cancelRun()
		cmd := exec.CommandContext(c, name, args...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		GinkgoWriter.Printf("$ %s %s\n%s%s", filepath.Base(name), strings.Join(args, " "), out.String(), errOut.String())
		return out.String(), errOut.String(), err
	}
	run := func(env []string, name string, args ...string) (string, string, error) {
		GinkgoHelper()
		return runIn("", env, name, args...)
	}
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")

	It("reads the kubeconfig given by --kubeconfig and the namespace given by -n", func() {
		out, _, err := run(nil, bin, "--kubeconfig", kubeconfig, "-n", liveNS, "status", "vsb/from-binary")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("VideoStoryboard " + liveNS + "/from-binary"))
		Expect(out).To(MatchRegexp(`Phase:\s+Completed`))

		out, _, err = run([]string{"KUBECONFIG=" + kubeconfig}, bin, "status", "-A")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(MatchRegexp(liveNS + `\s+vsb/from-binary\s+Completed`))
	})

	It("fails with a clear message and exit code 1 on a context the kubeconfig does not have, or a missing object", func() {
		_, errOut, err := run(nil, bin, "--kubeconfig", kubeconfig, "--context", "no-such-context", "status", "vsb/from-binary")
		Expect(err).To(HaveOccurred())
		Expect(err.(*exec.ExitError).ExitCode()).To(Equal(1))
		Expect(errOut).To(ContainSubstring(`context "no-such-context" does not exist`))

		_, errOut, err = run(nil, bin, "--kubeconfig", kubeconfig, "-n", liveNS, "status", "vr/nothing-here")
		Expect(err).To(HaveOccurred())
		Expect(errOut).To(ContainSubstring(`error: VideoRender "nothing-here" not found in namespace "` + liveNS + `"`))
	})

	It("takes the namespace of the context --context selects, as kubectl does", func() {
		cfg, err := clientcmd.LoadFromFile(kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		current := cfg.Contexts[cfg.CurrentContext]
		Expect(current).NotTo(BeNil())
		videos := current.DeepCopy()
		videos.Namespace = liveNS
		cfg.Contexts["videos"] = videos
		withContext := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(clientcmd.WriteToFile(*cfg, withContext)).To(Succeed())

		out, _, err := run(nil, bin, "--kubeconfig", withContext, "--context", "videos", "status", "vsb/from-binary")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("VideoStoryboard " + liveNS + "/from-binary"))

		_, errOut, err := run(nil, bin, "--kubeconfig", withContext, "status", "vsb/from-binary")
		Expect(err).To(HaveOccurred(), "the current context's namespace is default")
		Expect(errOut).To(ContainSubstring(`VideoStoryboard "from-binary" not found in namespace "default"`))
	})

	It("creates nothing when the confirmation comes from a pipe, and prints YAML that kubectl apply accepts", func() {
		_, errOut, err := runIn("y\n", nil, bin, "--kubeconfig", kubeconfig, "-n", liveNS, "render", "vsb/from-binary", "--name", "from-pipe")
		Expect(err).To(HaveOccurred())
		Expect(errOut).To(ContainSubstring("standard input is not a terminal"))
		Consistently(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: liveNS, Name: "from-pipe"}, &videov1alpha1.VideoRender{})
		}, "300ms").Should(MatchError(ContainSubstring("not found")))

		manifest, _, err := run(nil, bin, "--kubeconfig", kubeconfig, "-n", liveNS, "render", "vsb/from-binary", "--name", "from-git", "--dry-run")
		Expect(err).NotTo(HaveOccurred())
		out, _, err := runIn(manifest, nil, kubectl, "--kubeconfig", kubeconfig, "apply", "--dry-run=server", "-f", "-")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("videorender.video.videoops.io/from-git created (server dry run)"))
	})

	It("runs as `kubectl video` when kubectl finds it on the PATH", func() {
		Expect(kubectl).To(BeAnExistingFile(), "envtest's assets have a kubectl")
		path := "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
		out, _, err := run([]string{path}, kubectl, "video", "--kubeconfig", kubeconfig, "-n", liveNS, "preview", "vsb/from-binary")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring(`Storyboard ` + liveNS + `/from-binary: "From the binary"`))
		Expect(out).To(ContainSubstring("Scene 3"))
	})

	It("completes `kubectl video` through kubectl_complete-video on the PATH, as make install-plugin installs it", func() {
		script, err := os.ReadFile(filepath.Join("..", "..", "hack", "kubectl_complete-video"))
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(filepath.Dir(bin), "kubectl_complete-video"), script, 0o755)).To(Succeed()) //nolint:gosec // an executable
		path := "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
		out, _, err := run([]string{path}, kubectl, "__complete", "video", "--kubeconfig", kubeconfig, "-n", liveNS, "status", "vsb/from-")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Split(out, "\n")).To(ContainElement("vsb/from-binary"))
		Expect(out).NotTo(ContainSubstring("vr/"), "only the kind typed")

		out, _, err = run([]string{path}, kubectl, "__complete", "video", "st")
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(ContainSubstring("status"))
	})
})
