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
	"image"
	"image/color"
	"image/jpeg"
	"sync"
)

// Thumbnails are real, decodable JPEG images (a browser shows them, and a reviewer tells the
// scenes apart), unlike the other placeholder files: a contact sheet of a preview is only
// useful if its images load. Each scene gets a colour of its own from ThumbnailPalette.

// Thumbnail size: 16:9, small enough to keep answers tiny.
const (
	ThumbnailWidth  = 160
	ThumbnailHeight = 90
)

// ThumbnailPalette gives scene n (1-based) the colour ThumbnailPalette[(n-1) % len]; a render's
// thumbnail uses the first one. Exported so tests can look for these colours on a screenshot.
var ThumbnailPalette = []color.RGBA{
	{R: 0xd9, G: 0x4f, B: 0x3d, A: 0xff}, // red
	{R: 0x2f, G: 0x80, B: 0xc8, A: 0xff}, // blue
	{R: 0x3d, G: 0xa3, B: 0x5d, A: 0xff}, // green
	{R: 0xe0, G: 0xa1, B: 0x2b, A: 0xff}, // amber
	{R: 0x8e, G: 0x5c, B: 0xc2, A: 0xff}, // purple
}

var (
	thumbnailsMu sync.Mutex
	thumbnails   = map[int][]byte{}
)

// thumbnailJPEG returns the JPEG of scene n (1-based), encoded once per colour.
func thumbnailJPEG(n int) []byte {
	i := (n - 1) % len(ThumbnailPalette)
	if i < 0 {
		i = 0
	}
	thumbnailsMu.Lock()
	defer thumbnailsMu.Unlock()
	if b, ok := thumbnails[i]; ok {
		return b
	}
	img := image.NewRGBA(image.Rect(0, 0, ThumbnailWidth, ThumbnailHeight))
	c := ThumbnailPalette[i]
	for y := range ThumbnailHeight {
		for x := range ThumbnailWidth {
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	// Encoding an in-memory image into a bytes.Buffer cannot fail.
	_ = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	thumbnails[i] = buf.Bytes()
	return thumbnails[i]
}
