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

package simulator

import (
	"bytes"
	"image/jpeg"
	"testing"
)

// A thumbnail decodes as a JPEG of the documented size, in its scene's colour, so a browser can
// show it.
func TestThumbnailsAreDecodableInTheirSceneColour(t *testing.T) {
	for n := 1; n <= len(ThumbnailPalette)+1; n++ {
		img, err := jpeg.Decode(bytes.NewReader(thumbnailJPEG(n)))
		if err != nil {
			t.Fatalf("scene %d: %v", n, err)
		}
		if b := img.Bounds(); b.Dx() != ThumbnailWidth || b.Dy() != ThumbnailHeight {
			t.Fatalf("scene %d: size %v", n, b)
		}
		r, g, bl, _ := img.At(ThumbnailWidth/2, ThumbnailHeight/2).RGBA()
		want := ThumbnailPalette[(n-1)%len(ThumbnailPalette)]
		if !near(r>>8, want.R) || !near(g>>8, want.G) || !near(bl>>8, want.B) {
			t.Errorf("scene %d: centre colour %d,%d,%d, want %v", n, r>>8, g>>8, bl>>8, want)
		}
	}
}

// near allows for JPEG's lossy colour conversion.
func near(got uint32, want uint8) bool {
	d := int(got) - int(want)
	return d >= -6 && d <= 6
}
