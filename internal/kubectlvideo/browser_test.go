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
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/videoops/video-operator/internal/simulator"
)

// The contact sheet is opened in headless Chromium: the scene cards must render with the
// simulator's thumbnails, not as broken images. make test finds or installs Chromium through
// hack/chromium.sh and passes it as $CHROMIUM; the test also looks on the PATH and fails when
// there is none.
// KUBECTL_VIDEO_SKIP_BROWSER=1 skips it on a workstation without Chromium (never in CI).
// KUBECTL_VIDEO_SCREENSHOT=FILE also writes the screenshot there (make plugin-screenshot
// refreshes the README's image that way).

// chromiumPath finds the browser.
func chromiumPath() string {
	GinkgoHelper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("KUBECTL_VIDEO_SKIP_BROWSER") == "1" {
		Skip("KUBECTL_VIDEO_SKIP_BROWSER=1 and no Chromium: the contact sheet is not checked in a browser")
	}
	Fail("Chromium not found: install Debian's chromium (apt-get install chromium), set $CHROMIUM to a Chromium binary, " +
		"or set KUBECTL_VIDEO_SKIP_BROWSER=1 to skip this test on this machine")
	return ""
}

// newBrowser starts headless Chromium with the flags it needs on a closed network, as root.
func newBrowser() context.Context {
	GinkgoHelper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath()),
		chromedp.UserDataDir(GinkgoT().TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	DeferCleanup(func() { cancelBrowser(); cancelAlloc() })
	return bctx
}

var _ = Describe("the HTML contact sheet in headless Chromium", func() {
	It("shows one card per scene, each with its thumbnail from the simulator's files", func() {
		vsb := readyStoryboard("meet-video-operator", "Meet video-operator")
		file := filepath.Join(GinkgoT().TempDir(), "contact-sheet.html")
		r := kubectlVideo(liveNS, "", "preview", "vsb/meet-video-operator", "-o", "html", file)
		Expect(r.err).NotTo(HaveOccurred())

		bctx := newBrowser()
		tctx, cancelRun := context.WithTimeout(bctx, 60*time.Second)
		defer cancelRun()
		type card struct {
			Scene        string `json:"scene"`
			Story        string `json:"story"`
			Complete     bool   `json:"complete"`
			NaturalWidth int    `json:"naturalWidth"`
			Width        int    `json:"width"`
		}
		Expect(chromedp.Do(tctx,
			chromedp.Navigate("file://"+file),
			chromedp.WaitVisible(chromedp.CSSAll(".scene-card img")),
		)).To(Succeed())
		_, err := chromedp.Run(tctx, chromedp.Poll[bool](`Array.from(document.images).every(i => i.complete)`,
			chromedp.WithPollingTimeout(20*time.Second)))
		Expect(err).NotTo(HaveOccurred())
		cards, err := chromedp.Run(tctx, chromedp.Evaluate[[]card](`Array.from(document.querySelectorAll('.scene-card')).map(c => {
			const i = c.querySelector('img');
			return {scene: c.dataset.scene, story: c.querySelector('.story').textContent,
				complete: !!i && i.complete, naturalWidth: i ? i.naturalWidth : 0, width: i ? Math.round(i.getBoundingClientRect().width) : 0};
		})`))
		Expect(err).NotTo(HaveOccurred())
		shot, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
		Expect(err).NotTo(HaveOccurred())

		Expect(cards).To(HaveLen(len(vsb.Status.Preview.Scenes)))
		for i, c := range cards {
			Expect(c.Story).To(Equal(vsb.Status.Preview.Scenes[i].Story), "card %d", i+1)
			Expect(c.Complete).To(BeTrue(), "card %d", i+1)
			Expect(c.NaturalWidth).To(Equal(simulator.ThumbnailWidth), "card %d: the thumbnail decoded", i+1)
			Expect(c.Width).To(BeNumerically(">=", 200), "card %d: the thumbnail is shown at card width", i+1)
		}

		By("the screenshot shows each scene's thumbnail in its colour")
		img, err := png.Decode(bytes.NewReader(shot))
		Expect(err).NotTo(HaveOccurred())
		for i := range cards {
			want := simulator.ThumbnailPalette[i%len(simulator.ThumbnailPalette)]
			Expect(pixelsNear(img, want)).To(BeNumerically(">", 200*100), "scene %d's colour %v on the screenshot", i+1, want)
		}
		if out := os.Getenv("KUBECTL_VIDEO_SCREENSHOT"); out != "" {
			Expect(os.WriteFile(out, shot, 0o644)).To(Succeed())
			GinkgoWriter.Printf("Wrote the screenshot to %s\n", out)
		}
	})
})

// pixelsNear counts the pixels within a small distance of c (JPEG and scaling shift colours).
func pixelsNear(img image.Image, c color.RGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r>>8, c.R) && near(g>>8, c.G) && near(bl>>8, c.B) {
				n++
			}
		}
	}
	return n
}

func near(got uint32, want uint8) bool {
	d := int(got) - int(want)
	return d >= -8 && d <= 8
}
