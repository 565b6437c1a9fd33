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
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// completedPreview is a completed preview job of n scenes, each with a thumbnail URL of
// thumbLen characters.
func completedPreview(n, thumbLen int) *apiclient.Job {
	scenes := make([]apiclient.StoryboardScene, n)
	for i := range scenes {
		url := fmt.Sprintf("https://cdn.example.com/t/%d.png", i)
		scenes[i] = apiclient.StoryboardScene{Thumbnail: url + strings.Repeat("x", max(thumbLen-len(url), 0)), Story: "s"}
	}
	return &apiclient.Job{Success: true, Data: apiclient.JobData{
		Status:     apiclient.JobStatusCompleted,
		Storyboard: &apiclient.Storyboard{Scenes: scenes, Raw: json.RawMessage(`{"scenes":[]}`)},
	}}
}

// "Preview and render" of the interface document: a preview returns scene thumbnails. The
// number of preview scenes kept in status is bounded by bytes, not by a count of our own.
func TestPreviewKeepsAsManyScenesAsItsBytesAllow(t *testing.T) {
	vsb := &videov1alpha1.VideoStoryboard{}
	vsb.Spec.VideoName = "big"

	omitted := storyboardAdapter{}.recordJob(vsb, completedPreview(3000, 100))
	if got := len(vsb.Status.Preview.Scenes); got != 3000 || len(omitted) != 0 {
		t.Fatalf("3,000 scenes of 100-byte thumbnails fit in the preview: kept %d, omitted %v", got, omitted)
	}

	omitted = storyboardAdapter{}.recordJob(vsb, completedPreview(20000, 100))
	kept := len(vsb.Status.Preview.Scenes)
	if kept < 3800 || kept >= 20000 {
		t.Fatalf("20,000 scenes of 100-byte thumbnails: kept %d, want as many as 512 KiB holds", kept)
	}
	if len(omitted) == 0 || !strings.HasPrefix(omitted[len(omitted)-1], fmt.Sprintf("scenes[%d:]", kept)) {
		t.Fatalf("the scenes left out are named: %v", omitted)
	}
	raw, err := json.Marshal(vsb.Status.Preview)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > maxPreviewBytes+64<<10 {
		t.Fatalf("the preview takes %d bytes, over its budget of %d", len(raw), maxPreviewBytes)
	}
	if kept > maxPreviewScenes {
		t.Fatalf("kept %d scenes, over the CRD's maxItems %d", kept, maxPreviewScenes)
	}
}
