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

package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A request mix (-bench.mix, docs/benchmarks.md "Renders people write"): the run's renders split
// evenly over a few sizes, each size created and finished in a phase of its own, so that the CPU
// the API server and the manager spend in a phase is what that size costs, measured in the same
// run against the same processes.

// phase is a range of the run's renders, all of one size.
type phase struct {
	from, to int
	scenes   int // 0: the bare one-scene render of a run without a mix
}

// parseMix splits n renders over the sizes of mix ("1,12,60"); an empty mix is one phase of bare
// renders.
func parseMix(mix string, n int) ([]phase, error) {
	if strings.TrimSpace(mix) == "" {
		return []phase{{from: 0, to: n}}, nil
	}
	var sizes []int
	for f := range strings.SplitSeq(mix, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("-bench.mix %q: %q is not a positive scene count", mix, f)
		}
		sizes = append(sizes, k)
	}
	if n < len(sizes) {
		return nil, fmt.Errorf("-bench.mix %q: %d renders cannot be split over %d sizes", mix, n, len(sizes))
	}
	out := make([]phase, len(sizes))
	from := 0
	for i, k := range sizes {
		// The remainder goes to the first sizes, one each.
		size := n / len(sizes)
		if i < n%len(sizes) {
			size++
		}
		out[i] = phase{from: from, to: from + size, scenes: k}
		from += size
	}
	return out, nil
}

// sizeResult is what one size of the mix cost.
type sizeResult struct {
	Scenes  int     `json:"scenes"`
	Renders int     `json:"renders"`
	Seconds float64 `json:"seconds"` // from its first create to its last render terminal
	// CPU per render of the phase, in milliseconds; the API server's includes its background
	// work during the phase (leases, the manager's watches), the same for every size.
	APIServerCPUMs float64 `json:"apiServerCPUMsPerRender"`
	ManagerCPUMs   float64 `json:"managerCPUMsPerRender"`
	EtcdCPUMs      float64 `json:"etcdCPUMsPerRender"`
}

func (p phase) result(before, after cpu, took time.Duration) sizeResult {
	n := float64(p.to - p.from)
	return sizeResult{Scenes: p.scenes, Renders: p.to - p.from, Seconds: took.Seconds(),
		APIServerCPUMs: 1000 * (after.apiServer - before.apiServer) / n,
		ManagerCPUMs:   1000 * (after.manager - before.manager) / n,
		EtcdCPUMs:      1000 * (after.etcd - before.etcd) / n}
}

// bySizeText is the report's lines about the mix: each size's CPU per render, and the API
// server's per render of the largest size against the smallest's (issue 39's 1.5x bound).
func bySizeText(sizes []sizeResult) string {
	if len(sizes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("| scenes | renders | phase s | API server CPU ms/render | manager CPU ms/render | etcd CPU ms/render |\n|---|---|---|---|---|---|\n")
	small, large := sizes[0], sizes[0]
	for _, z := range sizes {
		fmt.Fprintf(&b, "| %d | %d | %.1f | %.1f | %.1f | %.1f |\n", z.Scenes, z.Renders, z.Seconds, z.APIServerCPUMs, z.ManagerCPUMs, z.EtcdCPUMs)
		if z.Scenes < small.Scenes {
			small = z
		}
		if z.Scenes > large.Scenes {
			large = z
		}
	}
	if small.Scenes != large.Scenes && small.APIServerCPUMs > 0 {
		fmt.Fprintf(&b, "API server CPU per render, %d scenes against %d: %.2fx; manager: %.2fx\n", large.Scenes, small.Scenes,
			large.APIServerCPUMs/small.APIServerCPUMs, large.ManagerCPUMs/max(small.ManagerCPUMs, 1e-9))
	}
	return b.String()
}
