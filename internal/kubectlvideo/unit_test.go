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
	"path/filepath"
	"testing"
)

// A file name taken from an output URL can never leave the download directory, and an output
// whose URL names no usable file gets the output's name.
func TestFileNameStaysInTheDirectory(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  output
		want string
	}{
		{"plain", output{"video", "https://cdn.example/files/j1/video.mp4", true, ".mp4"}, "video.mp4"},
		{"query ignored", output{"srt", "https://cdn.example/a/captions.srt?sig=abc", true, ".srt"}, "captions.srt"},
		{"no extension", output{"audio", "https://cdn.example/a/track", true, ".mp3"}, "track.mp3"},
		{"escaped traversal", output{"video", "https://cdn.example/files/..%2F..%2F..%2Fetc%2Fpasswd", true, ".mp4"}, "passwd.mp4"},
		{"dot-dot only", output{"video", "https://cdn.example/..", true, ".mp4"}, "video.mp4"},
		{"root", output{"thumbnail", "https://cdn.example/", true, ".jpg"}, "thumbnail.jpg"},
		{"hidden file", output{"transcript", "https://cdn.example/.bashrc", true, ".txt"}, "bashrc.txt"},
		{"odd characters", output{"vtt", "https://cdn.example/a/my%20captions%3B%20rm.vtt", true, ".vtt"}, "my_captions_rm.vtt"},
		{"backslashes", output{"video", `https://cdn.example/a/..\..\x.mp4`, true, ".mp4"}, "x.mp4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fileName(tc.out)
			if got != tc.want {
				t.Errorf("fileName(%q) = %q, want %q", tc.out.URL, got, tc.want)
			}
			if filepath.Base(got) != got || got == "." || got == ".." {
				t.Errorf("fileName(%q) = %q is not a plain file name", tc.out.URL, got)
			}
		})
	}
}

func TestUniqueName(t *testing.T) {
	used := map[string]bool{}
	got := []string{uniqueName("a.jpg", used), uniqueName("a.jpg", used), uniqueName("a.jpg", used)}
	want := []string{"a.jpg", "2-a.jpg", "3-2-a.jpg"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("uniqueName: got %v, want %v", got, want)
		}
	}
}

func TestParseTargetAliases(t *testing.T) {
	for _, args := range [][]string{{"vsb/x"}, {"VideoStoryboard/x"}, {"videostoryboards", "x"}, {"videostoryboards.video.videoops.io/x"}} {
		if tg, err := ParseTarget(args); err != nil || tg != (Target{KindStoryboard, "x"}) {
			t.Errorf("ParseTarget(%v) = %v, %v", args, tg, err)
		}
	}
	for _, args := range [][]string{{"vr/x"}, {"videorender", "x"}, {"VideoRenders/x"}} {
		if tg, err := ParseTarget(args); err != nil || tg != (Target{KindRender, "x"}) {
			t.Errorf("ParseTarget(%v) = %v, %v", args, tg, err)
		}
	}
	for _, args := range [][]string{{"x"}, {}, {"a", "b", "c"}, {"deployment/x"}} {
		if _, err := ParseTarget(args); err == nil {
			t.Errorf("ParseTarget(%v) accepted", args)
		}
	}
}
