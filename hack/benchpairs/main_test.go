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

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The summary of make bench-pairs reads each pair's two reports and its order, and gives the
// ratio of the means and the median of the pairs' ratios: the figures docs/benchmarks.md
// "API server CPU per render, guarded and unguarded" quotes.
func TestPairsAreReadInOrderAndSummarised(t *testing.T) {
	dir := t.TempDir()
	run := func(k int, side string, ms float64, budget string) {
		d := filepath.Join(dir, fmt.Sprintf("pair-%d-%s", k, side))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf(`{"objects":100,"submitThroughputPerSecond":50,"perRender":{"apiServerCPUMs":%g,"budgetWrites":0.4}%s}`, ms, budget)
		if err := os.WriteFile(filepath.Join(d, "r.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exact := `,"budget":{"paidRenders":100,"usedRenders":100,"renderedSeconds":600,"usedSeconds":600}`
	// Pair 10 sorts after pair 2 by number, not by name.
	run(1, "unguarded", 20, "")
	run(1, "guarded", 22, exact)
	run(2, "unguarded", 25, "")
	run(2, "guarded", 30, `,"budget":{"paidRenders":100,"usedRenders":99,"renderedSeconds":600,"usedSeconds":600}`)
	run(10, "unguarded", 20, "")
	run(10, "guarded", 21, exact)
	if err := os.WriteFile(filepath.Join(dir, "pair-2-order"), []byte("guarded first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pairs, err := readPairs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 3 || pairs[0].name != "pair-1" || pairs[1].name != "pair-2" || pairs[2].name != "pair-10" {
		t.Fatalf("pairs read as %+v, want pair-1, pair-2, pair-10", pairs)
	}
	if pairs[0].guardedFirst || !pairs[1].guardedFirst {
		t.Errorf("orders read as %v, %v; want unguarded first, then guarded first", pairs[0].guardedFirst, pairs[1].guardedFirst)
	}
	var out strings.Builder
	write(&out, pairs)
	for _, want := range []string{
		"| pair-2 | guarded first | 25.0 → 30.0 ms | 1.20x |",
		"**differs**: 99 counted / 100 paid",
		"exact (100 = 100, 600 s = 600 s)",
		// Means 21.7 and 24.3 ms: 1.12x; ratios 1.05, 1.10, 1.20: median 1.10x.
		"3 pairs: API server CPU per render 21.7 ms unguarded, 24.3 ms guarded: **1.12x** on the means; pairs' ratios 1.05-1.20x, median 1.10x",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := readPairs(t.TempDir()); err == nil {
		t.Error("an empty directory was summarised")
	}
}
