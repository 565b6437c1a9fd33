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
	"math"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// These unit tests run in `go test ./...`; the benchmark itself runs only with -bench.

const exposition = `# HELP workqueue_depth Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{controller="videorender",name="videorender"} 7
workqueue_depth{controller="videostoryboard",name="videostoryboard"} 0
# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{controller="videorender",name="videorender",le="0.1"} 50
workqueue_queue_duration_seconds_bucket{controller="videorender",name="videorender",le="1"} 90
workqueue_queue_duration_seconds_bucket{controller="videorender",name="videorender",le="10"} 100
workqueue_queue_duration_seconds_bucket{controller="videorender",name="videorender",le="+Inf"} 100
workqueue_queue_duration_seconds_sum{controller="videorender",name="videorender"} 42.5
workqueue_queue_duration_seconds_count{controller="videorender",name="videorender"} 100
video_operator_status_write_seconds_bucket{kind="VideoRender",le="0.5"} 1
video_operator_status_write_seconds_bucket{kind="VideoRender",le="+Inf"} 2
video_operator_status_write_seconds_sum{kind="VideoRender"} 3
video_operator_status_write_seconds_count{kind="VideoRender"} 2
odd_metric{msg="a \"quoted\", comma"} 1 1700000000000
`

func TestParseTextAndHistograms(t *testing.T) {
	samples, err := parseText(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 13 {
		t.Fatalf("%d samples, want 13", len(samples))
	}
	if got := samples[len(samples)-1].labels["msg"]; got != `a "quoted", comma` {
		t.Errorf("escaped label: %q", got)
	}
	depth := values(samples, workqueueGauges)
	if depth[`workqueue_depth{controller="videorender",name="videorender"}`] != 7 {
		t.Errorf("depth: %v", depth)
	}
	hs := histograms(samples, workqueueHistograms)
	h := hs[`workqueue_queue_duration_seconds{controller="videorender",name="videorender"}`]
	if h == nil {
		t.Fatalf("no series: %v", hs)
	}
	s := h.summary()
	// The median (rank 50) is the top of the first bucket; the p99 (rank 99) is 9/10 of the way
	// through the (1, 10] bucket.
	if s.Count != 100 || s.Mean != 0.425 || s.P50 != 0.1 || math.Abs(s.P99-9.1) > 1e-9 || s.MaxBucket != 10 || s.Overflow || s.P99Bucket != [2]float64{1, 10} {
		t.Errorf("summary %+v", s)
	}
	ops := histograms(samples, operatorHistograms)
	o := ops[`video_operator_status_write_seconds{kind="VideoRender"}`].summary()
	if !o.Overflow || o.MaxBucket != 0.5 || o.P99 != 0.5 {
		t.Errorf("an observation above the last finite bucket: %+v", o)
	}
	if len(histograms(samples, regexp.MustCompile(`^absent_seconds$`))) != 0 {
		t.Error("a family that is not exposed must give no series")
	}
}

func TestParseProcStat(t *testing.T) {
	st, err := parseProcStat("4242 (kube (api) server) S 17 4242 17 0 -1 4194560 1 0 0 0 250 130 0 0 20 0 12 0 1 2 3")
	if err != nil {
		t.Fatal(err)
	}
	if st.comm != "kube (api) server" || st.ppid != 17 || st.cpuSeconds != 3.8 {
		t.Errorf("%+v", st)
	}
	if _, err := parseProcStat("garbage"); err == nil {
		t.Error("a malformed line must fail")
	}
}

func TestClassify(t *testing.T) {
	for path, want := range map[string]string{
		"/apis/video.videoops.io/v1alpha1/namespaces/b-1/videorenders/r-1/status": "PATCH videorenders/status b-1/r-1",
		"/apis/video.videoops.io/v1alpha1/videorenders?watch=true":                "WATCH videorenders /",
		"/api/v1/namespaces/b-1/secrets/video-api-key":                            "GET secrets b-1/video-api-key",
		"/api/v1/namespaces/b-1":                                                  "GET namespaces /b-1",
		"/api/v1/namespaces/b-1/events":                                           "CREATE events b-1/",
		"/version":                                                                "GET other /",
	} {
		method := map[bool]string{true: "PATCH", false: "GET"}[strings.HasSuffix(path, "/status")]
		if strings.HasSuffix(path, "/events") {
			method = "POST"
		}
		r := httptest.NewRequestWithContext(t.Context(), method, path, nil)
		a := classify(r)
		if got := a.String() + " " + a.namespace + "/" + a.name; got != want {
			t.Errorf("%s %s: %q, want %q", method, path, got, want)
		}
	}
}

func TestComparisonAndRow(t *testing.T) {
	base := &result{Label: "before", Params: params{N: 10}, TotalCallsPerJob: 4, CompletionToStatus: latency{P99: 2000}}
	cur := &result{Label: "after", Params: params{N: 10}, TotalCallsPerJob: 2, CompletionToStatus: latency{P99: 500}}
	var b strings.Builder
	writeComparison(&b, base, cur)
	for _, want := range []string{"| calls per job | 4.00 | 2.00 | -2.00 (-50%) |", "| completion→status p99 (ms) | 2000.00 | 500.00 | -1500.00 (-75%) |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("comparison lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "unlike runs") {
		t.Error("runs of the same N and mode are alike")
	}
	if cols, hdr := strings.Count(cur.markdownRow(), "|"), strings.Count(strings.Split(markdownHeader, "\n")[0], "|"); cols != hdr {
		t.Errorf("the row has %d separators, the header %d", cols, hdr)
	}
}

func TestPeakPerSecondAndSummary(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	if got := peakPerSecond([]time.Time{at(0), at(2500), at(100), at(900), at(1500), at(2000)}); got != 3 {
		t.Errorf("peak %d, want 3 (0, 100 and 900 ms)", got)
	}
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if s := summarise(d); s.P50 != 50 || s.P99 != 99 || s.Max != 100 || s.Count != 100 {
		t.Errorf("%+v", s)
	}
}

// rendersIn must give each namespace exactly the renders createRenders puts there: one too few
// and a -bench.budget run never ends, one too many and an overcount goes unseen.
func TestRendersInMatchesTheRoundRobin(t *testing.T) {
	n, namespaces := *flagN, *flagNamespaces
	t.Cleanup(func() { *flagN, *flagNamespaces = n, namespaces })
	for _, c := range []struct{ n, namespaces int }{{1000, 10}, {1003, 10}, {7, 10}, {10000, 3}, {1, 1}} {
		*flagN, *flagNamespaces = c.n, c.namespaces
		want := map[int]int64{}
		for j := range c.n {
			want[j%c.namespaces]++
		}
		for i := range c.namespaces {
			if got := rendersIn(i); got != want[i] {
				t.Errorf("N=%d over %d namespaces: namespace %d gets %d renders, rendersIn says %d", c.n, c.namespaces, i, want[i], got)
			}
		}
	}
}

func TestWritesByKind(t *testing.T) {
	events, budgets, objects := writesByKind(map[string]int{
		"CREATE events": 3, "PATCH events": 2, "LIST events": 7, "WATCH events": 1,
		"PATCH videobudgets/status": 4, "UPDATE videobudgets": 1, "GET videobudgets": 9,
		"PATCH videorenders/status": 30, "PATCH videorenders": 10, "UPDATE videorenders": 2, "GET videorenders": 6,
	})
	if events != 5 || budgets != 5 || objects != 12 {
		t.Errorf("events %d, budgets %d, objects %d; want 5, 5 and 12 (writes only, by resource)", events, budgets, objects)
	}
}

// The report names the largest budget of the run, at its step; a run without budgets names none.
func TestPrintBudgetSize(t *testing.T) {
	var b strings.Builder
	printBudgetSize(&b, []timeStep{{Seconds: 1, BudgetMaxBytes: 2048, BudgetMaxReservations: 3},
		{Seconds: 2, BudgetMaxBytes: 10240, BudgetMaxReservations: 40}, {Seconds: 3, BudgetMaxBytes: 512}})
	if got, want := b.String(), "largest VideoBudget: 10.0 KiB with 40 reservations, at t=2s\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	b.Reset()
	printBudgetSize(&b, []timeStep{{Seconds: 1}})
	if b.Len() != 0 {
		t.Errorf("a run without budgets printed %q", b.String())
	}
}

func TestParseMixSplitsTheRendersEvenly(t *testing.T) {
	got, err := parseMix("1, 12,60", 1000)
	if err != nil {
		t.Fatal(err)
	}
	want := []phase{{0, 334, 1}, {334, 667, 12}, {667, 1000, 60}}
	if !slices.Equal(got, want) {
		t.Errorf("parseMix = %v, want %v", got, want)
	}
	if got, _ := parseMix("", 7); !slices.Equal(got, []phase{{0, 7, 0}}) {
		t.Errorf("no mix = %v, want one phase of bare renders", got)
	}
	for _, bad := range []string{"1,x", "0", "1,-3"} {
		if _, err := parseMix(bad, 10); err == nil || !strings.Contains(err.Error(), "-bench.mix") {
			t.Errorf("parseMix(%q) = %v, want an error naming -bench.mix", bad, err)
		}
	}
	if _, err := parseMix("1,2,3", 2); err == nil {
		t.Error("2 renders over 3 sizes: want an error")
	}
}

func TestBySizeTextGivesTheLargestAgainstTheSmallest(t *testing.T) {
	text := bySizeText([]sizeResult{{Scenes: 1, Renders: 10, APIServerCPUMs: 20, ManagerCPUMs: 10}, {Scenes: 60, Renders: 10, APIServerCPUMs: 30, ManagerCPUMs: 12}})
	if !strings.Contains(text, "60 scenes against 1: 1.50x; manager: 1.20x") {
		t.Errorf("bySizeText:\n%s", text)
	}
}
