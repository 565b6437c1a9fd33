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

package spendguard

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/bound"
)

// Issue 37, case 1, against the real Guard: twenty Japanese renders the service renders 450 s
// long under maxRenderSeconds 600. Before the bound counted characters, each was estimated at 1 s
// and all twenty were admitted (9,000 s used). Admission goes through Guard as the controller
// calls it; each admitted render records its job in its own status, and each round its job ends,
// recorded there too: the next round's budget writes fold them (fold.go) before they decide.
func TestJapaneseRendersUnderASecondsLimitUseAtMostOneRenderBeyondIt(t *testing.T) {
	const limit, rendered = 600, 450
	japanese := []rune(strings.Repeat("東京の朝は静かです。", 300)) // 3,000 characters without a space
	h := newBatchHarness(t, videov1alpha1.VideoBudgetSpec{MaxRenderSeconds: ptr.To[int64](limit)})
	close(h.hold)
	req := &videov1alpha1.StoryboardRequest{Language: ptr.To(videov1alpha1.Language("ja")),
		Scenes: []videov1alpha1.Scene{{Story: ptr.To(string(japanese))}}}
	est := bound.For(req)
	now := h.g.clock.Now()
	paid := map[int]bool{}
	for round := 0; round < 25 && len(paid) < 20; round++ {
		var running []*videov1alpha1.VideoRender
		for i := range 20 {
			if paid[i] {
				continue
			}
			r := batchRender(i)
			d, err := h.g.reserve(t.Context(), "VideoRender", r, "a", "", est, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d.Wait {
				continue
			}
			paid[i] = true
			recordInStatus(t, h.server, r, fmt.Sprintf("job-%d", i), now)
			running = append(running, r)
		}
		if len(running) == 0 {
			break
		}
		for _, r := range running {
			endInStatus(t, h.server, r, rendered, now)
		}
	}
	// The last ends ride with the namespace's next write.
	foldByGuardWrite(t, h.g)
	b := h.budget(t)
	used := b.Status.Used.RenderSeconds
	t.Logf("reserved %d s a render; %d renders paid, %d s used under maxRenderSeconds %d", est.Seconds, len(paid), used, limit)
	if used > limit+rendered {
		t.Fatalf("%d renders paid, %d s used under maxRenderSeconds %d: more than one render beyond the limit", len(paid), used, limit)
	}
	if len(paid) == 0 {
		t.Fatal("no render admitted under an empty budget")
	}
	if used != int64(len(paid))*rendered || len(b.Status.Reservations) != 0 {
		t.Fatalf("%d renders paid, %d s used, reservations %+v: every end folded once", len(paid), used, b.Status.Reservations)
	}
}
