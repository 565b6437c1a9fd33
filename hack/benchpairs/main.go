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

// Command benchpairs summarises the runs of make bench-pairs: pairs of one run without budgets
// and one with a VideoBudget in every namespace, in ABBA order (the first pair unguarded first,
// the next guarded first, ...), so that a drift of the machine over the session falls on both
// sides alike. One pair is not enough to compare the two: the API server CPU of the same code
// varies by up to a fifth from one run to the next (docs/benchmarks.md). It prints, and writes
// to DIR/pairs.md, each run, each pair's ratio, the ratio of the means and the median of the
// pairs' ratios.
//
//	go run ./hack/benchpairs DIR
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// report is the part of test/bench's JSON report read here.
type report struct {
	Objects   int     `json:"objects"`
	Submit    float64 `json:"submitThroughputPerSecond"`
	OtherCPU  float64 `json:"otherCPUSeconds"`
	Load1Max  float64 `json:"load1Max"`
	PerRender struct {
		APIServerCPUMs      float64 `json:"apiServerCPUMs"`
		StatusWrites        float64 `json:"statusWrites"`
		ObjectWrites        float64 `json:"objectWrites"`
		Events              float64 `json:"events"`
		BudgetWrites        float64 `json:"budgetWrites"`
		ConfigMapWrites     float64 `json:"configMapWrites"`
		BudgetConflictShare float64 `json:"budgetConflictShare"`
	} `json:"perRender"`
	RenderSize struct {
		Bytes int `json:"bytes"`
	} `json:"renderSize"`
	Budget *struct {
		PaidRenders     int64 `json:"paidRenders"`
		UsedRenders     int64 `json:"usedRenders"`
		RenderedSeconds int64 `json:"renderedSeconds"`
		UsedSeconds     int64 `json:"usedSeconds"`
		Reservations    int   `json:"reservationsAtEnd"`
	} `json:"budget"`
}

type pair struct {
	name               string
	unguarded, guarded report
	guardedFirst       bool
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchpairs DIR (the BENCH_OUT of make bench-pairs)")
		os.Exit(2)
	}
	pairs, err := readPairs(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchpairs:", err)
		os.Exit(1)
	}
	f, err := os.Create(filepath.Join(os.Args[1], "pairs.md")) //nolint:gosec // the directory make bench-pairs was given
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchpairs:", err)
		os.Exit(1)
	}
	write(io.MultiWriter(os.Stdout, f), pairs)
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "benchpairs:", err)
		os.Exit(1)
	}
}

// readPairs reads DIR/pair-K-{unguarded,guarded}/*.json; the file DIR/pair-K-order says which
// ran first.
func readPairs(dir string) ([]pair, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "pair-*-unguarded"))
	if err != nil {
		return nil, err
	}
	sort.Slice(matches, func(i, j int) bool { return pairIndex(matches[i]) < pairIndex(matches[j]) })
	var out []pair
	for _, u := range matches {
		base := strings.TrimSuffix(u, "-unguarded")
		p := pair{name: filepath.Base(base)}
		if err := readReport(u, &p.unguarded); err != nil {
			return nil, err
		}
		if err := readReport(base+"-guarded", &p.guarded); err != nil {
			return nil, err
		}
		order, _ := os.ReadFile(base + "-order") //nolint:gosec // written by hack/bench-pairs.sh
		p.guardedFirst = strings.HasPrefix(string(order), "guarded")
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no pair-K-unguarded directory in %s", dir)
	}
	return out, nil
}

func pairIndex(path string) int {
	var k int
	_, _ = fmt.Sscanf(strings.TrimPrefix(filepath.Base(path), "pair-"), "%d", &k)
	return k
}

// readReport reads the one JSON report of a run's directory.
func readReport(dir string, r *report) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("%s: want one JSON report, found %d", dir, len(files))
	}
	data, err := os.ReadFile(files[0]) //nolint:gosec // a report make bench wrote
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, r); err != nil {
		return fmt.Errorf("%s: %w", files[0], err)
	}
	if r.Objects == 0 {
		return fmt.Errorf("%s: no objects", files[0])
	}
	return nil
}

func write(w io.Writer, pairs []pair) {
	p := func(format string, a ...any) { _, _ = fmt.Fprintf(w, format, a...) }
	p("| pair | order | API server CPU / render, unguarded → guarded | ratio | submit/s unguarded → guarded | guarded writes / render: status / object / Events / VideoBudget / ConfigMap | VideoBudget 409s | render size unguarded → guarded | guarded account | other CPU, load1 max |\n")
	p("|---|---|---|---|---|---|---|---|---|---|\n")
	var ratios []float64
	var sumU, sumG, subU, subG float64
	for _, pr := range pairs {
		u, g := pr.unguarded, pr.guarded
		ratio := g.PerRender.APIServerCPUMs / u.PerRender.APIServerCPUMs
		ratios = append(ratios, ratio)
		sumU += u.PerRender.APIServerCPUMs
		sumG += g.PerRender.APIServerCPUMs
		subU += u.Submit
		subG += g.Submit
		order := "unguarded first"
		if pr.guardedFirst {
			order = "guarded first"
		}
		p("| %s | %s | %.1f → %.1f ms | %.2fx | %.1f → %.1f (%.0f%%) | %.2f / %.2f / %.2f / %.3f / %.3f | %.1f%% | %d → %d B | %s | %.0f s, %.0f s; %.1f, %.1f |\n",
			pr.name, order, u.PerRender.APIServerCPUMs, g.PerRender.APIServerCPUMs, ratio, u.Submit, g.Submit, 100*g.Submit/u.Submit,
			g.PerRender.StatusWrites, g.PerRender.ObjectWrites, g.PerRender.Events, g.PerRender.BudgetWrites, g.PerRender.ConfigMapWrites,
			100*g.PerRender.BudgetConflictShare, u.RenderSize.Bytes, g.RenderSize.Bytes, account(g), u.OtherCPU, g.OtherCPU, u.Load1Max, g.Load1Max)
	}
	n := float64(len(pairs))
	sorted := slices.Clone(ratios)
	slices.Sort(sorted)
	median := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		median = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	p("\n%d pairs: API server CPU per render %.1f ms unguarded, %.1f ms guarded: **%.2fx** on the means; "+
		"pairs' ratios %.2f-%.2fx, median %.2fx; guarded submissions %.0f%% of unguarded.\n",
		len(pairs), sumU/n, sumG/n, sumG/sumU, sorted[0], sorted[len(sorted)-1], median, 100*subG/subU)
}

// account says whether the guarded run's budgets hold exactly what was paid.
func account(r report) string {
	b := r.Budget
	if b == nil {
		return "no budgets"
	}
	if b.UsedRenders == b.PaidRenders && b.UsedSeconds == b.RenderedSeconds && b.Reservations == 0 {
		return fmt.Sprintf("exact (%d = %d, %d s = %d s)", b.UsedRenders, b.PaidRenders, b.UsedSeconds, b.RenderedSeconds)
	}
	return fmt.Sprintf("**differs**: %d counted / %d paid, %d s / %d s, %d reservations left",
		b.UsedRenders, b.PaidRenders, b.UsedSeconds, b.RenderedSeconds, b.Reservations)
}
