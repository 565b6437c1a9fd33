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
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Downloads from a file server that misbehaves, into a directory that already has files: in a
// namespace no manager watches, with the render's outputs written directly.
var _ = Describe("kubectl video outputs --download", func() {
	var (
		ns       string
		files    *httptest.Server
		authSeen atomic.Bool
		dir      string
	)
	BeforeEach(func() {
		ns = newNamespace("download-")
		mux := http.NewServeMux()
		mux.HandleFunc("/ok/video.mp4", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("NEW VIDEO")) })
		mux.HandleFunc("/ok/thumb.jpg", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("NEW THUMB")) })
		mux.HandleFunc("/cut/audio.mp3", func(w http.ResponseWriter, _ *http.Request) {
			// Announces 1000 bytes and sends 10: the connection ends mid-file.
			w.Header().Set("Content-Length", "1000")
			_, _ = w.Write([]byte("0123456789"))
		})
		mux.HandleFunc("/gone/captions.srt", http.NotFound)
		mux.HandleFunc("/slow/video.mp4", func(w http.ResponseWriter, _ *http.Request) {
			// Steady but slow: longer in total than the idle timeout, never idle that long.
			for range 6 {
				_, _ = w.Write([]byte("chunk"))
				w.(http.Flusher).Flush()
				time.Sleep(60 * time.Millisecond)
			}
		})
		mux.HandleFunc("/stalled/video.mp4", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("first bytes"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		})
		files = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
				authSeen.Store(true)
			}
			if strings.HasSuffix(r.URL.Path, "escape.vtt") {
				_, _ = w.Write([]byte("WEBVTT"))
				return
			}
			mux.ServeHTTP(w, r)
		}))
		DeferCleanup(files.Close)
		dir = GinkgoT().TempDir()

		vr := fromYAML(&videov1alpha1.VideoRender{}, ns, "metadata: {name: done}\nspec: {projectId: p-1}\n")
		Expect(k8sClient.Create(ctx, vr)).To(Succeed())
		vr.Status.Phase = videov1alpha1.PhaseCompleted
		vr.Status.JobGeneration = 1
		vr.Status.Outputs = &videov1alpha1.RenderOutputs{
			VideoURL:  files.URL + "/ok/video.mp4",
			Thumbnail: files.URL + "/ok/thumb.jpg",
			AudioURL:  files.URL + "/cut/audio.mp3",
			SRTFile:   files.URL + "/gone/captions.srt",
			VTTFile:   files.URL + "/ok/..%2F..%2Fescape.vtt",
		}
		setStatus(vr)
	})

	It("keeps the user's files, leaves no partial file, names every failure, and sends no credentials", func() {
		Expect(os.WriteFile(filepath.Join(dir, "video.mp4"), []byte("MINE"), 0o600)).To(Succeed())
		r := kubectlVideo(ns, "", "outputs", "vr/done", "--download", dir)
		Expect(r.err).To(HaveOccurred())
		Expect(r.err.Error()).To(ContainSubstring("video of vr/done: " + filepath.Join(dir, "video.mp4") + " exists: not downloaded (use --overwrite"))
		Expect(r.err.Error()).To(ContainSubstring("audio of vr/done: writing audio.mp3: unexpected EOF"))
		Expect(r.err.Error()).To(ContainSubstring("srt of vr/done: fetching " + files.URL + "/gone/captions.srt: HTTP 404"))
		Expect(os.ReadFile(filepath.Join(dir, "video.mp4"))).To(Equal([]byte("MINE")), "an existing file is not replaced")
		Expect(os.ReadFile(filepath.Join(dir, "thumb.jpg"))).To(Equal([]byte("NEW THUMB")), "the other files are still downloaded")
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		Expect(names).To(ConsistOf("video.mp4", "thumb.jpg", "escape.vtt"), "no partial or failed file is left, nothing outside dir")
		Expect(filepath.Join(filepath.Dir(dir), "escape.vtt")).NotTo(BeAnExistingFile())
		Expect(authSeen.Load()).To(BeFalse(), "output URLs are fetched without credentials")
		Expect(r.out + r.errOut + r.err.Error()).NotTo(ContainSubstring(testAPIKey))

		By("--overwrite replaces it")
		r = kubectlVideo(ns, "", "outputs", "vr/done", "--download", dir, "--overwrite")
		Expect(r.err).To(HaveOccurred(), "the cut and the missing file still fail")
		Expect(r.err.Error()).NotTo(ContainSubstring("exists"))
		Expect(os.ReadFile(filepath.Join(dir, "video.mp4"))).To(Equal([]byte("NEW VIDEO")))
		Expect(r.out).To(ContainSubstring(fmt.Sprintf("Downloaded video to %s (9 bytes)", filepath.Join(dir, "video.mp4"))))
	})

	It("lets a slow download run as long as data arrives, and ends one that stalls", func() {
		Expect(newHTTPClient().Timeout).To(BeZero(), "no overall timeout: a long video on a slow link takes as long as it takes")
		DeferCleanup(func(d time.Duration) { downloadIdleTimeout = d }, downloadIdleTimeout)
		downloadIdleTimeout = 200 * time.Millisecond
		vr := getRenderNamed(ns, "done")(Default)
		vr.Status.Outputs = &videov1alpha1.RenderOutputs{VideoURL: files.URL + "/slow/video.mp4", AudioURL: files.URL + "/stalled/video.mp4"}
		setStatus(vr)

		r := kubectlVideo(ns, "", "outputs", "vr/done", "--download", dir)
		Expect(r.err).To(MatchError("audio of vr/done: writing 2-video.mp4: download stalled (no data for 200ms)"))
		Expect(os.ReadFile(filepath.Join(dir, "video.mp4"))).To(Equal([]byte(strings.Repeat("chunk", 6))))
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(HaveLen(1), "the stalled download leaves nothing behind")
	})

	It("refuses --overwrite without a directory", func() {
		r := kubectlVideo(ns, "", "outputs", "vr/done", "--overwrite")
		Expect(r.err).To(MatchError("--overwrite needs --download DIR"))
		Expect(strings.TrimSpace(r.out)).To(BeEmpty())
	})
})
